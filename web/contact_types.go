package web

import (
	"context"

	"github.com/gofiber/fiber/v2"

	"herald/models"
	"herald/service"
	"herald/views"
	"herald/views/contacts"
)

// typesPage reads the page q of the account's contact types with their counts.
func (w *Web) typesPage(c *fiber.Ctx, q views.ListQuery) (contacts.TypeList, error) {
	acct := accountID(c)
	rows, pager, err := readPage(c.UserContext(), q, contacts.TypesURL, func(ctx context.Context, f service.ListFilter, fn func(*models.ContactTypeCount) error) error {
		return w.svc.ContactTypes.Each(ctx, acct, f, fn)
	})
	return contacts.TypeList{Rows: rows, Query: pager.Query, Pager: pager, CSRF: csrf(c)}, err
}

// findType returns the account's contact type with its contact count.
// Errors: ErrNotFound.
func (w *Web) findType(c *fiber.Ctx, id int64) (models.ContactTypeCount, error) {
	var found *models.ContactTypeCount
	err := w.svc.ContactTypes.Each(c.UserContext(), accountID(c), service.ListFilter{}, func(t *models.ContactTypeCount) error {
		if t.ID == id {
			found = t
			return errStop
		}
		return nil
	})
	if err != nil && err != errStop {
		return models.ContactTypeCount{}, err
	}
	if found == nil {
		return models.ContactTypeCount{}, service.ErrNotFound
	}
	return *found, nil
}

// typeParam reads the route's contact type and finds it.
func (w *Web) typeParam(c *fiber.Ctx) (models.ContactTypeCount, error) {
	id, err := service.ParseID(c.Params("id"))
	if err != nil {
		return models.ContactTypeCount{}, err
	}
	return w.findType(c, id)
}

func (w *Web) showTypes(c *fiber.Ctx, status int, l contacts.TypeList, f contacts.TypeForm) error {
	return page(c, status, "Contact types", views.NavContacts, contacts.TypesPage(contacts.Types{List: l, Create: f}))
}

func (w *Web) listTypes(c *fiber.Ctx) error {
	l, err := w.typesPage(c, listQuery(c))
	if err != nil {
		return err
	}
	if partial(c) {
		return render(c, fiber.StatusOK, contacts.TypesTable(l, false))
	}
	return w.showTypes(c, fiber.StatusOK, l, contacts.TypeForm{CSRF: csrf(c)})
}

// createType saves a new contact type: to htmx the emptied form, the
// list (out of band) and a flash message, or the form with its errors (422).
func (w *Web) createType(c *fiber.Ctx) error {
	f := contacts.TypeForm{Name: formValue(c, "name"), CSRF: csrf(c)}
	t, err := w.svc.ContactTypes.Create(c.UserContext(), accountID(c), f.Name)
	if isValidation(err) {
		f.Errors = fieldErrors(err)
		if partial(c) {
			return render(c, fiber.StatusUnprocessableEntity, contacts.TypeCreateForm(f))
		}
		l, lerr := w.typesPage(c, views.ListQuery{Page: 1})
		if lerr != nil {
			return lerr
		}
		return w.showTypes(c, fiber.StatusUnprocessableEntity, l, f)
	}
	if err != nil {
		return err
	}
	msg := "Contact type “" + t.Name + "” created."
	if !partial(c) {
		w.flash(c, views.FlashSuccess, msg)
		return c.Redirect(contacts.TypesURL, fiber.StatusSeeOther)
	}
	l, err := w.typesPage(c, listQuery(c))
	if err != nil {
		return err
	}
	return render(c, fiber.StatusOK, contacts.TypeCreateForm(contacts.TypeForm{CSRF: csrf(c)}), contacts.TypesTable(l, true), flashOOB(views.FlashSuccess, msg))
}

// editType answers the type's row as a form to htmx (inline rename), or
// a page with the form to a browser.
func (w *Web) editType(c *fiber.Ctx) error {
	t, err := w.typeParam(c)
	if err != nil {
		return err
	}
	f := contacts.TypeForm{ID: t.ID, Name: t.Name, CSRF: csrf(c)}
	if partial(c) {
		return render(c, fiber.StatusOK, contacts.TypeEditRow(t, f))
	}
	return page(c, fiber.StatusOK, "Rename "+t.Name, views.NavContacts, contacts.TypeEditPage(f))
}

// typeRow answers the type's row as shown (a rename cancelled).
func (w *Web) typeRow(c *fiber.Ctx) error {
	t, err := w.typeParam(c)
	if err != nil {
		return err
	}
	if !partial(c) {
		return c.Redirect(contacts.TypesURL, fiber.StatusSeeOther)
	}
	l := contacts.TypeList{CSRF: csrf(c), Query: views.ListQuery{Page: 1}}
	return render(c, fiber.StatusOK, contacts.TypeRow(t, l))
}

// updateType renames a contact type: to htmx the row as shown with a
// flash message, or the row's form with its errors (422).
func (w *Web) updateType(c *fiber.Ctx) error {
	id, err := service.ParseID(c.Params("id"))
	if err != nil {
		return err
	}
	f := contacts.TypeForm{ID: id, Name: formValue(c, "name"), CSRF: csrf(c)}
	_, err = w.svc.ContactTypes.Update(c.UserContext(), accountID(c), id, f.Name)
	if isValidation(err) {
		f.Errors = fieldErrors(err)
		if !partial(c) {
			return page(c, fiber.StatusUnprocessableEntity, "Rename contact type", views.NavContacts, contacts.TypeEditPage(f))
		}
		t, terr := w.findType(c, id)
		if terr != nil {
			return terr
		}
		return render(c, fiber.StatusUnprocessableEntity, contacts.TypeEditRow(t, f))
	}
	if err != nil {
		return err
	}
	t, err := w.findType(c, id)
	if err != nil {
		return err
	}
	msg := "Contact type “" + t.Name + "” saved."
	if !partial(c) {
		w.flash(c, views.FlashSuccess, msg)
		return c.Redirect(contacts.TypesURL, fiber.StatusSeeOther)
	}
	l := contacts.TypeList{CSRF: csrf(c), Query: views.ListQuery{Page: 1}}
	return render(c, fiber.StatusOK, contacts.TypeRow(t, l), flashOOB(views.FlashSuccess, msg))
}

// deleteType deletes a contact type with its contacts and segments (the
// page asked first): to htmx the list as it now is, to a browser a
// redirect back to it.
func (w *Web) deleteType(c *fiber.Ctx) error {
	t, err := w.typeParam(c)
	if err != nil {
		return err
	}
	if err := w.svc.ContactTypes.Delete(c.UserContext(), accountID(c), t.ID); err != nil {
		return err
	}
	msg := views.N("flash.type_deleted", t.ContactsCount, "Name", t.Name)
	if !partial(c) {
		w.flash(c, views.FlashSuccess, msg)
		return c.Redirect(listBack(contacts.TypesURL, c), fiber.StatusSeeOther)
	}
	l, err := w.typesPage(c, listQuery(c))
	if err != nil {
		return err
	}
	return render(c, fiber.StatusOK, contacts.TypesTable(l, false), flashOOB(views.FlashSuccess, msg))
}
