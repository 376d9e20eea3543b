package web

import (
	"context"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/gofiber/fiber/v2"

	"herald/models"
	"herald/service"
	"herald/views"
	"herald/views/automations"
	"herald/views/contacts"
	"herald/views/designs"
)

// mountAutomations registers the automations pages; in is the login
// check. Fixed paths come before the /:email ones they would match.
func (w *Web) mountAutomations(r router) {
	r.get("/automations", service.ActRead, w.listAutomations)
	r.post("/automations", service.ActPrepare, w.createAutomation)
	r.get("/automations/:utr", service.ActRead, w.showAutomation)
	r.post("/automations/:utr", service.ActPrepare, w.updateAutomation)
	r.post("/automations/:utr/live", service.ActRunAutomation, w.setAutomationLive)
	r.post("/automations/:utr/pause", service.ActRunAutomation, w.pauseAutomation)
	r.post("/automations/:utr/duplicate", service.ActPrepare, w.duplicateAutomation)
	r.post("/automations/:utr/delete", service.ActRunAutomation, w.deleteAutomation)
	r.post("/automations/:utr/emails", service.ActPrepare, w.addEmail)
	r.post("/automations/:utr/branch", service.ActPrepare, w.addBranch)
	r.post("/automations/:utr/branch/wait", service.ActPrepare, w.updateBranchWait)
	r.get("/automations/:utr/emails/:email/contacts", service.ActRead, w.stepContacts)
	r.get("/automations/:utr/emails/:email/report", service.ActRead, w.emailReport)
	r.get("/automations/:utr/emails/new", service.ActRead, w.newEmail)
	r.get("/automations/:utr/emails/preview", service.ActRead, w.previewEmailDesign)
	r.post("/automations/:utr/emails/:email", service.ActPrepare, w.updateEmail)
	r.get("/automations/:utr/emails/:email/edit", service.ActRead, w.editEmail)
	r.post("/automations/:utr/emails/:email/move", service.ActPrepare, w.moveEmail)
	r.post("/automations/:utr/emails/:email/delete", service.ActPrepare, w.deleteEmail)
	r.post("/automations/:utr/emails/:email/resume", service.ActRunAutomation, w.resumeEmail)
	r.get("/automations/:utr/emails/:email/design", service.ActRead, w.showEmailDesign)
	r.post("/automations/:utr/emails/:email/design", service.ActPrepare, w.saveEmailDesign)
}

// autoChoices are the account's contact types, segments and groups, as
// the settings form offers them and as the pages name them.
type autoChoices struct {
	types, segments, groups []views.Option
	names                   map[string]string // contacts_<id> or segments_<id> → its name for people
	groupNames              map[string]string
	dateFields              []views.Option // the custom fields of type date (a date trigger's choices)
}

func (w *Web) automationChoices(ctx context.Context, acct int64) (autoChoices, error) {
	ch := autoChoices{names: map[string]string{}, groupNames: map[string]string{}}
	err := w.svc.ContactTypes.Each(ctx, acct, service.ListFilter{}, func(t *models.ContactTypeCount) error {
		v := models.TargetContacts.Of(t.ID)
		ch.types = append(ch.types, views.Option{Value: v, Label: t.Name})
		ch.names[v] = "Contact type: " + t.Name
		return nil
	})
	if err != nil {
		return ch, err
	}
	err = w.svc.Segments.Each(ctx, acct, service.ListFilter{}, func(s *models.SegmentCount) error {
		v := models.TargetSegments.Of(s.ID)
		ch.segments = append(ch.segments, views.Option{Value: v, Label: s.SegmentName})
		ch.names[v] = "Segment: " + s.SegmentName
		return nil
	})
	if err != nil {
		return ch, err
	}
	err = w.svc.Groups.Each(ctx, acct, service.ListFilter{}, func(g *models.UnsubscribeGroupCount) error {
		v := strconv.FormatInt(g.ID, 10)
		ch.groups = append(ch.groups, views.Option{Value: v, Label: g.GroupName})
		ch.groupNames[v] = g.GroupName
		return nil
	})
	if err != nil {
		return ch, err
	}
	fields, err := w.svc.Fields.Custom(ctx, acct)
	for _, fl := range fields {
		if fl.FieldType == "datetime-local" {
			ch.dateFields = append(ch.dateFields, views.Option{Value: fl.FieldName, Label: fl.Label})
		}
	}
	return ch, err
}

// targetKey is an automation's target as the form carries it, "" for none.
func targetKey(a *models.Automation) string {
	if a.AutomationFor == 0 {
		return ""
	}
	return a.AutomationForTable.Of(a.AutomationFor)
}

// targetName names an automation's target, "" for none.
func (ch autoChoices) targetName(a *models.Automation) string {
	key := targetKey(a)
	switch {
	case key == "":
		return ""
	case ch.names[key] != "":
		return ch.names[key]
	case a.AutomationForTable == models.TargetSegments:
		return "A deleted segment"
	}
	return "A deleted contact type"
}

// fill adds the choices of the settings form's selects.
func (ch autoChoices) fill(f automations.Settings, csrf string) automations.Settings {
	f.Types, f.Segments, f.Groups, f.DateFields, f.CSRF = ch.types, ch.segments, ch.groups, ch.dateFields, csrf
	return f
}

// settingsOf is the settings form of a saved automation.
func (ch autoChoices) settingsOf(a *models.Automation, csrf string) automations.Settings {
	f := automations.Settings{Utr: a.Utr, Name: a.AutomationName, Target: targetKey(a), GroupID: a.UnsubscribeGroupID,
		Exit: strconv.Itoa(a.ExitCriteria), Live: a.Status == models.AutomationLive, TargetName: ch.targetName(a), Trigger: a.TriggerKind,
		DateField: a.DateField, DateWhen: "on", DateYearly: a.DateYearly == 1}
	switch n := a.DateOffsetDays; {
	case n < 0:
		f.DateWhen, f.DateDays = "before", strconv.Itoa(-n)
	case n > 0:
		f.DateWhen, f.DateDays = "after", strconv.Itoa(n)
	}
	return ch.fill(f, csrf)
}

