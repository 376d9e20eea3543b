package web

import (
	"context"
	"fmt"
	"strings"

	"github.com/a-h/templ"
	"github.com/gofiber/fiber/v2"

	"herald/models"
	"herald/service"
	"herald/views"
	"herald/views/suppressions"
)

// addresses is a list of suppressed addresses as the console shows it:
// the global list or one group's recipients. Both answer the same way;
// only the service calls and the page around the list differ.
type addresses struct {
	title     string
	nav       string
	list      suppressions.AddressList // without rows
	form      suppressions.AddForm     // empty
	page      func(suppressions.AddressList, suppressions.AddForm) templ.Component
	each      eachFunc[models.Unsubscriber]
	add       func(ctx context.Context, list string) (int, error)
	remove    func(ctx context.Context, id int64) error
	removeAll func(ctx context.Context, ids []int64) error
}

// load reads the page q of the list.
func (a *addresses) load(c *fiber.Ctx, q views.ListQuery) (suppressions.AddressList, error) {
	l := a.list
	rows, pager, err := readPage(c.UserContext(), q, l.ListURL, a.each)
	l.Rows, l.Pager, l.Query = rows, pager, pager.Query
	return l, err
}

// show answers the list: the table to htmx, the whole page otherwise.
func (w *Web) showAddresses(c *fiber.Ctx, a *addresses) error {
	l, err := a.load(c, listQuery(c))
	if err != nil {
		return err
	}
	if partial(c) {
		return render(c, fiber.StatusOK, suppressions.AddressListView(l, false))
	}
	return page(c, fiber.StatusOK, a.title, a.nav, a.page(l, a.form))
}

// addAddresses adds the addresses of the form's list. A validation error
// answers the form with the messages (422); a success, to htmx, the
// emptied form, the list (out of band) and a flash message.
func (w *Web) addAddresses(c *fiber.Ctx, a *addresses) error {
	value := formValue(c, "email_address")
	n, err := a.add(c.UserContext(), value)
	if isValidation(err) {
		f := a.form
		f.Value = value
		f.Errors = fieldErrors(err)
		if bad := refusedItems(err, "email_address"); len(bad) > 0 {
			f.Errors["email_address"] = []string{badAddresses(bad)}
		}
		for field, msgs := range f.Errors {
			if field != "email_address" {
				f.Other = append(f.Other, msgs...)
			}
		}
		if partial(c) {
			return render(c, fiber.StatusUnprocessableEntity, suppressions.AddAddressesForm(f))
		}
		l, lerr := a.load(c, listQuery(c))
		if lerr != nil {
			return lerr
		}
		return page(c, fiber.StatusUnprocessableEntity, a.title, a.nav, a.page(l, f))
	}
	if err != nil {
		return err
	}
	return w.addressesChanged(c, a, addedMessage(n), true)
}

// deleteAddress deletes the row named by the route parameter param.
func (w *Web) deleteAddress(c *fiber.Ctx, a *addresses, param string) error {
	id, err := service.ParseID(c.Params(param))
	if err == nil {
		err = a.remove(c.UserContext(), id)
	}
	if err != nil {
		return err
	}
	return w.addressesChanged(c, a, "Address deleted.", false)
}

// bulkDeleteAddresses deletes the selected rows, all or none.
func (w *Web) bulkDeleteAddresses(c *fiber.Ctx, a *addresses) error {
	ids, err := parseSelection(c)
	if err != nil {
		return err
	}
	if len(ids) == 0 {
		return w.refuse(c, listBack(a.list.ListURL, c), "Select at least one address first.")
	}
	if err := a.removeAll(c.UserContext(), ids); err != nil {
		return err
	}
	return w.addressesChanged(c, a, deletedMessage(len(ids), "flash.deleted_addresses"), false)
}

// addressesChanged answers a change: to htmx the list as it now is (and
// the emptied add form, when the change was an add) with a flash
// message; to a browser a redirect back to the list it came from.
func (w *Web) addressesChanged(c *fiber.Ctx, a *addresses, message string, added bool) error {
	if !partial(c) {
		w.flash(c, views.FlashSuccess, message)
		return c.Redirect(listBack(a.list.ListURL, c), fiber.StatusSeeOther)
	}
	l, err := a.load(c, listQuery(c))
	if err != nil {
		return err
	}
	if added {
		return render(c, fiber.StatusOK, suppressions.AddAddressesForm(a.form), suppressions.AddressListView(l, true), flashOOB(views.FlashSuccess, message))
	}
	return render(c, fiber.StatusOK, suppressions.AddressListView(l, false), flashOOB(views.FlashSuccess, message))
}

// listBack is the address of the list page the request came from.
func listBack(base string, c *fiber.Ctx) string {
	q := listQuery(c)
	return views.Pager{Base: base, Query: q}.URL(q.Page)
}

// refuse answers a request that cannot be done as asked (nothing
// selected): to htmx a message in the flash area (422), to a browser a
// flash message on the page it goes back to.
func (w *Web) refuse(c *fiber.Ctx, back, message string) error {
	if partial(c) {
		return &service.Error{Code: service.CodeValidation, Message: message}
	}
	w.flash(c, views.FlashError, message)
	return c.Redirect(back, fiber.StatusSeeOther)
}

// badAddresses names the refused items of an address list, ten at the
// most: the whole list was refused, and the person needs to know which
// items to mend.
func badAddresses(bad []string) string {
	const most = 10
	named := make([]string, 0, min(len(bad), most))
	for _, b := range bad[:min(len(bad), most)] {
		named = append(named, "“"+b+"”")
	}
	var msg string
	if len(bad) == 1 {
		msg = named[0] + " is not a valid email address."
	} else {
		msg = "These are not valid email addresses: " + strings.Join(named, ", ")
		if len(bad) > most {
			msg += fmt.Sprintf(" and %d more", len(bad)-most)
		}
		msg += "."
	}
	return msg + " Nothing was added: mend or remove them and add the list again."
}
