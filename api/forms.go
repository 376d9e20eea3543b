package api

import (
	"context"

	"github.com/gofiber/fiber/v2"

	"herald/models"
	"herald/service"
)

// mountForms registers the sign-up forms (decisions.md 10).
func (a *API) mountForms(r fiber.Router) {
	r.Get("/forms", a.listForms)
	r.Post("/forms/save", a.saveForm)
	r.Post("/forms/update", a.updateForm)
	r.Delete("/forms/delete", a.deleteForm)
}

// formInput reads the body of forms/save and forms/update.
func formInput(c *fiber.Ctx, f *form) service.FormInput {
	id := f.Get("id")
	if v := c.Query("id"); v != "" {
		id = v
	}
	return service.FormInput{
		ID:            id,
		Name:          f.Get("name"),
		ContactTypeID: f.Get("contact_type_id"),
		DoubleOptIn:   f.Get("double_opt_in"),
		Fields:        f.Array("fields"),
		GroupIDs:      f.Array("group_ids"),
		RedirectURL:   f.Get("redirect_url"),
		Language:      f.Get("language"),
		// Extra fields: the form's own confirmation mail ("" herald's).
		ConfirmSubject: f.Get("confirm_subject"),
		ConfirmBody:    f.Get("confirm_body"),
	}
}

func (a *API) listForms(c *fiber.Ctx) error {
	acct := account(c)
	return list(c, "forms", filter(c), func(ctx context.Context, f service.ListFilter, fn func(*models.Form) error) error {
		return a.svc.Forms.Each(ctx, acct, f, fn)
	})
}

func (a *API) saveForm(c *fiber.Ctx) error {
	f, err := parseForm(c)
	if err != nil {
		return fail(c, err)
	}
	in := formInput(c, f)
	in.ID = ""
	fm, err := a.svc.Forms.Save(c.UserContext(), account(c), in)
	if err != nil {
		return fail(c, err)
	}
	return success(c, fiber.Map{"id": fm.ID, "public_id": fm.PublicID})
}

func (a *API) updateForm(c *fiber.Ctx) error {
	f, err := parseForm(c)
	if err != nil {
		return fail(c, err)
	}
	if _, err := a.svc.Forms.Update(c.UserContext(), account(c), formInput(c, f)); err != nil {
		return fail(c, err)
	}
	return success(c, "Updated Successfully")
}

func (a *API) deleteForm(c *fiber.Ctx) error {
	id, err := queryID(c, nil, "id")
	if err == nil {
		err = a.svc.Forms.Delete(c.UserContext(), account(c), id)
	}
	if err != nil {
		return fail(c, err)
	}
	return success(c, "Deleted Successfully")
}
