// Package account holds the account page and the one-time display of
// API keys.
package account

import (
	"fmt"
	"strings"
	"time"

	"herald/service"

	"herald/models"
	"herald/views"
)

// Data is the account page.
type Data struct {
	User      *models.User
	CSRF      string
	TimeZone  ZoneForm
	Checklist ChecklistSetting
	Password  PasswordForm
	Sessions  []Session // live sessions, most recently used first
	APIKeys   APIKeys   // the named, scoped API keys
	TwoFactor TwoFactorForm
	Profile   ProfileForm
	// ArchiveURL is the address of the account's public archive of sends.
	ArchiveURL string

	// Member is the teammate looking at the page (nil: the owner), Role
	// its role's label. The settings and keys cards show only to those who
	// may change them (views.Can).
	Member *models.Member
	Role   string
}

// TwoFactorForm is the account page's two-factor card.
type TwoFactorForm struct {
	On        bool
	Available bool // the server has HERALD_SECRET_KEY
	Errors    views.Errors
	Alert     string
	CSRF      string

	// Recovery codes: the number unused, the new codes to show once (nil:
	// none), and the "make new codes" form's problems.
	CodesLeft      int
	NewCodes       []string
	RecoveryErrors views.Errors
	RecoveryAlert  string
}

// CodesLeftText says how many recovery codes are left.
func (f TwoFactorForm) CodesLeftText() string {
	switch f.CodesLeft {
	case 0:
		return "No recovery codes. Make some now: without them, a lost phone means asking the server's administrator to turn two-factor login off."
	case 1:
		return "1 recovery code left. Make new ones soon, so that you can still log in if you lose your phone."
	}
	if f.CodesLow() {
		return fmt.Sprintf("%d recovery codes left. Make new ones soon, so that you can still log in if you lose your phone.", f.CodesLeft)
	}
	return fmt.Sprintf("%d of %d recovery codes left. Each logs in once in place of a code of your authenticator app, if you lose your phone.", f.CodesLeft, service.RecoveryCodeCount)
}

// CodesLow reports whether few enough codes are left to warn.
func (f TwoFactorForm) CodesLow() bool { return f.CodesLeft <= service.RecoveryCodesLow }

// CodesText is the new codes, one a line, as copied.
func (f TwoFactorForm) CodesText() string { return strings.Join(f.NewCodes, "\n") }

// Setup is the two-factor set-up page.
type Setup struct {
	Key    string // base32, for typing
	QR     string // data: URI of the QR code's PNG
	Errors views.Errors
	Alert  string
	CSRF   string
}

// The two-factor routes.
const (
	TwoFactorURL       = "/account/2fa"
	TwoFactorSetupURL  = "/account/2fa/setup"
	TwoFactorEnableURL = "/account/2fa/enable"
	TwoFactorOffURL    = "/account/2fa/off"
	RecoveryCodesURL   = "/account/2fa/recovery-codes"
)

// PasswordForm changes the password (nothing typed is shown again).
type PasswordForm struct {
	Errors views.Errors
	Alert  string // a message of the whole form (rate limited)
	CSRF   string
}

// PasswordURL is where the password is changed (POST).
const PasswordURL = "/account/password"

// LogoutEverywhereURL ends every session of the account (POST).
const LogoutEverywhereURL = "/account/logout-everywhere"

// Session is one live login of the account.
type Session struct {
	Started  time.Time
	LastUsed time.Time
	Current  bool // the session of the page's own request
}

// when formats t in the account's time zone, to the minute.
func when(t time.Time, tz string) string {
	loc, err := time.LoadLocation(tz)
	if err != nil {
		loc = time.UTC
	}
	return t.In(loc).Format("Jan 2, 2006 at 15:04")
}

// ZoneForm chooses the account's time zone.
type ZoneForm struct {
	Value  string
	Errors []string
	Saved  bool // just saved: the form says so
	CSRF   string
}

// TimeZoneURL is where the time zone is saved (POST).
const TimeZoneURL = "/account/time-zone"

// Keys are freshly issued API keys, shown once.
type Keys struct {
	PublicKey string
	SecretKey string
}

func formAlerts(s string) []string {
	if s == "" {
		return nil
	}
	return []string{s}
}

// ChecklistSetting turns blocking on the pre-send checklist on or off.
type ChecklistSetting struct {
	Blocks bool
	Saved  bool // just saved: the form says so
	CSRF   string
}

// ChecklistURL is where the setting is saved (POST).
const ChecklistURL = "/account/checklist"

// ProfileForm is the organisation profile's card: the company's name and
// postal address, its brand colour and logo, shown to recipients on the
// preference page, in the archive, in invitations and by the ((org_…))
// placeholders.
type ProfileForm struct {
	CompanyName  string
	AddressLine1 string
	AddressLine2 string
	City         string
	PostalCode   string
	CountryID    string
	BrandColor   string
	Countries    []views.Option
	// Brand is the profile as saved: its logo and colour are previewed.
	Brand  service.Brand
	Errors views.Errors
	Saved  bool
	CSRF   string
}

// ProfileURL is where the profile is saved (POST, multipart).
const ProfileURL = "/account/organisation"

// LogoHelp says which logos are accepted.
func LogoHelp() string {
	return fmt.Sprintf("A PNG or JPEG of at most %d KB and %d pixels a side, shown at the top of the preference page and the archive. SVG is not accepted.", service.MaxLogoBytes>>10, 2000)
}

// ProfileFormOf is the form showing the saved profile p.
func ProfileFormOf(p *models.OrgProfile, b service.Brand, countries []views.Option, csrf string) ProfileForm {
	f := ProfileForm{
		CompanyName: p.CompanyName, AddressLine1: p.AddressLine1, AddressLine2: p.AddressLine2, City: p.City,
		PostalCode: p.PostalCode, BrandColor: p.BrandColor, Countries: countries, Brand: b, CSRF: csrf,
	}
	if p.CountryID != 0 {
		f.CountryID = fmt.Sprint(p.CountryID)
	}
	return f
}

// orDash is s, or a dash for nothing.
func orDash(s string) string {
	if s == "" {
		return "–"
	}
	return s
}
