package identity

import (
	"bytes"
	"context"
	"crypto/aes"
	"crypto/cipher"
	"crypto/hmac"
	"crypto/rand"
	"crypto/sha256"
	"crypto/subtle"
	"fmt"
	"herald/service/core"
	"image/png"
	neturl "net/url"
	"strconv"
	"strings"
	"time"

	"github.com/pquerna/otp"
	"github.com/pquerna/otp/totp"
	"golang.org/x/crypto/bcrypt"
	"gorm.io/gorm"
)

// TOTP two-factor login (RFC 6238): SHA-1, 6 digits, 30-second steps,
// what every authenticator app reads from a QR code.
//
// Where the key is kept: an authenticator's key must be readable by the
// server to check a code, so it cannot be hashed like a password. It is
// sealed with AES-256-GCM under a key derived from HERALD_SECRET_KEY, a
// value kept in the environment and never in the database (GitLab does
// the same with its db_key_base); the login (the account, and the member
// for a member's key: Who.sealData) is the associated data, so a sealed
// key copied onto another account's or another member's row does not open. A
// database dump alone (a leaked backup, an SQL injection that reads)
// thus gives a bcrypt hash and sealed bytes: no code. Without
// HERALD_SECRET_KEY two-factor login cannot be turned on; started without
// it (or with another), a server refuses the codes of accounts that have
// it on, saying why, and `herald account reset-2fa` turns it off.
const (
	totpPeriod = 30
	totpSkew   = 1 // steps of clock drift accepted either way
)

var totpOpts = totp.ValidateOpts{Period: totpPeriod, Digits: otp.DigitsSix, Algorithm: otp.AlgorithmSHA1}

// ErrNoSecretKey refuses two-factor work on a server without
// HERALD_SECRET_KEY (or whose key cannot open the account's).
var ErrNoSecretKey = &core.Error{Code: core.CodeUnavailable, Message: "Two-factor login needs HERALD_SECRET_KEY, set the same on every herald process. Ask the server's administrator."}

// ErrTOTPOn refuses a set-up while two-factor login is already on.
var ErrTOTPOn = &core.Error{Code: core.CodeConflict, Message: "Two-factor login is already on. Turn it off first to use another authenticator."}

// msgWrongCode answers a wrong code, a wrong recovery code and a used
// one alike: the answer does not tell which codes exist.
const msgWrongCode = "The code is incorrect or was already used. Enter the current code of your authenticator app, or an unused recovery code."

// sealKey derives the sealing key from HERALD_SECRET_KEY; nil when unset.
func sealKey(secret string) []byte {
	if secret == "" {
		return nil
	}
	m := hmac.New(sha256.New, []byte(secret))
	m.Write([]byte("herald two-factor secrets v1"))
	return m.Sum(nil)
}

func (a *Accounts) aead() (cipher.AEAD, error) {
	if a.sealKey == nil {
		return nil, ErrNoSecretKey
	}
	block, err := aes.NewCipher(a.sealKey)
	if err != nil {
		return nil, err
	}
	return cipher.NewGCM(block)
}

// seal encrypts an authenticator key for one login: nonce || sealed.
func (a *Accounts) seal(w Who, secret string) ([]byte, error) {
	g, err := a.aead()
	if err != nil {
		return nil, err
	}
	nonce := make([]byte, g.NonceSize())
	_, _ = rand.Read(nonce)
	return g.Seal(nonce, nonce, []byte(secret), w.sealData()), nil
}

// unseal opens what seal made. Errors: ErrNoSecretKey (no key, or not
// the key that sealed it, or sealed for another login).
func (a *Accounts) unseal(w Who, sealed []byte) (string, error) {
	g, err := a.aead()
	if err != nil {
		return "", err
	}
	if len(sealed) < g.NonceSize() {
		return "", ErrNoSecretKey
	}
	plain, err := g.Open(nil, sealed[:g.NonceSize()], sealed[g.NonceSize():], w.sealData())
	if err != nil {
		return "", ErrNoSecretKey
	}
	return string(plain), nil
}

// TwoFactorAvailable reports whether this server can turn two-factor
// login on (HERALD_SECRET_KEY is set).
func (a *Accounts) TwoFactorAvailable() bool { return a.sealKey != nil }

