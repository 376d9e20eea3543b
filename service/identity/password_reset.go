package identity

import (
	"context"
	"crypto/rand"
	"encoding/base64"
	"fmt"
	"herald/service/core"
	"time"

	"golang.org/x/crypto/bcrypt"
	"gorm.io/gorm"
)

// ResetLinkTTL is how long a mailed password reset link works.
const ResetLinkTTL = time.Hour

// ErrResetLink refuses a password reset link that is unknown, used or
// expired.
var ErrResetLink = &core.Error{Code: core.CodeNotFound, Message: "This password reset link has expired or was already used. Ask for a new one."}

// RequestPasswordReset mails the address a link that sets a new password
// (ResetLinkTTL, once), when it is a login (an account's owner or a
// member of an account), and otherwise a notice that it has none. The
// answer is the same whether it is or not (no enumeration): nil, unless
// the address is malformed. Mails to one address are throttled as sign-up
// mails are (throttleReset); beyond, nothing is mailed and the answer is
// the same. Errors: validation (email).
func (a *Accounts) RequestPasswordReset(ctx context.Context, email string) error {
	e, ok := core.NormalizeEmail(email)
	p := core.Problems{}
	if p.Required("email", email) && !ok {
		p.AddReason("email", core.ReasonEmail, core.MsgEmail("email"))
	}
	if err := p.Err(); err != nil {
		return err
	}
	t := throttle{db: a.db, now: a.now}
	key := throttleKey{rule: throttleReset, key: e}
	wait, err := t.wait(ctx, key)
	if err != nil {
		return fmt.Errorf("accounts: request password reset: %w", err)
	}
	if wait > 0 {
		return nil
	}
	// Counted for a free address too, so both cost the same writes.
	if err := t.fail(ctx, key); err != nil {
		return fmt.Errorf("accounts: request password reset: %w", err)
	}
	l, err := a.loginByEmail(ctx, e)
	if core.IsNotFound(err) {
		// A mail either way, so that the answer takes as long (a relay's
		// round trip is what a timing attacker would see), as sign-up does.
		return a.mail.SendResetNotice(ctx, e)
	}
	if err != nil {
		return fmt.Errorf("accounts: request password reset: %w", err)
	}
	token, hash := newToken()
	now := a.now()
	err = a.db.W.WithContext(ctx).Transaction(func(tx *gorm.DB) error {
		if err := tx.Exec("DELETE FROM password_resets WHERE expires_at <= ?", now.UnixMilli()).Error; err != nil {
			return fmt.Errorf("accounts: forget expired password resets: %w", err)
		}
		return tx.Exec("INSERT INTO password_resets (user_id, member_id, token_hash, created_at, expires_at) VALUES (?, ?, ?, ?, ?)",
			l.AccountID, l.MemberID, hash, now.UnixMilli(), now.Add(ResetLinkTTL).UnixMilli()).Error
	})
	if err != nil {
		return fmt.Errorf("accounts: request password reset: %w", err)
	}
	// Filed under no account (as sign-up mails): the account's outbox is
	// read by its admins, and the link is this login's alone.
	return a.mail.SendPasswordReset(ctx, l.Name, l.Email, token)
}

// resetLink is the login a working link resets, read inside db. Errors:
// ErrResetLink.
func (a *Accounts) resetLink(ctx context.Context, db *gorm.DB, token string) (Who, error) {
	var rows []Who
	err := db.WithContext(ctx).Table("password_resets").Select("user_id AS account_id", "member_id").
		Where("token_hash = ? AND expires_at > ?", tokenHash(token), a.now().UnixMilli()).
		Limit(1).Scan(&rows).Error
	if err != nil {
		return Who{}, fmt.Errorf("accounts: read a reset link: %w", err)
	}
	if len(rows) == 0 {
		return Who{}, ErrResetLink
	}
	return rows[0], nil
}

// PasswordReset returns the address whose password a mailed link resets,
// while the link works. It changes nothing (mail gateways open links to
// scan them). Errors: ErrResetLink.
func (a *Accounts) PasswordReset(ctx context.Context, token string) (email string, err error) {
	w, err := a.resetLink(ctx, a.db.R, token)
	if err != nil {
		return "", core.Wrap(err, "accounts: password reset")
	}
	l, err := a.loginOf(ctx, w)
	if core.IsNotFound(err) {
		return "", ErrResetLink
	}
	if err != nil {
		return "", fmt.Errorf("accounts: password reset: %w", err)
	}
	return l.Email, nil
}

