package identity

import (
	"time"

	"herald/service/core"
	"herald/service/deliverability"
)

// Config is what the identity area is built from.
type Config struct {
	DB  *core.DB
	Now func() time.Time
	// Mail sends sign-up links, password resets and invitations.
	Mail *deliverability.Mail
	// PasswordCost, SignupClosed and SecretKey: as in the service's
	// Config, defaults applied.
	PasswordCost int
	SignupClosed bool
	SecretKey    string
	// BaseURL is herald's public address (no trailing slash): the root of
	// the logo's absolute address in a profile's view.
	BaseURL string
}

// Services are the identity area's services: accounts, sign-up and logins,
// members and roles, sessions, API keys, two-factor and the audit log.
type Services struct {
	Audit    *Audit
	Accounts *Accounts
	Team     *Team
	Sessions *Sessions
	APIKeys  *APIKeys
	Profiles *Profiles // the organisation profile
}

// New wires the area's services to c.
func New(c Config) *Services {
	audit := &Audit{db: c.DB, now: c.Now}
	accounts := &Accounts{db: c.DB, now: c.Now, cost: c.PasswordCost, mail: c.Mail, audit: audit, signupClosed: c.SignupClosed, sealKey: sealKey(c.SecretKey)}
	return &Services{
		Audit:    audit,
		Accounts: accounts,
		Team:     &Team{db: c.DB, mail: c.Mail, accounts: accounts, audit: audit},
		Sessions: &Sessions{db: c.DB, now: c.Now},
		APIKeys:  &APIKeys{db: c.DB, now: c.Now, audit: audit},
		Profiles: &Profiles{db: c.DB, now: c.Now, audit: audit, baseURL: c.BaseURL},
	}
}
