package api

import (
	"github.com/gofiber/fiber/v2"

	"herald/service"
)

func (a *API) reservedFields(c *fiber.Ctx) error {
	fs, err := a.svc.Fields.Reserved(c.UserContext())
	if err != nil {
		return fail(c, err)
	}
	return success(c, fiber.Map{"reservedFields": fs})
}

func (a *API) customFields(c *fiber.Ctx) error {
	fs, err := a.svc.Fields.Custom(c.UserContext(), account(c))
	if err != nil {
		return fail(c, err)
	}
	return success(c, fiber.Map{"customFields": fs})
}

func (a *API) saveCustomField(c *fiber.Ctx) error {
	f, err := parseForm(c)
	if err != nil {
		return fail(c, err)
	}
	in := service.FieldInput{FieldName: f.Get("field_name"), FieldType: f.Get("field_type")}
	if _, err := a.svc.Fields.Create(c.UserContext(), account(c), in); err != nil {
		return fail(c, err)
	}
	return success(c, "Added Successfully")
}

func (a *API) deleteCustomField(c *fiber.Ctx) error {
	id, err := queryID(c, nil, "id")
	if err == nil {
		err = a.svc.Fields.Delete(c.UserContext(), account(c), id)
	}
	if err != nil {
		return fail(c, err)
	}
	return success(c, "Deleted Successfully")
}
