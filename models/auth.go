package models

import "time"

// Session is one logged-in console session (decisions.md 8): the cookie
// names it by a random token of which only the SHA-256 is stored. Times
// are Unix milliseconds.
type Session struct {
	ID         int64 `gorm:"primaryKey"`
	UserID     int64 // the account
	MemberID   int64 // the teammate logged in; 0 for the account's owner
	TokenHash  []byte
	StartedAt  int64
	LastUsedAt int64
	ExpiresAt  int64
}

// TableName names the sessions table.
func (Session) TableName() string { return "sessions" }

// Started is when the session began (at login).
func (s *Session) Started() time.Time { return time.UnixMilli(s.StartedAt).UTC() }

// LastUsed is when the session last served a request (to the minute).
func (s *Session) LastUsed() time.Time { return time.UnixMilli(s.LastUsedAt).UTC() }

// PendingSignup is a sign-up waiting for the link mailed to its address.
type PendingSignup struct {
	ID           int64 `gorm:"primaryKey"`
	TokenHash    []byte
	Name         string
	Email        string
	PasswordHash string
	CreatedAt    int64 `gorm:"autoCreateTime:false"` // Unix milliseconds
	ExpiresAt    int64 // Unix milliseconds
}

// TableName names the pending sign-ups table.
func (PendingSignup) TableName() string { return "pending_signups" }
