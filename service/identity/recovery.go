package identity

import (
	"context"
	"crypto/hmac"
	"crypto/rand"
	"crypto/sha256"
	"fmt"
	"strings"

	"golang.org/x/crypto/bcrypt"
	"gorm.io/gorm"

	"herald/service/core"
)

// Two-factor recovery codes. Turning two-factor login on makes ten
// one-time codes, shown once; each is accepted once in place of an
// authenticator's code at login (LoginCode), so a lost phone does not
// need an operator's command line. Making new codes (NewRecoveryCodes)
// deletes the old ones.
//
// How they are kept: a code is ten characters of Crockford's base32
// (50 random bits), shown as two groups of five. Only an HMAC-SHA256 of
// it is stored, keyed by a key derived from HERALD_SECRET_KEY (which
// two-factor login needs anyway, totp.go) with the login as context: the
// table never holds a code, a database dump alone cannot be searched for
// codes (the key is not in it), and a hash copied onto another login's
// row does not match there. Using a code is one UPDATE that marks it
// used only while it is unused: of two logins racing with one code, one
// wins.

// RecoveryCodeCount is the number of codes made at a time.
const RecoveryCodeCount = 10

// RecoveryCodesLow is the number of codes left at or under which the
// account page warns.
const RecoveryCodesLow = 2

// recoveryAlphabet is Crockford's base32, lower case: no i, l, o or u.
const recoveryAlphabet = "0123456789abcdefghjkmnpqrstvwxyz"

const recoveryLen = 10

// ErrTOTPOff refuses recovery codes while two-factor login is off.
var ErrTOTPOff = &core.Error{Code: core.CodeConflict, Message: "Two-factor login is off. Recovery codes are made when it is turned on."}

// newRecoveryCode is one random code as shown: "xxxxx-xxxxx".
func newRecoveryCode() string {
	b := make([]byte, recoveryLen)
	_, _ = rand.Read(b)
	var s strings.Builder
	for i, c := range b {
		if i == recoveryLen/2 {
			s.WriteByte('-')
		}
		s.WriteByte(recoveryAlphabet[c&31]) // 256 is a multiple of 32: no bias
	}
	return s.String()
}

// normalRecoveryCode is code as stored: lower case, without spaces and
// dashes, Crockford's look-alikes read as the digits they stand for; ""
// when it is not the shape of a recovery code.
func normalRecoveryCode(code string) string {
	var s strings.Builder
	for _, r := range strings.ToLower(code) {
		switch r {
		case ' ', '-':
			continue
		case 'o':
			r = '0'
		case 'i', 'l':
			r = '1'
		}
		if !strings.ContainsRune(recoveryAlphabet, r) {
			return ""
		}
		s.WriteRune(r)
	}
	if s.Len() != recoveryLen {
		return ""
	}
	return s.String()
}

// recoveryHash is what is stored of a (normalised) code of login w.
// Errors: ErrNoSecretKey.
func (a *Accounts) recoveryHash(w Who, code string) ([]byte, error) {
	if a.sealKey == nil {
		return nil, ErrNoSecretKey
	}
	k := hmac.New(sha256.New, a.sealKey)
	k.Write([]byte("herald recovery codes v1"))
	m := hmac.New(sha256.New, k.Sum(nil))
	m.Write(w.sealData())
	m.Write([]byte{0})
	m.Write([]byte(code))
	return m.Sum(nil), nil
}

// replaceRecoveryCodes deletes the login's codes and stores the hashes
// of RecoveryCodeCount new ones inside tx; it returns the codes, as shown.
func (a *Accounts) replaceRecoveryCodes(tx *gorm.DB, w Who) ([]string, error) {
	if err := tx.Exec("DELETE FROM recovery_codes WHERE user_id = ? AND member_id = ?", w.AccountID, w.MemberID).Error; err != nil {
		return nil, fmt.Errorf("recovery codes: delete: %w", err)
	}
	now := a.now().UnixMilli()
	codes := make([]string, 0, RecoveryCodeCount)
	for len(codes) < RecoveryCodeCount {
		c := newRecoveryCode()
		h, err := a.recoveryHash(w, normalRecoveryCode(c))
		if err != nil {
			return nil, err
		}
		// ON CONFLICT: two equal codes of 50 random bits are next to
		// impossible; one would be skipped and another drawn.
		res := tx.Exec("INSERT INTO recovery_codes (user_id, member_id, code_hash, created_at) VALUES (?, ?, ?, ?) ON CONFLICT DO NOTHING",
			w.AccountID, w.MemberID, h, now)
		if res.Error != nil {
			return nil, fmt.Errorf("recovery codes: insert: %w", res.Error)
		}
		if res.RowsAffected == 1 {
			codes = append(codes, c)
		}
	}
	return codes, nil
}

// deleteRecoveryCodes deletes every code of the login inside tx.
func deleteRecoveryCodes(tx *gorm.DB, w Who) error {
	if err := tx.Exec("DELETE FROM recovery_codes WHERE user_id = ? AND member_id = ?", w.AccountID, w.MemberID).Error; err != nil {
		return fmt.Errorf("recovery codes: delete: %w", err)
	}
	return nil
}

