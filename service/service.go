// Package service holds every rule of herald: validation, account scoping,
// transactions and typed errors. Pages (web/) and the API (api/) call the
// same methods; nothing here knows of HTTP or HTML.
//
// This package is the facade: New builds the areas, each a package of its
// own (docs/ARCHITECTURE.md, "service/ by area"), over a database and a
// Config (the transport, the public address, the clock), in their order:
// deliverability, identity, audience, engine's tracking, campaign. The
// api_*.go files alias the names other packages use as service.X.
// NewSending assembles a process's sending engine (engine.NewSending).
package service

import (
	"context"
	"net/netip"
	"strings"
	"time"

	"golang.org/x/crypto/bcrypt"

	"herald/delivery"
	"herald/service/audience"
	"herald/service/campaign"
	"herald/service/core"
	"herald/service/deliverability"
	"herald/service/engine"
	"herald/service/identity"
	"herald/service/internal/record"
	"herald/world"
)

// Service gathers the areas' services; build it with New.
type Service struct {
	DB       *core.DB
	Settings *core.Settings

	// identity
	Accounts *identity.Accounts
	Sessions *identity.Sessions
	Team     *identity.Team     // members, invitations, roles
	Audit    *identity.Audit    // who did what
	APIKeys  *identity.APIKeys  // named, scoped API keys
	Profiles *identity.Profiles // the organisation profile (name, address, colour, logo)

	// audience
	ContactTypes  *audience.ContactTypes
	Fields        *audience.Fields
	Contacts      *audience.Contacts
	Segments      *audience.Segments
	Imports       *audience.Imports
	Exports       *audience.Exports // background exports
	Unsubscribers *audience.Unsubscribers
	// Privacy answers privacy requests: an address's export and erasure.
	Privacy *audience.Privacy
	Groups  *audience.Groups
	Lookup  audience.Lookup
	Forms   *audience.Forms // sign-up forms and their confirmations

	// campaign
	Templates   campaign.Templates
	Designs     *campaign.Designs
	Blocks      *campaign.Blocks
	SingleSends *campaign.SingleSends
	Messages    *campaign.Messages // single messages (api/mail/send), sent ahead of campaigns
	Automations *campaign.Automations
	Checklist   *campaign.Checklist // the pre-send checks
	Archive     *campaign.Archive   // the public archive of sends

	// engine (the sending engine itself: NewSending)
	Tracking *engine.Tracking

	// deliverability
	Senders       *deliverability.Senders
	DomainChecks  *deliverability.DomainChecks
	Mail          *deliverability.Mail
	Outbox        *deliverability.Outbox
	Bounces       *deliverability.Bounces
	Feedback      *deliverability.Feedback
	Suppressions  *deliverability.Suppressions
	EventWebhooks *deliverability.EventWebhooks
	Notifications *deliverability.Notifications
	Dashboard     *deliverability.Dashboard
	Warmups       *deliverability.Warmups // warm-up plans of sending domains (decisions.md 11)

	events *record.Events  // event rows for the webhooks, shared by the areas
	engine *engine.Signals // what the areas tell this process's engine
	now    func() time.Time
}

