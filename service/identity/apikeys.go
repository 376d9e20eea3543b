package identity

import (
	"context"
	"crypto/rand"
	"crypto/sha256"
	"crypto/subtle"
	"database/sql"
	"database/sql/driver"
	"encoding/hex"
	"fmt"
	"herald/service/core"
	"slices"
	"strings"
	"sync"
	"time"
	"unicode/utf8"

	"gorm.io/gorm"
)

// Named API keys. Beside the account's own PublicKey/
// SecretKey pair, which keeps every right (the spec's), an account makes
// keys with a name and a scope: every right, reads only, or a chosen set
// of areas. They are sent in the same two headers. Like the account's
// pair, a key's secret is shown once and kept as its SHA-256, compared in
// constant time; every request reads the key's row (nothing about keys is
// kept in memory), so a revocation takes effect at once on every process
// (decisions.md 8).

// NamedKeyPrefix starts the public key of every named key. The account's
// own public keys are "pk_" and hexadecimal digits, so a public key names
// its table by its first characters alone.
const NamedKeyPrefix = "pkn_"

// IsNamedKey reports whether publicKey is a named key's (APIKeys.Check)
// rather than an account's own (Accounts.Check).
func IsNamedKey(publicKey string) bool { return strings.HasPrefix(publicKey, NamedKeyPrefix) }

// The kinds of scope.
const (
	ScopeFull  = "full"  // every right, as the account's own pair
	ScopeRead  = "read"  // reads of every area, no change
	ScopeAreas = "areas" // the chosen areas only: each read and changed, or read only
)

// readOnlySuffix marks a read-only area in a stored scope ("contacts:read").
const readOnlySuffix = ":read"

// Area is a part of the API a key may be limited to.
type Area struct {
	Name  string // as stored and as the form sends it
	Label string // as the console shows it
}

// Areas are the parts of the API a key's scope may name, in the order
// of the console. AreaReference (countries, placeholders, design
// templates) is no account data: every key may read it.
var Areas = []Area{
	{"contacts", "Contacts"},
	{"contact_types", "Contact types"},
	{"fields", "Custom fields"},
	{"segments", "Segments"},
	{"single_sends", "Single sends"},
	{"automations", "Automations"},
	{"senders", "Senders"},
	{"suppressions", "Unsubscribers and unsubscribe groups"},
	{"notifications", "Notification recipients"},
	{"event_webhooks", "Event webhooks"},
	{"profile", "Organisation profile"},
	{"blocks", "Saved blocks"},
}

// AreaReference is the shared reference data every key may read.
const AreaReference = "reference"

// IsArea reports whether name is one of Areas.
func IsArea(name string) bool {
	return slices.ContainsFunc(Areas, func(a Area) bool { return a.Name == name })
}

// Scope is what a named key may do.
type Scope struct {
	Kind      string   // ScopeFull, ScopeRead or ScopeAreas
	Areas     []string // with ScopeAreas: the areas read and changed, in the order of Areas
	ReadAreas []string // with ScopeAreas: the areas only read, in the order of Areas
}

// FullScope is the scope of the account's own pair.
var FullScope = Scope{Kind: ScopeFull}

// Allows reports whether the scope may use area, to change it (write) or
// only to read it. Reference data may be read by every key.
func (s Scope) Allows(area string, write bool) bool {
	switch s.Kind {
	case ScopeFull:
		return true
	case ScopeRead:
		return !write
	case ScopeAreas:
		if area == AreaReference || slices.Contains(s.ReadAreas, area) {
			return !write
		}
		return slices.Contains(s.Areas, area)
	}
	return false
}

// String is the scope as stored: "full", "read" or the areas separated by
// commas, a read-only one with ":read" ("contacts,segments:read"), in the
// order of Areas.
func (s Scope) String() string {
	if s.Kind != ScopeAreas {
		return s.Kind
	}
	var out []string
	for _, a := range Areas {
		switch {
		case slices.Contains(s.Areas, a.Name):
			out = append(out, a.Name)
		case slices.Contains(s.ReadAreas, a.Name):
			out = append(out, a.Name+readOnlySuffix)
		}
	}
	return strings.Join(out, ",")
}

// Describe is the scope in words, for the console.
func (s Scope) Describe() string {
	switch s.Kind {
	case ScopeFull:
		return "Full access"
	case ScopeRead:
		return "Read only"
	}
	labels := make([]string, 0, len(s.Areas)+len(s.ReadAreas))
	for _, a := range Areas {
		switch {
		case slices.Contains(s.Areas, a.Name):
			labels = append(labels, a.Label)
		case slices.Contains(s.ReadAreas, a.Name):
			labels = append(labels, a.Label+" (read only)")
		}
	}
	return strings.Join(labels, ", ")
}

// storedScope reads a scope as stored (Scope.String). A value it does not
// know allows nothing.
func storedScope(v string) Scope {
	switch v {
	case ScopeFull, ScopeRead:
		return Scope{Kind: v}
	}
	s := Scope{Kind: ScopeAreas}
	for _, a := range strings.Split(v, ",") {
		if r, ok := strings.CutSuffix(a, readOnlySuffix); ok && IsArea(r) {
			s.ReadAreas = append(s.ReadAreas, r)
		} else if IsArea(a) {
			s.Areas = append(s.Areas, a)
		}
	}
	return s
}

