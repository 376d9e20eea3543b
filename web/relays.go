package web

import (
	"context"
	"strings"
	"time"

	"github.com/gofiber/fiber/v2"

	"herald/delivery"
	"herald/views"
	"herald/views/relays"
)

// RelayReporter reports the relays of HERALD_SMTP_URL (delivery.Relays).
type RelayReporter interface {
	Status(ctx context.Context) ([]delivery.RelayStatus, error)
}

// relaysPage shows each relay: up or paused and why, its day against its
// quota, its last hour. The relays are the installation's, not an
// account's: an owner, admin or editor may read them.
func (w *Web) relaysPage(c *fiber.Ctx) error {
	p := relays.Page{Mail: w.opt.Mail, Now: time.Now()}
	if w.opt.Relays != nil {
		st, err := w.opt.Relays.Status(c.UserContext())
		if err != nil {
			return err
		}
		for _, s := range st {
			var limits []string
			for _, l := range s.Limits {
				limits = append(limits, l.String())
			}
			p.Relays = append(p.Relays, relays.Relay{Name: s.Name, Server: s.Server, Weight: s.Weight, MaxConns: s.MaxConns,
				Limits: strings.Join(limits, ", "), FromDomains: s.FromDomains, Paused: s.Paused, PausedUntil: s.PausedUntil,
				LastError: s.LastError, LastErrorAt: s.LastErrorAt, Today: s.Today, DayQuota: s.DayQuota, LastHour: s.LastHour})
		}
	}
	return page(c, fiber.StatusOK, "Relays", views.NavRelays, relays.View(p))
}