// Config is what the service needs besides its database.
type Config struct {
	// Transport carries herald's own mail and the engine's; nil: the
	// outbox (mail is kept, not sent).
	Transport delivery.Transport
	// BaseURL is herald's public address, the root of every link in a
	// mail; default http://localhost:8080.
	BaseURL string
	// SystemFrom is the sender of herald's own mail; default
	// DefaultSystemFrom(BaseURL).
	SystemFrom string
	// BounceAddress is HERALD_BOUNCE_ADDRESS (decisions.md 7); default
	// DefaultBounceAddress(BaseURL).
	BounceAddress string
	// SignupClosed (HERALD_SIGNUP=off) refuses every sign-up from the
	// console; accounts are made with `herald account create`.
	SignupClosed bool
	// SecretKey (HERALD_SECRET_KEY) is a key kept outside the database:
	// two-factor secrets are sealed with it (totp.go). Empty: two-factor
	// login cannot be turned on.
	SecretKey string
	// Now is the service's one clock: what is due (schedules, automation
	// steps, tracking windows), the times written (created_at and the
	// rest, GORM's own included), sessions, throttles and link lifetimes;
	// default time.Now. Every area gets it from New, taken as stored (UTC,
	// microseconds); tests hand a clock they move (dbtest.Clock).
	Now func() time.Time
	// SoftBounceLimit is HERALD_SOFT_BOUNCE_LIMIT: the soft bounces of one
	// address after which it is suppressed; 0: 3.
	SoftBounceLimit int
	// EventWebhooksPrivate (HERALD_EVENT_WEBHOOK_PRIVATE=1) lets events
	// endpoints name hosts off the public internet (loopback, private,
	// link-local…); false, the default: public addresses only, checked
	// when an endpoint is saved and when a connection is made
	// (delivery.EventPoster.PublicOnly).
	EventWebhooksPrivate bool
	// MachineRanges (HERALD_MACHINE_RANGES) are address ranges whose opens
	// and clicks are a machine's, besides delivery.MachineRules' own.
	MachineRanges []netip.Prefix
	// Countries (HERALD_GEOIP, HERALD_GEOIP_V6) names the country of the
	// address of each open and click for the reports; nil: no country is
	// kept and the reports say so.
	Countries *world.GeoIP
	// PasswordCost is the bcrypt cost of passwords hashed; 0:
	// bcrypt.DefaultCost (tests lower it).
	PasswordCost int
	// DomainChecks is what the DNS checks of sending domains read:
	// HERALD_DNS_SERVER (which every DNS lookup of the service asks), the
	// relay's host, whether inbound SMTP runs.
	DomainChecks deliverability.DomainCheckConfig
	// FormLimits are the limits of posts to public sign-up forms; the
	// zero value: audience.DefaultFormLimits.
	FormLimits audience.FormLimits
}

