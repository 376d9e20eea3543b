package models

// UntiedReport is a report herald could not tie to one of its messages
// (no token, a token or Message-ID that does not verify, a message that
// is gone): it changed nothing and is kept, server wide, for the setup
// page's counts. The address is kept for the operator's database, never
// shown: the rows are no account's.
type UntiedReport struct {
	ID        int64     `gorm:"primaryKey" json:"id"`
	Kind      string    `json:"kind"`      // hard_bounce, soft_bounce, complaint, unsubscribe, block, deferral
	Source    string    `json:"source"`    // dsn, arf, text, mailto, ses, sendgrid, postmark, mailgun
	RemoteIP  string    `json:"remote_ip"` // the SMTP client or webhook caller; "" for the bounce mailbox
	Email     string    `json:"email"`     // the address the report names
	Why       string    `json:"why"`       // "no token", "token does not verify", …
	CreatedAt Timestamp `json:"created_at"`
}

// TableName names the table.
func (UntiedReport) TableName() string { return "untied_reports" }

// KeptMail is a mail of the bounce mailbox that yielded no report and
// stays there, set aside: counted once per mail.
type KeptMail struct {
	Mailbox   string    `gorm:"primaryKey" json:"mailbox"` // the mailbox's URL without its password
	MailID    string    `gorm:"primaryKey" json:"mail_id"` // IMAP UIDVALIDITY/UID, POP3 UIDL
	Why       string    `json:"why"`                       // "not a report", "unreadable", "too large"
	CreatedAt Timestamp `json:"created_at"`
}

// TableName names the table.
func (KeptMail) TableName() string { return "bounce_mailbox_kept" }
