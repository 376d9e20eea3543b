package api

import (
	"strings"

	"github.com/gofiber/fiber/v2"

	"herald/service"
)

// sendMessage is POST api/mail/send (decisions.md 11): one message at once,
// ahead of campaign traffic; it answers {"message":{"id":…}}.
func (a *API) sendMessage(c *fiber.Ctx) error {
	f, err := parseForm(c)
	if err != nil {
		return fail(c, err)
	}
	in := service.MessageInput{
		SenderID: f.Get("sender_id"), To: f.Get("to"), Subject: f.Get("subject"),
		TemplateID: f.Get("template_id"), TemplateHTML: f.Get("template_html"),
		IdempotencyKey: f.Get("idempotency_key"),
		Data:           map[string]string{},
	}
	for k, v := range f.Map("data") {
		if !strings.ContainsAny(k, "[]") { // a nested object's members are not placeholders
			in.Data[k] = v
		}
	}
	// data given as a plain value, not an object.
	in.DataNotObject = strings.TrimSpace(f.Get("data")) != ""
	m, err := a.svc.Messages.Send(c.UserContext(), account(c), in)
	if err != nil {
		return fail(c, err)
	}
	return success(c, fiber.Map{"id": m.ID})
}
