package models

// DesignTemplate is a design of the library as the API answers it.
type DesignTemplate struct {
	ID           int64      `json:"id"`
	TemplateName string     `json:"template_name"`
	PreviewImage string     `json:"preview_image"`
	JSONCode     string     `json:"json_code"`
	HTMLCode     string     `json:"html_code"`
	IsBlank      int        `json:"is_blank"`
	CreatedAt    *Timestamp `json:"created_at"`
	UpdatedAt    *Timestamp `json:"updated_at"`
}

// Design is an account's own design, made in the editor.
type Design struct {
	ID           int64     `gorm:"primaryKey" json:"id"`
	UserID       int64     `json:"user_id"`
	Name         string    `json:"name"`
	TemplateID   int64     `json:"template_id"` // the library design it started from
	TemplateJSON string    `json:"template_json"`
	TemplateHTML string    `json:"template_html"`
	CreatedAt    Timestamp `json:"created_at"`
	UpdatedAt    Timestamp `json:"updated_at"`
}

// TableName names the table.
func (Design) TableName() string { return "designs" }

// RowID is the row's id.
func (d *Design) RowID() int64 { return d.ID }

// SavedBlock is a piece of a design saved from the editor under a name,
// which the account's team inserts into other designs.
type SavedBlock struct {
	ID        int64     `gorm:"primaryKey" json:"id"`
	UserID    int64     `json:"user_id"`
	Name      string    `json:"name"`
	NameKey   string    `json:"-"` // the name in lower case, unique in the account
	HTML      string    `gorm:"column:html" json:"html"`
	CSS       string    `gorm:"column:css" json:"css"`
	CreatedAt Timestamp `json:"created_at"`
	UpdatedAt Timestamp `json:"updated_at"`
}

// TableName names the table.
func (SavedBlock) TableName() string { return "saved_blocks" }
