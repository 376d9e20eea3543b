package web

import (
	"context"
	"log/slog"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/gofiber/fiber/v2"

	"herald/models"
	"herald/service"
	"herald/views"
	"herald/views/singlesends"
)

// accountZone is the account's time zone and its name (UTC when unset or
// unknown): scheduled sends are read in it, and times shown in it.
func accountZone(c *fiber.Ctx) (*time.Location, string) {
	u := user(c)
	if u == nil || u.TimeZone == "" {
		return time.UTC, "UTC"
	}
	loc, err := time.LoadLocation(u.TimeZone)
	if err != nil {
		return time.UTC, "UTC"
	}
	return loc, u.TimeZone
}

// redirectTo sends htmx (HX-Redirect) or a browser (303) to url.
func redirectTo(c *fiber.Ctx, url string) error {
	if partial(c) {
		c.Set("HX-Redirect", url)
		return c.SendStatus(fiber.StatusNoContent)
	}
	return c.Redirect(url, fiber.StatusSeeOther)
}

// sendsPage reads the page q of the account's single sends.
func (w *Web) sendsPage(c *fiber.Ctx, q views.ListQuery) (singlesends.List, error) {
	acct := accountID(c)
	loc, _ := accountZone(c)
	rows, pager, err := readPage(c.UserContext(), q, singlesends.ListURL, func(ctx context.Context, f service.ListFilter, fn func(*models.SingleSend) error) error {
		return w.svc.SingleSends.Each(ctx, acct, f, fn)
	})
	l := singlesends.List{Rows: rows, Query: pager.Query, Pager: pager, CSRF: csrf(c), Loc: loc}
	if err != nil {
		return l, err
	}
	l.ArchiveURL, err = w.svc.Archive.URL(c.UserContext(), acct)
	return l, err
}

func (w *Web) listSends(c *fiber.Ctx) error {
	l, err := w.sendsPage(c, listQuery(c))
	if err != nil {
		return err
	}
	if partial(c) {
		return render(c, fiber.StatusOK, singlesends.ListView(l))
	}
	return page(c, fiber.StatusOK, "Single sends", views.NavSingleSends, singlesends.ListPage(l))
}

// sendParam reads the route's send of the account. Errors: ErrNotFound.
func (w *Web) sendParam(c *fiber.Ctx) (*models.SingleSend, error) {
	return w.svc.SingleSends.Get(c.UserContext(), accountID(c), c.Params("utr"))
}

// sendFormOf reads the send form as posted.
func sendFormOf(c *fiber.Ctx) singlesends.Form {
	return singlesends.Form{
		Name: formValue(c, "single_send_name"), Template: formValue(c, "template"),
		SenderID: formValue(c, "sender_id"), GroupID: formValue(c, "unsubscribe_group_id"),
		Subject: formValue(c, "subject"), Preheader: formValue(c, "preheader"),
		Recipients: formList(c, "recipient_id"), Excludes: formList(c, "exclude_specific_recipient_id"),
		ScheduleType: formValue(c, "schedule_type"), ScheduleDate: formValue(c, "schedule_date"), ScheduleTime: formValue(c, "schedule_time"),
		TestEmail: formValue(c, "test_email"),
		LocalOn:   formValue(c, "local_on") == "1", LocalTime: formValue(c, "local_time"), LocalZoneField: formValue(c, "local_zone_field"),
		AB: abFormOf(c), Archive: formValue(c, "archive") == "1",
	}
}

// sendInput turns the form into the service's input.
func (w *Web) sendInput(ctx context.Context, acct int64, f singlesends.Form, cur *models.SingleSend) (service.SingleSendInput, error) {
	in := service.SingleSendInput{
		SenderID: f.SenderID, UnsubscribeGroupID: f.GroupID, SingleSendName: f.Name, Subject: f.Subject, Preheader: f.Preheader,
		PreheaderOptional: true, RecipientID: f.Recipients, ExcludeRecipientID: f.Excludes,
		ScheduleType: f.ScheduleType, ScheduleDate: f.ScheduleDate, ScheduleTime: f.ScheduleTime,
		Local: &service.LocalTimeInput{On: f.LocalOn, Clock: f.LocalTime, ZoneField: f.LocalZoneField},
	}
	ab, err := w.abInput(ctx, acct, f.AB, cur)
	if err != nil {
		return in, err
	}
	in.AB = ab
	in.Archive = "0" // an unchecked box sends nothing: the form always says
	if f.Archive {
		in.Archive = "1"
	}
	if cur != nil {
		in.Utr = cur.Utr
	}
	d, err := w.svc.Designs.SendDesign(ctx, acct, f.Template, cur)
	in.TemplateID, in.TemplateHTML, in.TemplateJSON = d.TemplateID, d.TemplateHTML, d.TemplateJSON
	return in, err
}

