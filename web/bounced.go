package web

import (
	"context"
	"net/url"
	"strconv"
	"time"

	"github.com/gofiber/fiber/v2"

	"herald/models"
	"herald/service"
	"herald/views"
	"herald/views/suppressions"
)

// summaryDays is how far back the bounces and complaints pages count.
const summaryDays = 30

// feedbackSummary is the account's reports of the last summaryDays.
func (w *Web) feedbackSummary(c *fiber.Ctx) (suppressions.Summary, error) {
	s, err := w.svc.Feedback.Summary(c.UserContext(), accountID(c), time.Now().AddDate(0, 0, -summaryDays))
	return suppressions.Summary{Days: summaryDays, Delivered: s.Delivered, HardBounces: s.HardBounces, SoftBounces: s.SoftBounces,
		Complaints: s.Complaints, Unsubscribes: s.Unsubscribes}, err
}

// bouncedPage reads the page q of the account's suppressed addresses.
func (w *Web) bouncedPage(c *fiber.Ctx, q views.ListQuery) (suppressions.Bounced, error) {
	acct := accountID(c)
	rows, pager, err := readPage(c.UserContext(), q, suppressions.BouncedURL, func(ctx context.Context, f service.ListFilter, fn func(*models.Suppression) error) error {
		return w.svc.Suppressions.Each(ctx, acct, f, fn)
	})
	return suppressions.Bounced{Rows: rows, Query: pager.Query, Pager: pager, CSRF: csrf(c)}, err
}

// listReports lists the reports herald handled for the account, newest
// first, of one kind (?kind=) or all: the table to htmx, the whole page
// otherwise.
func (w *Web) listReports(c *fiber.Ctx) error {
	acct := accountID(c)
	kind := ""
	for _, k := range suppressions.Kinds {
		if c.Query("kind") == k.Key {
			kind = k.Key
		}
	}
	rows, pager, err := readPage(c.UserContext(), listQuery(c), suppressions.ReportsURL, func(ctx context.Context, f service.ListFilter, fn func(*models.Feedback) error) error {
		return w.svc.Feedback.Each(ctx, acct, service.FeedbackFilter{ListFilter: f, Kind: kind}, fn)
	})
	if err != nil {
		return err
	}
	if kind != "" {
		pager.Extra = url.Values{"kind": {kind}}
	}
	r := suppressions.Reports{Rows: rows, Kind: kind, Query: pager.Query, Pager: pager, Sends: map[int64]string{}}
	var ids []int64
	for _, f := range rows {
		if f.SendID != nil {
			ids = append(ids, *f.SendID)
		}
	}
	if r.Sends, err = w.svc.SingleSends.Utrs(c.UserContext(), acct, ids); err != nil {
		return err
	}
	if partial(c) {
		return render(c, fiber.StatusOK, suppressions.ReportsList(r))
	}
	if r.Summary, err = w.feedbackSummary(c); err != nil {
		return err
	}
	return page(c, fiber.StatusOK, "Bounces & complaints", views.NavBounced, suppressions.ReportsPage(r))
}

// listBounced lists the addresses that bounced for good: the table to
// htmx, the whole page otherwise.
func (w *Web) listBounced(c *fiber.Ctx) error {
	b, err := w.bouncedPage(c, listQuery(c))
	if err != nil {
		return err
	}
	if partial(c) {
		return render(c, fiber.StatusOK, suppressions.BouncedList(b))
	}
	if b.Summary, err = w.feedbackSummary(c); err != nil {
		return err
	}
	if b.Lifted, err = w.svc.Suppressions.LiftedCount(c.UserContext(), accountID(c)); err != nil {
		return err
	}
	return page(c, fiber.StatusOK, "Bounces & complaints", views.NavBounced, suppressions.BouncedPage(b))
}

// listLifted lists the suppressions the bounce rules' repair lifted,
// newest first: the table to htmx, the whole page otherwise.
func (w *Web) listLifted(c *fiber.Ctx) error {
	acct := accountID(c)
	rows, pager, err := readPage(c.UserContext(), listQuery(c), suppressions.LiftedURL, func(ctx context.Context, f service.ListFilter, fn func(*models.LiftedSuppression) error) error {
		return w.svc.Suppressions.EachLifted(ctx, acct, f, fn)
	})
	if err != nil {
		return err
	}
	l := suppressions.Lifted{Rows: rows, Query: pager.Query, Pager: pager}
	if partial(c) {
		return render(c, fiber.StatusOK, suppressions.LiftedList(l))
	}
	return page(c, fiber.StatusOK, "Bounces & complaints", views.NavBounced, suppressions.LiftedPage(l))
}

// liftBounced lifts one address: later sends include it again. To htmx
// the list as it now is, to a browser a redirect back to it.
func (w *Web) liftBounced(c *fiber.Ctx) error {
	id, err := service.ParseID(c.Params("id"))
	if err != nil {
		return err
	}
	if err := w.svc.Suppressions.Lift(c.UserContext(), accountID(c), id); err != nil {
		return err
	}
	return w.bouncedChanged(c, "Address lifted: later sends include it again.")
}

// bulkLiftBounced lifts the selected addresses, all or none.
func (w *Web) bulkLiftBounced(c *fiber.Ctx) error {
	ids, err := parseSelection(c)
	if err != nil {
		return err
	}
	if len(ids) == 0 {
		return w.refuse(c, listBack(suppressions.BouncedURL, c), "Select at least one address first.")
	}
	if err := w.svc.Suppressions.LiftAll(c.UserContext(), accountID(c), ids); err != nil {
		return err
	}
	msg := "1 address lifted: later sends include it again."
	if len(ids) > 1 {
		msg = strconv.Itoa(len(ids)) + " addresses lifted: later sends include them again."
	}
	return w.bouncedChanged(c, msg)
}

// bouncedChanged answers a lift: to htmx the list as it now is with a
// flash message, to a browser a redirect back to the list it came from.
func (w *Web) bouncedChanged(c *fiber.Ctx, msg string) error {
	if !partial(c) {
		w.flash(c, views.FlashSuccess, msg)
		return c.Redirect(listBack(suppressions.BouncedURL, c), fiber.StatusSeeOther)
	}
	b, err := w.bouncedPage(c, listQuery(c))
	if err != nil {
		return err
	}
	return render(c, fiber.StatusOK, suppressions.BouncedList(b), flashOOB(views.FlashSuccess, msg))
}
