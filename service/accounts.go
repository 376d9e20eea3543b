package service

import (
	"context"
	"crypto/rand"
	"crypto/sha256"
	"crypto/subtle"
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
	db     *DB
	logins *loginLimiter
	cost   int // bcrypt cost of new passwords

	keyOnce sync.Once
	keyStmt *sql.Stmt
	keyErr  error
}

// SetPasswordCost sets the bcrypt cost of passwords hashed from now on
// (tests lower it; the default is bcrypt.DefaultCost).
func (a *Accounts) SetPasswordCost(cost int) { a.cost = cost }

// Create opens an account and returns it with its first keys. Errors:
// validation (missing name, bad email, short password, email taken).
func (a *Accounts) Create(ctx context.Context, in AccountInput) (*models.User, Keys, error) {
	p := Problems{}
	name := strings.TrimSpace(in.Name)
	if p.required("name", name) {
		p.maxLen("name", name, 255)
	}
	email, ok := NormalizeEmail(in.Email)
	if p.required("email", in.Email) && !ok {
		p.Add("email", msgEmail("email"))
	}
	if p.required("password", in.Password) {
		p.minLen("password", in.Password, 8)
		p.maxLen("password", in.Password, 72) // bcrypt reads 72 bytes at most
	}
	if err := p.Err(); err != nil {
		return nil, Keys{}, err
	}
	hash, err := bcrypt.GenerateFromPassword([]byte(in.Password), a.cost)
	if err != nil {
		return nil, Keys{}, err
	}
	keys, secretHash := newKeys()
	now := models.Now()
	u := &models.User{
		Name: name, Email: email, PasswordHash: string(hash),
		PublicKey: keys.PublicKey, SecretHash: secretHash, TimeZone: "UTC",
		CreatedAt: models.Timestamp{Time: now}, UpdatedAt: models.Timestamp{Time: now},
	}
	err = a.db.W.WithContext(ctx).Transaction(func(tx *gorm.DB) error {
		var n int64
		if err := tx.Model(&models.User{}).Where("email = ?", email).Count(&n).Error; err != nil {
			return err
		}
		if n > 0 {
			return Invalid("email", "The email has already been taken.")
		}
		return tx.Create(u).Error
	})
	if err != nil {
		return nil, Keys{}, err
	}
	return u, keys, nil
}

// Get returns the account with id, or ErrNotFound.
func (a *Accounts) Get(ctx context.Context, id int64) (*models.User, error) {
	var u models.User
	if err := a.db.R.WithContext(ctx).First(&u, id).Error; err != nil {
		return nil, notFound(err)
	}
	return &u, nil
}

// ByEmail returns the account with that address, or ErrNotFound.
func (a *Accounts) ByEmail(ctx context.Context, email string) (*models.User, error) {
	e, _ := NormalizeEmail(email)
	var u models.User
	if err := a.db.R.WithContext(ctx).Where("email = ?", e).First(&u).Error; err != nil {
		return nil, notFound(err)
	}
	return &u, nil
}

// RotateKeys replaces the account's keys; the old ones stop working at
// once in this process. Errors: ErrNotFound.
func (a *Accounts) RotateKeys(ctx context.Context, accountID int64) (Keys, error) {
	var old models.User
	if err := a.db.W.WithContext(ctx).First(&old, accountID).Error; err != nil {
		return Keys{}, notFound(err)
	}
	keys, secretHash := newKeys()
	// The list version moves too: cached list answers built under the old
	// keys are not served again.
	err := a.db.W.WithContext(ctx).Model(&models.User{}).Where("id = ?", accountID).
		Updates(map[string]any{"public_key": keys.PublicKey, "secret_hash": secretHash, "updated_at": models.Now(),
			"list_version": gorm.Expr("list_version + 1")}).Error
	if err != nil {
		return Keys{}, err
	}
	return keys, nil
}

// Authenticate returns the account id that owns the key pair (see Check).
// Errors: ErrUnauthorized.
func (a *Accounts) Authenticate(ctx context.Context, publicKey, secretKey string) (int64, error) {
	id, _, err := a.Check(ctx, publicKey, secretKey)
	return id, err
}

