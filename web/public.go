package web

import (
	"strings"

	"github.com/gofiber/fiber/v2"

	"herald/service"
	"herald/views/public"
)

// mountPublic registers the pages recipients and senders open without an
// account: here, the sender verification link.
func (w *Web) mountPublic(app *fiber.App) {
	app.Get("/senders/verify/:token", w.verifySender)
	app.Get("/designs/:id/preview", w.publicPreview)
}

// verifySender opens a sender's verification link (a GET, as mailed).
func (w *Web) verifySender(c *fiber.Ctx) error {
	s, err := w.svc.Senders.Verify(c.UserContext(), strings.Clone(c.Params("token")))
	if err != nil && !service.IsNotFound(err) {
		return err
	}
	status, email := fiber.StatusOK, ""
	if err != nil {
		status = fiber.StatusNotFound
	} else {
		email = s.FromEmail
	}
	return page(c, status, "Sender verification", "", public.SenderVerified(email, err == nil))
}
