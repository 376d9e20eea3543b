package core

// An account's organisation profile as the areas show it: recipients'
// pages, the archive, invitations and the org placeholders of designs read
// it through ReadBrand; the identity area saves it.

import (
	"context"
	"errors"
	"fmt"
	"math"
	"strconv"
	"strings"

	"gorm.io/gorm"

	"herald/models"
	"herald/world"
)

// Brand is what pages and mails show of an account's organisation
// profile. Every field is "" when the profile has none.
type Brand struct {
	Name    string // the company name
	Address string // the postal address on one line ("1 Main St, 75001 Paris, France")
	// Color is the brand colour, "#rrggbb" in lower case.
	Color string
	// LogoPath is the logo's address on this server (LogoPath), to be
	// joined to the base URL in a mail.
	LogoPath string
}

// The org placeholders: filled from the profile in sends, tests, "view in
// browser", previews and the archive. A custom field of the same name
// keeps its meaning (OrgPlaceholderValues leaves it out).
const (
	PlaceholderOrgName    = "org_name"
	PlaceholderOrgAddress = "org_address"
	PlaceholderOrgLogoURL = "org_logo_url"
)

// OrgPlaceholders are the org placeholders' names, in the order lists show them.
var OrgPlaceholders = []string{PlaceholderOrgName, PlaceholderOrgAddress, PlaceholderOrgLogoURL}

// BrandLogoPrefix is where logos are served: BrandLogoPrefix + hash + ".png" or ".jpg".
const BrandLogoPrefix = "/brand/logo/"

// BrandStylePrefix is where a brand colour's stylesheet is served:
// BrandStylePrefix + "rrggbb.css".
const BrandStylePrefix = "/brand/color/"

// LogoPath is the public address of the logo named hash with type ct.
func LogoPath(hash, ct string) string {
	if hash == "" {
		return ""
	}
	ext := ".png"
	if ct == "image/jpeg" {
		ext = ".jpg"
	}
	return BrandLogoPrefix + hash + ext
}

// Ink is the text colour kept readable on the brand colour: black or
// white, whichever contrasts more (WCAG 2 contrast ratio); "" without a
// colour. The better of the two always reaches 4.58:1, above the 4.5:1
// that body text needs.
func (b Brand) Ink() string {
	if b.Color == "" {
		return ""
	}
	return InkOn(b.Color)
}

// StylePath is the address of the stylesheet that paints pages in the
// brand colour, "" without a colour.
func (b Brand) StylePath() string {
	if b.Color == "" {
		return ""
	}
	return BrandStylePrefix + strings.TrimPrefix(b.Color, "#") + ".css"
}

// LogoURL is the logo's absolute address under base, herald's public
// address ("" without a logo).
func (b Brand) LogoURL(base string) string {
	if b.LogoPath == "" {
		return ""
	}
	return strings.TrimRight(base, "/") + b.LogoPath
}

// Empty reports whether the profile shows nothing.
func (b Brand) Empty() bool { return b == Brand{} }

// ParseColor reads "#rrggbb" (any case) into its lower-case form; ok is
// false for anything else.
func ParseColor(s string) (string, bool) {
	s = strings.TrimSpace(s)
	if len(s) != 7 || s[0] != '#' {
		return "", false
	}
	if _, err := strconv.ParseUint(s[1:], 16, 32); err != nil {
		return "", false
	}
	return strings.ToLower(s), true
}

// Luminance is the WCAG 2 relative luminance of "#rrggbb" (0 black, 1 white).
func Luminance(color string) float64 {
	v, _ := strconv.ParseUint(strings.TrimPrefix(color, "#"), 16, 32)
	lin := func(c uint64) float64 {
		s := float64(c) / 255
		if s <= 0.03928 {
			return s / 12.92
		}
		return math.Pow((s+0.055)/1.055, 2.4)
	}
	return 0.2126*lin(v>>16&0xff) + 0.7152*lin(v>>8&0xff) + 0.0722*lin(v&0xff)
}

// Contrast is the WCAG 2 contrast ratio of two "#rrggbb" colours (1 to 21).
func Contrast(a, b string) float64 {
	la, lb := Luminance(a), Luminance(b)
	if la < lb {
		la, lb = lb, la
	}
	return (la + 0.05) / (lb + 0.05)
}

// InkOn is "#000000" or "#ffffff", whichever contrasts more with color.
func InkOn(color string) string {
	if Contrast(color, "#000000") >= Contrast(color, "#ffffff") {
		return "#000000"
	}
	return "#ffffff"
}

// OrgAddress is a profile's postal address on one line: the lines, the
// postal code with the city, the country's name; blanks left out.
func OrgAddress(p *models.OrgProfile) string {
	city := strings.TrimSpace(strings.TrimSpace(p.PostalCode) + " " + strings.TrimSpace(p.City))
	country := ""
	if c, ok := world.CountryByID(p.CountryID); ok {
		country = c.Name
	}
	var out []string
	for _, s := range []string{p.AddressLine1, p.AddressLine2, city, country} {
		if s = strings.TrimSpace(s); s != "" {
			out = append(out, s)
		}
	}
	return strings.Join(out, ", ")
}

// BrandOf is what pages show of profile p.
func BrandOf(p *models.OrgProfile) Brand {
	return Brand{Name: p.CompanyName, Address: OrgAddress(p), Color: p.BrandColor, LogoPath: LogoPath(p.LogoHash, p.LogoType)}
}

// profileColumns are every column of a profile but the logo itself.
var profileColumns = []string{"user_id", "company_name", "address_line1", "address_line2", "city", "postal_code", "country_id", "brand_color", "logo_type", "logo_hash", "updated_at"}

// ReadProfile returns the account's profile without its logo's bytes (an
// empty one when the account has none saved).
func ReadProfile(ctx context.Context, db *gorm.DB, accountID int64) (*models.OrgProfile, error) {
	var p models.OrgProfile
	err := db.WithContext(ctx).Select(profileColumns).Where("user_id = ?", accountID).Take(&p).Error
	if errors.Is(err, gorm.ErrRecordNotFound) {
		return &models.OrgProfile{UserID: accountID}, nil
	}
	if err != nil {
		return nil, fmt.Errorf("profile: read of account %d: %w", accountID, err)
	}
	return &p, nil
}

// ReadBrand returns what pages show of the account's profile.
func ReadBrand(ctx context.Context, db *gorm.DB, accountID int64) (Brand, error) {
	p, err := ReadProfile(ctx, db, accountID)
	if err != nil {
		return Brand{}, err
	}
	return BrandOf(p), nil
}

// OrgPlaceholderValues are the org placeholders' values for the account's
// mails (base: herald's public address, for the logo), leaving out any
// whose name is one of the account's custom fields: a design written
// before the profile existed keeps the meaning it had.
func OrgPlaceholderValues(ctx context.Context, db *gorm.DB, accountID int64, base string) (map[string]string, error) {
	b, err := ReadBrand(ctx, db, accountID)
	if err != nil {
		return nil, err
	}
	var custom []string
	if err := db.WithContext(ctx).Table("fields").Where("user_id = ? AND field_name IN ?", accountID, OrgPlaceholders).
		Pluck("field_name", &custom).Error; err != nil {
		return nil, fmt.Errorf("profile: custom fields named as org placeholders, account %d: %w", accountID, err)
	}
	out := map[string]string{PlaceholderOrgName: b.Name, PlaceholderOrgAddress: b.Address, PlaceholderOrgLogoURL: b.LogoURL(base)}
	for _, n := range custom {
		delete(out, n)
	}
	return out, nil
}
