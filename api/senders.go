package api

import (
	"context"

	"github.com/gofiber/fiber/v2"

	"herald/models"
	"herald/service"
)

func (a *API) listSenders(c *fiber.Ctx) error {
	acct := account(c)
	return list(c, "senders", filter(c), func(ctx context.Context, f service.ListFilter, fn func(*models.Sender) error) error {
		return a.svc.Senders.Each(ctx, acct, f, fn)
	})
}

func senderInput(f *form) service.SenderInput {
	return service.SenderInput{
		SenderID: f.Get("sender_id"), FromName: f.Get("from_name"), FromEmail: f.Get("from_email"), ReplyToEmail: f.Get("reply_to_email"),
		CountryID: f.Get("country_id"), StateID: f.Get("state_id"), CityID: f.Get("city_id"), ZipCode: f.Get("zip_code"),
		CompanyAddress: f.Get("company_address"), CompanyAddress2: f.Get("company_address2"), Nickname: f.Get("nickname"),
	}
}

func (a *API) saveSender(c *fiber.Ctx) error {
	f, err := parseForm(c)
	if err != nil {
		return fail(c, err)
	}
	in := senderInput(f)
	in.SenderID = ""
	if _, err := a.svc.Senders.Create(c.UserContext(), account(c), in); err != nil {
		return fail(c, err)
	}
	return success(c, "Added Successfully")
}

func (a *API) senderDetails(c *fiber.Ctx) error {
	id, err := queryID(c, nil, "sender_id")
	if err != nil {
		return fail(c, err)
	}
	s, err := a.svc.Senders.Get(c.UserContext(), account(c), id)
	if err != nil {
		return fail(c, err)
	}
	return success(c, fiber.Map{"sender": s})
}

func (a *API) updateSender(c *fiber.Ctx) error {
	f, err := parseForm(c)
	if err != nil {
		return fail(c, err)
	}
	if _, err := a.svc.Senders.Update(c.UserContext(), account(c), senderInput(f)); err != nil {
		return fail(c, err)
	}
	return success(c, "Updated Successfully")
}

func (a *API) deleteSender(c *fiber.Ctx) error {
	id, err := queryID(c, nil, "sender_id")
	if err == nil {
		err = a.svc.Senders.Delete(c.UserContext(), account(c), id)
	}
	if err != nil {
		return fail(c, err)
	}
	return successInErrors(c, "Deleted Successfully")
}

func (a *API) resendSenderMail(c *fiber.Ctx) error {
	id, err := queryID(c, nil, "sender_id")
	if err == nil {
		err = a.svc.Senders.ResendVerification(c.UserContext(), account(c), id)
	}
	if err != nil {
		return fail(c, err)
	}
	return success(c, "Verification Mail Send")
}

func (a *API) dynamicContent(c *fiber.Ctx) error {
	names, err := a.svc.Fields.Placeholders(c.UserContext(), account(c))
	if err != nil {
		return fail(c, err)
	}
	return success(c, fiber.Map{"contents": names})
}

func (a *API) designTemplates(c *fiber.Ctx) error {
	lib, err := a.svc.Templates.Library()
	if err != nil {
		return fail(c, err)
	}
	return success(c, fiber.Map{"templates": lib})
}
