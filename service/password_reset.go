package service

import (
	"context"
	"crypto/rand"
	"encoding/base64"
	"errors"
	"time"

	"golang.org/x/crypto/bcrypt"
	"gorm.io/gorm"

	"herald/models"
)

// ResetLinkTTL is how long a mailed password reset link works.
const ResetLinkTTL = time.Hour

// ErrResetLink refuses a password reset link that is unknown, used or
// expired.
var ErrResetLink = &Error{Code: CodeNotFound, Message: "This password reset link has expired or was already used. Ask for a new one."}

// RequestPasswordReset mails the address a link that sets a new password
// (ResetLinkTTL, once), when it names an account, and otherwise a notice
// that it has none. The answer is the same whether it does or not (no
// account enumeration): nil, unless the address is malformed. Mails to one address are throttled as sign-up mails are
// (throttleReset); beyond, nothing is mailed and the answer is the same.
// Errors: validation (email).
func (a *Accounts) RequestPasswordReset(ctx context.Context, email string) error {
	e, ok := NormalizeEmail(email)
	p := Problems{}
	if p.required("email", email) && !ok {
		p.AddReason("email", ReasonEmail, msgEmail("email"))
	}
	if err := p.Err(); err != nil {
		return err
	}
	t := throttle{db: a.db, now: a.clock}
	key := throttleKey{rule: throttleReset, key: e}
	wait, err := t.wait(ctx, key)
	if err != nil || wait > 0 {
		return err
	}
	// Counted for a free address too, so both cost the same writes.
	if err := t.fail(ctx, key); err != nil {
		return err
	}
	var u models.User
	err = a.db.R.WithContext(ctx).Select("id", "name", "email").Where("email = ?", e).First(&u).Error
	if errors.Is(err, gorm.ErrRecordNotFound) {
		// A mail either way, so that the answer takes as long (a relay's
		// round trip is what a timing attacker would see), as sign-up does.
		return a.mail.SendResetNotice(ctx, e)
	}
	if err != nil {
		return err
	}
	token, hash := newToken()
	now := a.clock()
	err = a.db.W.WithContext(ctx).Transaction(func(tx *gorm.DB) error {
		if err := tx.Exec("DELETE FROM password_resets WHERE expires_at <= ?", now.UnixMilli()).Error; err != nil {
			return err
		}
		return tx.Exec("INSERT INTO password_resets (user_id, token_hash, created_at, expires_at) VALUES (?, ?, ?, ?)",
			u.ID, hash, now.UnixMilli(), now.Add(ResetLinkTTL).UnixMilli()).Error
	})
	if err != nil {
		return err
	}
	return a.mail.SendPasswordReset(ctx, u.Name, u.Email, token)
}

// PasswordReset returns the address whose password a mailed link resets,
// while the link works. It changes nothing (mail gateways open links to
// scan them). Errors: ErrResetLink.
func (a *Accounts) PasswordReset(ctx context.Context, token string) (email string, err error) {
	var emails []string
	err = a.db.R.WithContext(ctx).Table("password_resets").Joins("JOIN users ON users.id = password_resets.user_id").
		Where("password_resets.token_hash = ? AND password_resets.expires_at > ?", tokenHash(token), a.clock().UnixMilli()).
		Limit(1).Pluck("users.email", &emails).Error
	if err != nil {
		return "", err
	}
	if len(emails) == 0 {
		return "", ErrResetLink
	}
	return emails[0], nil
}

// NewPassword is the reset form: the new password twice.
type NewPassword struct {
	Password     string
	Confirmation string
}

// FinishPasswordReset sets the password a mailed link allows and ends
// every session of the account. The link works once: it and every other
// link of the account are used up. Two-factor login, when on, stays on.
// Errors: ErrResetLink; validation (password, password_confirmation).
func (a *Accounts) FinishPasswordReset(ctx context.Context, token string, in NewPassword) (*models.User, error) {
	if _, err := a.PasswordReset(ctx, token); err != nil {
		return nil, err
	}
	p := Problems{}
	p.newPassword("password", in.Password)
	if !p.Has("password") && in.Confirmation != in.Password {
		p.Add("password_confirmation", "The password confirmation does not match.")
	}
	if err := p.Err(); err != nil {
		return nil, err
	}
	hash, err := bcrypt.GenerateFromPassword([]byte(in.Password), a.cost)
	if err != nil {
		return nil, err
	}
	now := a.clock().UnixMilli()
	var u models.User
	err = a.db.W.WithContext(ctx).Transaction(func(tx *gorm.DB) error {
		var ids []int64
		if err := tx.Table("password_resets").Where("token_hash = ? AND expires_at > ?", tokenHash(token), now).
			Limit(1).Pluck("user_id", &ids).Error; err != nil {
			return err
		}
		if len(ids) == 0 {
			return ErrResetLink
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
		if err := setPassword(tx, ids[0], string(hash)); err != nil {
			return err
		}
		return tx.First(&u, ids[0]).Error
	})
	if err != nil {
		return nil, err
	}
	return &u, nil
}

// setPassword stores a new password hash inside tx and ends every session
// and every reset link of the account.
func setPassword(tx *gorm.DB, accountID int64, hash string) error {
	err := tx.Model(&models.User{}).Where("id = ?", accountID).
		Updates(map[string]any{"password_hash": hash, "updated_at": models.Now()}).Error
	if err != nil {
		return err
	}
	if err := tx.Exec("DELETE FROM password_resets WHERE user_id = ?", accountID).Error; err != nil {
		return err
	}
	// The owner's sessions; the members' (team.go) are theirs.
	return tx.Exec("DELETE FROM sessions WHERE user_id = ? AND member_id = 0", accountID).Error
}

// ResetPassword sets an account's password from the command line
// (`herald account reset-password`): the given one, or when it is empty a
// random one, which it returns (the only copy). Every session of the
// account ends. Errors: ErrNotFound; validation (password).
func (a *Accounts) ResetPassword(ctx context.Context, email, password string) (string, error) {
	u, err := a.ByEmail(ctx, email)
	if err != nil {
		return "", err
	}
	if password == "" {
		// 18 random bytes: 24 characters, 144 bits.
		b := make([]byte, 18)
		_, _ = rand.Read(b)
		password = base64.RawURLEncoding.EncodeToString(b)
	}
	p := Problems{}
	p.newPassword("password", password)
	if err := p.Err(); err != nil {
		return "", err
	}
	hash, err := bcrypt.GenerateFromPassword([]byte(password), a.cost)
	if err != nil {
		return "", err
	}
	err = a.db.W.WithContext(ctx).Transaction(func(tx *gorm.DB) error {
		return setPassword(tx, u.ID, string(hash))
	})
	if err != nil {
		return "", err
	}
	return password, nil
}
