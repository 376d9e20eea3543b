package web

import (
	"github.com/gofiber/fiber/v2"

	"herald/models"
	"herald/service"
	"herald/views"
	"herald/views/contacts"
)

// fieldRows shapes fields for the page.
func fieldRows(fs []models.Field) []contacts.FieldRow {
	out := make([]contacts.FieldRow, 0, len(fs))
	for _, f := range fs {
		r := contacts.FieldRow{ID: f.ID, Name: f.FieldName, Label: service.FieldLabel(f.FieldName), Type: f.FieldType}
		if f.CreatedAt != nil {
			r.CreatedAt = *f.CreatedAt
		}
		out = append(out, r)
	}
	return out
}

// fieldsData reads the reserved and custom fields, with form as the add form.
func (w *Web) fieldsData(c *fiber.Ctx, form contacts.FieldForm) (contacts.Fields, error) {
	ctx := c.UserContext()
	reserved, err := w.svc.Fields.Reserved(ctx)
	if err != nil {
		return contacts.Fields{}, err
	}
	custom, err := w.svc.Fields.Custom(ctx, accountID(c))
	if err != nil {
		return contacts.Fields{}, err
	}
	form.Types, form.CSRF = service.FieldTypes, csrf(c)
	if form.Type == "" {
		form.Type = service.FieldTypes[0]
	}
	return contacts.Fields{Reserved: fieldRows(reserved), Custom: fieldRows(custom), Form: form, CSRF: csrf(c)}, nil
}

func (w *Web) listFields(c *fiber.Ctx) error {
	d, err := w.fieldsData(c, contacts.FieldForm{})
	if err != nil {
		return err
	}
	return page(c, fiber.StatusOK, "Custom fields", views.NavContacts, contacts.FieldsPage(d))
}

// createField adds a custom field: to htmx the emptied form, the custom
// fields (out of band) and a flash message, or the form with its errors (422).
func (w *Web) createField(c *fiber.Ctx) error {
	form := contacts.FieldForm{Name: formValue(c, "field_name"), Type: formValue(c, "field_type")}
	fld, err := w.svc.Fields.Create(c.UserContext(), accountID(c), service.FieldInput{FieldName: form.Name, FieldType: form.Type})
	if isValidation(err) {
		form.Errors = fieldErrors(err)
		d, derr := w.fieldsData(c, form)
		if derr != nil {
			return derr
		}
		if partial(c) {
			return render(c, fiber.StatusUnprocessableEntity, contacts.FieldCreateForm(d.Form))
		}
		return page(c, fiber.StatusUnprocessableEntity, "Custom fields", views.NavContacts, contacts.FieldsPage(d))
	}
	if err != nil {
		return err
	}
	msg := "Field “" + fld.FieldName + "” added."
	if !partial(c) {
		w.flash(c, views.FlashSuccess, msg)
		return c.Redirect(contacts.FieldsURL, fiber.StatusSeeOther)
	}
	d, err := w.fieldsData(c, contacts.FieldForm{})
	if err != nil {
		return err
	}
	return render(c, fiber.StatusOK, contacts.FieldCreateForm(d.Form), contacts.CustomFieldsTable(d, true), flashOOB(views.FlashSuccess, msg))
}

// deleteField deletes a custom field and its values (the page asked first).
func (w *Web) deleteField(c *fiber.Ctx) error {
	id, err := service.ParseID(c.Params("id"))
	if err != nil {
		return err
	}
	name := ""
	if custom, err := w.svc.Fields.Custom(c.UserContext(), accountID(c)); err == nil {
		for _, f := range custom {
			if f.ID == id {
				name = f.FieldName
			}
		}
	}
	if err := w.svc.Fields.Delete(c.UserContext(), accountID(c), id); err != nil {
		return err
	}
	msg := "Field “" + name + "” deleted."
	if !partial(c) {
		w.flash(c, views.FlashSuccess, msg)
		return c.Redirect(contacts.FieldsURL, fiber.StatusSeeOther)
	}
	d, err := w.fieldsData(c, contacts.FieldForm{})
	if err != nil {
		return err
	}
	return render(c, fiber.StatusOK, contacts.CustomFieldsTable(d, false), flashOOB(views.FlashSuccess, msg))
}