// RecoveryCodesLeft is the number of unused recovery codes of the login.
func (a *Accounts) RecoveryCodesLeft(ctx context.Context, w Who) (int, error) {
	var n int64
	err := a.db.R.WithContext(ctx).Table("recovery_codes").
		Where("user_id = ? AND member_id = ? AND used_at IS NULL", w.AccountID, w.MemberID).Count(&n).Error
	if err != nil {
		return 0, fmt.Errorf("recovery codes: count: %w", err)
	}
	return int(n), nil
}

// NewRecoveryCodes replaces the login's recovery codes with
// RecoveryCodeCount new ones and returns them (they are shown once and
// never again), given proof: the login's password or a current code of
// its authenticator (accepted once, like a login's). A wrong proof
// counts as a failed login of the address and the IP. Errors: ErrTOTPOff,
// ErrNoSecretKey, ErrNotFound, validation (current_password), rate
// limited.
func (a *Accounts) NewRecoveryCodes(ctx context.Context, w Who, proof, ip string) ([]string, error) {
	l, err := a.loginOf(ctx, w)
	if err != nil {
		return nil, core.Wrap(err, "accounts: new recovery codes")
	}
	if !l.TwoFactor() {
		return nil, ErrTOTPOff
	}
	t, byEmail, byIP := a.loginThrottle(l.Email, ip)
	if err := a.throttled(ctx, t, byEmail, byIP); err != nil {
		return nil, core.Wrap(err, "accounts: new recovery codes")
	}
	p := core.Problems{}
	if p.Required("current_password", proof) {
		ok, err := a.proves(ctx, l, proof)
		if err != nil {
			return nil, core.Wrap(err, "accounts: new recovery codes")
		}
		if !ok {
			if err := t.fail(ctx, byEmail, byIP); err != nil {
				return nil, fmt.Errorf("accounts: new recovery codes: %w", err)
			}
			p.Add("current_password", "The password or code is incorrect. Enter your password, or a current code of your authenticator app.")
		}
	}
	if err := p.Err(); err != nil {
		return nil, err
	}
	var codes []string
	err = a.db.W.WithContext(ctx).Transaction(func(tx *gorm.DB) error {
		codes, err = a.replaceRecoveryCodes(tx, w)
		return err
	})
	if err != nil {
		return nil, core.Wrap(err, "accounts: new recovery codes")
	}
	return codes, a.auditLogin(ctx, l, core.AuditRecoveryCodesMade, fmt.Sprintf("%d new codes; the earlier ones no longer work", len(codes)), false)
}

// proves reports whether proof is the login's password or a current
// code of its authenticator; a code that checks is used up (as at
// login). Passwords are at least ten characters, so six digits are tried
// as a code first, then as a password.
func (a *Accounts) proves(ctx context.Context, l *login, proof string) (bool, error) {
	if digits := strings.Map(func(r rune) rune {
		if r == ' ' || r == '-' {
			return -1
		}
		return r
	}, proof); len(digits) == 6 {
		secret, err := a.unseal(l.Who, l.TOTPSecret)
		if err != nil {
			return false, err
		}
		if step, ok := matchCode(secret, digits, a.now(), l.TOTPLastStep); ok {
			ok, err := a.claimStep(ctx, l.Who, step)
			if err != nil || ok {
				return ok, err
			}
		}
	}
	return bcrypt.CompareHashAndPassword([]byte(l.PasswordHash), []byte(proof)) == nil, nil
}

// claimStep records step as the login's last accepted one, if it is later
// than the last: only one use of a step wins, even on two processes.
func (a *Accounts) claimStep(ctx context.Context, w Who, step int64) (bool, error) {
	table, where, args := w.row()
	res := a.db.W.WithContext(ctx).Table(table).Where(where, args...).Where("totp_last_step < ?", step).
		Update("totp_last_step", step)
	if res.Error != nil {
		return false, fmt.Errorf("two-factor: claim a step: %w", res.Error)
	}
	return res.RowsAffected == 1, nil
}

// useRecoveryCode marks code (as typed) used when it is an unused code of
// the login, and reports whether it was, with the number left.
func (a *Accounts) useRecoveryCode(ctx context.Context, w Who, code string) (bool, int, error) {
	n := normalRecoveryCode(code)
	if n == "" {
		return false, 0, nil
	}
	h, err := a.recoveryHash(w, n)
	if err != nil {
		return false, 0, err
	}
	res := a.db.W.WithContext(ctx).Exec("UPDATE recovery_codes SET used_at = ? WHERE user_id = ? AND member_id = ? AND code_hash = ? AND used_at IS NULL",
		a.now().UnixMilli(), w.AccountID, w.MemberID, h)
	if res.Error != nil {
		return false, 0, fmt.Errorf("recovery codes: use: %w", res.Error)
	}
	if res.RowsAffected != 1 {
		return false, 0, nil
	}
	left, err := a.RecoveryCodesLeft(ctx, w)
	return true, left, err
}
