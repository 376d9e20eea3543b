package web

import (
	"context"
	"errors"
	"strconv"
	"strings"

	"github.com/gofiber/fiber/v2"

	"herald/models"
	"herald/service"
	"herald/views"
	"herald/views/senders"
	"herald/world"
)

// sendersPage reads the page q of the account's senders.
func (w *Web) sendersPage(c *fiber.Ctx, q views.ListQuery) (senders.List, error) {
	acct := accountID(c)
	l := senders.List{CSRF: csrf(c)}
	rows, pager, err := readPage(c.UserContext(), q, senders.ListURL, func(ctx context.Context, f service.ListFilter, fn func(*models.Sender) error) error {
		return w.svc.Senders.Each(ctx, acct, f, fn)
	})
	l.Rows, l.Query, l.Pager = rows, pager.Query, pager
	return l, err
}

func (w *Web) listSenders(c *fiber.Ctx) error {
	l, err := w.sendersPage(c, listQuery(c))
	if err != nil {
		return err
	}
	if partial(c) {
		return render(c, fiber.StatusOK, senders.ListView(l))
	}
	return page(c, fiber.StatusOK, "Senders", views.NavSenders, senders.ListPage(l))
}

// senderParam reads the route's sender and finds it. Errors: ErrNotFound.
func (w *Web) senderParam(c *fiber.Ctx) (*models.Sender, error) {
	id, err := service.ParseID(c.Params("id"))
	if err != nil {
		return nil, err
	}
	return w.svc.Senders.Get(c.UserContext(), accountID(c), id)
}

// senderForm fills the choices of the form's selects: the countries, and
// the states and cities of its country and state (by id).
func (w *Web) senderForm(c *fiber.Ctx, f senders.Form) senders.Form {
	f.Countries = w.countryOptions()
	countryID := parseInt(f.CountryID)
	f.States = w.stateChoices(countryID, f.StateID)
	f.Cities = w.cityChoices(countryID, parseInt(f.StateID), f.CityID)
	f.CSRF = csrf(c)
	return f
}

func (w *Web) newSender(c *fiber.Ctx) error {
	return page(c, fiber.StatusOK, "Add a sender", views.NavSenders, senders.FormPage(w.senderForm(c, senders.Form{})))
}

// idString is a stored place id as the selects carry it ("" for none).
func idString(id int64) string {
	if id == 0 {
		return ""
	}
	return strconv.FormatInt(id, 10)
}

func (w *Web) editSender(c *fiber.Ctx) error {
	s, err := w.senderParam(c)
	if err != nil {
		return err
	}
	f := senders.Form{
		ID: s.ID, FromName: s.FromName, FromEmail: s.FromEmail, ReplyToEmail: s.ReplyToEmail, Nickname: s.Nickname,
		CountryID: idString(s.CountryID), StateID: idString(s.StateID), CityID: idString(s.CityID),
		ZipCode: s.ZipCode, CompanyAddress: s.CompanyAddress, CompanyAddress2: s.CompanyAddress2,
	}
	return page(c, fiber.StatusOK, "Edit "+s.FromEmail, views.NavSenders, senders.FormPage(w.senderForm(c, f)))
}

func (w *Web) createSender(c *fiber.Ctx) error { return w.saveSender(c, 0) }

func (w *Web) updateSender(c *fiber.Ctx) error {
	id, err := service.ParseID(c.Params("id"))
	if err != nil {
		return err
	}
	return w.saveSender(c, id)
}

// senderField reports whether a validation key is shown beside a control
// of the sender form.
func senderField(key string) bool {
	switch key {
	case "from_name", "from_email", "reply_to_email", "nickname", "country_id", "state_id", "city_id",
		"zip_code", "company_address", "company_address2":
		return true
	}
	return false
}

