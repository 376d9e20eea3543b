package web

import (
	"strconv"

	"github.com/gofiber/fiber/v2"

	"herald/views"
	"herald/views/contacts"
)

// historyPage is how many mails one page of a contact's history shows.
const historyPage = 20

// contactHistory answers a page of the contact's mail history (before:
// the row the previous page ended at): to htmx the rows, to a browser
// the history alone. Errors: ErrNotFound.
func (w *Web) contactHistory(c *fiber.Ctx) error {
	v, err := w.contactParam(c)
	if err != nil {
		return err
	}
	before, _ := strconv.ParseInt(c.Query("before"), 10, 64)
	mails, err := w.svc.Contacts.History(c.UserContext(), accountID(c), v.ID, before, historyPage+1)
	if err != nil {
		return err
	}
	loc, _ := accountZone(c)
	h := contacts.History{ContactID: v.ID, Mails: mails, Loc: loc}
	if len(mails) > historyPage {
		h.Mails, h.More = mails[:historyPage], true
	}
	if partial(c) {
		return render(c, fiber.StatusOK, contacts.HistoryRows(h))
	}
	return page(c, fiber.StatusOK, "Mail history of "+v.Email, views.NavContacts, contacts.HistoryPage(h))
}
