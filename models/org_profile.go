package models

// OrgProfile is an account's organisation profile: the company's name
// and postal address, its brand colour and logo. An account without a
// row has an empty profile.
type OrgProfile struct {
	UserID       int64  `gorm:"primaryKey;autoIncrement:false"`
	CompanyName  string `gorm:"column:company_name"`
	AddressLine1 string `gorm:"column:address_line1"`
	AddressLine2 string `gorm:"column:address_line2"`
	City         string `gorm:"column:city"`
	PostalCode   string `gorm:"column:postal_code"`
	CountryID    int64  `gorm:"column:country_id"`
	// BrandColor is "#rrggbb" in lower case, "" for none.
	BrandColor string `gorm:"column:brand_color"`
	// Logo is the image as herald re-encoded it (read only to serve it:
	// leave it out of other reads), LogoType its content type, LogoHash
	// the name of its public address ("" for no logo).
	Logo      []byte    `gorm:"column:logo"`
	LogoType  string    `gorm:"column:logo_type"`
	LogoHash  string    `gorm:"column:logo_hash"`
	UpdatedAt Timestamp `gorm:"column:updated_at"`
}

// TableName names the table.
func (OrgProfile) TableName() string { return "org_profiles" }
