package web

import (
	"context"
	"strconv"

	"github.com/gofiber/fiber/v2"

	"herald/models"
	"herald/service"
	"herald/views"
	"herald/views/suppressions"
)

// bouncedPage reads the page q of the account's suppressed addresses.
func (w *Web) bouncedPage(c *fiber.Ctx, q views.ListQuery) (suppressions.Bounced, error) {
	acct := accountID(c)
	rows, pager, err := readPage(c.UserContext(), q, suppressions.BouncedURL, func(ctx context.Context, f service.ListFilter, fn func(*models.Suppression) error) error {
		return w.svc.Suppressions.Each(ctx, acct, f, fn)
	})
	return suppressions.Bounced{Rows: rows, Query: pager.Query, Pager: pager, CSRF: csrf(c)}, err
}

// listBounced lists the addresses that bounced for good: the table to
// htmx, the whole page otherwise.
func (w *Web) listBounced(c *fiber.Ctx) error {
	b, err := w.bouncedPage(c, listQuery(c))
	if err != nil {
		return err
	}
	if partial(c) {
		return render(c, fiber.StatusOK, suppressions.BouncedList(b))
	}
	return page(c, fiber.StatusOK, "Bounced addresses", views.NavBounced, suppressions.BouncedPage(b))
}

// liftBounced lifts one address: later sends include it again. To htmx
// the list as it now is, to a browser a redirect back to it.
func (w *Web) liftBounced(c *fiber.Ctx) error {
	id, err := service.ParseID(c.Params("id"))
	if err != nil {
		return err
	}
	if err := w.svc.Suppressions.Lift(c.UserContext(), accountID(c), id); err != nil {
		return err
	}
	return w.bouncedChanged(c, "Address lifted: later sends include it again.")
}

// bulkLiftBounced lifts the selected addresses, all or none.
func (w *Web) bulkLiftBounced(c *fiber.Ctx) error {
	ids, err := parseSelection(c)
	if err != nil {
		return err
	}
	if len(ids) == 0 {
		return w.refuse(c, listBack(suppressions.BouncedURL, c), "Select at least one address first.")
	}
	if err := w.svc.Suppressions.LiftAll(c.UserContext(), accountID(c), ids); err != nil {
		return err
	}
	msg := "1 address lifted: later sends include it again."
	if len(ids) > 1 {
		msg = strconv.Itoa(len(ids)) + " addresses lifted: later sends include them again."
	}
	return w.bouncedChanged(c, msg)
}

// bouncedChanged answers a lift: to htmx the list as it now is with a
// flash message, to a browser a redirect back to the list it came from.
func (w *Web) bouncedChanged(c *fiber.Ctx, msg string) error {
	if !partial(c) {
		w.flash(c, views.FlashSuccess, msg)
		return c.Redirect(listBack(suppressions.BouncedURL, c), fiber.StatusSeeOther)
	}
	b, err := w.bouncedPage(c, listQuery(c))
	if err != nil {
		return err
	}
	return render(c, fiber.StatusOK, suppressions.BouncedList(b), flashOOB(views.FlashSuccess, msg))
}
