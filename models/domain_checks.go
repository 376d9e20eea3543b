package models

// DomainCheck is what the DNS checks last found for one sending domain
// of an account, and its place in the daily queue.
type DomainCheck struct {
	ID         int64      `gorm:"primaryKey" json:"id"`
	UserID     int64      `json:"user_id"`
	Domain     string     `json:"domain"`
	CheckedAt  *Timestamp `json:"checked_at"`
	Results    string     `json:"-"` // JSON array of the checks
	SendingIPs string     `gorm:"column:sending_ips" json:"sending_ips"`
	DueAt      int64      `json:"-"` // Unix ms: checked again from then
	LeaseUntil int64      `json:"-"` // Unix ms: a process is checking it until then
	CreatedAt  Timestamp  `json:"created_at"`
}

// TableName names the table.
func (DomainCheck) TableName() string { return "domain_checks" }
