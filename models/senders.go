package models

// Sender is a from identity of an account. It must be verified (a link
// mailed to FromEmail) before mail can be sent with it.
type Sender struct {
	ID              int64      `gorm:"primaryKey" json:"id"`
	UserID          int64      `json:"user_id"`
	FromName        string     `json:"from_name"`
	FromEmail       string     `json:"from_email"`
	ReplyToEmail    string     `json:"reply_to_email"`
	CountryID       int64      `json:"country_id"`
	StateID         int64      `json:"state_id"`
	CityID          int64      `json:"city_id"`
	ZipCode         string     `json:"zip_code"`
	CompanyAddress  string     `json:"company_address"`
	CompanyAddress2 string     `gorm:"column:company_address2" json:"company_address2"`
	Nickname        string     `json:"nickname"`
	IsVerified      int        `json:"is_verified"`
	Utr             string     `json:"utr"`
	VerifyToken     string     `json:"-"`
	VerifyIssuedAt  *Timestamp `json:"-"` // when VerifyToken was issued: links expire 7 days later
	SendAt          DateTime   `json:"send_at"`
	CreatedAt       Timestamp  `json:"created_at"`
	UpdatedAt       Timestamp  `json:"updated_at"`
	DeletedAt       *Timestamp `json:"deleted_at"`
}

// TableName names the table.
func (Sender) TableName() string { return "senders" }

// RowID is the row's id.
func (s *Sender) RowID() int64 { return s.ID }

// SenderDomain is a DKIM key of one sending domain of an account. A
// domain may hold several (key rotation), numbered by Generation; the
// newest one that was seen published or may sign anyway signs.
type SenderDomain struct {
	ID          int64      `gorm:"primaryKey" json:"id"`
	UserID      int64      `json:"user_id"`
	Domain      string     `json:"domain"`
	Selector    string     `json:"selector"`
	Algorithm   string     `json:"algorithm"`
	PrivateKey  string     `json:"-"`
	Generation  int        `json:"generation"`
	PublishedAt *Timestamp `json:"published_at"` // a DNS check saw its record
	SignAnyway  int        `json:"sign_anyway"`  // 1: signs before its record is seen
	CreatedAt   Timestamp  `json:"created_at"`
}

// TableName names the table.
func (SenderDomain) TableName() string { return "sender_domains" }
