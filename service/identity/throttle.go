package identity

import (
	"context"
	"errors"
	"fmt"
	"herald/service/core"
	"net/netip"
	"strings"
	"time"

	"gorm.io/gorm"
)

// throttleRule is the growing delay of one kind of key: the first free
// failures cost nothing; after failure number free+n (n ≥ 1) the next
// attempt waits base·2^(n-1), at most max; a key without a failure for
// forget starts again from zero.
type throttleRule struct {
	prefix string
	free   int
	base   time.Duration
	max    time.Duration
	forget time.Duration
}

// The numbers (decisions.md 8: growing delays, never a lockout for good).
var (
	// A login address: 5 failures free, then 1 s, 2 s, 4 s … capped at
	// 1 minute; forgotten after 15 minutes without a failure; a successful
	// login clears it. So an attacker gets at most one guess a minute at an
	// address, and its owner waits at most a minute (none at all from a
	// browser that logged in to it before: see LoginInput.Known).
	throttleEmail = throttleRule{prefix: "email:", free: 5, base: time.Second, max: time.Minute, forget: 15 * time.Minute}
	// A client IP (an IPv6 client by its /64), over every address it tries:
	// 10 failures free, then 1 s doubling, capped at 15 minutes; forgotten
	// after an hour without a failure. A success does not clear it (else
	// an attacker's own account would reset it between guesses).
	throttleIP = throttleRule{prefix: "ip:", free: 10, base: time.Second, max: 15 * time.Minute, forget: time.Hour}
	// Sign-up mails to one address (a link or an "account exists" notice),
	// each counted as a "failure": three at once, then one 10 minutes
	// later, 20, 40, then one an hour; forgotten after a day. A sign-up
	// while it waits mails nothing (and answers the same page).
	throttleSignup = throttleRule{prefix: "signup:", free: 2, base: 10 * time.Minute, max: time.Hour, forget: 24 * time.Hour}
	// Password reset mails to one address: the same numbers as sign-up
	// mails, counted apart so one kind does not hold the other back.
	throttleReset = throttleRule{prefix: "reset:", free: 2, base: 10 * time.Minute, max: time.Hour, forget: 24 * time.Hour}
	// Invitations mailed by one account (team.go), over every address:
	// 20 at once, then one 5 minutes later, 10, 20 … one an hour; forgotten
	// after a day. An account on a public server cannot mail strangers in
	// bulk through invitations.
	throttleInvites = throttleRule{prefix: "invites:", free: 19, base: 5 * time.Minute, max: time.Hour, forget: 24 * time.Hour}
)

// delay is the wait after failures failures.
func (r throttleRule) delay(failures int) time.Duration {
	n := failures - r.free
	if n <= 0 {
		return 0
	}
	if n > 40 { // beyond any cap; keeps the shift from overflowing
		return r.max
	}
	return min(r.base<<(n-1), r.max)
}

// throttleKey is one key under its rule.
type throttleKey struct {
	rule throttleRule
	key  string // without the prefix
}

func (k throttleKey) name() string { return k.rule.prefix + k.key }

// throttle keeps the failure counts in the auth_throttle table, so every
// process sharing the database applies the same delays.
type throttle struct {
	db  *core.DB
	now func() time.Time
}

type throttleRow struct {
	Key          string
	Failures     int
	LastAt       int64
	BlockedUntil int64
}

// wait returns how long the longest running delay of keys still lasts, 0
// when none does.
func (t throttle) wait(ctx context.Context, keys ...throttleKey) (time.Duration, error) {
	names := make([]string, 0, len(keys))
	for _, k := range keys {
		if k.key != "" {
			names = append(names, k.name())
		}
	}
	if len(names) == 0 {
		return 0, nil
	}
	var rows []throttleRow
	if err := t.db.R.WithContext(ctx).Table("auth_throttle").Where("key IN ?", names).Find(&rows).Error; err != nil {
		return 0, fmt.Errorf("throttle: read keys: %w", err)
	}
	now := t.now().UnixMilli()
	var wait time.Duration
	for _, r := range rows {
		if d := time.Duration(r.BlockedUntil-now) * time.Millisecond; d > wait {
			wait = d
		}
	}
	return wait, nil
}

