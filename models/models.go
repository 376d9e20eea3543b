package models

// User is an account: the owner of every other record. Secrets never leave
// it: the password and the secret key are stored as hashes and never encoded.
type User struct {
	ID           int64     `gorm:"primaryKey" json:"id"`
	Name         string    `json:"name"`
	Email        string    `json:"email"`
	PasswordHash string    `json:"-"`
	PublicKey    string    `json:"-"`
	SecretHash   []byte    `json:"-"`
	TimeZone     string    `json:"time_zone"`
	CreatedAt    Timestamp `json:"created_at"`
	UpdatedAt    Timestamp `json:"updated_at"`
	// TOTPSecret is the sealed two-factor key (nil: two-factor login
	// off), TOTPPending one being set up, TOTPLastStep the time step of
	// the last code accepted (service/identity/totp.go).
	TOTPSecret   []byte `gorm:"column:totp_secret" json:"-"`
	TOTPPending  []byte `gorm:"column:totp_pending" json:"-"`
	TOTPLastStep int64  `gorm:"column:totp_last_step" json:"-"`
}

// TwoFactor reports whether logging in to the account asks for a code.
func (u *User) TwoFactor() bool { return len(u.TOTPSecret) > 0 }

// Unsubscriber is one suppressed address: a global unsubscriber when
// UnsubscribeGroupsID is nil, a recipient of that group otherwise.
type Unsubscriber struct {
	ID                  int64     `gorm:"primaryKey" json:"id"`
	UserID              int64     `json:"user_id"`
	UnsubscribeGroupsID *int64    `gorm:"column:unsubscribe_groups_id" json:"unsubscribe_groups_id"`
	EmailAddress        string    `json:"email_address"`
	CreatedAt           Timestamp `json:"created_at"`
	UpdatedAt           Timestamp `json:"updated_at"`
}

// UnsubscribeGroup is a named list recipients can leave on the preference page.
type UnsubscribeGroup struct {
	ID          int64     `gorm:"primaryKey" json:"id"`
	UserID      int64     `json:"user_id"`
	RandID      string    `json:"rand_id"`
	GroupName   string    `json:"group_name"`
	Description string    `json:"description"`
	IsDisplay   int       `json:"is_display"`
	CreatedAt   Timestamp `json:"created_at"`
	UpdatedAt   Timestamp `json:"updated_at"`
}

// UnsubscribeGroupCount is a group as the list answers it, with its recipients counted.
type UnsubscribeGroupCount struct {
	UnsubscribeGroup
	UnsubscribeClientsCount int64 `json:"unsubscribe_clients_count"`
}

// NotificationRecipient is an address that receives the account's notifications.
type NotificationRecipient struct {
	ID           int64     `gorm:"primaryKey" json:"id"`
	UserID       int64     `json:"user_id"`
	EmailAddress string    `json:"email_address"`
	EmailOwner   string    `json:"email_owner"`
	CreatedAt    Timestamp `json:"created_at"`
	UpdatedAt    Timestamp `json:"updated_at"`
}

// Setting is one process-wide value shared through the database (for
// example the session signing key), so that several processes agree.
type Setting struct {
	Name  string `gorm:"primaryKey"`
	Value string
}

// TableName keeps GORM from pluralising to "notification_recipients" differently per dialect.
func (NotificationRecipient) TableName() string { return "notification_recipients" }

// TableName names the suppression table.
func (Unsubscriber) TableName() string { return "unsubscribers" }

// TableName names the group table.
func (UnsubscribeGroup) TableName() string { return "unsubscribe_groups" }

// TableName names the settings table.
func (Setting) TableName() string { return "settings" }

// RowID is the row's id, by which lists are read in order (keyset).
func (u *Unsubscriber) RowID() int64 { return u.ID }

// RowID is the row's id.
func (g *UnsubscribeGroup) RowID() int64 { return g.ID }

// RowID is the row's id.
func (n *NotificationRecipient) RowID() int64 { return n.ID }
