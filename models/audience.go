package models

// ContactType groups contacts; a contact's email is unique within its type.
type ContactType struct {
	ID        int64      `gorm:"primaryKey" json:"id"`
	UserID    int64      `json:"user_id"`
	Name      string     `json:"name"`
	DeletedAt *Timestamp `json:"deleted_at"`
	CreatedAt Timestamp  `json:"created_at"`
	UpdatedAt Timestamp  `json:"updated_at"`
}

// TableName names the table.
func (ContactType) TableName() string { return "contact_types" }

// ContactTypeCount is a contact type as the list answers it.
type ContactTypeCount struct {
	ContactType
	ContactsCount int64 `json:"contacts_count"`
}

// Field is a reserved field (UserID nil) or one of an account's custom fields.
type Field struct {
	ID         int64      `gorm:"primaryKey" json:"id"`
	UserID     *int64     `json:"user_id"`
	FieldName  string     `json:"field_name"`
	FieldType  string     `json:"field_type"`
	IsReserved int        `json:"is_reserved"`
	CreatedAt  *Timestamp `json:"created_at"`
	UpdatedAt  *Timestamp `json:"updated_at"`
	// Label is the display label ("join_date" → "Join Date"), set by the service.
	Label string `gorm:"-" json:"-"`
}

// TableName names the table.
func (Field) TableName() string { return "fields" }

// Contact is one address of a contact type with its reserved and custom
// field values. CustomFields holds the stored JSON object {name: value};
// the API shape (custom_field, fullname, country name) is built by the
// service into ContactView.
type Contact struct {
	ID                  int64    `gorm:"primaryKey" json:"id"`
	UserID              int64    `json:"user_id"`
	ContactTypeID       int64    `json:"contact_type_id"`
	FirstName           string   `json:"first_name"`
	LastName            string   `json:"last_name"`
	Email               string   `json:"email"`
	AltEmail            *string  `json:"alt_email"`
	Country             string   `json:"country"`
	State               string   `json:"state"`
	City                string   `json:"city"`
	AddressLine1        string   `gorm:"column:address_line1" json:"address_line1"`
	AddressLine2        string   `gorm:"column:address_line2" json:"address_line2"`
	StateProvinceRegion string   `json:"state_province_region"`
	PostalCode          string   `json:"postal_code"`
	CustomFields        JSONText `json:"-"`
	// Status is ContactConfirmed or ContactUnconfirmed (double opt-in).
	Status string `gorm:"default:confirmed" json:"status"`
	// Consent is how the contact came.
	Consent Consent `json:"consent"`
	// Language is the IETF tag the public pages and the confirmation mail
	// speak to the contact ("" none).
	Language string `json:"language"`
	// LastEngagedAt is when a person last opened or clicked a mail to the
	// contact's address (Unix ms, 0 never). Only the tracking writes it
	// (read-only here, so that saving a contact never moves it back); the
	// API's contact does not carry it.
	LastEngagedAt int64      `gorm:"->" json:"-"`
	DeletedAt     *Timestamp `json:"deleted_at"`
	CreatedAt     Timestamp  `json:"created_at"`
	UpdatedAt     Timestamp  `json:"updated_at"`
}

// TableName names the table.
func (Contact) TableName() string { return "contacts" }

// CustomValue is one custom field of a contact as the API shows it.
type CustomValue struct {
	FieldName  string  `json:"field_name"`
	FieldValue *string `json:"field_value"`
}

// ContactView is a contact as the API answers it.
type ContactView struct {
	Contact
	CustomField map[string]CustomValue `json:"custom_field"`
	Fullname    string                 `json:"fullname"`
	// Tags are the contact's tags, sorted (never null).
	Tags        []string     `json:"tags"`
	ContactType *ContactType `json:"contact_type,omitempty"`
}