// NewPassword is the reset form: the new password twice.
type NewPassword struct {
	Password     string
	Confirmation string
}

// FinishPasswordReset sets the password a mailed link allows and ends
// every session of that login (the owner's or one member's; the account's
// other logins stay logged in), and returns the login. The link works
// once: it and every other link of the login are used up. Two-factor
// login, when on, stays on.
// Errors: ErrResetLink; validation (password, password_confirmation).
func (a *Accounts) FinishPasswordReset(ctx context.Context, token string, in NewPassword) (Who, error) {
	if _, err := a.PasswordReset(ctx, token); err != nil {
		return Who{}, core.Wrap(err, "accounts: finish password reset")
	}
	p := core.Problems{}
	checkNewPassword(p, "password", in.Password)
	if !p.Has("password") && in.Confirmation != in.Password {
		p.Add("password_confirmation", "The password confirmation does not match.")
	}
	if err := p.Err(); err != nil {
		return Who{}, err
	}
	hash, err := bcrypt.GenerateFromPassword([]byte(in.Password), a.cost)
	if err != nil {
		return Who{}, err
	}
	var w Who
	err = a.db.W.WithContext(ctx).Transaction(func(tx *gorm.DB) error {
		if w, err = a.resetLink(ctx, tx, token); err != nil {
			return err
		}
		// Deleting the link is what uses it: of two uses at once (two
		// processes), the second deletes nothing and is refused.
		del := tx.Exec("DELETE FROM password_resets WHERE token_hash = ?", tokenHash(token))
		if del.Error != nil {
			return del.Error
		}
		if del.RowsAffected != 1 {
			return ErrResetLink
		}
		err := setPassword(tx, w, string(hash))
		if core.IsNotFound(err) { // a member removed in between
			return ErrResetLink
		}
		return err
	})
	if err != nil {
		return Who{}, core.Wrap(err, "accounts: finish password reset")
	}
	l, err := a.loginOf(ctx, w)
	if err != nil {
		return Who{}, core.Wrap(err, "accounts: finish password reset")
	}
	return w, a.auditLogin(ctx, l, core.AuditPasswordReset, "by mail", true)
}

// setPassword stores a new password hash of the login inside tx and ends
// its sessions and reset links (not those of the account's other logins).
// Errors: ErrNotFound.
func setPassword(tx *gorm.DB, w Who, hash string) error {
	if err := w.update(tx, map[string]any{"password_hash": hash}); err != nil {
		return core.Wrap(err, "accounts: set password")
	}
	if err := tx.Exec("DELETE FROM password_resets WHERE user_id = ? AND member_id = ?", w.AccountID, w.MemberID).Error; err != nil {
		return fmt.Errorf("accounts: drop the password resets of account %d: %w", w.AccountID, err)
	}
	return w.endSessions(tx)
}

// ResetPassword sets the password of a login (an account's owner or a
// member) from the command line (`herald account reset-password`): the
// given one, or when it is empty a random one, which it returns (the
// only copy), with the login it set. Every session of that login ends.
// Errors: ErrNotFound; validation (password).
func (a *Accounts) ResetPassword(ctx context.Context, email, password string) (string, Who, error) {
	l, err := a.loginByEmail(ctx, email)
	if err != nil {
		return "", Who{}, core.Wrap(err, "accounts: reset password")
	}
	if password == "" {
		// 18 random bytes: 24 characters, 144 bits.
		b := make([]byte, 18)
		_, _ = rand.Read(b)
		password = base64.RawURLEncoding.EncodeToString(b)
	}
	p := core.Problems{}
	checkNewPassword(p, "password", password)
	if err := p.Err(); err != nil {
		return "", Who{}, err
	}
	hash, err := bcrypt.GenerateFromPassword([]byte(password), a.cost)
	if err != nil {
		return "", Who{}, err
	}
	err = a.db.W.WithContext(ctx).Transaction(func(tx *gorm.DB) error {
		return setPassword(tx, l.Who, string(hash))
	})
	if err != nil {
		return "", Who{}, core.Wrap(err, "accounts: reset password")
	}
	return password, l.Who, a.auditLogin(ctx, l, core.AuditPasswordReset, "from the command line", false)
}
