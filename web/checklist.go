package web

import (
	"slices"

	"github.com/gofiber/fiber/v2"

	"herald/models"
	"herald/service"
	"herald/views"
	"herald/views/account"
	"herald/views/singlesends"
)

// checklistView copies the service's verdicts for the panel.
func checklistView(items []service.CheckItem, blocks bool) views.Checklist {
	c := views.Checklist{Blocks: blocks, Items: make([]views.ChecklistItem, len(items))}
	for i, it := range items {
		c.Items[i] = views.ChecklistItem{Rule: it.Rule, Severity: string(it.Severity), Message: it.Message, Details: it.Details}
		c.Items[i].FixURL, c.Items[i].FixLabel = checklistFix(it.Rule)
	}
	// What to fix first: failures, then warnings, then what passed.
	slices.SortStableFunc(c.Items, func(a, b views.ChecklistItem) int {
		return severityRank(a.Severity) - severityRank(b.Severity)
	})
	return c
}

func severityRank(s string) int {
	switch s {
	case string(service.SeverityFailure):
		return 0
	case string(service.SeverityWarning):
		return 1
	}
	return 2
}

// checklistFix is the console page where a rule's failure is fixed: the
// design's own rules are fixed on the page that shows the checklist.
func checklistFix(rule string) (url, label string) {
	switch rule {
	case service.RuleFromDomain:
		return "/senders", "Check the domain's records on its sender"
	case service.RuleBounceRate, service.RuleComplaintRate:
		return "/suppressions/global", "See bounces and complaints"
	}
	return "", ""
}

// refusedByChecklist reports whether a validation error is the
// checklist's refusal (its "checklist" field).
func refusedByChecklist(err error) bool {
	return len(fieldProblems(err)[service.ChecklistField]) > 0
}

// sendChecklist evaluates the send form as it stands (cur: the send
// being edited, whose saved design "current" names).
func (w *Web) sendChecklist(c *fiber.Ctx, f singlesends.Form, cur *models.SingleSend) (views.Checklist, error) {
	ctx, acct := c.UserContext(), accountID(c)
	in, err := w.sendInput(ctx, acct, f, cur)
	if err != nil && !isValidation(err) && !service.IsNotFound(err) {
		return views.Checklist{}, err
	}
	items, err := w.svc.Checklist.ForInput(ctx, acct, in)
	if err != nil {
		return views.Checklist{}, err
	}
	blocks, err := w.svc.Checklist.Blocks(ctx, acct)
	return checklistView(items, blocks), err
}

// checkSend answers the compose page's checklist panel for the form as
// posted (htmx re-checks on every change of the form).
func (w *Web) checkSend(c *fiber.Ctx) error {
	var cur *models.SingleSend
	if utr := formValue(c, "utr"); utr != "" {
		var err error
		if cur, err = w.svc.SingleSends.Get(c.UserContext(), accountID(c), utr); err != nil {
			return err
		}
	}
	cl, err := w.sendChecklist(c, sendFormOf(c), cur)
	if err != nil {
		return err
	}
	return render(c, fiber.StatusOK, views.ChecklistBody(cl))
}

// saveChecklistSetting turns blocking on the checklist on or off. To
// htmx it answers the form, to a browser a redirect to the account page.
func (w *Web) saveChecklistSetting(c *fiber.Ctx) error {
	on := formValue(c, "checklist_blocks") == "1"
	if err := w.svc.Checklist.SetBlocks(c.UserContext(), accountID(c), on); err != nil {
		return err
	}
	msg := "Failed checks now only warn: sends and automations go out anyway."
	if on {
		msg = "Failed checks now block: a send or an automation that fails one is not saved or set live."
	}
	if !partial(c) {
		w.flash(c, views.FlashSuccess, msg)
		return c.Redirect("/account#checklist", fiber.StatusSeeOther)
	}
	return render(c, fiber.StatusOK, account.ChecklistForm(account.ChecklistSetting{Blocks: on, Saved: true, CSRF: csrf(c)}), flashOOB(views.FlashSuccess, msg))
}