// sendMessages are the console's words for the service's messages that
// name API fields: a missing or unknown choice of the form.
var sendMessages = map[string]string{
	"template_id":                   "Choose a design.",
	"template_html":                 "Choose a design.",
	"sender_id":                     "Choose a verified sender.",
	"unsubscribe_group_id":          "Choose an unsubscribe group.",
	"recipient_id":                  "Choose at least one contact type or segment.",
	"exclude_specific_recipient_id": "A contact type or segment to leave out no longer exists.",
	"single_send_name":              "Give this send a name.",
	"schedule_date":                 "Choose the date.",
	"schedule_time":                 "Choose the time.",
	"local_time":                    "Choose the local time.",
	"local_zone_field":              "Choose one of your custom fields, or none.",
	"test_email":                    "Enter the email address the test goes to.",
}

// friendly words a service problem about a field for the console, by
// its reason.
func friendly(field string, pr service.Problem) string {
	if alt, ok := sendMessages[field]; ok && missingChoice(pr) {
		return alt
	}
	if field == "test_email" && pr.Reason == service.ReasonEmail {
		return "Enter a valid email address for the test."
	}
	return pr.Message
}

// sendErrors sorts a validation error's messages: beside the control of
// their field (the design's fields all beside the design select), or
// above the form.
func sendErrors(err error) (views.Errors, []string) {
	errs := views.Errors{}
	var other []string
	for field, ps := range fieldProblems(err) {
		key := field
		switch field {
		case "template_id", "template_html", "template_json":
			key = "template"
		case "sender_id", "unsubscribe_group_id", "single_send_name", "subject", "preheader", "recipient_id",
			"exclude_specific_recipient_id", "schedule_type", "schedule_date", "schedule_time", "local_time", "local_zone_field",
			"ab_test", "ab_subjects", "ab_preheaders", "ab_share", "ab_metric", "ab_wait":
		case service.ChecklistField:
			other = append(other, "Not saved: this send fails the pre-send checklist, and your account refuses such sends.")
			for _, pr := range ps {
				other = append(other, pr.Message)
			}
			continue
		default:
			for _, pr := range ps {
				other = append(other, friendly(field, pr))
			}
			continue
		}
		for _, pr := range ps {
			m := friendly(field, pr)
			if !contains(errs[key], m) {
				errs[key] = append(errs[key], m)
			}
		}
	}
	if len(errs) == 0 && len(other) == 0 {
		_, msg := describe(fiber.StatusUnprocessableEntity, err)
		other = append(other, msg)
	}
	return errs, other
}

func contains(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}

// fillSendForm adds the choices of the form's controls, the live count
// and the design's preview to what was posted or stored.
func (w *Web) fillSendForm(c *fiber.Ctx, f singlesends.Form, cur *models.SingleSend) (singlesends.Form, error) {
	ctx, acct := c.UserContext(), accountID(c)
	if cur != nil {
		f.Utr = cur.Utr
		f.Current = cur.TemplateHTML != nil && *cur.TemplateHTML != ""
	}
	_, f.TimeZone = accountZone(c)
	f.CSRF = csrf(c)
	lib, designs, senders, err := w.designChoices(ctx, acct, false)
	if err != nil {
		return f, err
	}
	f.Library, f.Designs, f.Senders = lib, designs, senders
	if f.Unsigned, err = w.svc.DomainChecks.Unsigned(ctx, acct); err != nil {
		return f, err
	}
	err = w.svc.Groups.Each(ctx, acct, service.ListFilter{}, func(g *models.UnsubscribeGroupCount) error {
		f.Groups = append(f.Groups, views.Option{Value: strconv.FormatInt(g.ID, 10), Label: g.GroupName})
		return nil
	})
	if err != nil {
		return f, err
	}
	err = w.svc.ContactTypes.Each(ctx, acct, service.ListFilter{}, func(t *models.ContactTypeCount) error {
		f.Types = append(f.Types, singlesends.Target{Value: models.TargetContacts.Of(t.ID), Label: t.Name, Count: t.ContactsCount})
		return nil
	})
	if err != nil {
		return f, err
	}
	err = w.svc.Segments.Each(ctx, acct, service.ListFilter{}, func(s *models.SegmentCount) error {
		f.Segments = append(f.Segments, singlesends.Target{Value: models.TargetSegments.Of(s.ID), Label: s.SegmentName, Count: s.SegmentEmailsCount})
		return nil
	})
	if err != nil {
		return f, err
	}
	if f.Placeholders, err = w.svc.Fields.Placeholders(ctx, acct); err != nil {
		return f, err
	}
	customs, err := w.svc.Fields.Custom(ctx, acct)
	if err != nil {
		return f, err
	}
	for _, cf := range customs {
		if cf.FieldType == "text" {
			f.ZoneFields = append(f.ZoneFields, views.Option{Value: cf.FieldName, Label: cf.FieldName})
		}
	}
	if f.Count, err = w.svc.SingleSends.FormAudienceCount(ctx, acct, f.Recipients, f.Excludes, f.GroupID); err != nil {
		return f, err
	}
	if f.Preview, err = w.sendPreview(ctx, acct, f.Template, f.SenderID, cur); err != nil {
		return f, err
	}
	refused := f.Checklist.Refused
	f.Checklist, err = w.sendChecklist(c, f, cur)
	f.Checklist.Refused = refused
	return f, err
}