// settingsFormOf reads the settings form as posted.
func settingsFormOf(c *fiber.Ctx) automations.Settings {
	return automations.Settings{Type: formValue(c, "type"), Name: formValue(c, "automation_name"), Target: formValue(c, "automation_for"),
		GroupID: formValue(c, "unsubscribe_group_id"), Exit: formValue(c, "exit_criteria"), Series: formValue(c, "welcome_series") == "1",
		StartTag: formValue(c, "start_tag"), Trigger: formValue(c, "trigger"), DateField: formValue(c, "date_field"),
		DateWhen: formValue(c, "date_when"), DateDays: formValue(c, "date_days"), DateYearly: formValue(c, "date_yearly") == "1"}
}

// dateOffset is the form's day of a date trigger as the service's offset:
// the days negative before the date, "0" on the day; a number out of
// range (or none) goes as it is, for the service to refuse.
func dateOffset(f automations.Settings) string {
	days := strings.TrimSpace(f.DateDays)
	switch {
	case f.DateWhen != "before" && f.DateWhen != "after":
		return "0"
	case days == "":
		return "x" // refused: days are needed
	case f.DateWhen == "before":
		if n, err := strconv.Atoi(days); err == nil && n >= 0 {
			return strconv.Itoa(-n)
		}
	}
	return days
}

// automationInput turns the settings form into the service's input; no
// group chosen is "none yet".
func automationInput(f automations.Settings) service.AutomationInput {
	group := strings.TrimSpace(f.GroupID)
	if group == "" {
		group = "0"
	}
	in := service.AutomationInput{Type: f.Type, AutomationFor: f.Target, AutomationName: f.Name, UnsubscribeGroupID: group, ExitCriteria: f.Exit, Trigger: f.Trigger}
	if f.Trigger == models.TriggerDate {
		in.DateField, in.DateOffsetDays, in.DateYearly = f.DateField, dateOffset(f), "0"
		if f.DateYearly {
			in.DateYearly = "1"
		}
	}
	return in
}

// settingsMessages are the console's words for the service's messages
// that name API fields.
var settingsMessages = map[string]string{
	"type":                 "Choose a welcome series or a custom automation.",
	"automation_for":       "Choose one of your contact types or segments.",
	"unsubscribe_group_id": "Choose one of your unsubscribe groups, or none yet.",
	"exit_criteria":        "Choose when a contact stops getting these emails.",
	"trigger":              "Choose how contacts start this automation.",
	"date_field":           "Choose the date field it starts from.",
}

// settingsErrors sorts a validation error's messages: beside their field,
// or above the form.
func settingsErrors(err error) (views.Errors, []string) {
	errs := views.Errors{}
	var other []string
	for field, ps := range fieldProblems(err) {
		for _, pr := range ps {
			m := pr.Message
			if alt, ok := settingsMessages[field]; ok && missingChoice(pr) {
				m = alt
			}
			if field == "date_offset_days" { // the form asks for days, not an offset
				m = "Enter a number of days from 0 to 365."
			}
			switch field {
			case "type", "automation_for", "automation_name", "unsubscribe_group_id", "exit_criteria", "tag", "trigger", "date_field", "date_offset_days", "date_yearly":
				errs[field] = append(errs[field], m)
			default:
				other = append(other, m)
			}
		}
	}
	if len(errs) == 0 && len(other) == 0 {
		_, msg := describe(fiber.StatusUnprocessableEntity, err)
		other = append(other, msg)
	}
	return errs, other
}

// automationsPage reads the page q of the account's automations.
func (w *Web) automationsPage(c *fiber.Ctx, q views.ListQuery, ch autoChoices) (automations.List, error) {
	acct := accountID(c)
	rows, pager, err := readPage(c.UserContext(), q, automations.ListURL, func(ctx context.Context, f service.ListFilter, fn func(*models.AutomationCount) error) error {
		return w.svc.Automations.Each(ctx, acct, f, fn)
	})
	l := automations.List{Query: pager.Query, Pager: pager, CSRF: csrf(c)}
	for i := range rows {
		l.Rows = append(l.Rows, automations.Row{AutomationCount: rows[i], Target: ch.targetName(&rows[i].Automation)})
	}
	return l, err
}

// newSettings is the empty form of a new automation: a welcome series,
// with the account's only group when it has one.
func (ch autoChoices) newSettings(csrf string) automations.Settings {
	return ch.fill(automations.Settings{Type: "welcome", Exit: "0", GroupID: onlyChoice(ch.groups)}, csrf)
}

func (w *Web) listAutomations(c *fiber.Ctx) error {
	ch, err := w.automationChoices(c.UserContext(), accountID(c))
	if err != nil {
		return err
	}
	l, err := w.automationsPage(c, listQuery(c), ch)
	if err != nil {
		return err
	}
	if partial(c) {
		return render(c, fiber.StatusOK, automations.ListView(l))
	}
	l.New = ch.newSettings(csrf(c))
	return page(c, fiber.StatusOK, "Automations", automations.NavAutomations, automations.ListPage(l))
}

