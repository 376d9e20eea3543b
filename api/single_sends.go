package api

import (
	"context"
	"strings"

	"github.com/gofiber/fiber/v2"

	"herald/models"
	"herald/service"
)

func (a *API) listSingleSends(c *fiber.Ctx) error {
	acct := account(c)
	return list(c, "singleSends", filter(c), func(ctx context.Context, f service.ListFilter, fn func(*models.SingleSend) error) error {
		return a.svc.SingleSends.Each(ctx, acct, f, fn)
	})
}

func singleSendInput(f *form) service.SingleSendInput {
	return service.SingleSendInput{
		Utr: f.Get("utr"), TemplateID: f.Get("template_id"), TemplateJSON: f.Get("template_json"), TemplateHTML: f.Get("template_html"),
		SenderID: f.Get("sender_id"), UnsubscribeGroupID: f.Get("unsubscribe_group_id"), SingleSendName: f.Get("single_send_name"),
		Subject: f.Get("subject"), Preheader: f.Get("preheader"),
		RecipientID: f.Array("recipient_id"), ExcludeRecipientID: f.Array("exclude_specific_recipient_id"),
		ScheduleType: f.Get("schedule_type"), ScheduleDate: f.Get("schedule_date"), ScheduleTime: f.Get("schedule_time"),
		Archive: f.Get("archive"), // beyond the spec (decisions.md 10)
	}
}

func (a *API) createSingleSend(c *fiber.Ctx) error {
	f, err := parseForm(c)
	if err != nil {
		return fail(c, err)
	}
	in := singleSendInput(f)
	in.Utr = ""
	ss, err := a.svc.SingleSends.Create(c.UserContext(), account(c), in)
	if err != nil {
		return fail(c, err)
	}
	return success(c, fiber.Map{"utr": ss.Utr})
}

func (a *API) updateSingleSend(c *fiber.Ctx) error {
	f, err := parseForm(c)
	if err != nil {
		return fail(c, err)
	}
	// An unknown utr is `Record Not Found`: the lower-case spelling is
	// only for duplicate, details, delete and bulk delete (api.md, Errors).
	ss, err := a.svc.SingleSends.Update(c.UserContext(), account(c), singleSendInput(f))
	if err != nil {
		return fail(c, err)
	}
	return success(c, fiber.Map{"utr": ss.Utr})
}

// utrOf reads the utr of the query string, or of the body of a POST (a
// body that cannot be parsed is 400, as on every POST).
func utrOf(c *fiber.Ctx) (string, error) {
	v := strings.Clone(c.Query("utr"))
	if c.Method() != fiber.MethodPost {
		return v, nil
	}
	f, err := parseForm(c)
	if err != nil {
		return "", err
	}
	if v == "" {
		v = f.Get("utr")
	}
	return v, nil
}

func (a *API) duplicateSingleSend(c *fiber.Ctx) error {
	utr, err := utrOf(c)
	if err == nil {
		_, err = a.svc.SingleSends.Duplicate(c.UserContext(), account(c), utr)
	}
	if err != nil {
		return fail(c, err, textRecordNotFoundLower)
	}
	return success(c, "Duplicated Successfully")
}

func (a *API) singleSendDetails(c *fiber.Ctx) error {
	ss, err := a.svc.SingleSends.Get(c.UserContext(), account(c), c.Query("utr"))
	if err != nil {
		return fail(c, err, textRecordNotFoundLower)
	}
	return success(c, fiber.Map{"singleSend": []*models.SingleSend{ss}})
}

func (a *API) deleteSingleSend(c *fiber.Ctx) error {
	utr, err := utrOf(c)
	if err == nil {
		err = a.svc.SingleSends.Delete(c.UserContext(), account(c), utr)
	}
	if err != nil {
		return fail(c, err, textRecordNotFoundLower)
	}
	return success(c, "Deleted Successfully")
}

func (a *API) bulkDeleteSingleSends(c *fiber.Ctx) error {
	ids, err := strKeys(c)
	if err != nil {
		return fail(c, err)
	}
	if err := a.svc.SingleSends.BulkDelete(c.UserContext(), account(c), ids); err != nil {
		return fail(c, err, textRecordNotFoundLower)
	}
	return success(c, "Deleted Successfully")
}

// strKeys reads the strIds of a bulk delete of sends or automations: utrs
// (or ids), resolved by the service.
func strKeys(c *fiber.Ctx) ([]string, error) {
	f, err := parseForm(c)
	if err != nil {
		return nil, err
	}
	return service.BulkKeys("strIds", f.Array("strIds"))
}

// resendSingleSend schedules the resend of a completed send to those who
// did not open (beyond the spec): wait_days after the send, or at
// schedule_date and schedule_time in the account's zone. It answers the
// resend's utr, as create does.
func (a *API) resendSingleSend(c *fiber.Ctx) error {
	f, err := parseForm(c)
	if err != nil {
		return fail(c, err)
	}
	in := service.ResendInput{Subject: f.Get("subject"), Days: f.Get("wait_days"), Date: f.Get("schedule_date"), Time: f.Get("schedule_time")}
	switch {
	case strings.TrimSpace(in.Days) != "":
		in.When = "days"
	case strings.TrimSpace(in.Date) != "" || strings.TrimSpace(in.Time) != "":
		in.When = "at"
	}
	rs, err := a.svc.SingleSends.ScheduleResend(c.UserContext(), account(c), f.Get("utr"), in)
	if err != nil {
		return fail(c, err)
	}
	return success(c, fiber.Map{"utr": rs.Utr})
}