// sendPreview renders the chosen design as the account's first contact
// would get it from the chosen sender (sample values where there is none).
func (w *Web) sendPreview(ctx context.Context, acct int64, choice, sender string, cur *models.SingleSend) (singlesends.Preview, error) {
	d, err := w.svc.Designs.SendDesign(ctx, acct, choice, cur)
	if err != nil || d.TemplateHTML == "" {
		return singlesends.Preview{}, err
	}
	of := service.PreviewOf{}
	if id, err := strconv.ParseInt(sender, 10, 64); err == nil && id > 0 {
		of.SenderID = id
	}
	out, shownFor, err := w.svc.Designs.PreviewFor(ctx, acct, d.TemplateHTML, of)
	if service.IsNotFound(err) && of.SenderID > 0 {
		// A sender deleted meanwhile: the samples stand in for it.
		of.SenderID = 0
		out, shownFor, err = w.svc.Designs.PreviewFor(ctx, acct, d.TemplateHTML, of)
	}
	return singlesends.Preview{HTML: out, ShownFor: shownFor, FromSender: of.SenderID > 0}, err
}

// sendFormPage renders the form page, under the policy that lets the
// preview frame show the design's inline styles.
func (w *Web) sendFormPage(c *fiber.Ctx, status int, f singlesends.Form) error {
	c.Set(fiber.HeaderContentSecurityPolicy, previewCSP)
	title := "New single send"
	if f.Utr != "" {
		title = "Edit " + f.Name
	}
	return page(c, status, title, views.NavSingleSends, singlesends.FormPage(f))
}

// onlyChoice is the value of the only option, or "".
func onlyChoice(opts []views.Option) string {
	if len(opts) == 1 {
		return opts[0].Value
	}
	return ""
}

func (w *Web) newSend(c *fiber.Ctx) error {
	f := singlesends.Form{ScheduleType: "0", TestEmail: user(c).Email}
	f, err := w.fillSendForm(c, f, nil)
	if err != nil {
		return err
	}
	// A lone sender or group is the one to use.
	f.SenderID, f.GroupID = onlyChoice(f.Senders), onlyChoice(f.Groups)
	if f.SenderID != "" {
		if f.Checklist, err = w.sendChecklist(c, f, nil); err != nil {
			return err
		}
	}
	if f.GroupID != "" {
		f.Count, err = w.svc.SingleSends.FormAudienceCount(c.UserContext(), accountID(c), f.Recipients, f.Excludes, f.GroupID)
		if err != nil {
			return err
		}
	}
	return w.sendFormPage(c, fiber.StatusOK, f)
}

// editSend is the form of a send that has not started; a send that has
// cannot change, so its page is shown instead.
func (w *Web) editSend(c *fiber.Ctx) error {
	ss, err := w.sendParam(c)
	if err != nil {
		return err
	}
	if !singlesends.Editable(*ss) {
		w.flash(c, views.FlashInfo, "This single send has started: it can no longer be changed.")
		return c.Redirect(singlesends.SendURL(ss.Utr), fiber.StatusSeeOther)
	}
	f := singlesends.Form{
		Name: ss.SingleSendName, SenderID: idString(ss.SenderID), GroupID: idString(ss.UnsubscribeGroupID),
		Subject: ss.Subject, Preheader: ss.Preheader, ScheduleType: strconv.Itoa(ss.ScheduleType), TestEmail: user(c).Email,
		Archive: ss.Archive == 1,
	}
	for _, t := range ss.RecipientID {
		f.Recipients = append(f.Recipients, t.RecipientID())
	}
	for _, t := range ss.ExcludeSpecificRecipientID {
		f.Excludes = append(f.Excludes, t.RecipientID())
	}
	if ss.ScheduleType == 1 && ss.ScheduleDate != "0000-00-00" {
		f.ScheduleDate, f.ScheduleTime = ss.ScheduleDate, ss.ScheduleTime
		if len(f.ScheduleTime) > 5 {
			f.ScheduleTime = f.ScheduleTime[:5]
		}
	}
	f.LocalOn, f.LocalTime, f.LocalZoneField = ss.LocalTime != "", ss.LocalTime, ss.LocalZoneField
	if f.AB, err = w.abFormOfSend(c.UserContext(), accountID(c), ss); err != nil {
		return err
	}
	if f.Template, err = w.storedChoice(c.UserContext(), accountID(c), ss); err != nil {
		return err
	}
	if f, err = w.fillSendForm(c, f, ss); err != nil {
		return err
	}
	return w.sendFormPage(c, fiber.StatusOK, f)
}

