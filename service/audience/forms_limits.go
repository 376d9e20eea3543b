package audience

import (
	"context"
	"crypto/hmac"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"strconv"
	"strings"
	"sync"
	"time"

	"herald/service/core"
	"herald/service/identity"
)

// FormLimits are the limits of posts to public forms (decisions.md 10):
// at most PerIP posts from one client address (an IPv6 client by its /64)
// over every form, and PerForm posts to one form, per Window. Beyond
// them a post is refused (429) until the window ends.
type FormLimits struct {
	PerIP   int
	PerForm int
	Window  time.Duration
}

// DefaultFormLimits: a person signs up once; ten posts a minute from one
// address leave room for typos and a shared office address, and 600 a
// minute on one form (ten a second) is far beyond a busy site's sign-ups
// while keeping a flood from many addresses from filling the contact
// type.
var DefaultFormLimits = FormLimits{PerIP: 10, PerForm: 600, Window: time.Minute}

// MinFillTime is how long a person takes at least to fill the hosted
// form: a post whose signed time field is younger is a bot's.
const MinFillTime = 2 * time.Second

// formCounter counts posts per key and window in the form_hits table, so
// every process sharing the database applies the same limits. A key this
// process saw refused is remembered until its window ends: a flood from
// one address then costs no database write at all, and the posts of
// everyone else keep the writer to themselves. On PostgreSQL the table is
// UNLOGGED (migration 00044): a count waits for no WAL flush, and a crash
// of the database server forgets the current window's counts, never a
// sign-up.
type formCounter struct {
	db  *core.DB
	now func() time.Time

	mu        sync.Mutex
	refused   map[string]time.Time // key → end of the window it was refused in
	lastSweep int64
}

// tooMany is the refusal of a post beyond a limit.
func tooMany(after time.Duration) error {
	return &core.Error{Code: core.CodeRateLimited, Message: "Too many sign-ups. Please try again in a minute.", RetryAfter: after}
}

// hit counts one post under key and refuses it beyond max in the window.
func (fc *formCounter) hit(ctx context.Context, key string, max int, window time.Duration) error {
	now := fc.now()
	win := now.UnixMilli() / window.Milliseconds()
	end := time.UnixMilli((win + 1) * window.Milliseconds())
	fc.mu.Lock()
	if until, ok := fc.refused[key]; ok {
		if now.Before(until) {
			fc.mu.Unlock()
			return tooMany(until.Sub(now))
		}
		delete(fc.refused, key)
	}
	sweep := fc.lastSweep != win
	fc.lastSweep = win
	fc.mu.Unlock()
	if sweep {
		// Once per window and process: windows older than an hour go.
		if err := fc.db.W.WithContext(ctx).Exec("DELETE FROM form_hits WHERE win < ?", win-int64(time.Hour/window)-1).Error; err != nil {
			return fmt.Errorf("forms: sweep the post counters: %w", err)
		}
	}
	var hits int
	err := fc.db.W.WithContext(ctx).Raw(`INSERT INTO form_hits (key, win, hits) VALUES (?, ?, 1)
		ON CONFLICT (key, win) DO UPDATE SET hits = form_hits.hits + 1 RETURNING hits`, key, win).Scan(&hits).Error
	if err != nil {
		return fmt.Errorf("forms: count a post: %w", err)
	}
	if hits > max {
		fc.mu.Lock()
		if fc.refused == nil {
			fc.refused = map[string]time.Time{}
		}
		if len(fc.refused) > 100000 { // a flood from many addresses: forget, the database still counts
			clear(fc.refused)
		}
		fc.refused[key] = end
		fc.mu.Unlock()
		return tooMany(end.Sub(now))
	}
	return nil
}

// limitIP counts a post from ip (over every form). It comes before
// anything else a post costs: a flood from one address that this process
// saw refused is refused again from memory, without reading the form.
func (s *Forms) limitIP(ctx context.Context, ip string) error {
	if ip == "" {
		return nil
	}
	return s.counter.hit(ctx, "ip:"+identity.IPKey(ip), s.limits.PerIP, s.limits.Window)
}

// limitForm counts a post to form formID. It comes after the address's
// count, so a flood from one address is refused before it counts
// against the form (and does not use up the form's allowance for
// everyone else).
func (s *Forms) limitForm(ctx context.Context, formID int64) error {
	return s.counter.hit(ctx, "form:"+strconv.FormatInt(formID, 10), s.limits.PerForm, s.limits.Window)
}

// stampKey is the key of the hosted form's signed time field, shared by
// every process through the settings table.
func (s *Forms) stampKey(ctx context.Context) ([]byte, error) {
	v, err := s.settings.Secret(ctx, "form_stamp_key", 32)
	return []byte(v), err
}

func stampMAC(key []byte, publicID, ms string) string {
	m := hmac.New(sha256.New, key)
	m.Write([]byte(publicID + "|" + ms))
	return hex.EncodeToString(m.Sum(nil)[:16])
}

// Stamp is the signed time field of the hosted page of form publicID,
// served now: "<unix ms>.<mac>".
func (s *Forms) Stamp(ctx context.Context, publicID string) (string, error) {
	key, err := s.stampKey(ctx)
	if err != nil {
		return "", err
	}
	ms := strconv.FormatInt(s.now().UnixMilli(), 10)
	return ms + "." + stampMAC(key, publicID, ms), nil
}

// ErrTooFast refuses a post whose time field is too young or forged.
var ErrTooFast = &core.Error{Code: core.CodeValidation, Message: "The form was sent too quickly. Please wait a moment and send it again."}

// checkStamp refuses a stamp that is not this server's for this form, or
// was served less than MinFillTime ago.
func (s *Forms) checkStamp(ctx context.Context, publicID, stamp string) error {
	ms, mac, ok := strings.Cut(stamp, ".")
	t, err := strconv.ParseInt(ms, 10, 64)
	if !ok || err != nil || len(mac) != 32 {
		return ErrTooFast
	}
	key, err := s.stampKey(ctx)
	if err != nil {
		return err
	}
	if !hmac.Equal([]byte(mac), []byte(stampMAC(key, publicID, ms))) {
		return ErrTooFast
	}
	if s.now().Sub(time.UnixMilli(t)) < MinFillTime {
		return ErrTooFast
	}
	return nil
}