// createAutomation saves a new draft and opens its builder; a
// validation error answers the form with its messages (422). The draft
// has no emails unless the person ticked the prefilled welcome series
// (decisions.md 6: only an explicit, visible choice adds stock emails).
func (w *Web) createAutomation(c *fiber.Ctx) error {
	ctx, acct := c.UserContext(), accountID(c)
	f := settingsFormOf(c)
	in, err := w.startTagTarget(c, f)
	var a *models.Automation
	if err == nil {
		a, err = w.svc.Automations.Create(ctx, acct, in)
	}
	if isValidation(err) {
		ch, cerr := w.automationChoices(ctx, acct)
		if cerr != nil {
			return cerr
		}
		f.Errors, f.Other = settingsErrors(err)
		f = ch.fill(f, csrf(c))
		if partial(c) {
			return render(c, fiber.StatusUnprocessableEntity, automations.SettingsForm(f))
		}
		l, lerr := w.automationsPage(c, views.ListQuery{Page: 1}, ch)
		if lerr != nil {
			return lerr
		}
		l.New = f
		return page(c, fiber.StatusUnprocessableEntity, "Automations", automations.NavAutomations, automations.ListPage(l))
	}
	if err != nil {
		return err
	}
	msg := "Automation “" + a.AutomationName + "” created. Add its emails, choose its unsubscribe group, then set it live."
	if f.Series {
		if _, err := w.svc.Automations.AddWelcomeSeries(ctx, acct, a.Utr); err != nil {
			return err
		}
		msg = "Automation “" + a.AutomationName + "” created with the three emails of the welcome series. Edit or remove them, choose its unsubscribe group, then set it live."
	}
	w.flash(c, views.FlashSuccess, msg)
	return redirectTo(c, automations.AutomationURL(a.Utr))
}

// automationParam reads the route's automation of the account.
// Errors: ErrNotFound.
func (w *Web) automationParam(c *fiber.Ctx) (*models.Automation, error) {
	return w.svc.Automations.Get(c.UserContext(), accountID(c), c.Params("utr"))
}

// builder gathers an automation's page: its emails with their senders,
// thumbnails or previews and statistics, its names and its settings.
func (w *Web) builder(c *fiber.Ctx, a *models.Automation) (automations.Builder, error) {
	ctx, acct := c.UserContext(), accountID(c)
	loc, _ := accountZone(c)
	b := automations.Builder{Automation: *a, Loc: loc, CSRF: csrf(c)}
	ch, err := w.automationChoices(ctx, acct)
	if err != nil {
		return b, err
	}
	b.Target, b.Group, b.Settings = ch.targetName(a), ch.groupNames[a.UnsubscribeGroupID], ch.settingsOf(a, csrf(c))
	if a.TriggerKind == models.TriggerDate {
		b.When = automations.DateRule(*a, service.FieldLabel)
	}
	steps, err := w.svc.Automations.Steps(ctx, acct, a.Utr)
	if err != nil {
		return b, err
	}
	type who struct {
		label    string
		verified bool
	}
	senders := map[int64]who{}
	err = w.svc.Senders.Each(ctx, acct, service.ListFilter{}, func(s *models.Sender) error {
		senders[s.ID] = who{s.FromName + " <" + s.FromEmail + ">", s.IsVerified == 1}
		return nil
	})
	if err != nil {
		return b, err
	}
	lines := map[string][]automations.Step{}
	n := 0
	for _, st := range steps {
		if st.Schedule.Kind == models.StepBranch {
			b.Branch = &automations.Branch{Step: st.Schedule}
			continue
		}
		n++
		s := automations.Step{N: n, Email: st.Schedule, Send: st.Send, Stats: !a.LiveAt.IsZero()}
		if line := lines[st.Schedule.Path]; st.Schedule.Path != models.PathMain {
			// A path's emails count from the branch, then from the one before on the path.
			s.From = views.T("automations.path_from_branch")
			if len(line) > 0 {
				s.From = automations.WaitFrom(line[len(line)-1].N + 1)
			}
		}
		if snd, ok := senders[st.Schedule.SenderID]; ok {
			s.Sender, s.Verified = snd.label, snd.verified
		}
		if s.Thumb, s.Preview, err = w.emailThumb(ctx, acct, &st.Schedule); err != nil {
			return b, err
		}
		if st.Send != nil {
			b.Clicks += st.Send.UniqueClicks
			b.Blocks += st.Send.Blocks
			if st.Send.PausedAt != nil {
				s.PauseReply = service.ReadRefusal(st.Send.PauseReason).String()
			}
		}
		lines[st.Schedule.Path] = append(lines[st.Schedule.Path], s)
	}
	for _, line := range lines {
		line[0].First, line[len(line)-1].Last = true, true
	}
	b.Steps = lines[models.PathMain]
	if b.Branch != nil {
		b.Branch.A, b.Branch.B = lines[models.PathA], lines[models.PathB]
	}
	// where places an enrolment's step (by path and index) on the page.
	where := func(path string, step int) (*int64, *time.Time) {
		if path == models.PathMain && b.Branch != nil && step == len(b.Steps) {
			return &b.Branch.Waiting, &b.Branch.FirstDue
		}
		line := lines[path]
		if step < 0 || step >= len(line) {
			return nil, nil
		}
		return &line[step].Waiting, &line[step].FirstDue
	}
	if !a.LiveAt.IsZero() {
		e, err := w.svc.Automations.Enrolment(ctx, acct, a.Utr)
		if err != nil {
			return b, err
		}
		b.Enrolled, b.Active, b.Finished, b.Exited = e.Enrolled, e.Active, e.Finished, e.Exited
		for _, wt := range e.Waiting {
			if n, due := where(wt.Path, wt.Step); n != nil {
				*n, *due = wt.Contacts, time.UnixMilli(wt.FirstDue)
			}
		}
	}
	if a.Status != models.AutomationLive && len(steps) > 0 {
		items, err := w.svc.Checklist.ForAutomation(ctx, acct, a.Utr)
		if err != nil {
			return b, err
		}
		blocks, err := w.svc.Checklist.Blocks(ctx, acct)
		if err != nil {
			return b, err
		}
		cl := checklistView(items, blocks)
		b.Checklist = &cl
	}
	return b, nil
}

