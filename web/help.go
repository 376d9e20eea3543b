package web

import (
	"github.com/gofiber/fiber/v2"

	"herald/views"
	"herald/views/help"
)

// humanHelp explains the console's "by people" figures.
func (w *Web) humanHelp(c *fiber.Ctx) error {
	return renderPage(c, fiber.StatusOK, pageOf(c, "People and machines", views.NavDashboard, true), help.HumanActivity())
}