// storedChoice is the design choice that gives a stored send's HTML: its
// library design when unchanged, the account's design with the same HTML,
// or else the copy the send holds (current).
func (w *Web) storedChoice(ctx context.Context, acct int64, ss *models.SingleSend) (string, error) {
	if ss.TemplateHTML == nil || *ss.TemplateHTML == "" {
		return "", nil
	}
	html := *ss.TemplateHTML
	if ss.TemplateID != 1 {
		if d, err := w.svc.Templates.Design(ss.TemplateID); err == nil && d.HTMLCode == html {
			return "library-" + strconv.FormatInt(d.ID, 10), nil
		}
	}
	choice := "current"
	err := w.svc.Designs.Each(ctx, acct, service.ListFilter{}, func(d *models.Design) error {
		if d.TemplateHTML == html {
			choice = "design-" + strconv.FormatInt(d.ID, 10)
			return errStop
		}
		return nil
	})
	if err != nil && err != errStop {
		return "", err
	}
	return choice, nil
}

func (w *Web) createSend(c *fiber.Ctx) error { return w.saveSend(c, nil) }

// createSendGroup makes an unsubscribe group from the send form (an
// account that has none) and answers the group field: the select with it
// chosen, or the name with its message.
func (w *Web) createSendGroup(c *fiber.Ctx) error {
	ctx, acct := c.UserContext(), accountID(c)
	// Shown on the recipients' preference page; the group's page edits it.
	name := formValue(c, "new_group_name")
	g, err := w.svc.Groups.Create(ctx, acct, service.GroupInput{GroupName: name, Description: name, IsDisplay: "1"})
	if isValidation(err) {
		msg := "Give the group a name."
		if ps := fieldProblems(err)["group_name"]; len(ps) > 0 && ps[0].Reason != service.ReasonRequired {
			msg = ps[0].Message
		}
		return render(c, fiber.StatusUnprocessableEntity, singlesends.GroupField(nil, "", nil, msg))
	}
	if err != nil {
		return err
	}
	var groups []views.Option
	err = w.svc.Groups.Each(ctx, acct, service.ListFilter{}, func(gr *models.UnsubscribeGroupCount) error {
		groups = append(groups, views.Option{Value: strconv.FormatInt(gr.ID, 10), Label: gr.GroupName})
		return nil
	})
	if err != nil {
		return err
	}
	return render(c, fiber.StatusOK, singlesends.GroupField(groups, strconv.FormatInt(g.ID, 10), nil, ""))
}

// validateSend is the dry run of the send form: 204 when it would save,
// 422 when it would not (the save itself then answers the messages).
// Nothing is saved either way.
func (w *Web) validateSend(c *fiber.Ctx) error {
	ctx, acct := c.UserContext(), accountID(c)
	in, err := w.sendInput(ctx, acct, sendFormOf(c), nil)
	if err == nil {
		err = w.svc.SingleSends.Validate(ctx, acct, in)
	}
	if isValidation(err) {
		return c.SendStatus(fiber.StatusUnprocessableEntity)
	}
	if err != nil {
		return err
	}
	return c.SendStatus(fiber.StatusNoContent)
}

func (w *Web) updateSend(c *fiber.Ctx) error {
	ss, err := w.sendParam(c)
	if err != nil {
		return err
	}
	if !singlesends.Editable(*ss) {
		return w.sendLocked(c, ss)
	}
	return w.saveSend(c, ss)
}

// sendLocked answers a change to a send that has started: its page, with
// the reason.
func (w *Web) sendLocked(c *fiber.Ctx, ss *models.SingleSend) error {
	w.flash(c, views.FlashError, "This single send has started: it can no longer be changed.")
	return redirectTo(c, singlesends.SendURL(ss.Utr))
}

// saveSend creates (cur nil) or updates a send. A validation error
// answers the form with the messages beside each field (422); a saved
// send goes to its page, which follows it.
func (w *Web) saveSend(c *fiber.Ctx, cur *models.SingleSend) error {
	ctx, acct := c.UserContext(), accountID(c)
	f := sendFormOf(c)
	in, err := w.sendInput(ctx, acct, f, cur)
	if err != nil {
		return err
	}
	var ss *models.SingleSend
	if cur == nil {
		ss, err = w.svc.SingleSends.Create(ctx, acct, in)
	} else {
		ss, err = w.svc.SingleSends.Update(ctx, acct, in)
	}
	if isValidation(err) {
		if cur != nil && len(fieldErrors(err)) == 0 {
			// The engine started it since the form was opened.
			return w.sendLocked(c, cur)
		}
		return w.refuseSendForm(c, f, cur, err)
	}
	if err != nil {
		return err
	}
	msg := "Single send “" + ss.SingleSendName + "” saved: it starts within seconds."
	if ss.ScheduleType == 1 {
		loc, tz := accountZone(c)
		msg = "Single send “" + ss.SingleSendName + "” scheduled for " + singlesends.When(singlesends.ScheduledAt(*ss), loc) + " (" + tz + ")."
	}
	w.flash(c, views.FlashSuccess, msg)
	return redirectTo(c, singlesends.SendURL(ss.Utr))
}

