package identity

import (
	"context"
	"crypto/rand"
	"crypto/sha256"
	"database/sql"
	"encoding/hex"
	"errors"
	"fmt"
	"strings"
	"sync"
	"time"

	"golang.org/x/crypto/bcrypt"
	"gorm.io/gorm"

	"herald/models"
	"herald/service/core"
	"herald/service/deliverability"
)

// Keys are an account's API credentials, shown once at creation and rotation.
type Keys struct {
	PublicKey string `json:"public_key"`
	SecretKey string `json:"secret_key"`
}

// AccountInput is what a person gives to open an account.
type AccountInput struct {
	Name     string
	Email    string
	Password string
}

// Accounts creates accounts, issues and checks their keys and passwords.
type Accounts struct {
	db    *core.DB
	cost  int                  // bcrypt cost of new passwords (Config.PasswordCost)
	now   func() time.Time     // the clock of the login throttle and sign-up links (Config.Now)
	mail  *deliverability.Mail // sign-up and password reset mail
	audit *Audit

	signupClosed bool   // HERALD_SIGNUP=off
	sealKey      []byte // seals two-factor secrets (totp.go); nil: no two-factor login

	keyOnce sync.Once
	keys    *keyReader
	keyErr  error
}

// Create opens an account and returns it with its first keys. Errors:
// validation (missing name or one with a line break, bad email, a password
// too short, too long or too common, email taken).
func (a *Accounts) Create(ctx context.Context, in AccountInput) (*models.User, Keys, error) {
	name, email, err := checkAccount(in)
	if err != nil {
		return nil, Keys{}, err
	}
	hash, err := bcrypt.GenerateFromPassword([]byte(in.Password), a.cost)
	if err != nil {
		return nil, Keys{}, err
	}
	var u *models.User
	var keys Keys
	err = a.db.W.WithContext(ctx).Transaction(func(tx *gorm.DB) error {
		u, keys, err = insertAccount(tx, name, email, string(hash))
		return err
	})
	if err != nil {
		return nil, Keys{}, core.Wrap(err, "accounts: create")
	}
	return u, keys, nil
}

// checkAccount validates what a person gives to open an account and
// returns the name and the address as stored.
func checkAccount(in AccountInput) (name, email string, err error) {
	p := core.Problems{}
	name = strings.TrimSpace(in.Name)
	if p.Required("name", name) {
		p.MaxLen("name", name, 255)
		p.SingleLine("name", name)
	}
	email, ok := core.NormalizeEmail(in.Email)
	if p.Required("email", in.Email) && !ok {
		p.AddReason("email", core.ReasonEmail, core.MsgEmail("email"))
	}
	checkNewPassword(p, "password", in.Password)
	return name, email, p.Err()
}

// insertAccount stores a new account with a password hash, inside tx.
// Errors: validation (email taken).
func insertAccount(tx *gorm.DB, name, email, passwordHash string) (*models.User, Keys, error) {
	taken, err := loginTaken(tx, email)
	if err != nil {
		return nil, Keys{}, fmt.Errorf("accounts: insert: %w", err)
	}
	if taken {
		return nil, Keys{}, core.Invalid("email", "The email has already been taken.")
	}
	keys, secretHash := newKeys()
	now := tx.NowFunc()
	u := &models.User{
		Name: name, Email: email, PasswordHash: passwordHash,
		PublicKey: keys.PublicKey, SecretHash: secretHash, TimeZone: "UTC",
		CreatedAt: models.Timestamp{Time: now}, UpdatedAt: models.Timestamp{Time: now},
	}
	if err := tx.Create(u).Error; err != nil {
		return nil, Keys{}, fmt.Errorf("accounts: insert: %w", err)
	}
	return u, keys, nil
}

// Get returns the account with id, or ErrNotFound.
func (a *Accounts) Get(ctx context.Context, id int64) (*models.User, error) {
	var u models.User
	if err := a.db.R.WithContext(ctx).First(&u, id).Error; err != nil {
		return nil, core.Wrap(core.NotFound(err), "accounts: get")
	}
	return &u, nil
}

// ByEmail returns the account with that address, or ErrNotFound.
func (a *Accounts) ByEmail(ctx context.Context, email string) (*models.User, error) {
	e, _ := core.NormalizeEmail(email)
	var u models.User
	if err := a.db.R.WithContext(ctx).Where("email = ?", e).First(&u).Error; err != nil {
		return nil, core.Wrap(core.NotFound(err), "accounts: by email")
	}
	return &u, nil
}

