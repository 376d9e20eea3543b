package api

import (
	"bufio"
	"context"
	"log/slog"
	"strings"

	"github.com/gofiber/fiber/v2"
)

// Privacy requests (decisions.md 10).

// msgErased is the answer of a successful erasure.
const msgErased = "Email Erased Successfully"

// privacyExport streams, as one JSON document, everything the account
// holds on the address in ?email=. The request is checked and written to
// the audit log first (a bad address is a normal failure envelope); the
// document is then read in batches as it streams, nothing of *fiber.Ctx
// used in the writer: an error there can only cut it short (logged).
func (a *API) privacyExport(c *fiber.Ctx) error {
	head, err := a.svc.Privacy.StartExport(c.UserContext(), account(c), strings.Clone(c.Query("email")))
	if err != nil {
		return fail(c, err)
	}
	acct, bg := account(c), context.WithoutCancel(c.UserContext())
	c.Set(fiber.HeaderContentType, fiber.MIMEApplicationJSONCharsetUTF8)
	c.Status(fiber.StatusOK)
	c.Context().SetBodyStreamWriter(func(w *bufio.Writer) {
		if err := a.svc.Privacy.WriteExport(bg, acct, head, w); err != nil {
			slog.Error("api: privacy export cut short", "err", err)
		}
	})
	return nil
}

// eraseContact erases the address in the body's email from the account.
func (a *API) eraseContact(c *fiber.Ctx) error {
	f, err := parseForm(c)
	if err != nil {
		return fail(c, err)
	}
	if err := a.svc.Privacy.Erase(c.UserContext(), account(c), f.Get("email")); err != nil {
		return fail(c, err)
	}
	return success(c, msgErased)
}