// refuseSendForm answers the send form with a validation error's
// messages (422): beside their fields, above the form, and the
// checklist's refusal in its panel.
func (w *Web) refuseSendForm(c *fiber.Ctx, f singlesends.Form, cur *models.SingleSend, verr error) error {
	f.Errors, f.Other = sendErrors(verr)
	f.Checklist.Refused = refusedByChecklist(verr)
	f, err := w.fillSendForm(c, f, cur)
	if err != nil {
		return err
	}
	if partial(c) {
		return render(c, fiber.StatusUnprocessableEntity, singlesends.SendForm(f))
	}
	return w.sendFormPage(c, fiber.StatusUnprocessableEntity, f)
}

// saveDraft saves the form as a draft (creating it, or the send of the
// form's utr): it neither sends nor schedules; only its name is needed.
func (w *Web) saveDraft(c *fiber.Ctx) error {
	ctx, acct := c.UserContext(), accountID(c)
	f := sendFormOf(c)
	var cur *models.SingleSend
	if utr := formValue(c, "utr"); utr != "" {
		var err error
		if cur, err = w.svc.SingleSends.Get(ctx, acct, utr); err != nil {
			return err
		}
		if !singlesends.Editable(*cur) {
			return w.sendLocked(c, cur)
		}
		// A scheduled send turned back into a draft leaves its schedule:
		// an editor may not (service.DraftAction).
		if err := w.svc.Team.Authorize(ctx, actor(c), service.DraftAction(cur), c.Method()+" "+c.Path()); err != nil {
			return err
		}
	}
	in, err := w.sendInput(ctx, acct, f, cur)
	if err != nil && !isValidation(err) {
		return err
	}
	ss, err := w.svc.SingleSends.SaveDraft(ctx, acct, in)
	if isValidation(err) {
		if cur != nil && len(fieldErrors(err)) == 0 {
			return w.sendLocked(c, cur)
		}
		return w.refuseSendForm(c, f, cur, err)
	}
	if err != nil {
		return err
	}
	w.flash(c, views.FlashSuccess, "Draft “"+ss.SingleSendName+"” saved. It sends nothing until you send or schedule it.")
	return redirectTo(c, singlesends.SendURL(ss.Utr))
}

// countSendAudience answers the live count of the form's audience.
func (w *Web) countSendAudience(c *fiber.Ctx) error {
	to, ex := formList(c, "recipient_id"), formList(c, "exclude_specific_recipient_id")
	n, err := w.svc.SingleSends.FormAudienceCount(c.UserContext(), accountID(c), to, ex, formValue(c, "unsubscribe_group_id"))
	if err != nil {
		return err
	}
	empty := true
	for _, t := range to {
		if strings.TrimSpace(t) != "" {
			empty = false
		}
	}
	return render(c, fiber.StatusOK, singlesends.CountBody(singlesends.Count{N: n, Empty: empty}))
}

// testSend mails the send as the form stands to the test address. To
// htmx it answers the result box (422 when the send is not complete
// enough to be sent); to a browser the form again with the result.
func (w *Web) testSend(c *fiber.Ctx) error {
	ctx, acct := c.UserContext(), accountID(c)
	f := sendFormOf(c)
	var cur *models.SingleSend
	if utr := formValue(c, "utr"); utr != "" {
		var err error
		if cur, err = w.svc.SingleSends.Get(ctx, acct, utr); err != nil {
			return err
		}
	}
	in, err := w.sendInput(ctx, acct, f, cur)
	if err != nil {
		return err
	}
	to := strings.TrimSpace(f.TestEmail)
	err = w.svc.SingleSends.SendTest(ctx, acct, in, to, w.svc.Mail)
	r := &singlesends.TestResult{OK: true, Message: "Test sent to " + to + "."}
	status := fiber.StatusOK
	switch {
	case isValidation(err):
		status = fiber.StatusUnprocessableEntity
		r = &singlesends.TestResult{Message: "The test was not sent:"}
		errs, other := sendErrors(err)
		keys := make([]string, 0, len(errs))
		for k := range errs {
			keys = append(keys, k)
		}
		sort.Strings(keys)
		for _, k := range keys {
			r.Problems = append(r.Problems, errs[k]...)
		}
		r.Problems = append(r.Problems, other...)
	case err != nil:
		slog.ErrorContext(ctx, "single send test mail", "account", acct, "error", err)
		r = &singlesends.TestResult{Message: "The test mail could not be sent. Try again in a moment."}
	}
	if partial(c) {
		return render(c, status, singlesends.TestResultView(r))
	}
	f.Test = r
	if f, err = w.fillSendForm(c, f, cur); err != nil {
		return err
	}
	return w.sendFormPage(c, status, f)
}

