package identity

import (
	"context"
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"fmt"
	"time"

	"herald/models"
	"herald/service/core"
)

// Session lifetimes (decisions.md 8: revocable sessions).
const (
	// SessionIdle ends a session unused for this long.
	SessionIdle = 24 * time.Hour
	// SessionLifetime ends a session this long after login, used or not.
	SessionLifetime = 7 * 24 * time.Hour
	// sessionTouch is how stale last_used_at may get: a session used all
	// day writes its row at most once a minute.
	sessionTouch = time.Minute
	// sessionsListed bounds the account page's list of sessions.
	sessionsListed = 20
)

// Sessions keeps the console's logged-in sessions as rows, so that ending
// one (logout, a password change, "log out everywhere") takes effect at
// once on every process sharing the database. The browser holds a random
// token; the table holds only its SHA-256.
type Sessions struct {
	db  *core.DB
	now func() time.Time
}

// tokenHash is how a token handed out once (a session, a sign-up or a
// password reset link) is kept: its SHA-256 only, so a database dump
// names no live token. A token has 256 random bits: no salt or slow hash
// is needed.
func tokenHash(token string) []byte {
	sum := sha256.Sum256([]byte(token))
	return sum[:]
}

// newToken makes a token handed out once: 32 random bytes, URL-safe
// base64, with the hash kept in its place (tokenHash).
func newToken() (token string, hash []byte) {
	b := make([]byte, 32)
	_, _ = rand.Read(b)
	token = base64.RawURLEncoding.EncodeToString(b)
	return token, tokenHash(token)
}

// Start opens a session for the account and returns its token (32 random
// bytes, URL-safe base64), the only copy of which goes to the browser. It
// also deletes expired sessions and forgotten throttle rows, now and then
// being every login. Errors: none expected.
func (s *Sessions) Start(ctx context.Context, accountID int64) (string, error) {
	return s.StartMember(ctx, accountID, 0)
}

// StartMember opens a session for a member (memberID; 0 for the owner)
// of the account, as Start does.
func (s *Sessions) StartMember(ctx context.Context, accountID, memberID int64) (string, error) {
	token, hash := newToken()
	now := s.now()
	row := &models.Session{
		UserID: accountID, MemberID: memberID, TokenHash: hash,
		StartedAt: now.UnixMilli(), LastUsedAt: now.UnixMilli(), ExpiresAt: now.Add(SessionLifetime).UnixMilli(),
	}
	if err := s.db.W.WithContext(ctx).Create(row).Error; err != nil {
		return "", fmt.Errorf("sessions: start: %w", err)
	}
	if err := s.sweep(ctx, now); err != nil {
		return "", fmt.Errorf("sessions: start: %w", err)
	}
	return token, nil
}

// sweep deletes sessions past either lifetime (each delete walks its own
// index) and throttle rows no rule remembers.
func (s *Sessions) sweep(ctx context.Context, now time.Time) error {
	w := s.db.W.WithContext(ctx)
	if err := w.Exec("DELETE FROM sessions WHERE expires_at <= ?", now.UnixMilli()).Error; err != nil {
		return fmt.Errorf("sessions: forget expired sessions: %w", err)
	}
	if err := w.Exec("DELETE FROM sessions WHERE last_used_at <= ?", now.Add(-SessionIdle).UnixMilli()).Error; err != nil {
		return fmt.Errorf("sessions: forget idle sessions: %w", err)
	}
	return throttle{db: s.db, now: func() time.Time { return now }}.sweep(ctx)
}

// Check returns the live session the token names and records its use (at
// most once a minute). Errors: ErrNotFound when the token names no
// session, or one that was ended or has expired (idle for SessionIdle, or
// older than SessionLifetime).
func (s *Sessions) Check(ctx context.Context, token string) (*models.Session, error) {
	if token == "" {
		return nil, core.ErrNotFound
	}
	var row models.Session
	if err := s.db.R.WithContext(ctx).Where("token_hash = ?", tokenHash(token)).First(&row).Error; err != nil {
		return nil, core.Wrap(core.NotFound(err), "sessions: check")
	}
	now := s.now()
	ms := now.UnixMilli()
	if ms >= row.ExpiresAt || ms-row.LastUsedAt >= SessionIdle.Milliseconds() {
		if err := s.db.W.WithContext(ctx).Exec("DELETE FROM sessions WHERE id = ?", row.ID).Error; err != nil {
			return nil, fmt.Errorf("sessions: end session %d: %w", row.ID, err)
		}
		return nil, core.ErrNotFound
	}
	if ms-row.LastUsedAt >= sessionTouch.Milliseconds() {
		// Only while the row lives: a logout in between is not undone.
		if err := s.db.W.WithContext(ctx).Exec("UPDATE sessions SET last_used_at = ? WHERE id = ?", ms, row.ID).Error; err != nil {
			return nil, fmt.Errorf("sessions: touch session %d: %w", row.ID, err)
		}
		row.LastUsedAt = ms
	}
	return &row, nil
}

// End ends the session the token names (logout); an unknown token is no
// error.
func (s *Sessions) End(ctx context.Context, token string) error {
	if token == "" {
		return nil
	}
	if err := s.db.W.WithContext(ctx).Exec("DELETE FROM sessions WHERE token_hash = ?", tokenHash(token)).Error; err != nil {
		return fmt.Errorf("sessions: end: %w", err)
	}
	return nil
}

// EndAllOf ends every session of one person of the account: the owner
// (memberID 0) or a member ("log out everywhere" of that person).
func (s *Sessions) EndAllOf(ctx context.Context, accountID, memberID int64) error {
	if err := s.db.W.WithContext(ctx).Exec("DELETE FROM sessions WHERE user_id = ? AND member_id = ?", accountID, memberID).Error; err != nil {
		return fmt.Errorf("sessions: end all: %w", err)
	}
	return nil
}

// List returns the account's live sessions, the most recently used first
// (at most 20).
func (s *Sessions) List(ctx context.Context, accountID int64) ([]models.Session, error) {
	return s.list(ctx, accountID, -1)
}

// ListOf is List for one person of the account: the owner (memberID 0)
// or a member.
func (s *Sessions) ListOf(ctx context.Context, accountID, memberID int64) ([]models.Session, error) {
	return s.list(ctx, accountID, memberID)
}

func (s *Sessions) list(ctx context.Context, accountID, memberID int64) ([]models.Session, error) {
	now := s.now()
	var rows []models.Session
	q := s.db.R.WithContext(ctx).Select("id", "user_id", "member_id", "started_at", "last_used_at", "expires_at").
		Where("user_id = ? AND last_used_at > ? AND expires_at > ?", accountID, now.Add(-SessionIdle).UnixMilli(), now.UnixMilli())
	if memberID >= 0 {
		q = q.Where("member_id = ?", memberID)
	}
	if err := q.Order("last_used_at DESC, id DESC").Limit(sessionsListed).Find(&rows).Error; err != nil {
		return nil, fmt.Errorf("sessions: list: %w", err)
	}
	return rows, nil
}