// emailThumb is the library design's image of an email that is that
// design unchanged, or else its design rendered with sample values (for
// a small sandboxed frame).
func (w *Web) emailThumb(ctx context.Context, acct int64, r *models.AutomationSchedule) (thumb, preview string, err error) {
	if r.TemplateHTML == nil || *r.TemplateHTML == "" {
		return "", "", nil
	}
	if r.TemplateID != 1 {
		if d, err := w.svc.Templates.Design(r.TemplateID); err == nil && d.HTMLCode == *r.TemplateHTML {
			return designs.Thumbnail(d.PreviewImage), "", nil
		}
	}
	preview, err = w.svc.Designs.Preview(ctx, acct, *r.TemplateHTML, 0)
	return "", preview, err
}

// builderPage renders the builder under the policy that lets the design
// frames show their inline styles.
func (w *Web) builderPage(c *fiber.Ctx, status int, b automations.Builder) error {
	c.Set(fiber.HeaderContentSecurityPolicy, previewCSP)
	return page(c, status, b.Automation.AutomationName, automations.NavAutomations, automations.BuilderPage(b))
}

func (w *Web) showAutomation(c *fiber.Ctx) error {
	a, err := w.automationParam(c)
	if err != nil {
		return err
	}
	b, err := w.builder(c, a)
	if err != nil {
		return err
	}
	return w.builderPage(c, fiber.StatusOK, b)
}

// updateAutomation saves the settings; a validation error (a live
// automation's target among them) answers the form with its messages.
func (w *Web) updateAutomation(c *fiber.Ctx) error {
	ctx, acct := c.UserContext(), accountID(c)
	a, err := w.automationParam(c)
	if err != nil {
		return err
	}
	f := settingsFormOf(c)
	_, err = w.svc.Automations.Update(ctx, acct, a.Utr, automationInput(f))
	if isValidation(err) {
		b, berr := w.builder(c, a)
		if berr != nil {
			return berr
		}
		f.Utr, f.Live, f.TargetName = a.Utr, b.Settings.Live, b.Settings.TargetName
		if f.Live {
			f.Target = b.Settings.Target
		}
		f.Errors, f.Other = settingsErrors(err)
		f.Types, f.Segments, f.Groups, f.CSRF = b.Settings.Types, b.Settings.Segments, b.Settings.Groups, b.Settings.CSRF
		b.Settings = f
		if partial(c) {
			return render(c, fiber.StatusUnprocessableEntity, automations.SettingsForm(b.Settings))
		}
		return w.builderPage(c, fiber.StatusUnprocessableEntity, b)
	}
	if err != nil {
		return err
	}
	w.flash(c, views.FlashSuccess, "Settings saved.")
	return redirectTo(c, automations.AutomationURL(a.Utr))
}

// refusal is the text of a state change the service refused: its
// message, or its field messages.
func refusal(err error) string {
	_, msg := describe(fiber.StatusUnprocessableEntity, err)
	return msg
}

// changeState sets an automation live or pauses it. A refusal (no
// group, no email…) is said in the status panel (422) to htmx, in a
// flash message to a browser; a success reloads the builder.
func (w *Web) changeState(c *fiber.Ctx, live bool) error {
	ctx, acct := c.UserContext(), accountID(c)
	a, err := w.automationParam(c)
	if err != nil {
		return err
	}
	if live {
		err = w.svc.Automations.SetLive(ctx, acct, a.Utr)
	} else {
		err = w.svc.Automations.Pause(ctx, acct, a.Utr)
	}
	if isValidation(err) {
		problem, byChecklist := refusal(err), refusedByChecklist(err)
		if byChecklist {
			problem = "Not set live: the pre-send checklist fails, and your account refuses such automations.\n" +
				strings.Join(fieldErrors(err)[service.ChecklistField], "\n")
		}
		if !partial(c) {
			w.flash(c, views.FlashError, problem)
			return c.Redirect(automations.AutomationURL(a.Utr), fiber.StatusSeeOther)
		}
		b, err := w.builder(c, a)
		if err != nil {
			return err
		}
		b.Problem = problem
		if byChecklist && b.Checklist != nil {
			b.Problem = "Not set live: an email fails the pre-send checklist, and your account refuses such automations."
			b.Checklist.Refused = true
		}
		return render(c, fiber.StatusUnprocessableEntity, automations.StatusPanel(b, false))
	}
	if err != nil {
		return err
	}
	msg := "“" + a.AutomationName + "” is paused: nothing is sent until you set it live again."
	if live {
		msg = "“" + a.AutomationName + "” is live: contacts who join from now on get its emails."
	}
	w.flash(c, views.FlashSuccess, msg)
	return redirectTo(c, automations.AutomationURL(a.Utr))
}

func (w *Web) setAutomationLive(c *fiber.Ctx) error { return w.changeState(c, true) }

func (w *Web) pauseAutomation(c *fiber.Ctx) error { return w.changeState(c, false) }

// resumeEmail lets an email's sending that paused itself go on: its
// refused messages go again.
func (w *Web) resumeEmail(c *fiber.Ctx) error {
	a, err := w.automationParam(c)
	if err != nil {
		return err
	}
	n, err := w.svc.Automations.ResumeEmail(c.UserContext(), accountID(c), a.Utr, c.Params("email"))
	switch {
	case service.ErrorCode(err) == service.CodeValidation:
		w.flash(c, views.FlashInfo, "This email's sending is not paused.")
	case err != nil:
		return err
	default:
		w.flash(c, views.FlashSuccess, views.N("flash.automation_resumed", n))
	}
	return redirectTo(c, automations.AutomationURL(a.Utr))
}

