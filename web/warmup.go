package web

import (
	"errors"

	"github.com/gofiber/fiber/v2"

	"herald/service"
	"herald/views"
	"herald/views/warmup"
)

// Warm-up plans of sending domains (decisions.md 11), under Senders.

// warmupPage shows the account's plans, each as a chart, and the start
// form (with f's values and problems after a refused start).
func (w *Web) warmupPage(c *fiber.Ctx, status int, f warmup.Form) error {
	ctx, acct := c.UserContext(), accountID(c)
	plans, err := w.svc.Warmups.List(ctx, acct)
	if err != nil {
		return err
	}
	p := warmup.Page{CSRF: csrf(c), Form: f}
	for _, pl := range plans {
		days, err := w.svc.Warmups.Chart(ctx, acct, pl.Domain)
		if err != nil {
			return err
		}
		p.Plans = append(p.Plans, warmup.Plan{WarmupPlan: pl, Days: days})
	}
	if p.Domains, err = w.svc.Warmups.Domains(ctx, acct); err != nil {
		return err
	}
	if p.Form.Growth == "" && p.Form.Start == "" {
		p.Form.Start, p.Form.Growth, p.Form.Until = "50", "1.5", "10000"
	}
	return page(c, status, "Warm-up", views.NavSenders, warmup.View(p))
}

func (w *Web) showWarmup(c *fiber.Ctx) error { return w.warmupPage(c, fiber.StatusOK, warmup.Form{}) }

// startWarmup starts a plan; a refused one answers the page with the
// problems beside the fields (422).
func (w *Web) startWarmup(c *fiber.Ctx) error {
	f := warmup.Form{Domain: formValue(c, "domain"), Start: formValue(c, "start"), Growth: formValue(c, "growth"), Until: formValue(c, "until")}
	_, err := w.svc.Warmups.Start(c.UserContext(), accountID(c), service.WarmupInput{Domain: f.Domain, Start: f.Start, Growth: f.Growth, Until: f.Until})
	var se *service.Error
	if errors.As(err, &se) && se.Code == service.CodeValidation {
		f.Errors = se.Fields
		return w.warmupPage(c, fiber.StatusUnprocessableEntity, f)
	}
	if err != nil {
		return err
	}
	w.flash(c, views.FlashSuccess, "Warm-up plan started.")
	return c.Redirect(warmup.URL, fiber.StatusSeeOther)
}

// endWarmup ends a plan: the domain's waiting mail goes at once.
func (w *Web) endWarmup(c *fiber.Ctx) error {
	if err := w.svc.Warmups.End(c.UserContext(), accountID(c), formValue(c, "domain")); err != nil {
		return err
	}
	w.flash(c, views.FlashSuccess, "Warm-up plan ended.")
	return c.Redirect(warmup.URL, fiber.StatusSeeOther)
}
