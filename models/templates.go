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
