package identity

import (
	"context"
	"crypto/rand"
	"encoding/base64"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"time"

	"golang.org/x/crypto/bcrypt"
	"gorm.io/gorm"

	"herald/models"
	"herald/service/core"
	"herald/service/deliverability"
)

// InvitationTTL is how long a mailed invitation link works.
const InvitationTTL = 7 * 24 * time.Hour

// ErrInvitationLink refuses an invitation link that is unknown, used,
// revoked or expired.
var ErrInvitationLink = &core.Error{Code: core.CodeNotFound, Message: "This invitation has expired, was revoked or was already used. Ask for a new one."}

// errLoginTaken refuses an invitation accepted by an address that already
// logs in to Herald: a person belongs to one account (one login, one
// account keeps the session and every query scoped by one account id).
var errLoginTaken = &core.Error{Code: core.CodeConflict, Message: "This address already logs in to Herald, and a login belongs to one account. Ask to be invited at another address."}

// Team keeps an account's members, their invitations and roles. The
// account's own login is its owner; members are admins, editors or
// viewers (roles.go).
type Team struct {
	db       *core.DB
	mail     *deliverability.Mail
	accounts *Accounts // the password cost and the clock
	audit    *Audit
}

// Authorize answers nil when the actor's role may do action, and
// otherwise a forbidden error saying why, after recording the refusal in
// the audit log with what was tried (target: the console names the
// request, "POST /single-sends").
func (t *Team) Authorize(ctx context.Context, a core.Actor, action Action, target string) error {
	if Can(a.Role, action) {
		return nil
	}
	if err := t.audit.Record(ctx, a.AccountID, core.AuditDenied, target, string(action)); err != nil {
		return fmt.Errorf("team: authorize: %w", err)
	}
	return Forbidden(a.Role, action)
}

// Invite mails addr a link (valid InvitationTTL) that makes it a member
// of the account with role, and returns the pending invitation. Inviting
// an address again replaces its pending invitation (a new link). Mails to
// one address are throttled as sign-up mails are (throttleSignup), and
// an account's invitations over every address too (throttleInvites).
// Whether the address already logs in elsewhere is not told here (that
// would tell any account which addresses have logins): the link says so
// when it is opened. Errors: validation (email, role; a member of the
// team already), rate limited.
func (t *Team) Invite(ctx context.Context, accountID int64, email string, role core.Role) (*models.Invitation, error) {
	p := core.Problems{}
	addr, ok := core.NormalizeEmail(email)
	if p.Required("email", email) && !ok {
		p.AddReason("email", core.ReasonEmail, core.MsgEmail("email"))
	}
	if !role.Valid() {
		p.InvalidChoice("role")
	}
	if err := p.Err(); err != nil {
		return nil, err
	}
	u, err := t.accounts.Get(ctx, accountID)
	if err != nil {
		return nil, core.Wrap(err, "team: invite")
	}
	var n int64
	if err := t.db.R.WithContext(ctx).Model(&models.Member{}).Where("user_id = ? AND email = ?", accountID, addr).Count(&n).Error; err != nil {
		return nil, fmt.Errorf("team: is an address a member of account %d: %w", accountID, err)
	}
	if n > 0 || u.Email == addr {
		return nil, core.Invalid("email", "This address is already in the team.")
	}
	th := throttle{db: t.db, now: t.accounts.now}
	key := throttleKey{rule: throttleSignup, key: addr}
	byAccount := throttleKey{rule: throttleInvites, key: strconv.FormatInt(accountID, 10)}
	for _, k := range []throttleKey{byAccount, key} {
		wait, err := th.wait(ctx, k)
		if err != nil {
			return nil, fmt.Errorf("team: invite: %w", err)
		}
		if wait > 0 {
			msg := "Several mails went to this address lately. Try again later."
			if k == byAccount {
				msg = "This account sent many invitations lately. Try again later."
			}
			return nil, &retryError{err: &core.Error{Code: core.CodeRateLimited, Message: msg}, after: wait}
		}
	}
	if err := th.fail(ctx, byAccount, key); err != nil {
		return nil, fmt.Errorf("team: invite: %w", err)
	}
	b := make([]byte, 32)
	_, _ = rand.Read(b)
	token := base64.RawURLEncoding.EncodeToString(b)
	now := t.accounts.now()
	inv := &models.Invitation{
		UserID: accountID, Email: addr, Role: string(role), TokenHash: tokenHash(token),
		InvitedBy: actorName(ctx, u), CreatedAt: now.UnixMilli(), ExpiresAt: now.Add(InvitationTTL).UnixMilli(),
	}
	err = t.db.W.WithContext(ctx).Transaction(func(tx *gorm.DB) error {
		if err := tx.Exec("DELETE FROM invitations WHERE user_id = ? AND email = ?", accountID, addr).Error; err != nil {
			return fmt.Errorf("team: drop an address's invitations to account %d: %w", accountID, err)
		}
		return tx.Create(inv).Error
	})
	if err != nil {
		return nil, fmt.Errorf("team: invite: %w", err)
	}
	if err := t.audit.Record(ctx, accountID, core.AuditMemberInvited, addr, "as "+role.Label()); err != nil {
		return nil, fmt.Errorf("team: invite: %w", err)
	}
	brand, err := core.ReadBrand(ctx, t.db.R, accountID)
	if err != nil {
		return nil, fmt.Errorf("team: invite: %w", err)
	}
	return inv, t.mail.SendInvitation(core.WithAccount(ctx, accountID), u.Name, brand, inv.InvitedBy, addr, role, token)
}