// TOTPSetup is what a person scans or types into an authenticator app.
type TOTPSetup struct {
	Key string // base32, shown as text for typing
	URL string // otpauth:// URI, the QR code's content
	PNG []byte // the QR code
}

// BeginTOTP makes a new authenticator key for the login (the owner or a
// member) and keeps it, sealed, as pending: two-factor login is not on
// until EnableTOTP checks a code of it. Errors: ErrNoSecretKey,
// ErrTOTPOn, ErrNotFound.
func (a *Accounts) BeginTOTP(ctx context.Context, w Who) (*TOTPSetup, error) {
	l, err := a.loginOf(ctx, w)
	if err != nil {
		return nil, core.Wrap(err, "accounts: begin two-factor")
	}
	if l.TwoFactor() {
		return nil, ErrTOTPOn
	}
	key, err := totp.Generate(totp.GenerateOpts{Issuer: "Herald", AccountName: l.Email, Period: totpPeriod, Digits: otp.DigitsSix, Algorithm: otp.AlgorithmSHA1})
	if err != nil {
		return nil, err
	}
	sealed, err := a.seal(w, key.Secret())
	if err != nil {
		return nil, err
	}
	if err := w.update(a.db.W.WithContext(ctx), map[string]any{"totp_pending": sealed}); err != nil {
		return nil, core.Wrap(err, "accounts: begin two-factor")
	}
	return setupOf(key)
}

// PendingTOTP returns the key being set up (BeginTOTP), to show it again.
// Errors: ErrNotFound (none pending), ErrNoSecretKey, ErrTOTPOn.
func (a *Accounts) PendingTOTP(ctx context.Context, w Who) (*TOTPSetup, error) {
	l, err := a.loginOf(ctx, w)
	if err != nil {
		return nil, core.Wrap(err, "accounts: pending two-factor")
	}
	if l.TwoFactor() {
		return nil, ErrTOTPOn
	}
	if len(l.TOTPPending) == 0 {
		return nil, core.ErrNotFound
	}
	secret, err := a.unseal(w, l.TOTPPending)
	if err != nil {
		return nil, err
	}
	key, err := otp.NewKeyFromURL(keyURI(l.Email, secret))
	if err != nil {
		return nil, err
	}
	return setupOf(key)
}

func setupOf(key *otp.Key) (*TOTPSetup, error) {
	img, err := key.Image(240, 240)
	if err != nil {
		return nil, err
	}
	var buf bytes.Buffer
	if err := png.Encode(&buf, img); err != nil {
		return nil, err
	}
	return &TOTPSetup{Key: key.Secret(), URL: key.URL(), PNG: buf.Bytes()}, nil
}

// keyURI is the otpauth:// URI of a stored key (the Key URI Format that
// totp.Generate writes).
func keyURI(email, secret string) string {
	v := neturl.Values{}
	v.Set("secret", secret)
	v.Set("issuer", "Herald")
	v.Set("period", strconv.Itoa(totpPeriod))
	v.Set("digits", "6")
	v.Set("algorithm", "SHA1")
	u := neturl.URL{Scheme: "otpauth", Host: "totp", Path: "/Herald:" + email, RawQuery: v.Encode()}
	return u.String()
}