// duplicateAutomation copies an automation as a draft and opens the copy.
func (w *Web) duplicateAutomation(c *fiber.Ctx) error {
	cp, err := w.svc.Automations.Duplicate(c.UserContext(), accountID(c), c.Params("utr"))
	if err != nil {
		return err
	}
	w.flash(c, views.FlashSuccess, "Copied as “"+cp.AutomationName+"”, a draft: it sends nothing until you set it live.")
	return redirectTo(c, automations.AutomationURL(cp.Utr))
}

// deleteAutomation deletes an automation (a live one stops): to htmx the
// list as it now is, to a browser a redirect to the list.
func (w *Web) deleteAutomation(c *fiber.Ctx) error {
	ctx, acct := c.UserContext(), accountID(c)
	a, err := w.automationParam(c)
	if err != nil {
		return err
	}
	if err := w.svc.Automations.Delete(ctx, acct, []string{a.Utr}); err != nil {
		return err
	}
	msg := "Automation “" + a.AutomationName + "” deleted."
	if !partial(c) {
		w.flash(c, views.FlashSuccess, msg)
		return c.Redirect(listBack(automations.ListURL, c), fiber.StatusSeeOther)
	}
	ch, err := w.automationChoices(ctx, acct)
	if err != nil {
		return err
	}
	l, err := w.automationsPage(c, listQuery(c), ch)
	if err != nil {
		return err
	}
	return render(c, fiber.StatusOK, automations.ListView(l), flashOOB(views.FlashSuccess, msg))
}

// --- Emails.

// emailFormOf reads the email form as posted.
func emailFormOf(c *fiber.Ctx) automations.EmailForm {
	return automations.EmailForm{WaitType: formValue(c, "waiting_type"), Period: formValue(c, "waiting_period"), SenderID: formValue(c, "sender_id"),
		Subject: formValue(c, "subject"), Preheader: formValue(c, "preheader"), Design: formValue(c, "design"), HTML: formValue(c, "template_html"), Path: pathParam(formValue(c, "path"))}
}

// pathParam is a branch path named by a form or query ("a" or "b"), ""
// (the main line) for anything else.
func pathParam(v string) string {
	if v == models.PathA || v == models.PathB {
		return v
	}
	return models.PathMain
}

// emailInput turns the email form into the service's input. "At once"
// needs no number.
func (w *Web) emailInput(ctx context.Context, acct int64, autoUtr string, f automations.EmailForm, cur *models.AutomationSchedule) (service.ScheduleInput, error) {
	in := service.ScheduleInput{Utr: autoUtr, SenderID: f.SenderID, Subject: f.Subject, Preheader: &f.Preheader, WaitingPeriod: f.Period, WaitingType: f.WaitType, Path: f.Path}
	if strings.TrimSpace(in.WaitingType) == "instantly" && strings.TrimSpace(in.WaitingPeriod) == "" {
		in.WaitingPeriod = "0"
	}
	d, err := w.svc.Designs.EmailDesign(ctx, acct, f.Design, f.HTML, cur)
	in.TemplateID, in.TemplateHTML, in.TemplateJSON, in.PreviewImg = d.TemplateID, d.TemplateHTML, d.TemplateJSON, d.PreviewImg
	return in, err
}

// emailMessage words a service problem about a field of an email for
// the console, by its reason.
func emailMessage(field string, pr service.Problem) string {
	missing := missingChoice(pr)
	switch field {
	case "sender_id":
		if missing {
			return "Choose a verified sender."
		}
	case "template_id", "preview_img", "template_json":
		if missing {
			return "Choose a design."
		}
	case "template_html":
		if pr.Reason == service.ReasonRequired || pr.Reason == service.ReasonRequiredIf {
			return "Write the HTML of the email, or choose a design."
		}
	case "subject":
		if missing {
			return "Write the subject."
		}
	case "waiting_type":
		if missing {
			return "Choose when it is sent."
		}
	case "waiting_period":
		if missing || pr.Reason == service.ReasonInteger {
			return "Enter a whole number of hours or days."
		}
	}
	return pr.Message
}