// actorName is how the invitation and the audit log name the person
// acting: the actor on ctx, else the account's owner.
func actorName(ctx context.Context, owner *models.User) string {
	if a, ok := core.ActorOf(ctx); ok && a.Name != "" {
		return a.Name
	}
	return owner.Name + " <" + owner.Email + ">"
}

// Invitations returns the account's invitations whose link still works,
// the newest first.
func (t *Team) Invitations(ctx context.Context, accountID int64) ([]models.Invitation, error) {
	var rows []models.Invitation
	err := t.db.R.WithContext(ctx).Where("user_id = ? AND expires_at > ?", accountID, t.accounts.now().UnixMilli()).
		Order("id DESC").Find(&rows).Error
	if err != nil {
		return nil, fmt.Errorf("team: invitations: %w", err)
	}
	return rows, nil
}

// Revoke deletes a pending invitation: its link stops working at once.
// Errors: ErrNotFound.
func (t *Team) Revoke(ctx context.Context, accountID, id int64) error {
	var inv models.Invitation
	if err := t.db.W.WithContext(ctx).Where("user_id = ? AND id = ?", accountID, id).First(&inv).Error; err != nil {
		return core.Wrap(core.NotFound(err), "team: revoke invitation")
	}
	if err := t.db.W.WithContext(ctx).Exec("DELETE FROM invitations WHERE id = ?", inv.ID).Error; err != nil {
		return fmt.Errorf("team: revoke invitation %d: %w", inv.ID, err)
	}
	return t.audit.Record(ctx, accountID, core.AuditInvitationRevoked, inv.Email, "")
}

// PendingInvitation is an invitation a link names, with the account's
// name (its owner's) and its organisation profile's company name ("" for
// none) for the page that accepts it.
type PendingInvitation struct {
	models.Invitation
	AccountName string
	Company     string
}

// TeamName is how the invitation's page names the team: the company, else
// the owner's name.
func (p *PendingInvitation) TeamName() string {
	if p.Company != "" {
		return p.Company
	}
	return p.AccountName
}

// Invitation returns the invitation a link names while it works.
// Errors: ErrInvitationLink.
func (t *Team) Invitation(ctx context.Context, token string) (*PendingInvitation, error) {
	var inv models.Invitation
	err := t.db.R.WithContext(ctx).Where("token_hash = ? AND expires_at > ?", tokenHash(token), t.accounts.now().UnixMilli()).First(&inv).Error
	if errors.Is(err, gorm.ErrRecordNotFound) {
		return nil, ErrInvitationLink
	}
	if err != nil {
		return nil, fmt.Errorf("team: invitation: %w", err)
	}
	u, err := t.accounts.Get(ctx, inv.UserID)
	if err != nil {
		return nil, core.Wrap(err, "team: invitation")
	}
	b, err := core.ReadBrand(ctx, t.db.R, inv.UserID)
	if err != nil {
		return nil, fmt.Errorf("team: invitation: %w", err)
	}
	return &PendingInvitation{Invitation: inv, AccountName: u.Name, Company: b.Name}, nil
}

// AcceptInput is the form of an invitation's page: the new member's name
// and password.
type AcceptInput struct {
	Name     string
	Password string
}