// EnableTOTP turns two-factor login of the login on once code is a
// current code of the pending key, and ends every session of that login
// (not the account's other logins'). It returns the login's new recovery
// codes (recovery.go), to be shown once. A wrong code counts as a failed
// login of the address and the IP (their delays refuse it while they run).
// Errors: ErrNotFound (nothing pending), ErrNoSecretKey, ErrTOTPOn,
// validation (code), rate limited.
func (a *Accounts) EnableTOTP(ctx context.Context, w Who, code, ip string) ([]string, error) {
	l, err := a.loginOf(ctx, w)
	if err != nil {
		return nil, core.Wrap(err, "accounts: enable two-factor")
	}
	if l.TwoFactor() {
		return nil, ErrTOTPOn
	}
	if len(l.TOTPPending) == 0 {
		return nil, core.ErrNotFound
	}
	secret, err := a.unseal(w, l.TOTPPending)
	if err != nil {
		return nil, err
	}
	t, byEmail, byIP := a.loginThrottle(l.Email, ip)
	if err := a.throttled(ctx, t, byEmail, byIP); err != nil {
		return nil, core.Wrap(err, "accounts: enable two-factor")
	}
	step, ok := matchCode(secret, code, a.now(), 0)
	if !ok {
		if err := t.fail(ctx, byEmail, byIP); err != nil {
			return nil, fmt.Errorf("accounts: enable two-factor: %w", err)
		}
		return nil, core.Invalid("code", msgWrongCode)
	}
	var codes []string
	table, where, args := w.row()
	err = a.db.W.WithContext(ctx).Transaction(func(tx *gorm.DB) error {
		// Only while the key checked is still the pending one.
		res := tx.Table(table).Where(where, args...).Where("totp_pending = ?", l.TOTPPending).
			Updates(map[string]any{"totp_secret": gorm.Expr("totp_pending"), "totp_pending": nil, "totp_last_step": step})
		if res.Error != nil {
			return res.Error
		}
		if res.RowsAffected != 1 { // another set-up began in between
			return core.Invalid("code", msgWrongCode)
		}
		if codes, err = a.replaceRecoveryCodes(tx, w); err != nil {
			return err
		}
		// Sessions opened with the password alone (a stolen one among
		// them, maybe) end; the caller starts a fresh one for the person.
		return w.endSessions(tx)
	})
	if err != nil {
		return nil, core.Wrap(err, "accounts: enable two-factor")
	}
	if err := a.auditLogin(ctx, l, core.AuditTwoFactorOn, "", false); err != nil {
		return nil, err
	}
	return codes, a.auditLogin(ctx, l, core.AuditRecoveryCodesMade, fmt.Sprintf("%d codes, with two-factor login", len(codes)), false)
}

// DisableTOTP turns two-factor login of the login off, given its
// password. A wrong password counts as a failed login. Errors:
// ErrNotFound, validation (current_password), rate limited.
func (a *Accounts) DisableTOTP(ctx context.Context, w Who, password, ip string) error {
	l, err := a.loginOf(ctx, w)
	if err != nil {
		return core.Wrap(err, "accounts: disable two-factor")
	}
	t, byEmail, byIP := a.loginThrottle(l.Email, ip)
	if err := a.throttled(ctx, t, byEmail, byIP); err != nil {
		return core.Wrap(err, "accounts: disable two-factor")
	}
	p := core.Problems{}
	if p.Required("current_password", password) &&
		bcrypt.CompareHashAndPassword([]byte(l.PasswordHash), []byte(password)) != nil {
		if err := t.fail(ctx, byEmail, byIP); err != nil {
			return fmt.Errorf("accounts: disable two-factor: %w", err)
		}
		p.Add("current_password", "The current password is incorrect.")
	}
	if err := p.Err(); err != nil {
		return err
	}
	if err := a.clearTOTP(ctx, w); err != nil {
		return core.Wrap(err, "accounts: disable two-factor")
	}
	return a.auditLogin(ctx, l, core.AuditTwoFactorOff, "", false)
}

// ResetTOTP turns two-factor login of the login of email (an account's
// owner or a member) off without the password, for a person who lost
// their authenticator (`herald account reset-2fa`), and returns the
// login. Errors: ErrNotFound.
func (a *Accounts) ResetTOTP(ctx context.Context, email string) (Who, error) {
	l, err := a.loginByEmail(ctx, email)
	if err != nil {
		return Who{}, core.Wrap(err, "accounts: reset two-factor")
	}
	if err := a.clearTOTP(ctx, l.Who); err != nil {
		return Who{}, core.Wrap(err, "accounts: reset two-factor")
	}
	return l.Who, a.auditLogin(ctx, l, core.AuditTwoFactorOff, "from the command line", false)
}

// clearTOTP turns two-factor login off: the key, a pending key and the
// recovery codes go.
func (a *Accounts) clearTOTP(ctx context.Context, w Who) error {
	return a.db.W.WithContext(ctx).Transaction(func(tx *gorm.DB) error {
		if err := w.update(tx, map[string]any{"totp_secret": nil, "totp_pending": nil}); err != nil {
			return err
		}
		return deleteRecoveryCodes(tx, w)
	})
}

