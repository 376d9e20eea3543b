package api

import (
	"context"

	"github.com/gofiber/fiber/v2"

	"herald/models"
	"herald/service"
)

// The events webhook endpoints (decisions.md 7).

func (a *API) listEventWebhooks(c *fiber.Ctx) error {
	acct := account(c)
	return list(c, "eventWebhooks", filter(c), func(ctx context.Context, f service.ListFilter, fn func(*models.EventWebhook) error) error {
		return a.svc.EventWebhooks.Each(ctx, acct, f, fn)
	})
}

// eventWebhookInput reads url, events[i] and enabled; on update only the
// keys the request holds change.
func eventWebhookInput(f *form) service.EventWebhookInput {
	events := f.Array("events")
	return service.EventWebhookInput{
		URL: f.Get("url"), URLSet: f.Has("url"),
		Events: events, EventsSet: len(events) > 0,
		Enabled: f.Get("enabled"), EnabledSet: f.Has("enabled"),
	}
}

func (a *API) saveEventWebhook(c *fiber.Ctx) error {
	f, err := parseForm(c)
	if err != nil {
		return fail(c, err)
	}
	w, err := a.svc.EventWebhooks.Save(c.UserContext(), account(c), eventWebhookInput(f))
	if err != nil {
		return fail(c, err)
	}
	// The one answer that holds the secret.
	return success(c, fiber.Map{"id": w.ID, "secret": w.Secret, "url": w.URL, "events": w.Events, "enabled": w.Enabled,
		"created_at": w.CreatedAt, "updated_at": w.UpdatedAt})
}

func (a *API) updateEventWebhook(c *fiber.Ctx) error {
	f, err := parseForm(c)
	if err != nil {
		return fail(c, err)
	}
	if _, err := a.svc.EventWebhooks.Update(c.UserContext(), account(c), updateID(c, f, "id"), eventWebhookInput(f)); err != nil {
		return fail(c, err)
	}
	return success(c, "Updated Successfully")
}

func (a *API) deleteEventWebhook(c *fiber.Ctx) error {
	id, err := queryID(c, nil, "id")
	if err == nil {
		err = a.svc.EventWebhooks.Delete(c.UserContext(), account(c), id)
	}
	if err != nil {
		return fail(c, err)
	}
	return success(c, "Deleted Successfully")
}