// APIKey is one named key, without its secret.
type APIKey struct {
	ID        int64
	Name      string
	PublicKey string
	Scope     Scope
	CreatedAt time.Time
	// LastUsedOn is the UTC day of the key's last request, "" before the
	// first (a key's use is written once a day at most).
	LastUsedOn string
}

// APIKeyInput is the console's form: a name, a kind of scope and, with
// ScopeAreas, the areas read and changed and those only read (an area in
// both is read and changed).
type APIKeyInput struct {
	Name      string
	Scope     string
	Areas     []string
	ReadAreas []string
}

// MaxAPIKeys bounds the named keys of one account.
const MaxAPIKeys = 100

// APIKeys makes, lists, revokes and checks named keys.
type APIKeys struct {
	db    *core.DB
	now   func() time.Time
	audit *Audit

	readerOnce sync.Once
	reader     *keyReader // the prepared read of Check
	readerErr  error
}

// checkKeyInput validates the form and returns the name and scope.
func checkKeyInput(in APIKeyInput) (string, Scope, error) {
	p := core.Problems{}
	name := strings.TrimSpace(in.Name)
	if !utf8.ValidString(name) {
		return "", Scope{}, core.NotUTF8("name")
	}
	if p.Required("name", name) {
		p.MaxLen("name", name, 100)
		p.SingleLine("name", name)
	}
	var s Scope
	switch in.Scope {
	case ScopeFull, ScopeRead:
		s = Scope{Kind: in.Scope}
	case ScopeAreas:
		s.Kind = ScopeAreas
		for _, a := range slices.Concat(in.Areas, in.ReadAreas) {
			if !IsArea(a) {
				p.InvalidChoice("areas")
				break
			}
		}
		if !p.Has("areas") {
			for _, a := range Areas { // in the console's order, once each
				switch {
				case slices.Contains(in.Areas, a.Name):
					s.Areas = append(s.Areas, a.Name)
				case slices.Contains(in.ReadAreas, a.Name):
					s.ReadAreas = append(s.ReadAreas, a.Name)
				}
			}
			if len(s.Areas)+len(s.ReadAreas) == 0 {
				p.Add("areas", "Choose at least one area.")
			}
		}
	case "":
		p.Required("scope", "")
	default:
		p.InvalidChoice("scope")
	}
	return name, s, p.Err()
}

// Create makes a named key and returns it with its pair; the secret is
// shown this once. Errors: validation (name missing, too long, with a
// line break or taken; scope missing or unknown; no area or an unknown
// one; more than MaxAPIKeys keys).
func (k *APIKeys) Create(ctx context.Context, accountID int64, in APIKeyInput) (*APIKey, Keys, error) {
	name, scope, err := checkKeyInput(in)
	if err != nil {
		return nil, Keys{}, err
	}
	keys, hash := newNamedKeys()
	now := k.now().UTC()
	key := &APIKey{Name: name, PublicKey: keys.PublicKey, Scope: scope, CreatedAt: time.UnixMilli(now.UnixMilli()).UTC()}
	err = k.db.W.WithContext(ctx).Transaction(func(tx *gorm.DB) error {
		var n, same int64
		err := tx.Raw("SELECT COUNT(*), COALESCE(SUM(CASE WHEN name = ? THEN 1 ELSE 0 END), 0) FROM api_keys WHERE user_id = ?",
			name, accountID).Row().Scan(&n, &same)
		if err != nil {
			return err
		}
		if same > 0 {
			return core.Invalid("name", "The name has already been taken.")
		}
		if n >= MaxAPIKeys {
			return core.Invalid("name", "An account may not have more than 100 API keys. Revoke one first.")
		}
		row := tx.Raw("INSERT INTO api_keys (user_id, name, public_key, secret_hash, scope, created_at) VALUES (?, ?, ?, ?, ?, ?) RETURNING id",
			accountID, name, keys.PublicKey, hash, scope.String(), now.UnixMilli()).Row()
		return row.Scan(&key.ID)
	})
	err = core.TranslateUnique(err, "name") // the same name made at the same moment
	if err != nil {
		return nil, Keys{}, core.Wrap(err, "api keys: create")
	}
	return key, keys, k.audit.Record(ctx, accountID, core.AuditAPIKeyCreated, name, "scope "+scope.String())
}

// List returns the account's named keys, oldest first.
func (k *APIKeys) List(ctx context.Context, accountID int64) ([]APIKey, error) {
	rows, err := k.db.R.WithContext(ctx).Raw(
		"SELECT id, name, public_key, scope, created_at, last_used_on FROM api_keys WHERE user_id = ? ORDER BY id", accountID).Rows()
	if err != nil {
		return nil, fmt.Errorf("api keys: list: %w", err)
	}
	defer rows.Close()
	var out []APIKey
	for rows.Next() {
		var key APIKey
		var scope string
		var created int64
		if err := rows.Scan(&key.ID, &key.Name, &key.PublicKey, &scope, &created, &key.LastUsedOn); err != nil {
			return nil, fmt.Errorf("api keys: list: %w", err)
		}
		key.Scope = storedScope(scope)
		key.CreatedAt = time.UnixMilli(created).UTC()
		out = append(out, key)
	}
	if err := rows.Err(); err != nil {
		return out, fmt.Errorf("api keys: list: %w", err)
	}
	return out, nil
}

