package api

import (
	"context"

	"github.com/gofiber/fiber/v2"

	"herald/models"
	"herald/service"
)

func (a *API) listContactTypes(c *fiber.Ctx) error {
	acct := account(c)
	return list(c, "contactTypes", filter(c), func(ctx context.Context, f service.ListFilter, fn func(*models.ContactTypeCount) error) error {
		return a.svc.ContactTypes.Each(ctx, acct, f, fn)
	})
}

func (a *API) addContactType(c *fiber.Ctx) error {
	f, err := parseForm(c)
	if err != nil {
		return fail(c, err)
	}
	if _, err := a.svc.ContactTypes.Create(c.UserContext(), account(c), f.Get("name")); err != nil {
		return fail(c, err)
	}
	return success(c, "Added Successfully")
}

func (a *API) viewContactType(c *fiber.Ctx) error {
	id, err := queryID(c, nil, "contact_type_id")
	if err != nil {
		return fail(c, err)
	}
	ct, err := a.svc.ContactTypes.Get(c.UserContext(), account(c), id)
	if err != nil {
		return fail(c, err)
	}
	return success(c, fiber.Map{"contactType": ct})
}

func (a *API) updateContactType(c *fiber.Ctx) error {
	f, err := parseForm(c)
	if err != nil {
		return fail(c, err)
	}
	if _, err := a.svc.ContactTypes.Update(c.UserContext(), account(c), updateID(c, f, "id"), f.Get("name")); err != nil {
		return fail(c, err)
	}
	return success(c, "Updated Successfully")
}

func (a *API) deleteContactType(c *fiber.Ctx) error {
	id, err := queryID(c, nil, "contact_type_id")
	if err == nil {
		err = a.svc.ContactTypes.Delete(c.UserContext(), account(c), id)
	}
	if err != nil {
		return fail(c, err)
	}
	return successInErrors(c, "Deleted Successfully")
}
