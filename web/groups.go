package web

import (
	"context"

	"github.com/gofiber/fiber/v2"

	"herald/models"
	"herald/service"
	"herald/views"
	"herald/views/suppressions"
)

const groupsURL = "/suppressions/groups"

// groupsPage reads the page q of the account's groups.
func (w *Web) groupsPage(c *fiber.Ctx, q views.ListQuery) (suppressions.Groups, error) {
	acct := accountID(c)
	rows, pager, err := readPage(c.UserContext(), q, groupsURL, func(ctx context.Context, f service.ListFilter, fn func(*models.UnsubscribeGroupCount) error) error {
		return w.svc.Groups.Each(ctx, acct, f, fn)
	})
	return suppressions.Groups{Rows: rows, Query: pager.Query, Pager: pager, Create: newGroupForm(c)}, err
}

// newGroupForm is the empty form of a new group (shown by default).
func newGroupForm(c *fiber.Ctx) suppressions.GroupForm {
	return suppressions.GroupForm{IsDisplay: true, CSRF: csrf(c)}
}

// groupInput reads a group's form. is_display is a checkbox: absent
// means hidden.
func groupInput(c *fiber.Ctx) (service.GroupInput, suppressions.GroupForm) {
	in := service.GroupInput{GroupName: formValue(c, "group_name"), Description: formValue(c, "description"), IsDisplay: "0"}
	if v := c.FormValue("is_display"); v != "" && v != "0" {
		in.IsDisplay = "1"
	}
	f := suppressions.GroupForm{GroupName: in.GroupName, Description: in.Description, IsDisplay: in.IsDisplay == "1", CSRF: csrf(c)}
	return in, f
}

// findGroup returns the account's group with its recipient count.
// Errors: ErrNotFound.
func (w *Web) findGroup(c *fiber.Ctx, id int64) (models.UnsubscribeGroupCount, error) {
	var found *models.UnsubscribeGroupCount
	err := w.svc.Groups.Each(c.UserContext(), accountID(c), service.ListFilter{}, func(g *models.UnsubscribeGroupCount) error {
		if g.ID == id {
			found = g
			return errStop
		}
		return nil
	})
	if err != nil && err != errStop {
		return models.UnsubscribeGroupCount{}, err
	}
	if found == nil {
		return models.UnsubscribeGroupCount{}, service.ErrNotFound
	}
	return *found, nil
}

// groupParam reads the route's group and finds it.
func (w *Web) groupParam(c *fiber.Ctx) (models.UnsubscribeGroupCount, error) {
	id, err := service.ParseID(c.Params("id"))
	if err != nil {
		return models.UnsubscribeGroupCount{}, err
	}
	return w.findGroup(c, id)
}

func (w *Web) listGroups(c *fiber.Ctx) error {
	d, err := w.groupsPage(c, listQuery(c))
	if err != nil {
		return err
	}
	if partial(c) {
		return render(c, fiber.StatusOK, suppressions.GroupsTable(d, false))
	}
	return page(c, fiber.StatusOK, "Unsubscribe groups", views.NavGroups, suppressions.GroupsPage(d))
}

// createGroup saves a new group: to htmx it answers the emptied form,
// the list (out of band) and a flash message, or the form with its
// errors (422).
func (w *Web) createGroup(c *fiber.Ctx) error {
	in, f := groupInput(c)
	g, err := w.svc.Groups.Create(c.UserContext(), accountID(c), in)
	if isValidation(err) {
		f.Errors = fieldErrors(err)
		if partial(c) {
			return render(c, fiber.StatusUnprocessableEntity, suppressions.GroupCreateForm(f))
		}
		d, lerr := w.groupsPage(c, views.ListQuery{Page: 1})
		if lerr != nil {
			return lerr
		}
		d.Create = f
		return page(c, fiber.StatusUnprocessableEntity, "Unsubscribe groups", views.NavGroups, suppressions.GroupsPage(d))
	}
	if err != nil {
		return err
	}
	msg := "Group “" + g.GroupName + "” created."
	if !partial(c) {
		w.flash(c, views.FlashSuccess, msg)
		return c.Redirect(groupsURL, fiber.StatusSeeOther)
	}
	d, err := w.groupsPage(c, listQuery(c))
	if err != nil {
		return err
	}
	return render(c, fiber.StatusOK, suppressions.GroupCreateForm(newGroupForm(c)), suppressions.GroupsTable(d, true), flashOOB(views.FlashSuccess, msg))
}

// editGroup answers the group's row as a form to htmx (inline edit), or
// a page with the form to a browser.
func (w *Web) editGroup(c *fiber.Ctx) error {
	g, err := w.groupParam(c)
	if err != nil {
		return err
	}
	f := suppressions.GroupFormOf(g.UnsubscribeGroup, csrf(c))
	if partial(c) {
		return render(c, fiber.StatusOK, suppressions.GroupEditRow(g, f))
	}
	return page(c, fiber.StatusOK, "Edit "+g.GroupName, views.NavGroups, suppressions.GroupEditPage(f))
}

// groupRow answers the group's row as shown (an inline edit cancelled).
func (w *Web) groupRow(c *fiber.Ctx) error {
	g, err := w.groupParam(c)
	if err != nil {
		return err
	}
	if !partial(c) {
		return c.Redirect(groupsURL, fiber.StatusSeeOther)
	}
	return render(c, fiber.StatusOK, suppressions.GroupRow(g))
}

// updateGroup saves an edited group: to htmx the row as shown with a
// flash message, or the row's form with its errors (422).
func (w *Web) updateGroup(c *fiber.Ctx) error {
	id, err := service.ParseID(c.Params("id"))
	if err != nil {
		return err
	}
	in, f := groupInput(c)
	f.ID = id
	_, err = w.svc.Groups.Update(c.UserContext(), accountID(c), id, in)
	if isValidation(err) {
		f.Errors = fieldErrors(err)
		if !partial(c) {
			return page(c, fiber.StatusUnprocessableEntity, "Edit group", views.NavGroups, suppressions.GroupEditPage(f))
		}
		g, gerr := w.findGroup(c, id)
		if gerr != nil {
			return gerr
		}
		return render(c, fiber.StatusUnprocessableEntity, suppressions.GroupEditRow(g, f))
	}
	if err != nil {
		return err
	}
	g, err := w.findGroup(c, id)
	if err != nil {
		return err
	}
	msg := "Group “" + g.GroupName + "” saved."
	if !partial(c) {
		w.flash(c, views.FlashSuccess, msg)
		return c.Redirect(groupsURL, fiber.StatusSeeOther)
	}
	return render(c, fiber.StatusOK, suppressions.GroupRow(g), flashOOB(views.FlashSuccess, msg))
}