// Segment is a saved set of conditions over one contact type.
type Segment struct {
	ID             int64       `gorm:"primaryKey" json:"id"`
	UserID         int64       `json:"user_id"`
	ContactTypeID  int64       `json:"contact_type_id"`
	SegmentName    string      `json:"segment_name"`
	SelectField    StringArray `json:"select_field"`
	SelectOperator StringArray `json:"select_operator"`
	Value          StringArray `json:"value"`
	QueryType      *string     `json:"query_type"`
	DeletedAt      *Timestamp  `json:"deleted_at"`
	CreatedAt      Timestamp   `json:"created_at"`
	UpdatedAt      Timestamp   `json:"updated_at"`
}

// TableName names the table.
func (Segment) TableName() string { return "segments" }

// SegmentCount is a segment as the list answers it.
type SegmentCount struct {
	Segment
	SegmentEmailsCount int64 `json:"segment_emails_count"`
}

// SegmentEmail is a stored segment recipient: a matching contact
// (ContactID set) or an address added by hand.
type SegmentEmail struct {
	ID        int64     `gorm:"primaryKey" json:"id"`
	UserID    int64     `json:"user_id"`
	SegmentID int64     `json:"segment_id"`
	ContactID *int64    `json:"contact_id"`
	FirstName string    `json:"first_name"`
	LastName  string    `json:"last_name"`
	Email     string    `json:"email"`
	CreatedAt Timestamp `json:"created_at"`
	UpdatedAt Timestamp `json:"updated_at"`
}

// TableName names the table.
func (SegmentEmail) TableName() string { return "segment_emails" }

// SegmentRecipient is a segment recipient as the API answers it: a
// contact's current values, or the hand-added address.
type SegmentRecipient struct {
	ID           int64     `json:"id"`
	UserID       int64     `json:"user_id"`
	SegmentID    int64     `json:"segment_id"`
	ContactID    *int64    `json:"contact_id"`
	FirstName    string    `json:"first_name"`
	LastName     string    `json:"last_name"`
	Email        string    `json:"email"`
	Country      *string   `json:"country"`
	State        *string   `json:"state"`
	City         *string   `json:"city"`
	AddressLine1 *string   `gorm:"column:address_line1" json:"address_line1"`
	CreatedAt    Timestamp `json:"created_at"`
	UpdatedAt    Timestamp `json:"updated_at"`
	Fullname     string    `gorm:"-" json:"fullname"`
}

// Import is one CSV import: progress while it runs, report after.
type Import struct {
	ID            int64          `gorm:"primaryKey" json:"id"`
	UserID        int64          `json:"user_id"`
	ContactTypeID int64          `json:"contact_type_id"`
	FileName      string         `json:"file_name"`
	Status        string         `json:"status"` // running, done, failed
	BytesTotal    int64          `json:"bytes_total"`
	BytesRead     int64          `json:"bytes_read"`
	RowsRead      int64          `json:"rows"`
	Created       int64          `json:"created"`
	Updated       int64          `json:"updated"`
	Skipped       int64          `json:"skipped"`
	Problems      ImportProblems `json:"rejected"`
	Message       string         `json:"message,omitempty"`
	CreatedAt     Timestamp      `json:"created_at"`
	UpdatedAt     Timestamp      `json:"updated_at"`
	FinishedAt    *Timestamp     `json:"finished_at"`
	// Columns are the console's column choices for this run (service
	// Fields.ImportColumns): not stored, since an import cut short is not
	// resumed.
	Columns []string `gorm:"-" json:"-"`
	// Consent is what the import's new contacts record of how they came:
	// the caller sets the basis the importer chose (the API: none, read as
	// "api") and the IP and browser where known; the service the source,
	// the import and the time. Not stored on the import.
	Consent Consent `gorm:"-" json:"-"`
}

// TableName names the table.
func (Import) TableName() string { return "imports" }

// ImportProblem is a rejected row (Line 0: a note about the whole file).
type ImportProblem struct {
	Line   int64  `json:"line"`
	Reason string `json:"reason"`
}

// RowID is the row's id, by which lists are read in order (keyset).
func (t *ContactType) RowID() int64 { return t.ID }

// RowID is the row's id.
func (c *Contact) RowID() int64 { return c.ID }

// RowID is the row's id.
func (s *Segment) RowID() int64 { return s.ID }

// RowID is the row's id.
func (r *SegmentRecipient) RowID() int64 { return r.ID }
