package service

// Names of identity kept under their old names for the packages that use them.

import (
	"mime/multipart"
	"time"

	"herald/models"
	"herald/service/core"
	"herald/service/identity"
)

type (
	APIKey         = identity.APIKey
	APIKeyInput    = identity.APIKeyInput
	AcceptInput    = identity.AcceptInput
	AccountInput   = identity.AccountInput
	Accounts       = identity.Accounts
	Action         = identity.Action
	CodeInput      = identity.CodeInput
	Keys           = identity.Keys
	LoginInput     = identity.LoginInput
	NewPassword    = identity.NewPassword
	PasswordChange = identity.PasswordChange
	Scope          = identity.Scope
	Sessions       = identity.Sessions
	Team           = identity.Team
	Who            = identity.Who
)

const (
	ActAudit         = identity.ActAudit
	ActDeleteList    = identity.ActDeleteList
	ActImport        = identity.ActImport
	ActKeys          = identity.ActKeys
	ActOwnLogin      = identity.ActOwnLogin
	ActPrepare       = identity.ActPrepare
	ActRead          = identity.ActRead
	ActRunAutomation = identity.ActRunAutomation
	ActSend          = identity.ActSend
	ActSenders       = identity.ActSenders
	ActSettings      = identity.ActSettings
	ActSuppressions  = identity.ActSuppressions
	ActTeam          = identity.ActTeam
	AreaReference    = identity.AreaReference
	AuditPageSize    = identity.AuditPageSize
	InvitationTTL    = identity.InvitationTTL
	ResetLinkTTL     = identity.ResetLinkTTL
	ScopeAreas       = identity.ScopeAreas
	ScopeFull        = identity.ScopeFull
	ScopeRead        = identity.ScopeRead
	SessionIdle      = identity.SessionIdle
	SessionLifetime  = identity.SessionLifetime
	SignupLinkTTL    = identity.SignupLinkTTL
)

var (
	Areas             = identity.Areas
	ErrInvitationLink = identity.ErrInvitationLink
	ErrNoSecretKey    = identity.ErrNoSecretKey
	ErrResetLink      = identity.ErrResetLink
	ErrSignupClosed   = identity.ErrSignupClosed
	ErrSignupLink     = identity.ErrSignupLink
	ErrTOTPOn         = identity.ErrTOTPOn
	ErrTOTPOff        = identity.ErrTOTPOff
	FullScope         = identity.FullScope
)

// The two-factor recovery codes (identity/recovery.go).
const (
	RecoveryCodeCount = identity.RecoveryCodeCount
	RecoveryCodesLow  = identity.RecoveryCodesLow
)

// Actions is identity.Actions.
func Actions() []identity.Action {
	return identity.Actions()
}

// AuditLabel is identity.AuditLabel.
func AuditLabel(a string) string {
	return identity.AuditLabel(a)
}

// Can is identity.Can.
func Can(role core.Role, action identity.Action) bool {
	return identity.Can(role, action)
}

// DraftAction is identity.DraftAction.
func DraftAction(cur *models.SingleSend) identity.Action {
	return identity.DraftAction(cur)
}

// Forbidden is identity.Forbidden.
func Forbidden(role core.Role, action identity.Action) *core.Error {
	return identity.Forbidden(role, action)
}

// IPKey is identity.IPKey.
func IPKey(ip string) string {
	return identity.IPKey(ip)
}

// IsArea is identity.IsArea.
func IsArea(name string) bool {
	return identity.IsArea(name)
}

// IsCommonPassword is identity.IsCommonPassword.
func IsCommonPassword(pw string) bool {
	return identity.IsCommonPassword(pw)
}

// IsNamedKey is identity.IsNamedKey.
func IsNamedKey(publicKey string) bool {
	return identity.IsNamedKey(publicKey)
}

// Owner is identity.Owner.
func Owner(accountID int64) identity.Who {
	return identity.Owner(accountID)
}

// RefusalOf is identity.RefusalOf.
func RefusalOf(action string) string {
	return identity.RefusalOf(action)
}

// RetryAfter is identity.RetryAfter.
func RetryAfter(err error) time.Duration {
	return identity.RetryAfter(err)
}

// TwoFactorOn is identity.TwoFactorOn.
func TwoFactorOn(u *models.User, m *models.Member) bool {
	return identity.TwoFactorOn(u, m)
}

// WhoOf is identity.WhoOf.
func WhoOf(u *models.User, m *models.Member) identity.Who {
	return identity.WhoOf(u, m)
}

// The organisation profile's names.
type (
	ProfileInput = identity.ProfileInput
	ProfileView  = identity.ProfileView
	Brand        = core.Brand
)

// ReadLogo reads an uploaded logo file for ProfileInput.Logo.
func ReadLogo(fh *multipart.FileHeader) ([]byte, error) { return identity.ReadLogo(fh) }

// MaxLogoBytes is the largest logo file accepted.
const MaxLogoBytes = identity.MaxLogoBytes

// MaxLogoSide is the largest width or height of a logo, in pixels.
const MaxLogoSide = identity.MaxLogoSide

// InkOn is the text colour (black or white) readable on a "#rrggbb" colour.
func InkOn(color string) string { return core.InkOn(color) }

// Contrast is the WCAG 2 contrast ratio of two "#rrggbb" colours.
func Contrast(a, b string) float64 { return core.Contrast(a, b) }

// ParseColor reads "#rrggbb" (any case) into its lower-case form.
func ParseColor(s string) (string, bool) { return core.ParseColor(s) }
