package web

import (
	"fmt"
	"strings"

	"github.com/gofiber/fiber/v2"

	"herald/service"
	"herald/views"
	"herald/views/eventwebhooks"
)

// The console's events webhook pages (decisions.md 7): plain forms, each
// answered by a page or a redirect with a flash message.

const eventWebhooksURL = "/event-webhooks"

func (w *Web) mountEventWebhooks(r router) {
	r.get(eventWebhooksURL, service.ActRead, w.listEventWebhooks)
	r.post(eventWebhooksURL, service.ActSettings, w.addEventWebhook)
	r.get(eventWebhooksURL+"/:id", service.ActRead, w.showEventWebhook)
	r.post(eventWebhooksURL+"/:id", service.ActSettings, w.updateEventWebhook)
	r.post(eventWebhooksURL+"/:id/delete", service.ActSettings, w.deleteEventWebhook)
	r.post(eventWebhooksURL+"/:id/ping", service.ActSettings, w.pingEventWebhook)
	r.post(eventWebhooksURL+"/:id/deliveries/:delivery/resend", service.ActSettings, w.resendEventDelivery)
}

// webhookForm reads the endpoint form: url, the ticked events, enabled
// (a checkbox: absent is off).
func webhookForm(c *fiber.Ctx) (eventwebhooks.Form, service.EventWebhookInput) {
	var events []string
	c.Context().PostArgs().VisitAll(func(k, v []byte) {
		if string(k) == "events" && len(events) < len(service.EventNames)*2 {
			events = append(events, strings.Clone(string(v)))
		}
	})
	enabled := "0"
	if formValue(c, "enabled") != "" {
		enabled = "1"
	}
	f := eventwebhooks.Form{URL: formValue(c, "url"), Events: events, Enabled: enabled == "1", CSRF: csrf(c)}
	return f, service.EventWebhookInput{URL: f.URL, URLSet: true, Events: events, EventsSet: true, Enabled: enabled, EnabledSet: true}
}

func (w *Web) eventWebhooksPage(c *fiber.Ctx, status int, d eventwebhooks.Data) error {
	rows, err := w.svc.EventWebhooks.List(c.UserContext(), accountID(c))
	if err != nil {
		return err
	}
	d.Rows, d.CSRF = rows, csrf(c)
	return page(c, status, "Event webhooks", views.NavEventWebhooks, eventwebhooks.Page(d))
}

func (w *Web) listEventWebhooks(c *fiber.Ctx) error {
	return w.eventWebhooksPage(c, fiber.StatusOK, eventwebhooks.Data{Form: eventwebhooks.Form{Enabled: true, CSRF: csrf(c)}})
}

// addEventWebhook saves an endpoint and shows its secret, this once.
func (w *Web) addEventWebhook(c *fiber.Ctx) error {
	f, in := webhookForm(c)
	if len(in.Events) == 0 {
		in.EventsSet = false
	}
	r, err := w.svc.EventWebhooks.Save(c.UserContext(), accountID(c), in)
	if isValidation(err) {
		f.Errors = fieldErrors(err)
		return w.eventWebhooksPage(c, fiber.StatusUnprocessableEntity, eventwebhooks.Data{Form: f})
	}
	if err != nil {
		return err
	}
	c.Set(fiber.HeaderCacheControl, "no-store") // the page holds the secret
	return w.eventWebhooksPage(c, fiber.StatusOK, eventwebhooks.Data{Form: eventwebhooks.Form{Enabled: true, CSRF: csrf(c)},
		Secret: r.Secret, SecretFor: r.URL})
}

func (w *Web) webhookID(c *fiber.Ctx) (int64, error) { return service.ParseID(c.Params("id")) }

func (w *Web) eventWebhookPage(c *fiber.Ctx, status int, id int64, f *eventwebhooks.Form) error {
	acct := accountID(c)
	wh, err := w.svc.EventWebhooks.Get(c.UserContext(), acct, id)
	if err != nil {
		return err
	}
	dels, err := w.svc.EventWebhooks.Deliveries(c.UserContext(), acct, id)
	if err != nil {
		return err
	}
	form := eventwebhooks.Form{ID: wh.ID, URL: wh.URL, Events: wh.Events, Enabled: wh.Enabled == 1, CSRF: csrf(c)}
	if len(wh.Events) == len(service.EventNames) {
		form.Events = nil // all: shown as none ticked
	}
	if f != nil {
		form = *f
		form.ID = wh.ID
	}
	return page(c, status, "Event webhook", views.NavEventWebhooks, eventwebhooks.DetailPage(eventwebhooks.Detail{Webhook: *wh, Form: form, Deliveries: dels, CSRF: csrf(c)}))
}

func (w *Web) showEventWebhook(c *fiber.Ctx) error {
	id, err := w.webhookID(c)
	if err != nil {
		return err
	}
	return w.eventWebhookPage(c, fiber.StatusOK, id, nil)
}

func (w *Web) updateEventWebhook(c *fiber.Ctx) error {
	id, err := w.webhookID(c)
	if err != nil {
		return err
	}
	f, in := webhookForm(c)
	if _, err := w.svc.EventWebhooks.Update(c.UserContext(), accountID(c), id, in); isValidation(err) {
		f.Errors = fieldErrors(err)
		return w.eventWebhookPage(c, fiber.StatusUnprocessableEntity, id, &f)
	} else if err != nil {
		return err
	}
	w.flash(c, views.FlashSuccess, "Endpoint saved.")
	return c.Redirect(eventWebhooksURL+"/"+c.Params("id"), fiber.StatusSeeOther)
}

func (w *Web) deleteEventWebhook(c *fiber.Ctx) error {
	id, err := w.webhookID(c)
	if err == nil {
		err = w.svc.EventWebhooks.Delete(c.UserContext(), accountID(c), id)
	}
	if err != nil {
		return err
	}
	w.flash(c, views.FlashSuccess, "Endpoint deleted.")
	return c.Redirect(eventWebhooksURL, fiber.StatusSeeOther)
}

// pingEventWebhook posts a signed test event at once and says how it went.
func (w *Web) pingEventWebhook(c *fiber.Ctx) error {
	id, err := w.webhookID(c)
	if err != nil {
		return err
	}
	d, err := w.svc.EventWebhooks.Ping(c.UserContext(), accountID(c), id)
	if err != nil {
		return err
	}
	back := eventWebhooksURL + "/" + c.Params("id")
	if d.Error == "" && d.StatusCode >= 200 && d.StatusCode < 300 {
		w.flash(c, views.FlashSuccess, fmt.Sprintf("The endpoint answered HTTP %d in %d ms.", d.StatusCode, d.LatencyMS))
	} else {
		w.flash(c, views.FlashError, "The test ping failed: "+d.Error)
	}
	return c.Redirect(back, fiber.StatusSeeOther)
}

func (w *Web) resendEventDelivery(c *fiber.Ctx) error {
	if _, err := w.webhookID(c); err != nil {
		return err
	}
	did, err := service.ParseID(c.Params("delivery"))
	if err != nil {
		return err
	}
	n, err := w.svc.EventWebhooks.Resend(c.UserContext(), accountID(c), did)
	if err != nil {
		return err
	}
	w.flash(c, views.FlashSuccess, views.N("flash.events_requeued", n))
	return c.Redirect(eventWebhooksURL+"/"+c.Params("id"), fiber.StatusSeeOther)
}