// RotateKeys replaces the account's keys; the old ones stop working at
// once in this process. Errors: ErrNotFound.
func (a *Accounts) RotateKeys(ctx context.Context, accountID int64) (Keys, error) {
	var old models.User
	if err := a.db.W.WithContext(ctx).First(&old, accountID).Error; err != nil {
		return Keys{}, core.Wrap(core.NotFound(err), "accounts: rotate keys")
	}
	keys, secretHash := newKeys()
	// The list version moves too: cached list answers built under the old
	// keys are not served again.
	err := a.db.W.WithContext(ctx).Model(&models.User{}).Where("id = ?", accountID).
		Updates(map[string]any{"public_key": keys.PublicKey, "secret_hash": secretHash, "updated_at": a.now(),
			"list_version": gorm.Expr("list_version + 1")}).Error
	if err != nil {
		return Keys{}, fmt.Errorf("accounts: rotate keys: %w", err)
	}
	return keys, a.audit.Record(ctx, accountID, core.AuditKeysRotated, "", "")
}

// Check authenticates a key pair against the database on every call, so a
// rotation (from the console, the CLI or another process) takes effect at
// once everywhere (decisions.md 8): one read by the unique public key,
// prepared once per connection (keyread.go), which also returns the
// account's suppression-list version (it changes with every change to its
// unsubscribers, groups and notification recipients), so that a cached list
// costs no second read. The secret is compared as its SHA-256, in constant
// time. Errors: ErrUnauthorized.
func (a *Accounts) Check(ctx context.Context, publicKey, secretKey string) (accountID, listVersion int64, err error) {
	a.keyOnce.Do(func() {
		var sqlDB *sql.DB
		if sqlDB, a.keyErr = a.db.R.DB(); a.keyErr == nil {
			a.keys = newKeyReader(sqlDB, a.db.SQL())
		}
	})
	if a.keyErr != nil {
		return 0, 0, fmt.Errorf("accounts: check keys: %w", a.keyErr)
	}
	return a.keys.check(ctx, publicKey, secretKey)
}

// LoginInput is one login attempt.
type LoginInput struct {
	Email    string
	Password string
	// IP is the client's address ("" when unknown): failures are
	// throttled per IP as well as per address.
	IP string
	// Known says the browser logged in to this address before (the
	// console keeps that in its signed cookie): the address's delay does
	// not hold it back, so attacks on an address never keep its owner out
	// of their usual browser. The IP's delay still applies.
	Known bool
}

// Login checks a password. Failed logins slow the address and the client
// IP down with growing delays (throttle.go); while one runs, every attempt
// is refused (CodeRateLimited, with RetryAfter), whatever the password,
// without counting as a failure. A success clears the address's delay,
// unless the account has two-factor login on (u.TwoFactor()): then the
// caller must ask for a code (LoginCode) before logging the person in.
// Errors: validation (wrong address or password), rate limited.
func (a *Accounts) Login(ctx context.Context, in LoginInput) (*models.User, error) {
	u, _, err := a.SignIn(ctx, in)
	return u, err
}

// SignIn is Login for the owner of an account and for a member of one
// (team.go): it returns the account and, for a member, the member. The
// throttle and the answers are the same for both. When the login (the
// owner's or the member's: TwoFactorOn) has two-factor login on, the
// caller must ask for a code (LoginCode) before logging the person in.
// Errors: as Login's.
func (a *Accounts) SignIn(ctx context.Context, in LoginInput) (*models.User, *models.Member, error) {
	e, _ := core.NormalizeEmail(in.Email)
	t, byEmail, byIP := a.loginThrottle(e, in.IP)
	checked := []throttleKey{byIP}
	if !in.Known {
		checked = append(checked, byEmail)
	}
	if err := a.throttled(ctx, t, checked...); err != nil {
		return nil, nil, core.Wrap(err, "accounts: sign in")
	}
	var u models.User
	err := a.db.R.WithContext(ctx).Where("email = ?", e).First(&u).Error
	if err != nil && !errors.Is(err, gorm.ErrRecordNotFound) {
		return nil, nil, fmt.Errorf("accounts: sign in: %w", err)
	}
	hash := u.PasswordHash
	var m *models.Member
	if u.ID == 0 {
		var mm models.Member
		err = a.db.R.WithContext(ctx).Where("email = ?", e).First(&mm).Error
		if err != nil && !errors.Is(err, gorm.ErrRecordNotFound) {
			return nil, nil, fmt.Errorf("accounts: sign in: %w", err)
		}
		if mm.ID != 0 {
			m, hash = &mm, mm.PasswordHash
		}
	}
	if hash == "" {
		hash = dummyHash // spend the same time when the address is unknown
	}
	if bcrypt.CompareHashAndPassword([]byte(hash), []byte(in.Password)) != nil || (u.ID == 0 && m == nil) {
		if err := t.fail(ctx, byEmail, byIP); err != nil {
			return nil, nil, fmt.Errorf("accounts: sign in: %w", err)
		}
		return nil, nil, core.Invalid("email", "These credentials do not match our records.")
	}
	owner := &u
	if m != nil {
		if owner, err = a.Get(ctx, m.UserID); err != nil {
			return nil, nil, core.Wrap(err, "accounts: sign in")
		}
	}
	if TwoFactorOn(owner, m) {
		// The code (LoginCode) is still to come: the address's delay is
		// cleared only by a right one, so a known password does not reset
		// the delay between guesses of codes.
		return owner, m, nil
	}
	return owner, m, t.clear(ctx, byEmail)
}

