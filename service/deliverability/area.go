package deliverability

import (
	"net/mail"
	"time"

	"herald/delivery"
	"herald/service/core"
	"herald/service/internal/record"
)

// Config is what the deliverability area is built from.
type Config struct {
	DB       *core.DB
	Now      func() time.Time
	Settings *core.Settings
	Events   *record.Events
	// Transport carries herald's own mail (sender verification, notices).
	Transport delivery.Transport
	// BaseURL, SystemFrom, BounceAddress, SoftBounceLimit,
	// EventWebhooksPrivate and DomainChecks: as in the service's Config,
	// defaults applied.
	BaseURL, SystemFrom, BounceAddress string
	SoftBounceLimit                    int
	EventWebhooksPrivate               bool
	DomainChecks                       DomainCheckConfig
	// WarmupChanged tells this process's engine that a warm-up plan
	// started or ended (nil: nothing to tell).
	WarmupChanged func()
}

// Services are the deliverability area's services: senders and their
// domains' checks, bounces and feedback, suppressions, event webhooks,
// herald's own mail and the dashboard's figures.
type Services struct {
	Bounces       *Bounces
	Mail          *Mail
	DomainChecks  *DomainChecks
	Feedback      *Feedback
	EventWebhooks *EventWebhooks
	Senders       *Senders
	Suppressions  *Suppressions
	Notifications *Notifications
	Dashboard     *Dashboard
	Warmups       *Warmups // warm-up plans of sending domains
}

// New wires the area's services to c.
func New(c Config) (*Services, error) {
	resolver := &sharedResolver{server: c.DomainChecks.DNSServer}
	bounces := &Bounces{db: c.DB, settings: c.Settings, resolver: resolver}
	if err := bounces.SetAddress(c.BounceAddress); err != nil {
		return nil, err
	}
	m := &Mail{db: c.DB, Transport: c.Transport, BaseURL: c.BaseURL, from: mail.Address{Name: "Herald", Address: c.SystemFrom}, bounces: bounces}
	checks := newDomainChecks(c.DB, bounces, m, resolver, c.BaseURL, c.Now, c.DomainChecks)
	return &Services{
		Bounces:       bounces,
		Mail:          m,
		DomainChecks:  checks,
		Feedback:      newFeedback(c.DB, bounces, c.Events, m, c.SoftBounceLimit, c.Now),
		EventWebhooks: &EventWebhooks{db: c.DB, now: c.Now, events: c.Events, poster: &delivery.EventPoster{PublicOnly: !c.EventWebhooksPrivate}},
		Senders:       &Senders{db: c.DB, now: c.Now, notify: m, checks: checks},
		Suppressions:  &Suppressions{db: c.DB},
		Notifications: &Notifications{db: c.DB},
		Dashboard:     &Dashboard{db: c.DB, now: c.Now},
		Warmups:       &Warmups{db: c.DB, now: c.Now, changed: c.WarmupChanged},
	}, nil
}
