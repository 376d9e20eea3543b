package models

// OutboxMessage is a message kept by the built-in outbox transport.
type OutboxMessage struct {
	ID        int64     `gorm:"primaryKey" json:"id"`
	UserID    int64     `json:"user_id"`
	MailFrom  string    `json:"mail_from"`
	RcptTo    string    `json:"rcpt_to"` // comma-separated
	Subject   string    `json:"subject"`
	Message   []byte    `json:"-"`
	CreatedAt Timestamp `json:"created_at"`
}

// TableName names the table.
func (OutboxMessage) TableName() string { return "outbox_messages" }

// RowID is the row's id.
func (m *OutboxMessage) RowID() int64 { return m.ID }