// fail counts a failure of each key and starts its next delay.
func (t throttle) fail(ctx context.Context, keys ...throttleKey) error {
	lock := t.db.SQL().ForUpdate()
	now := t.now()
	ms := now.UnixMilli()
	err := t.db.W.WithContext(ctx).Transaction(func(tx *gorm.DB) error {
		for _, k := range keys {
			if k.key == "" {
				continue
			}
			name := k.name()
			if err := tx.Exec("INSERT INTO auth_throttle (key, failures, last_at, blocked_until) VALUES (?, 0, ?, 0) ON CONFLICT (key) DO NOTHING", name, ms).Error; err != nil {
				return fmt.Errorf("throttle: add a key: %w", err)
			}
			var r throttleRow
			if err := tx.Raw("SELECT key, failures, last_at, blocked_until FROM auth_throttle WHERE key = ?"+lock, name).Scan(&r).Error; err != nil {
				return fmt.Errorf("throttle: read a key: %w", err)
			}
			if ms-r.LastAt > k.rule.forget.Milliseconds() {
				r.Failures = 0
			}
			r.Failures++
			until := now.Add(k.rule.delay(r.Failures)).UnixMilli()
			if err := tx.Exec("UPDATE auth_throttle SET failures = ?, last_at = ?, blocked_until = ? WHERE key = ?", r.Failures, ms, until, name).Error; err != nil {
				return fmt.Errorf("throttle: update a key: %w", err)
			}
		}
		return nil
	})
	if err != nil {
		return fmt.Errorf("throttle: count a failure: %w", err)
	}
	return nil
}

// clear forgets the key's failures.
func (t throttle) clear(ctx context.Context, k throttleKey) error {
	if err := t.db.W.WithContext(ctx).Exec("DELETE FROM auth_throttle WHERE key = ?", k.name()).Error; err != nil {
		return fmt.Errorf("throttle: clear: %w", err)
	}
	return nil
}

// sweep deletes the rows no rule remembers any more (a day without a
// failure is past every rule's forget).
func (t throttle) sweep(ctx context.Context) error {
	if err := t.db.W.WithContext(ctx).Exec("DELETE FROM auth_throttle WHERE last_at < ?", t.now().Add(-24*time.Hour).UnixMilli()).Error; err != nil {
		return fmt.Errorf("throttle: sweep: %w", err)
	}
	return nil
}

// IPKey is the throttle's name for a client address: the address itself,
// or for IPv6 its /64 (one subscriber's usual share: a client that can
// change its address freely within it is still one client).
func IPKey(ip string) string {
	a, err := netip.ParseAddr(strings.TrimSpace(ip))
	if err != nil {
		if len(ip) > 64 {
			ip = ip[:64]
		}
		return ip
	}
	a = a.Unmap()
	if a.Is6() {
		p, _ := a.Prefix(64)
		return p.String()
	}
	return a.String()
}

// retryError is a CodeRateLimited error that says when to try again.
type retryError struct {
	err   *core.Error
	after time.Duration
}

func (e *retryError) Error() string { return e.err.Error() }
func (e *retryError) Unwrap() error { return e.err }

// RetryAfter returns how long a refused (CodeRateLimited) caller should
// wait, in whole seconds rounded up; 0 when err does not say.
func RetryAfter(err error) time.Duration {
	var re *retryError
	if errors.As(err, &re) {
		return (re.after + time.Second - 1).Truncate(time.Second)
	}
	return 0
}

// tooManyLogins is the refusal while a login delay runs.
func tooManyLogins(wait time.Duration) error {
	secs := int((wait + time.Second - 1) / time.Second)
	when := fmt.Sprintf("%d seconds", secs)
	switch {
	case secs == 1:
		when = "1 second"
	case secs >= 120:
		when = fmt.Sprintf("%d minutes", (secs+59)/60)
	}
	return &retryError{
		err:   &core.Error{Code: core.CodeRateLimited, Message: "Too many failed logins. Try again in " + when + "."},
		after: time.Duration(secs) * time.Second,
	}
}
