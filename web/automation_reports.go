package web

import (
	"strconv"

	"github.com/gofiber/fiber/v2"

	"herald/views"
	"herald/views/automations"
	"herald/views/singlesends"
)

// emailReport is the report of one email of an automation: the figures,
// activity, clicks per link and reach of the send that carries it.
func (w *Web) emailReport(c *fiber.Ctx) error {
	a, r, n, err := w.stepParam(c)
	if err != nil {
		return err
	}
	ss, err := w.svc.Automations.StepSend(c.UserContext(), accountID(c), a.Utr, r.Utr)
	if err != nil {
		return err
	}
	loc, tz := accountZone(c)
	st := singlesends.Status{Send: *ss, Loc: loc, TimeZone: tz, CSRF: csrf(c), Outcomes: sendOutcomes(ss), Carrier: true}
	if err := w.sendReport(c, ss, &st); err != nil {
		return err
	}
	rep := automations.EmailReport{Automation: *a, Status: st, Title: views.T("automations.step_title", "N", strconv.Itoa(n), "Subject", r.Subject)}
	return page(c, fiber.StatusOK, rep.Title, automations.NavAutomations, automations.EmailReportPage(rep))
}
