package identity

import (
	"context"
	"errors"
	"fmt"
	"strconv"

	"gorm.io/gorm"

	"herald/models"
	"herald/service/core"
)

// An account has logins: its owner (the users row) and its members (team.go),
// each with its own address, password, sessions, reset links and
// two-factor key. The password and two-factor rules (passwords.go,
// password_reset.go, totp.go) are written once, for a Who; this file is
// the one place that knows where a login's row is.

// Who names one login: the owner of the account (MemberID 0) or one of its
// members.
type Who struct {
	AccountID int64
	MemberID  int64 // 0: the account's owner
}

// Owner is the login of the account's owner.
func Owner(accountID int64) Who { return Who{AccountID: accountID} }

// login is what the password and two-factor rules read of a login.
type login struct {
	Who
	Name         string
	Email        string
	PasswordHash string
	TOTPSecret   []byte
	TOTPPending  []byte
	TOTPLastStep int64
}

// TwoFactor reports whether logging in asks for a code.
func (l *login) TwoFactor() bool { return len(l.TOTPSecret) > 0 }

// row is the login's table and the condition naming its row, scoped by
// the account.
func (w Who) row() (table, where string, args []any) {
	if w.MemberID == 0 {
		return "users", "id = ?", []any{w.AccountID}
	}
	return "members", "user_id = ? AND id = ?", []any{w.AccountID, w.MemberID}
}

// update sets columns of the login's row inside db. Errors: ErrNotFound
// when the row is gone (a member removed meanwhile).
func (w Who) update(db *gorm.DB, cols map[string]any) error {
	table, where, args := w.row()
	if w.MemberID == 0 {
		cols["updated_at"] = db.NowFunc()
	} else {
		cols["updated_at"] = db.NowFunc().UnixMilli()
	}
	res := db.Table(table).Where(where, args...).Updates(cols)
	if res.Error != nil {
		return fmt.Errorf("logins: update: %w", res.Error)
	}
	if res.RowsAffected != 1 {
		return core.ErrNotFound
	}
	return nil
}

// endSessions ends every session of this login only: the owner's do not
// end the members', nor one member's another's.
func (w Who) endSessions(db *gorm.DB) error {
	if err := db.Exec("DELETE FROM sessions WHERE user_id = ? AND member_id = ?", w.AccountID, w.MemberID).Error; err != nil {
		return fmt.Errorf("logins: end sessions: %w", err)
	}
	return nil
}

// sealData is the associated data of the login's sealed two-factor key
// (totp.go): a key copied onto another login's row does not open. The
// owner's is the account alone (as sealed before members had keys).
func (w Who) sealData() []byte {
	d := "totp:" + strconv.FormatInt(w.AccountID, 10)
	if w.MemberID != 0 {
		d += ":member:" + strconv.FormatInt(w.MemberID, 10)
	}
	return []byte(d)
}

func ownerLogin(u *models.User) *login {
	return &login{Who: Owner(u.ID), Name: u.Name, Email: u.Email, PasswordHash: u.PasswordHash,
		TOTPSecret: u.TOTPSecret, TOTPPending: u.TOTPPending, TOTPLastStep: u.TOTPLastStep}
}

func memberLogin(m *models.Member) *login {
	return &login{Who: Who{AccountID: m.UserID, MemberID: m.ID}, Name: m.Name, Email: m.Email, PasswordHash: m.PasswordHash,
		TOTPSecret: m.TOTPSecret, TOTPPending: m.TOTPPending, TOTPLastStep: m.TOTPLastStep}
}

// loginOf reads a login. Errors: ErrNotFound (also for a member of
// another account).
func (a *Accounts) loginOf(ctx context.Context, w Who) (*login, error) {
	if w.MemberID == 0 {
		u, err := a.Get(ctx, w.AccountID)
		if err != nil {
			return nil, core.Wrap(err, "logins: read")
		}
		return ownerLogin(u), nil
	}
	var m models.Member
	if err := a.db.R.WithContext(ctx).Where("user_id = ? AND id = ?", w.AccountID, w.MemberID).First(&m).Error; err != nil {
		return nil, core.Wrap(core.NotFound(err), "logins: read")
	}
	return memberLogin(&m), nil
}

// loginByEmail reads the login of an address (an address is one login:
// loginTaken). Errors: ErrNotFound.
func (a *Accounts) loginByEmail(ctx context.Context, email string) (*login, error) {
	e, _ := core.NormalizeEmail(email)
	var u models.User
	err := a.db.R.WithContext(ctx).Where("email = ?", e).First(&u).Error
	if err == nil {
		return ownerLogin(&u), nil
	}
	if !errors.Is(err, gorm.ErrRecordNotFound) {
		return nil, fmt.Errorf("logins: by email: %w", err)
	}
	var m models.Member
	if err := a.db.R.WithContext(ctx).Where("email = ?", e).First(&m).Error; err != nil {
		return nil, core.Wrap(core.NotFound(err), "logins: by email")
	}
	return memberLogin(&m), nil
}

// auditLogin writes the audit line of a change to the login l's own
// password or two-factor login (target: its address). by says how, when
// not in the console ("by mail", "from the command line"). A change made
// through a mailed link names the login itself as its author: the link
// proved who it was.
func (a *Accounts) auditLogin(ctx context.Context, l *login, action core.AuditAction, by string, self bool) error {
	if self {
		if _, ok := core.ActorOf(ctx); !ok {
			ctx = core.WithActor(ctx, core.Actor{AccountID: l.AccountID, MemberID: l.MemberID, Name: l.Name + " <" + l.Email + ">"})
		}
	}
	return a.audit.Record(ctx, l.AccountID, action, l.Email, by)
}
