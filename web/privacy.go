package web

import (
	"bufio"
	"context"
	"log/slog"
	"strconv"
	"strings"

	"github.com/gofiber/fiber/v2"

	"herald/models"
	"herald/service"
	"herald/views"
	"herald/views/contacts"
)

// The privacy requests on a contact's page (decisions.md 10): the same
// export and erasure as GET api/contacts/privacy-export and POST
// api/contacts/erase, on the contact's address. The service writes both
// to the audit log, with the member who asked.

// privacyRoutes mounts the contact page's privacy requests: the export
// needs reading (as the API's), the erasure the right to change contacts
// (as deleting one).
func (w *Web) privacyRoutes(r router) {
	r.get("/contacts/:id/privacy-export", service.ActRead, w.privacyExport)
	r.post("/contacts/:id/erase", service.ActPrepare, w.eraseContact)
}

// consoleConsent is the consent record of a contact added in the console:
// the source and, recorded but never trusted, the member's address and
// browser; the service adds the time.
func (w *Web) consoleConsent(c *fiber.Ctx) models.Consent {
	return models.Consent{Source: models.ConsentConsole, IP: strings.Clone(w.clientIP(c)), UserAgent: string(c.Request().Header.UserAgent())}
}

// privacyOf is what the contact's page shows of its consent and privacy.
func privacyOf(c *fiber.Ctx, v *models.ContactView) *contacts.Privacy {
	return &contacts.Privacy{ContactID: v.ID, Email: v.Email, Status: v.Status, Consent: v.Consent, CSRF: csrf(c)}
}

// privacyExport downloads everything the account holds on the contact's
// address as the API's JSON document, streamed. The request is in the
// audit log before the first byte goes. Errors: ErrNotFound.
func (w *Web) privacyExport(c *fiber.Ctx) error {
	v, err := w.contactParam(c)
	if err != nil {
		return err
	}
	head, err := w.svc.Privacy.StartExport(c.UserContext(), accountID(c), v.Email)
	if err != nil {
		return err
	}
	acct, bg := accountID(c), context.WithoutCancel(c.UserContext())
	// The file is named by the contact's id: the address never reaches a header.
	c.Set(fiber.HeaderContentType, fiber.MIMEApplicationJSONCharsetUTF8)
	c.Set(fiber.HeaderContentDisposition, `attachment; filename="privacy-export-contact-`+strconv.FormatInt(v.ID, 10)+`.json"`)
	c.Set(fiber.HeaderCacheControl, "no-store")
	c.Status(fiber.StatusOK)
	c.Context().SetBodyStreamWriter(func(out *bufio.Writer) {
		if err := w.svc.Privacy.WriteExport(bg, acct, head, out); err != nil {
			slog.Error("web: privacy export cut short", "err", err)
		}
	})
	return nil
}

// eraseContact erases the contact's address from the account (every
// contact with it goes), then goes back to the list with a flash message
// that does not repeat the address. Errors: ErrNotFound.
func (w *Web) eraseContact(c *fiber.Ctx) error {
	v, err := w.contactParam(c)
	if err != nil {
		return err
	}
	if err := w.svc.Privacy.Erase(c.UserContext(), accountID(c), v.Email); err != nil {
		return err
	}
	w.flash(c, views.FlashSuccess, "The address was erased: herald keeps only a keyed hash of it.")
	back := contacts.ListOfType(v.ContactTypeID)
	if partial(c) {
		c.Set("HX-Redirect", back)
		return c.SendStatus(fiber.StatusNoContent)
	}
	return c.Redirect(back, fiber.StatusSeeOther)
}
