package models

import "time"

// Member is a teammate: a login of its own (address and password) acting
// on the account UserID with a role (admin, editor or viewer; the
// account's own login is its owner). Times are Unix milliseconds.
type Member struct {
	ID           int64 `gorm:"primaryKey"`
	UserID       int64
	Name         string
	Email        string
	PasswordHash string
	Role         string
	CreatedAt    int64 `gorm:"autoCreateTime:false"`
	UpdatedAt    int64 `gorm:"autoUpdateTime:false"`
	// The member's own two-factor login, as User's (service/identity/totp.go).
	TOTPSecret   []byte `gorm:"column:totp_secret"`
	TOTPPending  []byte `gorm:"column:totp_pending"`
	TOTPLastStep int64  `gorm:"column:totp_last_step"`
}

// TwoFactor reports whether logging in as the member asks for a code.
func (m *Member) TwoFactor() bool { return len(m.TOTPSecret) > 0 }

// TableName names the members table.
func (Member) TableName() string { return "members" }

// Joined is when the member accepted its invitation.
func (m *Member) Joined() time.Time { return time.UnixMilli(m.CreatedAt).UTC() }

// Invitation is an invitation mailed to an address, waiting for its link.
type Invitation struct {
	ID        int64 `gorm:"primaryKey"`
	UserID    int64
	Email     string
	Role      string
	TokenHash []byte
	InvitedBy string // who invited, as shown on the team page
	CreatedAt int64  `gorm:"autoCreateTime:false"`
	ExpiresAt int64
}

// TableName names the invitations table.
func (Invitation) TableName() string { return "invitations" }

// Expires is when the invitation's link stops working.
func (i *Invitation) Expires() time.Time { return time.UnixMilli(i.ExpiresAt).UTC() }

// AuditEntry is one line of an account's audit log: who (MemberID 0 and
// Actor naming the owner, or the API/command line), did what (Action), to
// what (Target), with what detail, when (Unix milliseconds).
type AuditEntry struct {
	ID        int64 `gorm:"primaryKey"`
	UserID    int64
	MemberID  int64
	Actor     string
	Action    string
	Target    string
	Detail    string
	CreatedAt int64 `gorm:"autoCreateTime:false"`
}

// TableName names the audit log table.
func (AuditEntry) TableName() string { return "audit_log" }

// At is when it happened.
func (e *AuditEntry) At() time.Time { return time.UnixMilli(e.CreatedAt).UTC() }
