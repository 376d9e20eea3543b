package web

import (
	"github.com/gofiber/fiber/v2"

	"herald/models"
	"herald/service"
	"herald/views"
	"herald/views/singlesends"
)

// resendCard reads a completed send's "Resend to those who did not open"
// card: its resend, or the count of those a resend would reach now.
func (w *Web) resendCard(c *fiber.Ctx, ss *models.SingleSend) (singlesends.ResendCard, error) {
	ctx, acct := c.UserContext(), accountID(c)
	loc, zone := accountZone(c)
	r := singlesends.ResendCard{Send: *ss, Loc: loc, TimeZone: zone, CSRF: csrf(c)}
	var err error
	if r.Resend, err = w.svc.SingleSends.Resend(ctx, acct, ss); err != nil || r.Resend != nil {
		return r, err
	}
	r.NotOpened, err = w.svc.SingleSends.NotOpened(ctx, acct, ss)
	return r, err
}

// showResend answers the card: to htmx (the send's page loads it) the
// card alone, to a browser a page of its own. Only a completed send that
// is not itself a resend has one.
func (w *Web) showResend(c *fiber.Ctx) error {
	ss, err := w.sendParam(c)
	if err != nil {
		return err
	}
	if ss.Status != models.SendCompleted || ss.ResendOf != nil {
		return service.ErrNotFound
	}
	r, err := w.resendCard(c, ss)
	if err != nil {
		return err
	}
	c.Set(fiber.HeaderVary, "HX-Request")
	if partial(c) {
		return render(c, fiber.StatusOK, singlesends.ResendPanel(r))
	}
	return page(c, fiber.StatusOK, views.T("resend.title"), views.NavSingleSends, singlesends.ResendPage(r))
}

// scheduleResend saves a send's resend from the card's form and goes to
// the resend's page; a refused form comes back with its messages (422).
func (w *Web) scheduleResend(c *fiber.Ctx) error {
	ss, err := w.sendParam(c)
	if err != nil {
		return err
	}
	f := singlesends.ResendForm{Subject: formValue(c, "subject"), Wait: formValue(c, "resend_wait"),
		Date: formValue(c, "schedule_date"), Time: formValue(c, "schedule_time")}
	in := service.ResendInput{Subject: f.Subject, When: "days", Days: f.Wait, Date: f.Date, Time: f.Time}
	if f.Wait == "at" {
		in.When, in.Days = "at", ""
	}
	rs, err := w.svc.SingleSends.ScheduleResend(c.UserContext(), accountID(c), ss.Utr, in)
	if service.ErrorCode(err) == service.CodeValidation {
		r, rerr := w.resendCard(c, ss)
		if rerr != nil {
			return rerr
		}
		r.Form, r.Errors = f, fieldErrors(err)
		r.Problems = r.Errors.For("checklist") // the pre-send checklist's failures, when the account refuses them
		if len(r.Errors) == 0 {
			r.Problems = []string{serviceMessage(err)}
		}
		if partial(c) {
			return render(c, fiber.StatusUnprocessableEntity, singlesends.ResendPanel(r))
		}
		return page(c, fiber.StatusUnprocessableEntity, views.T("resend.title"), views.NavSingleSends, singlesends.ResendPage(r))
	}
	if err != nil {
		return err
	}
	w.flash(c, views.FlashSuccess, views.T("resend.done", "Name", rs.SingleSendName))
	return redirectTo(c, singlesends.SendURL(rs.Utr))
}