// CodeInput is the second step of a login with two-factor login on,
// after its password was checked (SignIn).
type CodeInput struct {
	Who   // the login whose password was right
	Code  string
	IP    string
	Known bool // as LoginInput.Known
}

// LoginCode checks the code of the second step: a code of the login's
// authenticator or one of its recovery codes (recovery.go). A code is
// accepted once, an authenticator's within one step of drift either way,
// and never one older than the last accepted. A wrong code (a used or
// unknown recovery code too: the same answer) counts as a failed login of the address and the
// IP, with the same delays; a right one clears the address's delay.
// Errors: validation (code), rate limited, ErrNoSecretKey (the server
// cannot open the login's key), ErrNotFound.
func (a *Accounts) LoginCode(ctx context.Context, in CodeInput) error {
	l, err := a.loginOf(ctx, in.Who)
	if err != nil {
		return core.Wrap(err, "accounts: check a two-factor code")
	}
	t, byEmail, byIP := a.loginThrottle(l.Email, in.IP)
	checked := []throttleKey{byIP}
	if !in.Known {
		checked = append(checked, byEmail)
	}
	if err := a.throttled(ctx, t, checked...); err != nil {
		return core.Wrap(err, "accounts: check a two-factor code")
	}
	if !l.TwoFactor() { // turned off in between: the password was enough
		return t.clear(ctx, byEmail)
	}
	secret, err := a.unseal(in.Who, l.TOTPSecret)
	if err != nil {
		return err
	}
	step, ok := matchCode(secret, in.Code, a.now(), l.TOTPLastStep)
	if ok {
		// Only one use of the step wins, even on two processes at once.
		if ok, err = a.claimStep(ctx, in.Who, step); err != nil {
			return fmt.Errorf("accounts: check a two-factor code: %w", err)
		}
	} else {
		used, left, err := a.useRecoveryCode(ctx, in.Who, in.Code)
		if err != nil {
			return fmt.Errorf("accounts: check a two-factor code: %w", err)
		}
		if used {
			if err := a.auditLogin(ctx, l, core.AuditRecoveryCodeUsed, fmt.Sprintf("%d left", left), true); err != nil {
				return err
			}
			ok = true
		}
	}
	if !ok {
		if err := t.fail(ctx, byEmail, byIP); err != nil {
			return fmt.Errorf("accounts: check a two-factor code: %w", err)
		}
		return core.Invalid("code", msgWrongCode)
	}
	return t.clear(ctx, byEmail)
}

// loginThrottle is the throttle and the keys of a login to email from ip.
func (a *Accounts) loginThrottle(email, ip string) (throttle, throttleKey, throttleKey) {
	byIP := throttleKey{rule: throttleIP}
	if ip != "" {
		byIP.key = IPKey(ip)
	}
	return throttle{db: a.db, now: a.now}, throttleKey{rule: throttleEmail, key: email}, byIP
}

// throttled refuses while a delay of keys runs.
func (a *Accounts) throttled(ctx context.Context, t throttle, keys ...throttleKey) error {
	wait, err := t.wait(ctx, keys...)
	if err != nil {
		return err
	}
	if wait > 0 {
		return tooManyLogins(wait)
	}
	return nil
}

// matchCode reports whether code is the code of secret at the step of now
// or one step either side, later than after, and which step it is.
func matchCode(secret, code string, now time.Time, after int64) (int64, bool) {
	code = strings.Map(func(r rune) rune {
		if r == ' ' || r == '-' {
			return -1
		}
		return r
	}, code)
	if len(code) != 6 {
		return 0, false
	}
	step := now.Unix() / totpPeriod
	for s := step - totpSkew; s <= step+totpSkew; s++ {
		if s <= after {
			continue
		}
		want, err := totp.GenerateCodeCustom(secret, time.Unix(s*totpPeriod, 0), totpOpts)
		if err == nil && subtle.ConstantTimeCompare([]byte(want), []byte(code)) == 1 {
			return s, true
		}
	}
	return 0, false
}
