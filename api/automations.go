package api

import (
	"context"
	"strings"

	"github.com/gofiber/fiber/v2"

	"herald/models"
	"herald/service"
)

func (a *API) listAutomations(c *fiber.Ctx) error {
	acct := account(c)
	// The spec answers NF for an account without automations.
	n, err := a.svc.Automations.Count(c.UserContext(), acct)
	if err != nil {
		return fail(c, err)
	}
	if n == 0 {
		return fail(c, service.ErrNotFound)
	}
	return list(c, "automations", filter(c), func(ctx context.Context, f service.ListFilter, fn func(*models.AutomationCount) error) error {
		return a.svc.Automations.Each(ctx, acct, f, fn)
	})
}

func (a *API) createAutomation(c *fiber.Ctx) error {
	f, err := parseForm(c)
	if err != nil {
		return fail(c, err)
	}
	au, err := a.svc.Automations.Create(c.UserContext(), account(c), service.AutomationInput{
		Type: f.Get("type"), AutomationFor: f.Get("automation_for"), AutomationName: f.Get("automation_name"),
		UnsubscribeGroupID: f.Get("unsubscribe_group_id"), ExitCriteria: f.Get("exit_criteria"), Trigger: f.Get("trigger"),
		DateField: f.Get("date_field"), DateOffsetDays: f.Get("date_offset_days"), DateYearly: f.Get("date_yearly"),
	})
	if err != nil {
		return fail(c, err)
	}
	return success(c, fiber.Map{"utr": au.Utr})
}

func (a *API) duplicateAutomation(c *fiber.Ctx) error {
	au, err := a.svc.Automations.Duplicate(c.UserContext(), account(c), strings.Clone(c.Query("utr")))
	if err != nil {
		return fail(c, err)
	}
	return success(c, fiber.Map{"utr": au.Utr})
}

func (a *API) automationDetails(c *fiber.Ctx) error {
	au, err := a.svc.Automations.Get(c.UserContext(), account(c), strings.Clone(c.Query("utr")))
	if err != nil {
		return fail(c, err)
	}
	return success(c, fiber.Map{"automation": au})
}

func (a *API) pauseAutomation(c *fiber.Ctx) error {
	if err := a.svc.Automations.Pause(c.UserContext(), account(c), strings.Clone(c.Query("utr"))); err != nil {
		return fail(c, err, textRecordNotFoundLower)
	}
	return success(c, "Automation Paused Successfully")
}

func (a *API) setLiveAutomation(c *fiber.Ctx) error {
	if err := a.svc.Automations.SetLive(c.UserContext(), account(c), strings.Clone(c.Query("utr"))); err != nil {
		return fail(c, err)
	}
	return success(c, "Automation has been set live")
}

func (a *API) deleteAutomation(c *fiber.Ctx) error {
	if err := a.svc.Automations.Delete(c.UserContext(), account(c), []string{strings.Clone(c.Query("utr"))}); err != nil {
		return fail(c, err, textRecordNotFoundLower)
	}
	return success(c, "Deleted Successfully")
}

func (a *API) bulkDeleteAutomations(c *fiber.Ctx) error {
	ids, err := strKeys(c)
	if err != nil {
		return fail(c, err)
	}
	if err := a.svc.Automations.Delete(c.UserContext(), account(c), ids); err != nil {
		return fail(c, err, textRecordNotFoundLower)
	}
	return success(c, "Deleted Successfully")
}

func (a *API) listAutomationSchedules(c *fiber.Ctx) error {
	rows, err := a.svc.Automations.Schedules(c.UserContext(), account(c), strings.Clone(c.Query("utr")))
	if err != nil {
		return fail(c, err, textRecordNotFoundLower)
	}
	emails := make([]models.AutomationSchedule, 0, len(rows))
	for _, r := range rows {
		if r.Kind != models.StepBranch { // a branch is a console step, not a schedule of the spec
			emails = append(emails, r)
		}
	}
	return success(c, fiber.Map{"automation_schedules": emails})
}

func (a *API) createAutomationSchedule(c *fiber.Ctx) error {
	f, err := parseForm(c)
	if err != nil {
		return fail(c, err)
	}
	in := service.ScheduleInput{
		Utr: f.Get("utr"), SenderID: f.Get("sender_id"), Subject: f.Get("subject"), WaitingPeriod: f.Get("waiting_period"),
		WaitingType: f.Get("waiting_type"), TemplateID: f.Get("template_id"), PreviewImg: f.Get("preview_img"),
		TemplateJSON: f.Get("template_json"), TemplateHTML: f.Get("template_html"),
	}
	// Not found is spelled as the schedule list spells it: api.md's Errors
	// name "automation … schedule" among the lower-case ones.
	r, err := a.svc.Automations.AddSchedule(c.UserContext(), account(c), in)
	if err != nil {
		return fail(c, err, textRecordNotFoundLower)
	}
	return success(c, fiber.Map{"utr": r.Utr})
}

// triggerAutomation enrols one contact in an automation that starts from
// the API (beyond the spec; docs/API-NOTES.md, Automations).
func (a *API) triggerAutomation(c *fiber.Ctx) error {
	f, err := parseForm(c)
	if err != nil {
		return fail(c, err)
	}
	in := service.TriggerInput{Automation: f.Get("automation"), Email: f.Get("email"), Data: map[string]string{}}
	for k, v := range f.Map("data") {
		if !strings.ContainsAny(k, "[]") { // a nested object's members are not placeholders
			in.Data[k] = v
		}
	}
	in.DataNotObject = strings.TrimSpace(f.Get("data")) != ""
	enrolled, err := a.svc.Automations.Trigger(c.UserContext(), account(c), in)
	if err != nil {
		return fail(c, err, textRecordNotFoundLower)
	}
	if !enrolled {
		return success(c, "Contact already enrolled")
	}
	return success(c, "Contact enrolled")
}
