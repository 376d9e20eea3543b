package api

import (
	"context"
	"strings"

	"github.com/gofiber/fiber/v2"

	"herald/models"
	"herald/service"
)

func (a *API) listContacts(c *fiber.Ctx) error {
	acct, typeID := account(c), int64(c.QueryInt("contact_type_id"))
	return list(c, "contacts", filter(c), func(ctx context.Context, f service.ListFilter, fn func(*models.ContactView) error) error {
		return a.svc.Contacts.Each(ctx, acct, service.ContactFilter{ListFilter: f, ContactTypeID: typeID}, fn)
	})
}

// contactInput reads the contact body, custom fields as
// custom_field[<name>] or a JSON object under custom_field.
func contactInput(f *form) service.ContactInput {
	return service.ContactInput{
		ContactID: f.Get("contact_id"), ContactTypeID: f.Get("contact_type_id"),
		FirstName: f.Get("first_name"), LastName: f.Get("last_name"), Email: f.Get("email"), AltEmail: f.Get("alt_email"),
		Country: f.Get("country"), State: f.Get("state"), City: f.Get("city"),
		AddressLine1: f.Get("address_line1"), AddressLine2: f.Get("address_line2"),
		StateProvinceRegion: f.Get("state_province_region"), PostalCode: f.Get("postal_code"),
		Custom: f.Map("custom_field"),
	}
}

func (a *API) addContact(c *fiber.Ctx) error {
	f, err := parseForm(c)
	if err != nil {
		return fail(c, err)
	}
	in := contactInput(f)
	in.ContactID = ""
	in.Consent = consentAt(c, models.ConsentAPI)
	if _, err := a.svc.Contacts.Create(c.UserContext(), account(c), in); err != nil {
		return fail(c, err)
	}
	return success(c, "Contact Added Successfully")
}

func (a *API) contactDetails(c *fiber.Ctx) error {
	id, err := queryID(c, nil, "contact_id")
	if err != nil {
		return fail(c, err)
	}
	v, err := a.svc.Contacts.Get(c.UserContext(), account(c), id)
	if err != nil {
		return fail(c, err)
	}
	return success(c, fiber.Map{"contact": v})
}

func (a *API) updateContact(c *fiber.Ctx) error {
	f, err := parseForm(c)
	if err != nil {
		return fail(c, err)
	}
	if _, err := a.svc.Contacts.Update(c.UserContext(), account(c), contactInput(f)); err != nil {
		return fail(c, err)
	}
	return success(c, "Contact Updated Successfully")
}

func (a *API) deleteContact(c *fiber.Ctx) error {
	id, err := queryID(c, nil, "contact_id")
	if err == nil {
		err = a.svc.Contacts.Delete(c.UserContext(), account(c), id)
	}
	if err != nil {
		return fail(c, err)
	}
	return success(c, "Deleted Successfully")
}

func (a *API) bulkDeleteContacts(c *fiber.Ctx) error {
	return a.bulkDelete(c, "", a.svc.Contacts.BulkDelete)
}

// consentAt is the consent record of a contact added by this request:
// the source and, recorded but never trusted, the caller's address and
// browser.
func consentAt(c *fiber.Ctx, source string) models.Consent {
	return models.Consent{Source: source, IP: strings.Clone(c.IP()), UserAgent: string(c.Request().Header.UserAgent())}
}
