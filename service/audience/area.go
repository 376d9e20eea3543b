package audience

import (
	"context"

	"herald/models"
	"herald/service/core"
	"herald/service/identity"
)

// Config is what the audience area is built from.
type Config struct {
	DB    *core.DB
	Audit *identity.Audit
	// Settings keeps the erasure key.
	Settings *core.Settings
	// ImportDone is called when an import ends (herald mails its report).
	ImportDone func(ctx context.Context, imp *models.Import)
}

// Services are the audience area's services: contact types, fields, contacts and
// their history, segments, imports, unsubscribe groups and unsubscribers.
// Exports are built apart (NewExports): they also need the sends.
type Services struct {
	ContactTypes  *ContactTypes
	Fields        *Fields
	Contacts      *Contacts
	Segments      *Segments
	Imports       *Imports
	Unsubscribers *Unsubscribers
	Groups        *Groups
	Privacy       *Privacy
	Erasures      *Erasures
}

// New wires the area's services to c.
func New(c Config) *Services {
	segments := &Segments{db: c.DB, audit: c.Audit}
	erasures := &Erasures{db: c.DB, settings: c.Settings}
	if erasures.settings == nil {
		erasures.settings = &core.Settings{DB: c.DB}
	}
	contacts := &Contacts{db: c.DB, segments: segments, erasures: erasures}
	return &Services{
		ContactTypes:  &ContactTypes{db: c.DB, audit: c.Audit},
		Fields:        &Fields{db: c.DB, segments: segments},
		Contacts:      contacts,
		Segments:      segments,
		Imports:       &Imports{db: c.DB, segments: segments, audit: c.Audit, OnDone: c.ImportDone, erasures: erasures},
		Unsubscribers: &Unsubscribers{db: c.DB},
		Groups:        &Groups{db: c.DB},
		Privacy:       &Privacy{db: c.DB, audit: c.Audit, erasures: erasures, contacts: contacts},
		Erasures:      erasures,
	}
}