// previewSendDesign answers the preview of the design chosen in the form
// (?template=…; ?utr=… for the design a send already has).
func (w *Web) previewSendDesign(c *fiber.Ctx) error {
	ctx, acct := c.UserContext(), accountID(c)
	var cur *models.SingleSend
	if utr := c.Query("utr"); utr != "" {
		var err error
		if cur, err = w.svc.SingleSends.Get(ctx, acct, utr); err != nil {
			return err
		}
	}
	p, err := w.sendPreview(ctx, acct, c.Query("template"), c.Query("sender_id"), cur)
	if err != nil {
		return err
	}
	c.Set(fiber.HeaderContentSecurityPolicy, previewCSP)
	if partial(c) {
		return render(c, fiber.StatusOK, singlesends.PreviewFrame(p))
	}
	return page(c, fiber.StatusOK, "Preview", views.NavSingleSends, singlesends.PreviewFrame(p))
}

// sendStatus is what the status panel shows: the progress of a send
// that runs, the statistics and activity of one that has completed.
func (w *Web) sendStatus(c *fiber.Ctx, ss *models.SingleSend, p *service.Progress) (singlesends.Status, error) {
	loc, tz := accountZone(c)
	st := singlesends.Status{Send: *ss, Loc: loc, TimeZone: tz, CSRF: csrf(c), Outcomes: sendOutcomes(ss), Progress: singlesends.Progress{
		Triggered: p.Triggered, Resolved: p.Resolved, Done: p.Done, Delivered: p.Delivered, Bounces: p.Bounces,
		Blocks: p.Blocks, Failures: p.Failures, Retrying: p.Retrying, Rate: p.Rate, Remaining: p.Remaining, Percent: p.Percent,
	}}
	if ss.Status != models.SendCompleted {
		return st, nil
	}
	return st, w.sendReport(c, ss, &st)
}

// sendReport fills st with a send's activity over time, its clicks per
// link and its reach.
func (w *Web) sendReport(c *fiber.Ctx, ss *models.SingleSend, st *singlesends.Status) error {
	buckets, links, err := w.svc.SingleSends.Activity(c.UserContext(), ss)
	if err != nil {
		return err
	}
	for _, b := range buckets {
		st.Points = append(st.Points, singlesends.Point{At: b.At, Opens: b.Opens, Clicks: b.Clicks, HumanOpens: b.HumanOpens, HumanClicks: b.HumanClicks})
	}
	for _, l := range links {
		st.Links = append(st.Links, singlesends.LinkRow{URL: l.URL, Clicks: l.Clicks, Human: l.Human})
	}
	a, err := w.svc.SingleSends.Audience(c.UserContext(), ss)
	if err != nil {
		return err
	}
	st.Reach = reachOf(a)
	return nil
}

// sendOutcomes says, for people, the relay's refusals and the failures
// of a send.
func sendOutcomes(ss *models.SingleSend) singlesends.Outcomes {
	o := singlesends.Outcomes{
		PauseReply: service.ReadRefusal(ss.PauseReason).String(),
		LastBlock:  service.ReadRefusal(ss.LastBlock).String(),
	}
	if ss.Failures > 0 {
		first := service.ReadFailure(ss.FirstFailure)
		o.Failed, o.FirstFailure = "could not be sent", first.Text
		if first.Built {
			o.Failed = "could not be built"
		}
		if ss.LastFailure != ss.FirstFailure {
			o.LastFailure = service.ReadFailure(ss.LastFailure).Text
		}
	}
	return o
}

// resumeSend lets a send that paused itself go on: its refused messages
// go again.
func (w *Web) resumeSend(c *fiber.Ctx) error {
	ss, err := w.sendParam(c)
	if err != nil {
		return err
	}
	n, err := w.svc.SingleSends.Resume(c.UserContext(), accountID(c), ss.Utr)
	switch {
	case service.ErrorCode(err) == service.CodeValidation:
		// Resumed meanwhile (another tab, a double click): say so.
		w.flash(c, views.FlashInfo, "“"+ss.SingleSendName+"” is not paused.")
	case err != nil:
		return err
	default:
		w.flash(c, views.FlashSuccess, views.N("flash.send_resumed", n, "Name", ss.SingleSendName))
	}
	return redirectTo(c, singlesends.SendURL(ss.Utr))
}

// decideABNow ends the wait of a send's A/B test: the winner is chosen
// from the figures so far within the scheduler's next round.
func (w *Web) decideABNow(c *fiber.Ctx) error {
	ss, err := w.sendParam(c)
	if err != nil {
		return err
	}
	err = w.svc.SingleSends.DecideABNow(c.UserContext(), accountID(c), ss.Utr)
	switch {
	case service.ErrorCode(err) == service.CodeValidation:
		// Decided meanwhile (its wait ended, another tab): say so.
		w.flash(c, views.FlashInfo, "The A/B test of “"+ss.SingleSendName+"” is no longer waiting for its winner.")
	case err != nil:
		return err
	default:
		w.flash(c, views.FlashSuccess, "The winner of “"+ss.SingleSendName+"” is being chosen from the figures so far; the rest of the audience gets it within a few seconds.")
	}
	return redirectTo(c, singlesends.SendURL(ss.Utr))
}