// saveSender creates (id 0) or updates a sender. A validation error
// answers the form with the messages beside each field (422); a refusal
// of the verification mail (too many, 429 with Retry-After; the relay
// down, 503) answers the form with the reason above it, nothing stored.
// A success goes to the sender's page.
func (w *Web) saveSender(c *fiber.Ctx, id int64) error {
	f := senders.Form{
		ID: id, FromName: formValue(c, "from_name"), FromEmail: formValue(c, "from_email"), ReplyToEmail: formValue(c, "reply_to_email"),
		Nickname: formValue(c, "nickname"), CountryID: formValue(c, "country_id"), StateID: formValue(c, "state_id"), CityID: formValue(c, "city_id"),
		ZipCode: formValue(c, "zip_code"), CompanyAddress: formValue(c, "company_address"), CompanyAddress2: formValue(c, "company_address2"),
	}
	in := service.SenderInput{
		FromName: f.FromName, FromEmail: f.FromEmail, ReplyToEmail: f.ReplyToEmail, Nickname: f.Nickname,
		CountryID: f.CountryID, StateID: f.StateID, CityID: f.CityID,
		ZipCode: f.ZipCode, CompanyAddress: f.CompanyAddress, CompanyAddress2: f.CompanyAddress2,
	}
	ctx, acct := c.UserContext(), accountID(c)
	var s *models.Sender
	var err error
	var old *models.Sender
	if id == 0 {
		s, err = w.svc.Senders.Create(ctx, acct, in)
	} else {
		if old, err = w.svc.Senders.Get(ctx, acct, id); err != nil {
			return err
		}
		in.SenderID = strconv.FormatInt(id, 10)
		s, err = w.svc.Senders.Update(ctx, acct, in)
	}
	switch {
	case isValidation(err):
		f.Errors = senderErrors(err)
		for field, msgs := range f.Errors {
			if !senderField(field) {
				f.Other = append(f.Other, msgs...)
			}
		}
	case refusedMail(err):
		f.Other = []string{serviceMessage(err)}
		retryAfter(c, err)
	case err != nil:
		return err
	}
	if err != nil {
		f = w.senderForm(c, f)
		status := statusOf(err)
		if partial(c) {
			return render(c, status, senders.SenderForm(f))
		}
		title := "Add a sender"
		if id != 0 {
			title = "Edit sender"
		}
		return page(c, status, title, views.NavSenders, senders.FormPage(f))
	}
	switch {
	case id == 0:
		w.flash(c, views.FlashSuccess, "Sender "+s.FromEmail+" added. A verification link was mailed to it.")
	case old.FromEmail != s.FromEmail:
		w.flash(c, views.FlashSuccess, "Sender "+s.FromEmail+" saved. A verification link was mailed to the new address.")
	default:
		w.flash(c, views.FlashSuccess, "Sender "+s.FromEmail+" saved.")
	}
	back := senders.SenderURL(s.ID)
	if partial(c) {
		c.Set("HX-Redirect", back)
		return c.SendStatus(fiber.StatusNoContent)
	}
	return c.Redirect(back, fiber.StatusSeeOther)
}

// refusedMail reports whether err refused a verification mail: too many
// of them (429) or a relay that failed (503). Nothing was stored.
func refusedMail(err error) bool {
	code := service.ErrorCode(err)
	return code == service.CodeRateLimited || code == service.CodeUnavailable
}

// serviceMessage is the text of a service error meant for people.
func serviceMessage(err error) string {
	var se *service.Error
	if errors.As(err, &se) {
		return se.Message
	}
	return ""
}

// dnsExplain says what each DNS record does, for people who have never
// published one.
var dnsExplain = map[string]string{
	"DKIM":                    "DKIM: the public half of the key herald signs this domain's mail with. Receivers check each message's signature against it, so they know the mail was not forged or altered. A long value is shown as several quoted strings, as most DNS hosts take it; herald signs with the key once its DNS check sees the record.",
	"SPF":                     "SPF: lists the servers allowed to send mail for this domain. If the domain already has an SPF record, merge the two: a domain may publish only one.",
	"DMARC":                   "DMARC: tells receivers what to do with mail that fails both DKIM and SPF, and where to send reports. Start with this gentle policy, then tighten it once reports look clean.",
	service.PurposeSystemDKIM: "The key herald signs its own mail with (verification links, sign-up, invitations, alerts), which comes from an address of this record's domain. Herald signs that mail only once its DNS check sees this record (Check now below); until then it goes out unsigned. It is herald's key, not this account's: whoever runs herald publishes it once.",
}

// placeOf names a sender's city, state and country.
func placeOf(s *models.Sender) string {
	var parts []string
	if ci, ok := world.CityByID(s.CityID); ok && s.CityID != 0 {
		parts = append(parts, ci.Name)
	}
	if st, ok := world.StateByID(s.StateID); ok && s.StateID != 0 {
		parts = append(parts, st.Name)
	}
	if ct, ok := world.CountryByID(s.CountryID); ok {
		parts = append(parts, ct.Name)
	}
	return strings.Join(parts, ", ")
}