// Accept makes the invited address a member with the invitation's role,
// its password the one chosen here; the link works once. Errors:
// ErrInvitationLink; validation (name, password); conflict when the
// address already logs in to Herald (errLoginTaken).
func (t *Team) Accept(ctx context.Context, token string, in AcceptInput) (*models.Member, error) {
	p := core.Problems{}
	name := strings.TrimSpace(in.Name)
	if p.Required("name", name) {
		p.MaxLen("name", name, 255)
		p.SingleLine("name", name)
	}
	checkNewPassword(p, "password", in.Password)
	if err := p.Err(); err != nil {
		return nil, err
	}
	hash, err := bcrypt.GenerateFromPassword([]byte(in.Password), t.accounts.cost)
	if err != nil {
		return nil, err
	}
	now := t.accounts.now().UnixMilli()
	var m *models.Member
	err = t.db.W.WithContext(ctx).Transaction(func(tx *gorm.DB) error {
		var inv models.Invitation
		if err := tx.Where("token_hash = ? AND expires_at > ?", tokenHash(token), now).First(&inv).Error; err != nil {
			if errors.Is(err, gorm.ErrRecordNotFound) {
				return ErrInvitationLink
			}
			return err
		}
		if taken, err := loginTaken(tx, inv.Email); err != nil || taken {
			if err == nil {
				err = errLoginTaken
			}
			return err
		}
		if err := tx.Exec("DELETE FROM invitations WHERE id = ?", inv.ID).Error; err != nil {
			return fmt.Errorf("team: spend invitation %d: %w", inv.ID, err)
		}
		m = &models.Member{UserID: inv.UserID, Name: name, Email: inv.Email, PasswordHash: string(hash), Role: inv.Role, CreatedAt: now, UpdatedAt: now}
		return tx.Create(m).Error
	})
	if err != nil {
		return nil, core.Wrap(err, "team: accept")
	}
	ctx = core.WithActor(ctx, core.Actor{AccountID: m.UserID, MemberID: m.ID, Role: core.Role(m.Role), Name: m.Name + " <" + m.Email + ">"})
	return m, t.audit.Record(ctx, m.UserID, core.AuditMemberJoined, m.Email, "as "+core.Role(m.Role).Label())
}

// loginTaken reports whether addr logs in already: an account's or a
// member's.
func loginTaken(tx *gorm.DB, addr string) (bool, error) {
	var n int64
	if err := tx.Model(&models.User{}).Where("email = ?", addr).Count(&n).Error; err != nil {
		return false, fmt.Errorf("logins: is an address taken: %w", err)
	}
	if n > 0 {
		return true, nil
	}
	if err := tx.Model(&models.Member{}).Where("email = ?", addr).Count(&n).Error; err != nil {
		return false, fmt.Errorf("logins: is an address taken: %w", err)
	}
	return n > 0, nil
}

// Members returns the account's members, in the order they joined.
func (t *Team) Members(ctx context.Context, accountID int64) ([]models.Member, error) {
	var rows []models.Member
	if err := t.db.R.WithContext(ctx).Where("user_id = ?", accountID).Order("id").Find(&rows).Error; err != nil {
		return nil, fmt.Errorf("team: members: %w", err)
	}
	return rows, nil
}

// Member returns one member of the account. Errors: ErrNotFound (also
// for another account's member).
func (t *Team) Member(ctx context.Context, accountID, id int64) (*models.Member, error) {
	var m models.Member
	if err := t.db.R.WithContext(ctx).Where("user_id = ? AND id = ?", accountID, id).First(&m).Error; err != nil {
		return nil, core.Wrap(core.NotFound(err), "team: member")
	}
	return &m, nil
}

// SetRole changes a member's role; every process reads it on the member's
// next request (web checks it on each). Errors: ErrNotFound, validation
// (role).
func (t *Team) SetRole(ctx context.Context, accountID, id int64, role core.Role) error {
	if !role.Valid() {
		p := core.Problems{}
		p.InvalidChoice("role")
		return p.Err()
	}
	m, err := t.Member(ctx, accountID, id)
	if err != nil {
		return core.Wrap(err, "team: set role")
	}
	if core.Role(m.Role) == role {
		return nil
	}
	err = t.db.W.WithContext(ctx).Exec("UPDATE members SET role = ?, updated_at = ? WHERE user_id = ? AND id = ?",
		string(role), t.db.Now().UnixMilli(), accountID, id).Error
	if err != nil {
		return fmt.Errorf("team: change the role of member %d: %w", id, err)
	}
	return t.audit.Record(ctx, accountID, core.AuditRoleChanged, m.Email, core.Role(m.Role).Label()+" → "+role.Label())
}

// Remove deletes a member with all of its login (its row, with its
// two-factor key; its sessions; its password reset links; its recovery
// codes) together: it
// is logged out on every process at once, and a link mailed to it no
// longer works. Errors: ErrNotFound.
func (t *Team) Remove(ctx context.Context, accountID, id int64) error {
	m, err := t.Member(ctx, accountID, id)
	if err != nil {
		return core.Wrap(err, "team: remove")
	}
	err = t.db.W.WithContext(ctx).Transaction(func(tx *gorm.DB) error {
		w := Who{AccountID: accountID, MemberID: id}
		if err := w.endSessions(tx); err != nil {
			return err
		}
		if err := tx.Exec("DELETE FROM password_resets WHERE user_id = ? AND member_id = ?", accountID, id).Error; err != nil {
			return fmt.Errorf("team: drop the password resets of member %d: %w", id, err)
		}
		if err := deleteRecoveryCodes(tx, w); err != nil {
			return err
		}
		return tx.Exec("DELETE FROM members WHERE user_id = ? AND id = ?", accountID, id).Error
	})
	if err != nil {
		return fmt.Errorf("team: remove member %d: %w", id, err)
	}
	return t.audit.Record(ctx, accountID, core.AuditMemberRemoved, m.Email, "was "+core.Role(m.Role).Label())
}