// New wires every area to db and cfg.
func New(db *core.DB, cfg Config) (*Service, error) {
	if cfg.BaseURL == "" {
		cfg.BaseURL = "http://localhost:8080"
	}
	cfg.BaseURL = strings.TrimRight(cfg.BaseURL, "/")
	if cfg.SystemFrom == "" {
		cfg.SystemFrom = deliverability.DefaultSystemFrom(cfg.BaseURL)
	}
	if cfg.BounceAddress == "" {
		cfg.BounceAddress = deliverability.DefaultBounceAddress(cfg.BaseURL)
	}
	if cfg.Now == nil {
		cfg.Now = time.Now
	}
	if cfg.PasswordCost == 0 {
		cfg.PasswordCost = bcrypt.DefaultCost
	}
	now := core.StoredClock(cfg.Now)
	db = db.WithClock(now)
	outbox := deliverability.NewOutbox(db)
	if cfg.Transport == nil {
		cfg.Transport = delivery.NewOutbox(outbox)
	}
	signals := &engine.Signals{}
	settings := &core.Settings{DB: db}
	events := &record.Events{DB: db}
	del, err := deliverability.New(deliverability.Config{
		DB: db, Now: now, Settings: settings, Events: events, Transport: cfg.Transport,
		BaseURL: cfg.BaseURL, SystemFrom: cfg.SystemFrom, BounceAddress: cfg.BounceAddress,
		SoftBounceLimit: cfg.SoftBounceLimit, EventWebhooksPrivate: cfg.EventWebhooksPrivate, DomainChecks: cfg.DomainChecks,
		// A plan started or ended: this process's engine reads the plans
		// again and wakes (an ended plan's waiting mail goes at once).
		WarmupChanged: func() { signals.WarmupChanged(); signals.Wake() },
	})
	if err != nil {
		return nil, err
	}
	mail, checks := del.Mail, del.DomainChecks
	id := identity.New(identity.Config{DB: db, Now: now, Mail: mail, PasswordCost: cfg.PasswordCost, SignupClosed: cfg.SignupClosed, SecretKey: cfg.SecretKey, BaseURL: cfg.BaseURL})
	audit := id.Audit
	aud := audience.New(audience.Config{DB: db, Audit: audit, Settings: settings, ImportDone: mail.ImportDone})
	camp := campaign.New(campaign.Config{DB: db, Now: now, BaseURL: cfg.BaseURL, Audit: audit, Signals: signals,
		Contacts: aud.Contacts, Groups: aud.Groups, DomainAuth: checks.Authenticated, Events: events, Bounces: del.Bounces, Countries: cfg.Countries.Loaded()})
	svc := &Service{
		DomainChecks:  checks,
		DB:            db,
		Audit:         audit,
		Team:          id.Team,
		engine:        signals,
		now:           now,
		Mail:          mail,
		events:        events,
		EventWebhooks: del.EventWebhooks,
		Bounces:       del.Bounces,
		Feedback:      del.Feedback,
		ContactTypes:  aud.ContactTypes,
		Fields:        aud.Fields,
		Contacts:      aud.Contacts,
		Segments:      aud.Segments,
		Imports:       aud.Imports,
		Senders:       del.Senders,
		Outbox:        outbox,
		Designs:       camp.Designs,
		Blocks:        camp.Blocks,
		SingleSends:   camp.SingleSends,
		Messages:      camp.Messages,
		Checklist:     camp.Checklist,
		Suppressions:  del.Suppressions,
		Tracking:      engine.NewTracking(db, events, cfg.BaseURL, now, cfg.MachineRanges, cfg.Countries),
		Automations:   camp.Automations,
		Accounts:      id.Accounts,
		Unsubscribers: aud.Unsubscribers,
		Privacy:       aud.Privacy,
		Groups:        aud.Groups,
		Notifications: del.Notifications,
		Settings:      settings,
		Sessions:      id.Sessions,
		APIKeys:       id.APIKeys,
		Profiles:      id.Profiles,
		Dashboard:     del.Dashboard,
		Warmups:       del.Warmups,
	}
	svc.Forms = audience.NewForms(audience.FormsConfig{DB: db, Now: now, Mail: mail, BaseURL: cfg.BaseURL, Events: events, Settings: settings,
		Segments: aud.Segments, MachineRules: &delivery.MachineRules{Extra: cfg.MachineRanges}, Limits: cfg.FormLimits,
		LiftErasure: aud.Privacy.LiftErasure, Erased: aud.Privacy.Erased})
	svc.Exports = audience.NewExports(db, svc.Contacts, svc.SingleSends, audit, now)
	svc.Archive = campaign.NewArchive(db, cfg.BaseURL, now)
	return svc, nil
}

// NewSending assembles this process's engine over the service's
// transport. Call Run to start it.
func (s *Service) NewSending(ctx context.Context, cfg engine.SendingConfig) (*engine.Sending, error) {
	key, err := s.Settings.TrackingKey(ctx)
	if err != nil {
		return nil, err
	}
	verp, err := s.Bounces.VERP(ctx)
	if err != nil {
		return nil, err
	}
	return engine.NewSending(engine.SendingParts{
		DB: s.DB, Events: s.events, Recorders: s.Feedback.Rec, Mail: s.Mail, Transport: s.Mail.Transport, BaseURL: s.Mail.BaseURL,
		Key: key, VERP: verp, Signals: s.engine, Now: s.now, Purge: s.SingleSends.PurgeDeleted, Prune: s.Feedback.Prune, Expire: s.Contacts.PurgeUnconfirmed, Refresh: s.Segments.RefreshTimed,
	}, cfg), nil
}

// NewEventDispatcher returns the event webhooks' dispatcher of this
// process over the service's database, with its store, on the service's
// clock.
func (s *Service) NewEventDispatcher(ctx context.Context) (*delivery.Dispatcher, *deliverability.EventStore, error) {
	return deliverability.NewEventDispatcher(ctx, s.DB, s.Bounces, s.Mail, s.EventWebhooks, s.now)
}
