package models

// Erasure is an address an account erased at the person's request, kept
// only as its keyed hash (hex HMAC-SHA256): the address is refused by
// contacts/add and skipped by imports until the person signs up again
// through a form.
type Erasure struct {
	ID        int64     `gorm:"primaryKey" json:"id"`
	UserID    int64     `json:"user_id"`
	EmailHash string    `json:"email_hash"`
	CreatedAt Timestamp `json:"created_at"`
}

// TableName names the table.
func (Erasure) TableName() string { return "erasures" }