// TwoFactorOn reports whether the login SignIn returned (the member m,
// else the account's owner u) asks for a code.
func TwoFactorOn(u *models.User, m *models.Member) bool {
	if m != nil {
		return m.TwoFactor()
	}
	return u.TwoFactor()
}

// WhoOf is the login SignIn returned: the member m, else u's owner.
func WhoOf(u *models.User, m *models.Member) Who {
	if m != nil {
		return Who{AccountID: m.UserID, MemberID: m.ID}
	}
	return Owner(u.ID)
}

// PasswordChange is the account page's form: the current password, the
// new one twice, and the client's IP (for the throttle).
type PasswordChange struct {
	Current      string
	Password     string
	Confirmation string
	IP           string
}

// ChangePassword sets a new password of the login (the owner or a
// member: its own password) and ends every session of that login only
// (the caller starts a fresh one for the person who changed it). A wrong
// current password counts as a failed login of the address and the IP;
// while their delay runs the change is refused.
// Errors: ErrNotFound, validation (current_password, password,
// password_confirmation), rate limited.
func (a *Accounts) ChangePassword(ctx context.Context, w Who, in PasswordChange) error {
	l, err := a.loginOf(ctx, w)
	if err != nil {
		return core.Wrap(err, "accounts: change password")
	}
	t, byEmail, byIP := a.loginThrottle(l.Email, in.IP)
	if err := a.throttled(ctx, t, byEmail, byIP); err != nil {
		return core.Wrap(err, "accounts: change password")
	}
	p := core.Problems{}
	if p.Required("current_password", in.Current) &&
		bcrypt.CompareHashAndPassword([]byte(l.PasswordHash), []byte(in.Current)) != nil {
		if err := t.fail(ctx, byEmail, byIP); err != nil {
			return fmt.Errorf("accounts: change password: %w", err)
		}
		p.Add("current_password", "The current password is incorrect.")
	}
	checkNewPassword(p, "password", in.Password)
	if !p.Has("password") && in.Confirmation != in.Password {
		p.Add("password_confirmation", "The password confirmation does not match.")
	}
	if err := p.Err(); err != nil {
		return err
	}
	hash, err := bcrypt.GenerateFromPassword([]byte(in.Password), a.cost)
	if err != nil {
		return err
	}
	if err := a.db.W.WithContext(ctx).Transaction(func(tx *gorm.DB) error { return setPassword(tx, w, string(hash)) }); err != nil {
		return core.Wrap(err, "accounts: change password")
	}
	return a.auditLogin(ctx, l, core.AuditPasswordChanged, "", false)
}

var dummyHash = func() string {
	h, _ := bcrypt.GenerateFromPassword([]byte("not a password of anyone"), bcrypt.DefaultCost)
	return string(h)
}()

// newKeys makes a fresh key pair and the hash of its secret.
func newKeys() (Keys, []byte) {
	pub := make([]byte, 16)
	sec := make([]byte, 32)
	_, _ = rand.Read(pub)
	_, _ = rand.Read(sec)
	k := Keys{PublicKey: "pk_" + hex.EncodeToString(pub), SecretKey: "sk_" + hex.EncodeToString(sec)}
	sum := sha256.Sum256([]byte(k.SecretKey))
	return k, sum[:]
}

// SetTimeZone sets the account's time zone (an IANA name such as
// Europe/Paris), in which scheduled sends are read. Errors: validation.
func (a *Accounts) SetTimeZone(ctx context.Context, accountID int64, tz string) error {
	tz = strings.TrimSpace(tz)
	if _, err := time.LoadLocation(tz); err != nil || tz == "" || strings.EqualFold(tz, "local") {
		return core.Invalid("time_zone", "The time zone must be a valid zone.")
	}
	err := a.db.W.WithContext(ctx).Model(&models.User{}).Where("id = ?", accountID).
		Updates(map[string]any{"time_zone": tz, "updated_at": a.now()}).Error
	if err != nil {
		return fmt.Errorf("accounts: set time zone: %w", err)
	}
	return nil
}