// showSend is a send's page: its state, what it is made of, its design.
func (w *Web) showSend(c *fiber.Ctx) error {
	ctx, acct := c.UserContext(), accountID(c)
	ss, p, err := w.svc.SingleSends.Progress(ctx, acct, c.Params("utr"))
	if err != nil {
		return err
	}
	st, err := w.sendStatus(c, ss, p)
	if err != nil {
		return err
	}
	d := singlesends.Detail{Send: *ss, Status: st, Loc: st.Loc, TimeZone: st.TimeZone, CSRF: csrf(c)}
	if ss.LocalTime != "" {
		waves, err := w.svc.SingleSends.Waves(ctx, acct, ss.ID)
		if err != nil {
			return err
		}
		for _, wv := range waves {
			d.Waves = append(d.Waves, singlesends.Wave{At: wv.At, Zones: wv.Zones, Recipients: wv.Recipients, Sent: wv.Sent})
		}
	}
	if d.AB, err = w.abTestOf(ctx, acct, ss); err != nil {
		return err
	}
	if d.Original, err = w.svc.SingleSends.Original(ctx, acct, ss); err != nil {
		return err
	}
	if w.opt.Relays != nil {
		rc, err := w.svc.SingleSends.Relays(ctx, acct, ss.ID)
		if err != nil {
			return err
		}
		for _, r := range rc {
			d.Relays = append(d.Relays, singlesends.RelayCount{Name: r.Relay, N: r.N})
		}
	}
	name, err := w.targetNamer(ctx, acct)
	if err != nil {
		return err
	}
	for _, t := range ss.RecipientID {
		d.To = append(d.To, name(t))
	}
	for _, t := range ss.ExcludeSpecificRecipientID {
		d.Exclude = append(d.Exclude, name(t))
	}
	g, err := w.svc.Groups.Get(ctx, acct, ss.UnsubscribeGroupID)
	switch {
	case err == nil:
		d.Group = g.GroupName
	case service.IsNotFound(err):
		d.Group = "A deleted group"
	default:
		return err
	}
	if ss.TemplateHTML != nil && *ss.TemplateHTML != "" {
		if d.Preview, err = w.svc.Designs.Preview(ctx, acct, *ss.TemplateHTML, 0); err != nil {
			return err
		}
	}
	c.Set(fiber.HeaderContentSecurityPolicy, previewCSP)
	return page(c, fiber.StatusOK, ss.SingleSendName, views.NavSingleSends, singlesends.SendPage(d))
}

// targetNamer names the account's contact types and segments as a send
// lists them.
func (w *Web) targetNamer(ctx context.Context, acct int64) (func(models.Target) string, error) {
	types, err := w.svc.ContactTypes.All(ctx, acct)
	if err != nil {
		return nil, err
	}
	typeNames := map[string]string{}
	for _, t := range types {
		typeNames[strconv.FormatInt(t.ID, 10)] = t.Name
	}
	segNames := map[string]string{}
	err = w.svc.Segments.Each(ctx, acct, service.ListFilter{}, func(s *models.SegmentCount) error {
		segNames[strconv.FormatInt(s.ID, 10)] = s.SegmentName
		return nil
	})
	if err != nil {
		return nil, err
	}
	return func(t models.Target) string {
		if t.Table == models.TargetSegments {
			if n, ok := segNames[t.ID]; ok {
				return "Segment: " + n
			}
			return "A deleted segment"
		}
		if n, ok := typeNames[t.ID]; ok {
			return "Contact type: " + n
		}
		return "A deleted contact type"
	}, nil
}

// sendProgress answers the status panel that polls it; once the send has
// completed, the panel it answers polls no more.
func (w *Web) sendProgress(c *fiber.Ctx) error {
	ss, p, err := w.svc.SingleSends.Progress(c.UserContext(), accountID(c), c.Params("utr"))
	if service.IsNotFound(err) && partial(c) {
		// Deleted meanwhile (another tab): the page goes to the list
		// rather than asking again every 2 s.
		c.Set("HX-Redirect", singlesends.ListURL)
	}
	if err != nil {
		return err
	}
	if !partial(c) {
		return c.Redirect(singlesends.SendURL(ss.Utr), fiber.StatusSeeOther)
	}
	if c.Query("from") == "scheduled" && ss.Status != models.SendReady {
		// Its time came (or someone edited it): the whole page changes,
		// not only the panel.
		c.Set("HX-Refresh", "true")
	}
	st, err := w.sendStatus(c, ss, p)
	if err != nil {
		return err
	}
	return render(c, fiber.StatusOK, singlesends.StatusPanel(st))
}