// senderRecords are the DNS records a sender's page shows for its domain.
func (w *Web) senderRecords(c *fiber.Ctx, s *models.Sender) ([]senders.Record, error) {
	recs, err := w.svc.Senders.DNSRecords(c.UserContext(), accountID(c), s.ID)
	if err != nil {
		return nil, err
	}
	out := make([]senders.Record, 0, len(recs))
	for _, r := range recs {
		explain, ok := dnsExplain[r.Purpose]
		if !ok && strings.HasPrefix(r.Purpose, "DKIM") {
			explain = dnsExplain["DKIM"]
		}
		out = append(out, dnsRecordView(r, explain))
	}
	return out, nil
}

// showSender is a sender's page with the DNS records of its domain.
func (w *Web) showSender(c *fiber.Ctx) error {
	s, err := w.senderParam(c)
	if err != nil {
		return err
	}
	recs, err := w.senderRecords(c, s)
	if err != nil {
		return err
	}
	d := senders.Detail{Sender: *s, Place: placeOf(s), Domain: s.FromEmail[strings.LastIndexByte(s.FromEmail, '@')+1:], CSRF: csrf(c), Records: recs}
	rep, err := w.svc.DomainChecks.Report(c.UserContext(), accountID(c), senderDomain(s))
	if err != nil {
		return err
	}
	d.Checks = checksView(c, s, rep, recs)
	return page(c, fiber.StatusOK, s.FromEmail, views.NavSenders, senders.DetailPage(d))
}

// resendSender mails the verification link again: to htmx the sender's
// state (with the new time) and a flash message, to a browser a redirect
// to the sender's page. A refused mail (too many: 429 with Retry-After;
// the relay down: 503) is said in the flash message.
func (w *Web) resendSender(c *fiber.Ctx) error {
	id, err := service.ParseID(c.Params("id"))
	if err != nil {
		return err
	}
	ctx, acct := c.UserContext(), accountID(c)
	err = w.svc.Senders.ResendVerification(ctx, acct, id)
	if err != nil && !refusedMail(err) {
		return err
	}
	kind, msg, status := views.FlashSuccess, "Verification link sent again.", fiber.StatusOK
	if err != nil {
		kind, msg, status = views.FlashError, serviceMessage(err), statusOf(err)
		retryAfter(c, err)
	}
	if !partial(c) {
		w.flash(c, kind, msg)
		return c.Redirect(senders.SenderURL(id), fiber.StatusSeeOther)
	}
	s, gerr := w.svc.Senders.Get(ctx, acct, id)
	if gerr != nil {
		return gerr
	}
	return render(c, status, senders.Status(*s, csrf(c)), flashOOB(kind, msg))
}

// deleteSender deletes a sender: to htmx the list as it now is, to a
// browser a redirect to the list.
func (w *Web) deleteSender(c *fiber.Ctx) error {
	id, err := service.ParseID(c.Params("id"))
	if err != nil {
		return err
	}
	if err := w.svc.Senders.Delete(c.UserContext(), accountID(c), id); err != nil {
		return err
	}
	const msg = "Sender deleted."
	if !partial(c) {
		w.flash(c, views.FlashSuccess, msg)
		return c.Redirect(listBack(senders.ListURL, c), fiber.StatusSeeOther)
	}
	l, err := w.sendersPage(c, listQuery(c))
	if err != nil {
		return err
	}
	return render(c, fiber.StatusOK, senders.ListView(l), flashOOB(views.FlashSuccess, msg))
}

// senderStates answers the options of the state select for the chosen
// country, and refills the city select (out of band).
func (w *Web) senderStates(c *fiber.Ctx) error {
	countryID := parseInt(c.Query("country_id"))
	return render(c, fiber.StatusOK, views.StatesAnswer(w.stateChoices(countryID, ""), w.cityChoices(countryID, 0, ""), "sender-city"))
}

// senderCities answers the options of the city select for the chosen state.
func (w *Web) senderCities(c *fiber.Ctx) error {
	return render(c, fiber.StatusOK, views.ChoiceOptions(w.cityChoices(parseInt(c.Query("country_id")), parseInt(c.Query("state_id")), "")))
}