// emailErrors sorts a validation error's messages: beside the control of
// their field (the design's fields all beside the design select), or
// above the form.
func emailErrors(err error) (views.Errors, []string) {
	errs := views.Errors{}
	var other []string
	for field, ps := range fieldProblems(err) {
		key := field
		switch field {
		case "template_id", "template_html", "template_json", "preview_img":
			key = "design"
		case "sender_id", "subject", "waiting_type", "waiting_period":
		default:
			for _, pr := range ps {
				other = append(other, emailMessage(field, pr))
			}
			continue
		}
		for _, pr := range ps {
			if m := emailMessage(field, pr); !slices.Contains(errs[key], m) {
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

// fillEmailForm adds the choices of the email form's controls and the
// preview of its design.
func (w *Web) fillEmailForm(c *fiber.Ctx, f automations.EmailForm, a *models.Automation, cur *models.AutomationSchedule) (automations.EmailForm, error) {
	ctx, acct := c.UserContext(), accountID(c)
	f.AutoUtr, f.AutoName, f.CSRF = a.Utr, a.AutomationName, csrf(c)
	if cur != nil {
		f.Utr = cur.Utr
		f.Current = cur.TemplateHTML != nil && *cur.TemplateHTML != ""
	}
	var err error
	if f.Library, f.Designs, f.Senders, err = w.designChoices(ctx, acct, true); err != nil {
		return f, err
	}
	if f.Placeholders, err = w.svc.Fields.Placeholders(ctx, acct); err != nil {
		return f, err
	}
	f.Preview, err = w.emailPreview(ctx, acct, f.Design, cur)
	return f, err
}

// emailPreview renders the chosen design with sample values ("" when no
// library, account or current design is chosen).
func (w *Web) emailPreview(ctx context.Context, acct int64, choice string, cur *models.AutomationSchedule) (string, error) {
	if choice == service.ChoiceHTML {
		return "", nil
	}
	d, err := w.svc.Designs.EmailDesign(ctx, acct, choice, "", cur)
	if err != nil || d.TemplateHTML == "" {
		return "", err
	}
	return w.svc.Designs.Preview(ctx, acct, d.TemplateHTML, 0)
}

// emailPage renders the email form page, under the policy that lets the
// preview frame show the design's inline styles.
func (w *Web) emailPage(c *fiber.Ctx, status int, f automations.EmailForm) error {
	c.Set(fiber.HeaderContentSecurityPolicy, previewCSP)
	return page(c, status, f.Title(), automations.NavAutomations, automations.EmailPage(f))
}

// emailParam reads the route's automation and email of the account.
// Errors: ErrNotFound.
func (w *Web) emailParam(c *fiber.Ctx) (*models.Automation, *models.AutomationSchedule, int, error) {
	a, r, n, err := w.stepParam(c)
	if err == nil && r.Kind == models.StepBranch {
		return nil, nil, 0, service.ErrNotFound // a branch has no email to edit, design or move
	}
	return a, r, n, err
}

// stepParam is the step of the path, an email or the branch, with the
// email's number (emails only are numbered; 0 for the branch).
func (w *Web) stepParam(c *fiber.Ctx) (*models.Automation, *models.AutomationSchedule, int, error) {
	a, err := w.automationParam(c)
	if err != nil {
		return nil, nil, 0, err
	}
	rows, err := w.svc.Automations.Schedules(c.UserContext(), accountID(c), a.Utr)
	if err != nil {
		return nil, nil, 0, err
	}
	n := 0
	for i := range rows {
		if rows[i].Kind != models.StepBranch {
			n++
		}
		if rows[i].Utr == c.Params("email") {
			if rows[i].Kind == models.StepBranch {
				return a, &rows[i], 0, nil
			}
			return a, &rows[i], n, nil
		}
	}
	return nil, nil, 0, service.ErrNotFound
}

// newEmail is the form of an email added at the end: the first goes at
// once, a later one a day after the one before, from the sender of the
// one before (or the only verified sender).
func (w *Web) newEmail(c *fiber.Ctx) error {
	a, err := w.automationParam(c)
	if err != nil {
		return err
	}
	rows, err := w.svc.Automations.Schedules(c.UserContext(), accountID(c), a.Utr)
	if err != nil {
		return err
	}
	emails := 0
	for _, r := range rows {
		if r.Kind != models.StepBranch {
			emails++
		}
	}
	f := automations.EmailForm{N: emails + 1, WaitType: "instantly", Period: "0", Path: pathParam(c.Query("path"))}
	if len(rows) > 0 {
		f.WaitType, f.Period = "days", "1"
	}
	if f, err = w.fillEmailForm(c, f, a, nil); err != nil {
		return err
	}
	if len(rows) > 0 {
		last := strconv.FormatInt(rows[len(rows)-1].SenderID, 10)
		if slices.ContainsFunc(f.Senders, func(o views.Option) bool { return o.Value == last }) {
			f.SenderID = last
		}
	}
	if f.SenderID == "" {
		f.SenderID = onlyChoice(f.Senders)
	}
	return w.emailPage(c, fiber.StatusOK, f)
}

// storedEmailChoice is the design choice of a stored email: its library
// design when unchanged, else the copy the email holds (current).
func (w *Web) storedEmailChoice(r *models.AutomationSchedule) string {
	if r.TemplateHTML == nil || *r.TemplateHTML == "" {
		return ""
	}
	if d, err := w.svc.Templates.Design(r.TemplateID); err == nil && d.HTMLCode == *r.TemplateHTML && r.TemplateJSON == nil {
		return "library-" + strconv.FormatInt(d.ID, 10)
	}
	return "current"
}

func (w *Web) editEmail(c *fiber.Ctx) error {
	a, r, n, err := w.emailParam(c)
	if err != nil {
		return err
	}
	f := automations.EmailForm{N: n, WaitType: r.WaitingType, Period: strconv.Itoa(r.WaitingPeriod), SenderID: idString(r.SenderID),
		Subject: r.Subject, Preheader: r.Preheader, Design: w.storedEmailChoice(r)}
	if f, err = w.fillEmailForm(c, f, a, r); err != nil {
		return err
	}
	return w.emailPage(c, fiber.StatusOK, f)
}

func (w *Web) addEmail(c *fiber.Ctx) error {
	a, err := w.automationParam(c)
	if err != nil {
		return err
	}
	return w.saveEmail(c, a, nil, 0)
}

func (w *Web) updateEmail(c *fiber.Ctx) error {
	a, r, n, err := w.emailParam(c)
	if err != nil {
		return err
	}
	return w.saveEmail(c, a, r, n)
}

// saveEmail adds (cur nil) or changes an email. A validation error
// answers the form with the messages beside each field (422); a saved
// email goes back to the builder, at its card.
func (w *Web) saveEmail(c *fiber.Ctx, a *models.Automation, cur *models.AutomationSchedule, n int) error {
	ctx, acct := c.UserContext(), accountID(c)
	f := emailFormOf(c)
	in, err := w.emailInput(ctx, acct, a.Utr, f, cur)
	if err != nil {
		return err
	}
	var r *models.AutomationSchedule
	if cur == nil {
		r, err = w.svc.Automations.AddSchedule(ctx, acct, in)
	} else {
		r, err = w.svc.Automations.UpdateSchedule(ctx, acct, cur.Utr, in)
	}
	if isValidation(err) {
		f.N = n
		if cur == nil {
			rows, rerr := w.svc.Automations.Schedules(ctx, acct, a.Utr)
			if rerr != nil {
				return rerr
			}
			f.N = len(rows) + 1
		}
		f.Errors, f.Other = emailErrors(err)
		if f, err = w.fillEmailForm(c, f, a, cur); err != nil {
			return err
		}
		if partial(c) {
			return render(c, fiber.StatusUnprocessableEntity, automations.EmailFormView(f))
		}
		return w.emailPage(c, fiber.StatusUnprocessableEntity, f)
	}
	if err != nil {
		return err
	}
	msg := "Email “" + r.Subject + "” saved."
	if cur == nil {
		msg = "Email “" + r.Subject + "” added."
	}
	if a.Status == models.AutomationLive {
		msg += " It applies to the mails sent from now on."
	}
	w.flash(c, views.FlashSuccess, msg)
	return redirectTo(c, automations.AutomationURL(a.Utr)+"#"+automations.EmailID(r.Utr))
}

// previewEmailDesign answers the preview of the design chosen in the
// form (?design=…; ?email=… for the design an email already has).
func (w *Web) previewEmailDesign(c *fiber.Ctx) error {
	ctx, acct := c.UserContext(), accountID(c)
	a, err := w.automationParam(c)
	if err != nil {
		return err
	}
	var cur *models.AutomationSchedule
	if email := c.Query("email"); email != "" {
		if cur, err = w.svc.Automations.Schedule(ctx, acct, a.Utr, email); err != nil {
			return err
		}
	}
	html, err := w.emailPreview(ctx, acct, c.Query("design"), cur)
	if err != nil {
		return err
	}
	c.Set(fiber.HeaderContentSecurityPolicy, previewCSP)
	if partial(c) {
		return render(c, fiber.StatusOK, automations.PreviewFrame(html))
	}
	return page(c, fiber.StatusOK, "Preview", automations.NavAutomations, automations.PreviewFrame(html))
}

// moveEmail moves an email one place up or down.
func (w *Web) moveEmail(c *fiber.Ctx) error {
	a, r, n, err := w.emailParam(c)
	if err != nil {
		return err
	}
	by := 0
	switch formValue(c, "direction") {
	case "up":
		by = -1
	case "down":
		by = 1
	default:
		return w.refuse(c, automations.AutomationURL(a.Utr), "Choose to move the email up or down.")
	}
	if err := w.svc.Automations.MoveSchedule(c.UserContext(), accountID(c), a.Utr, r.Utr, by); err != nil {
		return err
	}
	dir := "up"
	if by > 0 {
		dir = "down"
	}
	return w.timelineChanged(c, a, "Email "+strconv.Itoa(n)+" moved "+dir+".")
}

// deleteEmail removes an email from the sequence.
func (w *Web) deleteEmail(c *fiber.Ctx) error {
	a, r, _, err := w.stepParam(c)
	if err != nil {
		return err
	}
	if err := w.svc.Automations.DeleteSchedule(c.UserContext(), accountID(c), a.Utr, r.Utr); err != nil {
		return err
	}
	if r.Kind == models.StepBranch {
		return w.timelineChanged(c, a, "Branch removed.")
	}
	return w.timelineChanged(c, a, "Email “"+r.Subject+"” removed.")
}

// timelineChanged answers a move or a removal: to htmx the timeline, the
// status panel (what it lacks to go live may have changed) and a flash
// message; to a browser a redirect to the builder.
func (w *Web) timelineChanged(c *fiber.Ctx, a *models.Automation, message string) error {
	if !partial(c) {
		w.flash(c, views.FlashSuccess, message)
		return c.Redirect(automations.AutomationURL(a.Utr), fiber.StatusSeeOther)
	}
	b, err := w.builder(c, a)
	if err != nil {
		return err
	}
	return render(c, fiber.StatusOK, automations.Timeline(b), automations.StatusPanel(b, true), flashOOB(views.FlashSuccess, message))
}

// --- An email's design, in the editor of the templates pages.

// emailEditorPage renders the editor in the same layout as the library's.
func (w *Web) emailEditorPage(c *fiber.Ctx, status int, e automations.DesignEditor) error {
	e.CSRF = csrf(c)
	var err error
	if e.Tools, err = w.editorTools(c); err != nil {
		return err
	}
	p := editorLayout(c, "Design of email "+strconv.Itoa(e.N)+" · "+e.AutoName, automations.NavAutomations)
	return renderPage(c, status, p, automations.DesignPage(e))
}

func (w *Web) showEmailDesign(c *fiber.Ctx) error {
	a, r, n, err := w.emailParam(c)
	if err != nil {
		return err
	}
	e := automations.DesignEditor{AutoUtr: a.Utr, AutoName: a.AutomationName, Email: *r, N: n}
	if r.TemplateHTML != nil {
		e.HTML = *r.TemplateHTML
	}
	if r.TemplateJSON != nil {
		e.JSON = *r.TemplateJSON
	}
	return w.emailEditorPage(c, fiber.StatusOK, e)
}

// saveEmailDesign saves the editor's design into the email, keeping the
// rest of it; a live automation sends it from now on. The editor's
// script gets JSON (422 with the messages); a plain form the page again
// with its errors, or a redirect to the editor with a flash message. An
// email whose other settings no longer hold (its sender was deleted) is
// refused with the reason: its form must be fixed first.
func (w *Web) saveEmailDesign(c *fiber.Ctx) error {
	ctx, acct := c.UserContext(), accountID(c)
	a, r, n, err := w.emailParam(c)
	if err != nil {
		return w.designFailed(c, err)
	}
	img := r.PreviewImg
	if img == "" {
		img = w.svc.Templates.BlankImage()
	}
	in := service.ScheduleInput{Utr: a.Utr, SenderID: idString(r.SenderID), Subject: r.Subject, WaitingPeriod: strconv.Itoa(r.WaitingPeriod),
		WaitingType: r.WaitingType, TemplateID: strconv.FormatInt(r.TemplateID, 10), PreviewImg: img,
		TemplateJSON: formValue(c, "template_json"), TemplateHTML: formValue(c, "template_html")}
	_, err = w.svc.Automations.UpdateSchedule(ctx, acct, r.Utr, in)
	if isValidation(err) {
		errs := views.Errors{}
		var other []string
		for field, ps := range fieldProblems(err) {
			for _, pr := range ps {
				m := emailMessage(field, pr)
				if field == "template_html" || field == "template_json" {
					errs["template_html"] = append(errs["template_html"], m)
				} else {
					other = append(other, "This email's settings need fixing first: "+m)
				}
			}
		}
		if wantsJSON(c) {
			_, msg := describe(fiber.StatusUnprocessableEntity, err)
			if len(other) > 0 {
				msg = strings.Join(other, " ")
			}
			return c.Status(fiber.StatusUnprocessableEntity).JSON(saveAnswer{Message: msg, Errors: errs})
		}
		e := automations.DesignEditor{AutoUtr: a.Utr, AutoName: a.AutomationName, Email: *r, N: n, HTML: in.TemplateHTML, JSON: in.TemplateJSON, Errors: errs, Other: other}
		return w.emailEditorPage(c, fiber.StatusUnprocessableEntity, e)
	}
	if err != nil {
		return w.designFailed(c, err)
	}
	msg := "Design of email " + strconv.Itoa(n) + " saved."
	if a.Status == models.AutomationLive {
		msg += " It is sent from now on."
	}
	url := automations.DesignURL(a.Utr, r.Utr)
	if wantsJSON(c) {
		return c.JSON(saveAnswer{ID: r.ID, URL: url, Message: msg})
	}
	w.flash(c, views.FlashSuccess, msg)
	return c.Redirect(url, fiber.StatusSeeOther)
}

// designFailed answers an error of the editor's save: JSON to its script.
func (w *Web) designFailed(c *fiber.Ctx, err error) error {
	if !wantsJSON(c) {
		return err
	}
	status := statusOf(err)
	_, msg := describe(status, err)
	return c.Status(status).JSON(saveAnswer{Message: msg})
}

// addBranch ends the main line with a branch; a refusal comes back as a
// message on the automation's page.
func (w *Web) addBranch(c *fiber.Ctx) error {
	a, err := w.automationParam(c)
	if err != nil {
		return err
	}
	_, err = w.svc.Automations.AddBranch(c.UserContext(), accountID(c), service.BranchInput{Utr: a.Utr,
		WaitingPeriod: formValue(c, "waiting_period"), WaitingType: formValue(c, "waiting_type")})
	switch {
	case isValidation(err):
		w.flash(c, views.FlashError, refusal(err))
		return redirectTo(c, automations.AutomationURL(a.Utr)+"#add-branch-form")
	case err != nil:
		return err
	}
	w.flash(c, views.FlashSuccess, "Branch added: add the emails of each path.")
	return redirectTo(c, automations.AutomationURL(a.Utr)+"#automation-branch")
}

// updateBranchWait changes the branch's wait; a refusal comes back as a
// message on the automation's page, at the branch.
func (w *Web) updateBranchWait(c *fiber.Ctx) error {
	a, err := w.automationParam(c)
	if err != nil {
		return err
	}
	_, err = w.svc.Automations.UpdateBranchWait(c.UserContext(), accountID(c), service.BranchInput{Utr: a.Utr,
		WaitingPeriod: formValue(c, "waiting_period"), WaitingType: formValue(c, "waiting_type")})
	switch {
	case isValidation(err):
		w.flash(c, views.FlashError, refusal(err))
		return redirectTo(c, automations.AutomationURL(a.Utr)+"#automation-branch")
	case err != nil:
		return err
	}
	w.flash(c, views.FlashSuccess, "Branch wait saved: contacts already waiting count it from when they reached the branch.")
	return redirectTo(c, automations.AutomationURL(a.Utr)+"#automation-branch")
}

// stepContacts is one page of the contacts waiting at a step (an email
// or the branch); htmx swaps the table when paging.
func (w *Web) stepContacts(c *fiber.Ctx) error {
	a, r, n, err := w.stepParam(c)
	if err != nil {
		return err
	}
	q := listQuery(c)
	rows, more, err := w.svc.Automations.StepContacts(c.UserContext(), accountID(c), a.Utr, r.Utr, q.Page)
	if err != nil {
		return err
	}
	loc, _ := accountZone(c)
	l := automations.StepContacts{Automation: *a, Step: *r, Loc: loc, Title: "Branch",
		Pager: views.Pager{Base: automations.StepContactsURL(a.Utr, r.Utr), Query: views.ListQuery{Page: q.Page}, HasNext: more}}
	if r.Kind != models.StepBranch {
		l.Title = views.T("automations.step_title", "N", strconv.Itoa(n), "Subject", r.Subject)
	}
	if len(rows) > 0 {
		l.Pager.First = (q.Page-1)*service.StepContactsPageSize + 1
		l.Pager.Last = l.Pager.First + len(rows) - 1
	}
	for _, x := range rows {
		row := automations.StepContactRow{Email: x.Email, Name: strings.TrimSpace(x.FirstName + " " + x.LastName), Due: time.UnixMilli(x.DueAt)}
		if x.ContactID != nil {
			row.Href = contacts.ContactURL(*x.ContactID)
		}
		l.Rows = append(l.Rows, row)
	}
	if partial(c) {
		return render(c, fiber.StatusOK, automations.StepContactsView(l))
	}
	return page(c, fiber.StatusOK, l.Title, automations.NavAutomations, automations.StepContactsPage(l))
}
