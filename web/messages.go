package web

import (
	"github.com/gofiber/fiber/v2"

	"herald/views"
	"herald/views/messages"
)

// listMessages is the page of the account's latest single messages.
func (w *Web) listMessages(c *fiber.Ctx) error {
	rows, err := w.svc.Messages.Recent(c.UserContext(), accountID(c))
	if err != nil {
		return err
	}
	return page(c, fiber.StatusOK, "Messages", views.NavMessages, messages.Page(rows))
}
