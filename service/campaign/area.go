package campaign

import (
	"time"

	"herald/service/audience"
	"herald/service/core"
	"herald/service/deliverability"
	"herald/service/engine"
	"herald/service/identity"
	"herald/service/internal/record"
)

// Config is what the campaign area is built from.
type Config struct {
	DB      *core.DB
	Now     func() time.Time
	BaseURL string
	Audit   *identity.Audit
	// Signals tell this process's engine of due, changed and deleted
	// sends and emails.
	Signals *engine.Signals
	// Contacts and Groups: a design's preview with a contact's values, the
	// unsubscribe group a send or email names.
	Contacts *audience.Contacts
	Groups   *audience.Groups
	// DomainAuth reads the DNS checks' last result of a From domain (the
	// checklist's From-domain rule).
	DomainAuth DomainAuthFunc
	// Events and Bounces: a single message's processed event, and the VERP
	// that makes its id (its Message-ID).
	Events  *record.Events
	Bounces *deliverability.Bounces
	// Countries reports whether an IP-to-country database names the
	// country of opens and clicks (the reports say when none does).
	Countries bool
}

// Services are the campaign area's services: designs and saved blocks, single sends (with their A/B
// and local-time options, calendar and statistics), automations and the
// pre-send checklist.
type Services struct {
	Designs     *Designs
	Blocks      *Blocks
	SingleSends *SingleSends
	Automations *Automations
	Checklist   *Checklist
	Messages    *Messages
}

// New wires the area's services to c.
func New(c Config) *Services {
	checklist := NewChecklist(c.DB, c.Now, c.DomainAuth)
	return &Services{
		Designs:     &Designs{db: c.DB, contacts: c.Contacts},
		Blocks:      &Blocks{db: c.DB},
		SingleSends: &SingleSends{db: c.DB, now: c.Now, engine: c.Signals, checklist: checklist, audit: c.Audit, groups: c.Groups, countries: c.Countries},
		Automations: &Automations{db: c.DB, baseURL: c.BaseURL, engine: c.Signals, checklist: checklist, audit: c.Audit, groups: c.Groups},
		Checklist:   checklist,
		Messages:    &Messages{db: c.DB, now: c.Now, engine: c.Signals, events: c.Events, bounces: c.Bounces, designs: &Designs{db: c.DB, contacts: c.Contacts}},
	}
}
