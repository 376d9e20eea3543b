package identity

import (
	"context"
	"errors"
	"fmt"
	"time"

	"golang.org/x/crypto/bcrypt"
	"gorm.io/gorm"

	"herald/models"
	"herald/service/core"
)

// SignupLinkTTL is how long a mailed sign-up link works.
const SignupLinkTTL = 24 * time.Hour

// SignUpResult is what a sign-up did. User is set only when the account
// was opened at once: the first account of an empty database (the person
// installing herald). Otherwise a mail went to Email, or not (throttled),
// and the console answers the same whether the address had an account.
type SignUpResult struct {
	User  *models.User
	Keys  Keys
	Email string // the address as stored (lower case)
}

// ErrSignupClosed refuses every sign-up of a server started with
// HERALD_SIGNUP=off.
var ErrSignupClosed = &core.Error{Code: core.CodeForbidden, Message: "Sign-up is closed on this server. Ask its administrator for an account."}

// SignupOpen reports whether people may sign up from the console
// (HERALD_SIGNUP is not off).
func (a *Accounts) SignupOpen() bool { return !a.signupClosed }

// ErrSignupLink refuses a sign-up link that is unknown, used or expired.
var ErrSignupLink = &core.Error{Code: core.CodeNotFound, Message: "This sign-up link has expired or was already used. Sign up again to get a new one."}

// SignUp opens an account from the console's sign-up form without telling
// whether the address already has one (decisions.md 8). On an empty
// database the account is opened at once. Otherwise the password is hashed
// on every path, and the address gets a mail: a link that finishes the
// sign-up (kept as a pending sign-up for SignupLinkTTL) when it is free, a
// notice that it already has an account when it is taken. At most a few
// such mails go to one address a day (throttleSignup); beyond, nothing is
// mailed and the answer is the same.
// Errors: ErrSignupClosed; validation of the form (name, email,
// password), as Create's but never "taken".
func (a *Accounts) SignUp(ctx context.Context, in AccountInput) (*SignUpResult, error) {
	if a.signupClosed {
		return nil, ErrSignupClosed
	}
	name, email, err := checkAccount(in)
	if err != nil {
		return nil, err
	}
	var some []int64
	if err := a.db.R.WithContext(ctx).Model(&models.User{}).Limit(1).Pluck("id", &some).Error; err != nil {
		return nil, fmt.Errorf("accounts: is there an account: %w", err)
	}
	if len(some) == 0 {
		u, keys, err := a.Create(ctx, in)
		if err != nil {
			return nil, core.Wrap(err, "accounts: sign up")
		}
		return &SignUpResult{User: u, Keys: keys, Email: u.Email}, nil
	}
	hash, err := bcrypt.GenerateFromPassword([]byte(in.Password), a.cost)
	if err != nil {
		return nil, err
	}
	// A member's address (team.go) is taken as an account's is.
	taken, err := loginTaken(a.db.R.WithContext(ctx), email)
	if err != nil {
		return nil, fmt.Errorf("accounts: sign up: %w", err)
	}
	now := a.now()
	t := throttle{db: a.db, now: a.now}
	key := throttleKey{rule: throttleSignup, key: email}
	wait, err := t.wait(ctx, key)
	if err != nil {
		return nil, fmt.Errorf("accounts: sign up: %w", err)
	}
	res := &SignUpResult{Email: email}
	if wait > 0 {
		return res, nil
	}
	if err := t.fail(ctx, key); err != nil {
		return nil, fmt.Errorf("accounts: sign up: %w", err)
	}
	if taken {
		return res, a.mail.SendSignupNotice(ctx, email)
	}
	token, tokenHash := newToken()
	err = a.db.W.WithContext(ctx).Transaction(func(tx *gorm.DB) error {
		if err := tx.Exec("DELETE FROM pending_signups WHERE expires_at <= ?", now.UnixMilli()).Error; err != nil {
			return fmt.Errorf("accounts: forget expired sign-ups: %w", err)
		}
		return tx.Create(&models.PendingSignup{
			TokenHash: tokenHash, Name: name, Email: email, PasswordHash: string(hash),
			CreatedAt: now.UnixMilli(), ExpiresAt: now.Add(SignupLinkTTL).UnixMilli(),
		}).Error
	})
	if err != nil {
		return nil, fmt.Errorf("accounts: sign up: %w", err)
	}
	return res, a.mail.SendSignupLink(ctx, name, email, token)
}

// PendingSignUp returns the sign-up a mailed link names, while it is
// valid. Errors: ErrSignupClosed, ErrSignupLink.
func (a *Accounts) PendingSignUp(ctx context.Context, token string) (*models.PendingSignup, error) {
	if a.signupClosed {
		return nil, ErrSignupClosed
	}
	var p models.PendingSignup
	err := a.db.R.WithContext(ctx).Where("token_hash = ? AND expires_at > ?", tokenHash(token), a.now().UnixMilli()).First(&p).Error
	if errors.Is(err, gorm.ErrRecordNotFound) {
		return nil, ErrSignupLink
	}
	if err != nil {
		return nil, fmt.Errorf("accounts: pending sign-up: %w", err)
	}
	return &p, nil
}

// FinishSignUp opens the account of a pending sign-up (the link's
// confirmation) and returns it with its first keys. The link works once.
// Errors: ErrSignupClosed, ErrSignupLink; conflict when the address got
// an account in the meantime.
func (a *Accounts) FinishSignUp(ctx context.Context, token string) (*models.User, Keys, error) {
	if a.signupClosed {
		return nil, Keys{}, ErrSignupClosed
	}
	var u *models.User
	var keys Keys
	now := a.now().UnixMilli()
	err := a.db.W.WithContext(ctx).Transaction(func(tx *gorm.DB) error {
		var p models.PendingSignup
		if err := tx.Where("token_hash = ? AND expires_at > ?", tokenHash(token), now).First(&p).Error; err != nil {
			if errors.Is(err, gorm.ErrRecordNotFound) {
				return ErrSignupLink
			}
			return err
		}
		// This link and any other of the address are used up.
		if err := tx.Exec("DELETE FROM pending_signups WHERE email = ?", p.Email).Error; err != nil {
			return fmt.Errorf("accounts: spend a sign-up link: %w", err)
		}
		var err error
		u, keys, err = insertAccount(tx, p.Name, p.Email, p.PasswordHash)
		if isValidationOf(err, "email") {
			return &core.Error{Code: core.CodeConflict, Message: "An account with this address already exists. Log in instead."}
		}
		return err
	})
	if err != nil {
		return nil, Keys{}, core.Wrap(err, "accounts: finish sign-up")
	}
	return u, keys, nil
}

// isValidationOf reports whether err is a validation error with a message
// for field.
func isValidationOf(err error, field string) bool {
	var e *core.Error
	return errors.As(err, &e) && e.Code == core.CodeValidation && len(e.Fields[field]) > 0
}
