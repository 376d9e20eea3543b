package web

import (
	"strings"

	"github.com/gofiber/fiber/v2"

	"herald/models"
	"herald/service"
	"herald/views"
	"herald/views/senders"
)

// senderDomain is the domain of a sender's address.
func senderDomain(s *models.Sender) string {
	return strings.ToLower(s.FromEmail[strings.LastIndexByte(s.FromEmail, '@')+1:])
}

// dnsRecordView is a record to publish as the page shows it: a long TXT
// value split into quoted strings.
func dnsRecordView(r service.DNSRecord, explain string) views.DNSRecord {
	typ := "TXT"
	if r.Purpose == "MX" {
		typ = "MX"
	}
	return views.DNSRecord{Purpose: r.Purpose, Type: typ, Name: r.Name, Value: r.Publishable(), Explain: explain}
}

// checksView is the checks card of a sender's domain from its report. A
// failed check whose record is one of the sender page's DNS records
// (senderRecords) links to it there.
func (w *Web) checksView(c *fiber.Ctx, s *models.Sender, rep *service.DomainReport) (senders.Checks, error) {
	recs, err := w.senderRecords(c, s)
	if err != nil {
		return senders.Checks{}, err
	}
	return checksView(c, s, rep, recs), nil
}

func checksView(c *fiber.Ctx, s *models.Sender, rep *service.DomainReport, page []senders.Record) senders.Checks {
	v := senders.Checks{SenderID: s.ID, Domain: senderDomain(s), CSRF: csrf(c)}
	if rep == nil {
		return v
	}
	v.Checked, v.Signing, v.SignAnyway, v.SendingIPs = rep.Checked, rep.Signing, rep.SignAnyway, rep.SendingIPs
	if rep.Checked {
		v.CheckedAt = rep.CheckedAt.UTC().Format("Jan 2, 2006 15:04 UTC")
	}
	if sys := rep.System; sys != nil {
		v.SystemFrom, v.SystemRecord, v.SystemSigned = sys.From, sys.Record.Name, sys.SeenAt != nil
	}
	for _, r := range rep.Results {
		cr := senders.CheckResult{Check: r.Check, Status: r.Status, Detail: r.Detail, Fix: r.Fix, Found: r.Found}
		if r.Record != nil {
			rv := dnsRecordView(*r.Record, "Publish this record at your DNS host.")
			cr.Record = &rv
			for i, pr := range page {
				if pr.Name == rv.Name && pr.Value == rv.Value {
					cr.Above = senders.RecordID(i, pr.Purpose)
				}
			}
		}
		v.Results = append(v.Results, cr)
	}
	return v
}

// renderChecks answers htmx with the checks card, a browser with a
// redirect to the sender's page (with the flash message, if any).
func (w *Web) renderChecks(c *fiber.Ctx, s *models.Sender, v senders.Checks, flash string) error {
	if !partial(c) {
		if flash != "" {
			w.flash(c, views.FlashError, flash)
		}
		return c.Redirect(senders.SenderURL(s.ID)+"#"+senders.ChecksID, fiber.StatusSeeOther)
	}
	return render(c, fiber.StatusOK, senders.ChecksCard(v))
}

// checkSender runs the DNS checks of the sender's domain now.
func (w *Web) checkSender(c *fiber.Ctx) error {
	s, err := w.senderParam(c)
	if err != nil {
		return err
	}
	ctx, acct := c.UserContext(), accountID(c)
	rep, err := w.svc.DomainChecks.CheckNow(ctx, acct, senderDomain(s))
	msg := ""
	if err != nil {
		if service.ErrorCode(err) != service.CodeUnavailable {
			return err
		}
		msg = serviceMessage(err)
		if rep, err = w.svc.DomainChecks.Report(ctx, acct, senderDomain(s)); err != nil {
			return err
		}
	}
	v, err := w.checksView(c, s, rep)
	if err != nil {
		return err
	}
	v.Error = msg
	return w.renderChecks(c, s, v, msg)
}

// signAnywaySender turns the domain's "sign anyway" switch (on=1 or 0).
func (w *Web) signAnywaySender(c *fiber.Ctx) error {
	s, err := w.senderParam(c)
	if err != nil {
		return err
	}
	ctx, acct := c.UserContext(), accountID(c)
	if err := w.svc.DomainChecks.SetSignAnyway(ctx, acct, senderDomain(s), c.FormValue("on") == "1"); err != nil {
		return err
	}
	rep, err := w.svc.DomainChecks.Report(ctx, acct, senderDomain(s))
	if err != nil {
		return err
	}
	v, err := w.checksView(c, s, rep)
	if err != nil {
		return err
	}
	return w.renderChecks(c, s, v, "")
}

// sendingIPsSender saves the addresses the domain's mail leaves from and
// checks the domain again.
func (w *Web) sendingIPsSender(c *fiber.Ctx) error {
	s, err := w.senderParam(c)
	if err != nil {
		return err
	}
	ctx, acct := c.UserContext(), accountID(c)
	in := c.FormValue("sending_ips")
	if err := w.svc.DomainChecks.SetSendingIPs(ctx, acct, senderDomain(s), in); err != nil {
		probs := fieldProblems(err)
		if probs == nil {
			return err
		}
		rep, rerr := w.svc.DomainChecks.Report(ctx, acct, senderDomain(s))
		if rerr != nil {
			return rerr
		}
		v, err := w.checksView(c, s, rep)
		if err != nil {
			return err
		}
		v.SendingIPs, v.IPErrors = in, probs.Messages("sending_ips")
		return w.renderChecks(c, s, v, strings.Join(v.IPErrors, " "))
	}
	return w.checkSender(c)
}

// rotateSender makes a new DKIM key for the sender's domain; the page
// then shows both records until the new one is seen.
func (w *Web) rotateSender(c *fiber.Ctx) error {
	s, err := w.senderParam(c)
	if err != nil {
		return err
	}
	kind, msg := views.FlashSuccess, "New DKIM key made: publish its record; the current key signs until herald sees it."
	if _, err := w.svc.DomainChecks.RotateKey(c.UserContext(), accountID(c), senderDomain(s)); err != nil {
		if service.ErrorCode(err) != service.CodeConflict {
			return err
		}
		kind, msg = views.FlashError, serviceMessage(err)
	}
	w.flash(c, kind, msg)
	return c.Redirect(senders.SenderURL(s.ID), fiber.StatusSeeOther)
}