// Check authenticates a key pair against the database on every call, so a
// rotation (from the console, the CLI or another process) takes effect at
// once everywhere (decisions.md 8): one read by the unique public key,
// prepared once, which also returns the account's suppression-list version
// (it changes with every change to its unsubscribers, groups and notification
// recipients), so that a cached list costs no second read. The secret is
// compared as its SHA-256, in constant time. Errors: ErrUnauthorized.
func (a *Accounts) Check(ctx context.Context, publicKey, secretKey string) (accountID, listVersion int64, err error) {
	a.keyOnce.Do(func() {
		a.keyStmt, a.keyErr = a.prepare("SELECT id, secret_hash, list_version FROM users WHERE public_key = ?")
	})
	if a.keyErr != nil {
		return 0, 0, a.keyErr
	}
	var hash []byte
	err = a.keyStmt.QueryRowContext(context.WithoutCancel(ctx), publicKey).Scan(&accountID, &hash, &listVersion)
	if errors.Is(err, sql.ErrNoRows) {
		return 0, 0, ErrUnauthorized
	}
	if err != nil {
		return 0, 0, err
	}
	sum := sha256.Sum256([]byte(secretKey))
	if subtle.ConstantTimeCompare(sum[:], hash) != 1 {
		return 0, 0, ErrUnauthorized
	}
	return accountID, listVersion, nil
}

// prepare makes a statement of one row read on the reader pool, its
// placeholders written for the dialect.
func (a *Accounts) prepare(q string) (*sql.Stmt, error) {
	sqlDB, err := a.db.R.DB()
	if err != nil {
		return nil, err
	}
	if a.db.Dialect == "postgres" {
		q = strings.Replace(q, "?", "$1", 1)
	}
	return sqlDB.PrepareContext(context.Background(), q)
}

// Login checks a password. After too many failures for one address it
// refuses for a while (CodeRateLimited), whatever the password.
// Errors: validation (wrong address or password), rate limited.
func (a *Accounts) Login(ctx context.Context, email, password string) (*models.User, error) {
	e, _ := NormalizeEmail(email)
	if wait := a.logins.blocked(e); wait > 0 {
		return nil, &Error{Code: CodeRateLimited, Message: fmt.Sprintf("Too many failed logins. Try again in %d seconds.", int(wait.Seconds())+1)}
	}
	var u models.User
	err := a.db.R.WithContext(ctx).Where("email = ?", e).First(&u).Error
	if err != nil && !errors.Is(err, gorm.ErrRecordNotFound) {
		return nil, err
	}
	hash := u.PasswordHash
	if hash == "" {
		hash = dummyHash // spend the same time when the address is unknown
	}
	if bcrypt.CompareHashAndPassword([]byte(hash), []byte(password)) != nil || u.ID == 0 {
		a.logins.fail(e)
		return nil, Invalid("email", "These credentials do not match our records.")
	}
	a.logins.reset(e)
	return &u, nil
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

// loginLimiter counts failed logins per address in a sliding window.
type loginLimiter struct {
	mu       sync.Mutex
	failures map[string][]time.Time
	max      int
	window   time.Duration
}

func (l *loginLimiter) recent(email string, now time.Time) []time.Time {
	ts := l.failures[email]
	i := 0
	for i < len(ts) && now.Sub(ts[i]) > l.window {
		i++
	}
	ts = ts[i:]
	if len(ts) == 0 {
		delete(l.failures, email)
	} else {
		l.failures[email] = ts
	}
	return ts
}

func (l *loginLimiter) blocked(email string) time.Duration {
	l.mu.Lock()
	defer l.mu.Unlock()
	now := time.Now()
	ts := l.recent(email, now)
	if len(ts) < l.max {
		return 0
	}
	return l.window - now.Sub(ts[0])
}

func (l *loginLimiter) fail(email string) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.failures[email] = append(l.recent(email, time.Now()), time.Now())
}

func (l *loginLimiter) reset(email string) {
	l.mu.Lock()
	delete(l.failures, email)
	l.mu.Unlock()
}

// SetTimeZone sets the account's time zone (an IANA name such as
// Europe/Paris), in which scheduled sends are read. Errors: validation.
func (a *Accounts) SetTimeZone(ctx context.Context, accountID int64, tz string) error {
	tz = strings.TrimSpace(tz)
	if _, err := time.LoadLocation(tz); err != nil || tz == "" || strings.EqualFold(tz, "local") {
		return Invalid("time_zone", "The time zone must be a valid zone.")
	}
	return a.db.W.WithContext(ctx).Model(&models.User{}).Where("id = ?", accountID).
		Updates(map[string]any{"time_zone": tz, "updated_at": models.Now()}).Error
}