// duplicateSend copies a send and opens the copy's form: the copy sends
// nothing until it is saved.
func (w *Web) duplicateSend(c *fiber.Ctx) error {
	cp, err := w.svc.SingleSends.Duplicate(c.UserContext(), accountID(c), c.Params("utr"))
	if err != nil {
		return err
	}
	w.flash(c, views.FlashSuccess, "Copied as “"+cp.SingleSendName+"”. It sends nothing until you save it.")
	return redirectTo(c, singlesends.EditURL(cp.Utr))
}

// deleteSend deletes a send (a running one stops): to htmx the list as
// it now is, to a browser a redirect to the list.
func (w *Web) deleteSend(c *fiber.Ctx) error {
	ss, err := w.sendParam(c)
	if err != nil {
		return err
	}
	if err := w.svc.SingleSends.Delete(c.UserContext(), accountID(c), ss.Utr); err != nil {
		return err
	}
	return w.sendsChanged(c, "Single send “"+ss.SingleSendName+"” deleted.")
}

// bulkDeleteSends deletes the selected sends, all or none.
func (w *Web) bulkDeleteSends(c *fiber.Ctx) error {
	utrs := formList(c, "ids")
	if len(utrs) == 0 {
		return w.refuse(c, listBack(singlesends.ListURL, c), "Select at least one single send first.")
	}
	if err := w.svc.SingleSends.BulkDelete(c.UserContext(), accountID(c), utrs); err != nil {
		return err
	}
	return w.sendsChanged(c, deletedMessage(len(utrs), "flash.deleted_single_sends"))
}

// sendsChanged answers a deletion: to htmx the list and a flash message,
// to a browser a redirect back to the list it came from.
func (w *Web) sendsChanged(c *fiber.Ctx, message string) error {
	if !partial(c) {
		w.flash(c, views.FlashSuccess, message)
		return c.Redirect(listBack(singlesends.ListURL, c), fiber.StatusSeeOther)
	}
	l, err := w.sendsPage(c, listQuery(c))
	if err != nil {
		return err
	}
	return render(c, fiber.StatusOK, singlesends.ListView(l), flashOOB(views.FlashSuccess, message))
}

// designChoices lists what a mail can be made of and sent from: the
// library's designs (the blank one only with withBlank), the account's own
// designs, and its verified senders.
func (w *Web) designChoices(ctx context.Context, acct int64, withBlank bool) (lib, designs, senders []views.Option, err error) {
	all, err := w.svc.Templates.Library()
	if err != nil {
		return nil, nil, nil, err
	}
	for _, d := range all {
		if withBlank || d.IsBlank != 1 {
			lib = append(lib, views.Option{Value: "library-" + strconv.FormatInt(d.ID, 10), Label: d.TemplateName})
		}
	}
	err = w.svc.Designs.Each(ctx, acct, service.ListFilter{}, func(d *models.Design) error {
		designs = append(designs, views.Option{Value: "design-" + strconv.FormatInt(d.ID, 10), Label: d.Name})
		return nil
	})
	if err != nil {
		return nil, nil, nil, err
	}
	err = w.svc.Senders.Each(ctx, acct, service.ListFilter{}, func(s *models.Sender) error {
		if s.IsVerified == 1 {
			senders = append(senders, views.Option{Value: strconv.FormatInt(s.ID, 10), Label: s.FromName + " <" + s.FromEmail + ">"})
		}
		return nil
	})
	return lib, designs, senders, err
}

// sendsCalendar is the month (?month=YYYY-MM, else the current one) of
// scheduled and sent sends, in the account's time zone.
func (w *Web) sendsCalendar(c *fiber.Ctx) error {
	loc, tz := accountZone(c)
	now := time.Now().In(loc)
	y, m := now.Year(), now.Month()
	if v := c.Query("month"); v != "" {
		if t, err := time.ParseInLocation("2006-01", v, loc); err == nil && t.Year() >= 1970 && t.Year() <= 9998 {
			y, m = t.Year(), t.Month()
		}
	}
	first := time.Date(y, m, 1, 0, 0, 0, 0, loc)
	// The grid shows whole weeks, but only the month's days hold sends.
	got, err := w.svc.SingleSends.Calendar(c.UserContext(), accountID(c), first.UTC(), first.AddDate(0, 1, 0).UTC())
	if err != nil {
		return err
	}
	entries := make([]singlesends.CalEntry, 0, len(got))
	for _, e := range got {
		entries = append(entries, singlesends.CalEntry{Utr: e.Utr, Name: e.Name, At: e.At.In(loc), Sent: e.Sent})
	}
	cal := singlesends.NewCalendar(first, tz, now, entries)
	return page(c, fiber.StatusOK, "Calendar of single sends", views.NavSingleSends, singlesends.CalendarPage(cal))
}