// Revoke deletes the account's key id: its next request, on any process,
// is refused. Errors: ErrNotFound (no such key of the account's).
func (k *APIKeys) Revoke(ctx context.Context, accountID, id int64) error {
	var names []string
	if err := k.db.W.WithContext(ctx).Raw("SELECT name FROM api_keys WHERE id = ? AND user_id = ?", id, accountID).Scan(&names).Error; err != nil {
		return fmt.Errorf("api keys: name of key %d: %w", id, err)
	}
	res := k.db.W.WithContext(ctx).Exec("DELETE FROM api_keys WHERE id = ? AND user_id = ?", id, accountID)
	if res.Error != nil {
		return fmt.Errorf("api keys: revoke key %d: %w", id, res.Error)
	}
	if res.RowsAffected == 0 || len(names) == 0 {
		return core.ErrNotFound
	}
	return k.audit.Record(ctx, accountID, core.AuditAPIKeyRevoked, names[0], "")
}

// KeyAccess is what a checked key may do for which account.
type KeyAccess struct {
	AccountID   int64
	ListVersion int64 // the account's suppression-list version (api/cache.go)
	KeyID       int64 // the named key's id, 0 for the account's own pair
	Scope       Scope
}

// namedKeyQuery is the read behind every request with a named key: the
// key's row by its unique public key, with its account's list version.
const namedKeyQuery = "SELECT k.id, k.user_id, k.secret_hash, k.scope, k.last_used_on, u.list_version FROM api_keys k JOIN users u ON u.id = k.user_id WHERE k.public_key = ?"

// Check authenticates a named key pair against the database on every
// call (one read by the unique public key, prepared once per connection
// as the account's own pair is: keyread.go), so a revocation takes effect
// at once everywhere. The secret is compared as its SHA-256, in constant
// time. The key's first request of a UTC day records the day.
// Errors: ErrUnauthorized.
func (k *APIKeys) Check(ctx context.Context, publicKey, secretKey string) (KeyAccess, error) {
	k.readerOnce.Do(func() {
		var sqlDB *sql.DB
		if sqlDB, k.readerErr = k.db.R.DB(); k.readerErr == nil {
			k.reader = newRowReader(sqlDB, k.db.SQL(), namedKeyQuery, 6)
		}
	})
	if k.readerErr != nil {
		return KeyAccess{}, fmt.Errorf("api keys: check: %w", k.readerErr)
	}
	sum := sha256.Sum256([]byte(secretKey))
	var acc KeyAccess
	var lastUsed string
	err := k.reader.lookup(ctx, publicKey, func(d []driver.Value) error {
		var ok [4]bool
		acc.KeyID, ok[0] = d[0].(int64)
		acc.AccountID, ok[1] = d[1].(int64)
		acc.ListVersion, ok[2] = d[5].(int64)
		hash, scope, used := bytesOf(d[2]), bytesOf(d[3]), bytesOf(d[4])
		_, usedText := d[4].(string)
		_, usedBytes := d[4].([]byte)
		ok[3] = hash != nil && scope != nil && (usedText || usedBytes)
		if ok != [4]bool{true, true, true, true} {
			return fmt.Errorf("named key check: unexpected column types %T, %T, %T, %T, %T, %T", d[0], d[1], d[2], d[3], d[4], d[5])
		}
		if subtle.ConstantTimeCompare(sum[:], hash) != 1 {
			return core.ErrUnauthorized
		}
		acc.Scope = storedScope(string(scope)) // copies
		lastUsed = string(used)
		return nil
	})
	if err != nil {
		return KeyAccess{}, core.Wrap(err, "api keys: check")
	}
	if day := k.now().UTC().Format(time.DateOnly); lastUsed != day {
		err := k.db.W.WithContext(context.WithoutCancel(ctx)).
			Exec("UPDATE api_keys SET last_used_on = ? WHERE id = ?", day, acc.KeyID).Error
		if err != nil {
			return KeyAccess{}, fmt.Errorf("api keys: record the day of use of key %d: %w", acc.KeyID, err)
		}
	}
	return acc, nil
}

// newNamedKeys makes a named key's pair and the hash of its secret.
func newNamedKeys() (Keys, []byte) {
	pub := make([]byte, 16)
	sec := make([]byte, 32)
	_, _ = rand.Read(pub)
	_, _ = rand.Read(sec)
	k := Keys{PublicKey: NamedKeyPrefix + hex.EncodeToString(pub), SecretKey: "skn_" + hex.EncodeToString(sec)}
	sum := sha256.Sum256([]byte(k.SecretKey))
	return k, sum[:]
}
