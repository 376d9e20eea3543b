package api

import "github.com/gofiber/fiber/v2"

// archiveURL answers the address of the account's public archive
// (decisions.md 10), absolute from the configured base URL; the archive's
// public id is made the first time it is asked for.
func (a *API) archiveURL(c *fiber.Ctx) error {
	u, err := a.svc.Archive.URL(c.UserContext(), account(c))
	if err != nil {
		return fail(c, err)
	}
	return success(c, fiber.Map{"url": u})
}
