package web_test

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/url"
	"slices"
	"strings"
	"testing"
	"time"

	"golang.org/x/net/html"

	"herald/models"
	"herald/service"
	"herald/web"
)

// autoSetup is an account with what an automation needs: a verified
// sender (and an unverified one), a group, a contact type with a contact,
// a segment and a design of its own; mail goes to the outbox.
type autoSetup struct {
	t          *testing.T
	a          *testApp
	c          *client
	acct       int64
	sender     int64
	unverified int64
	group      int64
	ctype      int64
	segment    int64
	design     int64
}

const autoDesignHTML = `<html><body><p>Hi ((first_name)), this is our own design.</p></body></html>`

func newAutoSetup(t *testing.T) *autoSetup {
	t.Helper()
	ctx := context.Background()
	a := newTestApp(t, web.Options{})
	c, acct := a.account("Ada", "ada@example.com")
	s := &autoSetup{t: t, a: a, c: c, acct: acct}
	in := service.SenderInput{FromName: "Shop", FromEmail: "news@shop.example.com", ReplyToEmail: "help@shop.example.com",
		CountryID: "250", CompanyAddress: "1 rue de Rivoli", Nickname: "shop"}
	snd, err := a.svc.Senders.Create(ctx, acct, in)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := a.svc.Senders.Verify(ctx, snd.VerifyToken); err != nil {
		t.Fatal(err)
	}
	s.sender = snd.ID
	in.FromEmail, in.Nickname = "waiting@shop.example.com", "waiting"
	if snd, err = a.svc.Senders.Create(ctx, acct, in); err != nil {
		t.Fatal(err)
	}
	s.unverified = snd.ID
	g, err := a.svc.Groups.Create(ctx, acct, service.GroupInput{GroupName: "Members only", Description: "Monthly news", IsDisplay: "1"})
	if err != nil {
		t.Fatal(err)
	}
	s.group = g.ID
	au := a.audience(acct)
	s.ctype = au.contactType("Customers")
	au.contact(s.ctype, "ann@example.org", "Ann", "A", "US", nil)
	seg, err := a.svc.Segments.Create(ctx, acct, service.SegmentInput{ContactTypeID: itoa(s.ctype), SegmentName: "Org people",
		SelectField: []string{"email"}, SelectOperator: []string{"ends_with"}, Value: []string{"example.org"}})
	if err != nil {
		t.Fatal(err)
	}
	s.segment = seg.ID
	d, err := a.svc.Designs.Create(ctx, acct, service.DesignInput{Name: "Own letter", TemplateID: "1", TemplateHTML: autoDesignHTML})
	if err != nil {
		t.Fatal(err)
	}
	s.design = d.ID
	return s
}

// create makes an automation through the service: custom ones get the
// emails given as (waiting type, period, subject).
func (s *autoSetup) create(typ, name, group string, emails ...[3]string) *models.Automation {
	s.t.Helper()
	ctx := context.Background()
	a, err := s.a.svc.Automations.Create(ctx, s.acct, service.AutomationInput{Type: typ, AutomationFor: "contacts_" + itoa(s.ctype),
		AutomationName: name, UnsubscribeGroupID: group})
	if err != nil {
		s.t.Fatal(err)
	}
	for _, e := range emails {
		if _, err := s.a.svc.Automations.AddSchedule(ctx, s.acct, service.ScheduleInput{Utr: a.Utr, SenderID: itoa(s.sender), Subject: e[2],
			WaitingType: e[0], WaitingPeriod: e[1], TemplateID: "2", PreviewImg: "02-newsletter.png"}); err != nil {
			s.t.Fatal(err)
		}
	}
	return a
}

// createSeries makes a welcome automation with the prefilled series, as
// the console's checkbox does.
func (s *autoSetup) createSeries(name, group string) *models.Automation {
	s.t.Helper()
	a := s.create("welcome", name, group)
	if _, err := s.a.svc.Automations.AddWelcomeSeries(context.Background(), s.acct, a.Utr); err != nil {
		s.t.Fatal(err)
	}
	return a
}

func (s *autoSetup) get(utr string) *models.Automation {
	s.t.Helper()
	a, err := s.a.svc.Automations.Get(context.Background(), s.acct, utr)
	if err != nil {
		s.t.Fatal(err)
	}
	return a
}

func (s *autoSetup) emails(utr string) []models.AutomationSchedule {
	s.t.Helper()
	rows, err := s.a.svc.Automations.Schedules(context.Background(), s.acct, utr)
	if err != nil {
		s.t.Fatal(err)
	}
	return rows
}

func subjects(rows []models.AutomationSchedule) []string {
	var out []string
	for _, r := range rows {
		out = append(out, r.Subject)
	}
	return out
}

func TestAutomationsList(t *testing.T) {
	t.Parallel()
	s := newAutoSetup(t)
	c := s.c
	r := c.get("/automations")
	wantStatus(t, r, http.StatusOK)
	if first(r.doc, `a.nav-link.is-active[href="/automations"]`) == nil || first(r.doc, "#automations-list .empty") == nil {
		t.Fatalf("empty list:\n%.3000s", r.body)
	}
	// The form of a new automation: welcome chosen, the lone group chosen,
	// the contact types and segments offered, the exit criteria in words.
	form := first(r.doc, "form#automation-create")
	if form == nil || attr(form, "hx-post") != "/automations" || first(form, `input[name="_csrf"]`) == nil {
		t.Fatal("no create form")
	}
	if first(form, `#automation-type-welcome[checked]`) == nil || first(form, `#automation-create-group option[value="`+itoa(s.group)+`"][selected]`) == nil ||
		first(form, `#automation-create-target option[value="contacts_`+itoa(s.ctype)+`"]`) == nil ||
		first(form, `#automation-create-target option[value="segments_`+itoa(s.segment)+`"]`) == nil {
		t.Fatalf("create form:\n%s", text(form))
	}
	// The prefilled welcome series is a visible choice, off by default
	// (decisions.md 6), its label saying what it adds.
	series := first(form, `input#automation-create-series[type="checkbox"][name="welcome_series"][value="1"]`)
	if series == nil || hasAttr(series, "checked") ||
		text(first(form, `label[for="automation-create-series"]`)) != "Start with the three-email welcome series (you can edit or remove each email)" {
		t.Fatalf("welcome series choice:\n%s", text(form))
	}
	exits := texts(form, ".choice-set label.choice strong")
	for _, want := range []string{"After the last email", "Also when they leave the list or segment", "Also when they open or click an email"} {
		if !slices.Contains(exits, want) {
			t.Fatalf("exit criteria %q lack %q", exits, want)
		}
	}

	live := s.create("custom", "Onboarding", itoa(s.group), [3]string{"instantly", "0", "One"}, [3]string{"days", "2", "Two"})
	if err := s.a.svc.Automations.SetLive(context.Background(), s.acct, live.Utr); err != nil {
		t.Fatal(err)
	}
	var sendID int64
	if err := s.a.svc.DB.R.Model(&models.AutomationSchedule{}).Select("send_id").Where("automation_id = ?", live.ID).Order("position").Limit(1).Scan(&sendID).Error; err != nil {
		t.Fatal(err)
	}
	if err := s.a.svc.DB.W.Exec("UPDATE single_sends SET triggered = 12, delivered = 11, unique_opens = 5, unsubscribes = 1 WHERE id = ?", sendID).Error; err != nil {
		t.Fatal(err)
	}
	welcome := s.create("welcome", "", "0")

	r = c.get("/automations")
	if rows := all(r.doc, "#automations-list tbody tr"); len(rows) != 2 {
		t.Fatalf("%d rows", len(rows))
	}
	cells := func(id int64) map[string]string {
		out := map[string]string{}
		for _, td := range all(first(r.doc, "#automation-"+itoa(id)), "td[data-label]") {
			out[attr(td, "data-label")] = text(td)
		}
		return out
	}
	got := cells(live.ID)
	if got["Name"] != "Onboarding Contact type: Customers" || got["Type"] != "Custom" || got["Status"] != "Live" || got["Emails"] != "2" ||
		got["Triggered"] != "12" || got["Delivered"] != "11" || got["Opens"] != "5" || got["Unsubscribes"] != "1" {
		t.Fatalf("live row %q", got)
	}
	if a := first(r.doc, "#automation-"+itoa(live.ID)+" .cell-main a"); attr(a, "href") != "/automations/"+live.Utr {
		t.Fatalf("link %q", attr(a, "href"))
	}
	if got := cells(welcome.ID); got["Name"] != "Welcome series Contact type: Customers" || got["Type"] != "Welcome" || got["Status"] != "Draft" || got["Emails"] != "0" {
		t.Fatalf("welcome row %q", got)
	}
	row := first(r.doc, "#automation-"+itoa(live.ID))
	del := first(row, `form[hx-post="/automations/`+live.Utr+`/delete"]`)
	if del == nil || !strings.Contains(attr(del, "hx-confirm"), "It is live") || first(row, `form[action="/automations/`+live.Utr+`/duplicate"] button[data-duplicate]`) == nil {
		t.Fatal("no delete (with its question) or duplicate")
	}

	// A search narrows the list (htmx: the list alone).
	r = c.hxGet("/automations?q=onboard")
	wantStatus(t, r, http.StatusOK)
	if first(r.doc, "#automations-list") == nil || len(all(r.doc, "tbody tr")) != 1 || first(r.doc, "form#automation-create") != nil {
		t.Fatalf("search:\n%.2000s", r.body)
	}
}

func TestAutomationCreate(t *testing.T) {
	t.Parallel()
	s := newAutoSetup(t)
	c := s.c
	c.get("/automations")

	// Invalid choices: each is said beside its control (htmx: the form).
	r := c.hxPost("/automations", url.Values{"type": {"weekly"}, "automation_name": {strings.Repeat("n", 300)},
		"automation_for": {"contacts_999999"}, "unsubscribe_group_id": {"999999"}, "exit_criteria": {"9"}})
	wantStatus(t, r, http.StatusUnprocessableEntity)
	for id, want := range map[string]string{
		"automation-create-type-error":   "Choose a welcome series or a custom automation.",
		"automation-create-target-error": "Choose one of your contact types or segments.",
		"automation-create-group-error":  "Choose one of your unsubscribe groups, or none yet.",
		"automation-create-exit-error":   "Choose when a contact stops getting these emails.",
		"automation-create-name-error":   "",
	} {
		got := text(first(r.doc, "#"+id))
		if got == "" || (want != "" && got != want) {
			t.Errorf("%s = %q, want %q", id, got, want)
		}
	}
	if first(r.doc, "form#automation-create") == nil || value(r.doc, "#automation-create-name") != strings.Repeat("n", 300) {
		t.Fatal("the form is not answered with what was typed")
	}
	// Without JavaScript, the whole page with the form's errors.
	r = c.post("/automations", url.Values{"type": {""}, "unsubscribe_group_id": {"0"}})
	wantStatus(t, r, http.StatusUnprocessableEntity)
	if first(r.doc, "#automations-list") == nil || text(first(r.doc, "#automation-create-type-error")) == "" {
		t.Fatalf("plain form:\n%.2000s", r.body)
	}
	if n, _ := s.a.svc.Automations.Count(context.Background(), s.acct); n != 0 {
		t.Fatalf("%d automations after refusals", n)
	}

	// A welcome automation, the series not ticked: no emails (decisions.md
	// 6); htmx goes to its builder.
	r = c.hxPost("/automations", url.Values{"type": {"welcome"}, "automation_name": {""}, "automation_for": {"contacts_" + itoa(s.ctype)},
		"unsubscribe_group_id": {"0"}, "exit_criteria": {"2"}})
	wantStatus(t, r, http.StatusNoContent)
	to := r.header.Get("HX-Redirect")
	if !strings.HasPrefix(to, "/automations/") {
		t.Fatalf("HX-Redirect %q", to)
	}
	utr := strings.TrimPrefix(to, "/automations/")
	a := s.get(utr)
	if a.AutomationName != "Welcome series" || a.AutomationType != 0 || a.ExitCriteria != 2 || a.AutomationFor != s.ctype || a.UnsubscribeGroupID != "0" || a.Status != models.AutomationDraft {
		t.Fatalf("created %+v", a)
	}
	r = c.get(to)
	wantStatus(t, r, http.StatusOK)
	if n := len(all(r.doc, "#automation-steps li.timeline-item")); n != 0 || first(r.doc, "#automation-timeline .empty") == nil || len(s.emails(utr)) != 0 {
		t.Fatalf("a welcome automation without the series shows %d emails", n)
	}
	if f := text(first(r.doc, "#flash")); !strings.Contains(f, "created. Add its emails") {
		t.Fatalf("flash %q", f)
	}

	// Ticked: the three emails of the series, ready to edit.
	r = c.hxPost("/automations", url.Values{"type": {"welcome"}, "automation_name": {"Greetings"}, "automation_for": {"contacts_" + itoa(s.ctype)},
		"unsubscribe_group_id": {"0"}, "welcome_series": {"1"}})
	wantStatus(t, r, http.StatusNoContent)
	to = r.header.Get("HX-Redirect")
	r = c.get(to)
	wantStatus(t, r, http.StatusOK)
	if n := len(all(r.doc, "#automation-steps li.timeline-item")); n != 3 {
		t.Fatalf("welcome builder with the series shows %d emails", n)
	}
	if f := text(first(r.doc, "#flash")); !strings.Contains(f, "created with the three emails of the welcome series") {
		t.Fatalf("flash %q", f)
	}
	rows := s.emails(strings.TrimPrefix(to, "/automations/"))
	if got := subjects(rows); len(got) != 3 || rows[0].SenderID != s.sender || rows[1].WaitingPeriod != 2 || rows[2].WaitingPeriod != 5 {
		t.Fatalf("series %q %+v", got, rows)
	}

	// A custom one, posted by a plain form: empty, to a segment.
	r = c.post("/automations", url.Values{"type": {"custom"}, "automation_name": {"Nudges"}, "automation_for": {"segments_" + itoa(s.segment)},
		"unsubscribe_group_id": {itoa(s.group)}, "exit_criteria": {"1"}})
	wantRedirect(t, r, "/automations/")
	b := s.get(strings.TrimPrefix(r.location(), "/automations/"))
	if b.AutomationName != "Nudges" || b.AutomationType != 1 || b.AutomationForTable != "segments_" || b.AutomationFor != s.segment || b.ExitCriteria != 1 || b.UnsubscribeGroupID != itoa(s.group) {
		t.Fatalf("custom %+v", b)
	}
	r = c.get(r.location())
	if first(r.doc, "#automation-timeline .empty") == nil || len(s.emails(b.Utr)) != 0 {
		t.Fatal("a custom automation does not start empty")
	}
}

func TestAutomationBuilder(t *testing.T) {
	t.Parallel()
	s := newAutoSetup(t)
	a := s.createSeries("Hello", "0")
	r := s.c.get("/automations/" + a.Utr)
	wantStatus(t, r, http.StatusOK)
	if csp := r.header.Get("Content-Security-Policy"); !strings.Contains(csp, "style-src 'self' 'unsafe-inline'") || !strings.Contains(csp, "script-src 'self';") {
		t.Fatalf("CSP %q", csp)
	}
	if first(r.doc, `a.nav-link.is-active[href="/automations"]`) == nil || text(first(r.doc, "h1")) != "Hello" {
		t.Fatal("heading or nav")
	}
	st := first(r.doc, "#automation-status")
	if attr(st, "data-status") != "Draft" || first(st, "#set-live") == nil || first(st, "#pause-automation") != nil {
		t.Fatalf("status panel:\n%s", text(st))
	}
	if missing := texts(st, "#automation-missing li"); len(missing) != 1 || !strings.Contains(missing[0], "unsubscribe group") {
		t.Fatalf("missing %q", missing)
	}
	items := all(r.doc, "#automation-steps li.timeline-item")
	if len(items) != 3 {
		t.Fatalf("%d emails", len(items))
	}
	rows := s.emails(a.Utr)
	for i, want := range []struct{ wait, from, img string }{
		{"At once", "after a contact joins", "/static/img/templates/05-welcome.png"},
		{"After 2 days", "after email 1", "/static/img/templates/03-announcement.png"},
		{"After 5 days", "after email 2", "/static/img/templates/04-promotion.png"},
	} {
		it := items[i]
		if attr(it, "id") != "email-"+rows[i].Utr || text(first(it, ".wait-label")) != want.wait || !strings.Contains(text(first(it, ".timeline-wait")), want.from) {
			t.Fatalf("email %d wait: %s", i+1, text(first(it, ".timeline-wait")))
		}
		if got := attr(first(it, ".email-thumb img"), "src"); got != want.img {
			t.Errorf("email %d thumbnail %q, want %q", i+1, got, want.img)
		}
		if text(first(it, ".email-subject")) != rows[i].Subject || !strings.Contains(text(first(it, ".email-from")), "news@shop.example.com") {
			t.Fatalf("email %d: %s", i+1, text(it))
		}
		for _, href := range []string{"/automations/" + a.Utr + "/emails/" + rows[i].Utr + "/edit", "/automations/" + a.Utr + "/emails/" + rows[i].Utr + "/design"} {
			if first(it, `a[href="`+href+`"]`) == nil {
				t.Fatalf("email %d lacks %s", i+1, href)
			}
		}
		if (first(it, `button[data-move="up"]`) == nil) != (i == 0) || (first(it, `button[data-move="down"]`) == nil) != (i == 2) {
			t.Fatalf("email %d move buttons", i+1)
		}
		if first(it, `form[hx-post="/automations/`+a.Utr+`/emails/`+rows[i].Utr+`/delete"][hx-confirm] button[data-remove]`) == nil {
			t.Fatalf("email %d has no remove", i+1)
		}
		if first(it, ".email-stats") != nil {
			t.Fatalf("email %d shows statistics before going live", i+1)
		}
	}
	if first(r.doc, `a#add-email[href="/automations/`+a.Utr+`/emails/new"]`) == nil {
		t.Fatal("no add email")
	}
	set := first(r.doc, "form#automation-settings")
	if attr(set, "hx-post") != "/automations/"+a.Utr || value(set, "#automation-settings-name") != "Hello" ||
		first(set, `#automation-settings-target option[value="contacts_`+itoa(s.ctype)+`"][selected]`) == nil ||
		first(set, `#automation-settings-group option[value="0"][selected]`) == nil || first(set, `#automation-settings-exit-0[checked]`) == nil ||
		first(set, `input[name="type"]`) != nil {
		t.Fatalf("settings:\n%s", text(set))
	}

	// An email whose design is no longer the library's unchanged shows
	// a sandboxed preview instead of the library's image.
	rows[1].Subject = "Changed"
	if _, err := s.a.svc.Automations.UpdateSchedule(context.Background(), s.acct, rows[1].Utr, service.ScheduleInput{Utr: a.Utr, SenderID: itoa(s.sender),
		Subject: "Tips for ((first_name))", WaitingType: "hours", WaitingPeriod: "1", TemplateID: "1", PreviewImg: "01-blank.png", TemplateHTML: `<p>Tips for ((first_name))</p>`}); err != nil {
		t.Fatal(err)
	}
	r = s.c.get("/automations/" + a.Utr)
	it := first(r.doc, "#email-"+rows[1].Utr)
	frame := first(it, ".email-thumb iframe")
	if sb, ok := attrOK(frame, "sandbox"); !ok || sb != "" || !strings.Contains(attr(frame, "srcdoc"), "Tips for Alex") || first(it, ".email-thumb img") != nil {
		t.Fatalf("preview frame: %v %q %.200q", ok, sb, attr(frame, "srcdoc"))
	}
	if text(first(it, ".wait-label")) != "After 1 hour" {
		t.Fatalf("wait %q", text(first(it, ".wait-label")))
	}
}

func TestAutomationEmails(t *testing.T) {
	t.Parallel()
	s := newAutoSetup(t)
	c := s.c
	a := s.create("custom", "Drip", "0")
	base := "/automations/" + a.Utr

	r := c.get(base + "/emails/new")
	wantStatus(t, r, http.StatusOK)
	if first(r.doc, `#email-wait-type option[value="instantly"][selected]`) == nil || first(r.doc, `#email-sender option[value="`+itoa(s.sender)+`"][selected]`) == nil ||
		first(r.doc, `#email-sender option[value="`+itoa(s.unverified)+`"]`) != nil {
		t.Fatalf("new email form:\n%s", text(first(r.doc, "#email-form")))
	}
	if first(r.doc, `#email-design option[value="library-2"]`) == nil || first(r.doc, `#email-design option[value="design-`+itoa(s.design)+`"]`) == nil ||
		first(r.doc, `#email-design option[value="html"]`) == nil || first(r.doc, `#email-design option[value="current"]`) != nil {
		t.Fatalf("design choices:\n%s", text(first(r.doc, "#email-design")))
	}
	if attr(first(r.doc, "#email-design"), "hx-get") != base+"/emails/preview" ||
		first(r.doc, `#email-subject-placeholder[data-insert-into="#email-subject"] option[value="((first_name))"]`) == nil {
		t.Fatal("no preview loading or placeholder picker")
	}

	// Nothing chosen: each problem beside its control.
	r = c.hxPost(base+"/emails", url.Values{"waiting_type": {"days"}, "waiting_period": {"soon"}, "sender_id": {itoa(s.unverified)}, "subject": {""}, "design": {""}})
	wantStatus(t, r, http.StatusUnprocessableEntity)
	for id, want := range map[string]string{
		"email-sender-error":      "The selected sender is not verified.",
		"email-subject-error":     "Write the subject.",
		"email-design-error":      "Choose a design.",
		"email-wait-period-error": "Enter a whole number of hours or days.",
	} {
		if got := text(first(r.doc, "#"+id)); got != want {
			t.Errorf("%s = %q, want %q", id, got, want)
		}
	}
	r = c.hxPost(base+"/emails", url.Values{"waiting_type": {"instantly"}, "sender_id": {itoa(s.sender)}, "subject": {"Raw"}, "design": {"html"}, "template_html": {""}})
	wantStatus(t, r, http.StatusUnprocessableEntity)
	if got := text(first(r.doc, "#email-design-error")); got != "Write the HTML of the email, or choose a design." {
		t.Fatalf("empty HTML: %q", got)
	}
	if len(s.emails(a.Utr)) != 0 {
		t.Fatal("a refused email was saved")
	}

	// A library design at once (no number needed), written HTML after
	// two days, the account's design after three hours.
	r = c.hxPost(base+"/emails", url.Values{"waiting_type": {"instantly"}, "sender_id": {itoa(s.sender)}, "subject": {"Welcome ((first_name))"}, "design": {"library-2"}})
	wantStatus(t, r, http.StatusNoContent)
	rows := s.emails(a.Utr)
	if len(rows) != 1 || r.header.Get("HX-Redirect") != base+"#email-"+rows[0].Utr {
		t.Fatalf("HX-Redirect %q", r.header.Get("HX-Redirect"))
	}
	if e := rows[0]; e.WaitingType != "instantly" || e.TemplateID != 2 || e.PreviewImg != "02-newsletter.png" || e.TemplateHTML == nil || len(*e.TemplateHTML) < 100 || e.SenderID != s.sender {
		t.Fatalf("email 1 %+v", e)
	}
	r = c.post(base+"/emails", url.Values{"waiting_type": {"days"}, "waiting_period": {"2"}, "sender_id": {itoa(s.sender)}, "subject": {"Written"},
		"design": {"html"}, "template_html": {`<p>Hand written for ((first_name))</p>`}})
	wantRedirect(t, r, base)
	r = c.get(base + "/emails/new")
	if first(r.doc, `#email-wait-type option[value="days"][selected]`) == nil || value(r.doc, "#email-wait-period") != "1" || !strings.Contains(text(first(r.doc, "#email-wait-from")), "after email 2") {
		t.Fatal("a later email does not start a day after the one before")
	}
	r = c.hxPost(base+"/emails", url.Values{"waiting_type": {"hours"}, "waiting_period": {"3"}, "sender_id": {itoa(s.sender)}, "subject": {"Own"}, "design": {"design-" + itoa(s.design)}})
	wantStatus(t, r, http.StatusNoContent)
	rows = s.emails(a.Utr)
	if got := subjects(rows); !slices.Equal(got, []string{"Welcome ((first_name))", "Written", "Own"}) {
		t.Fatalf("subjects %q", got)
	}
	if e := rows[1]; e.WaitingType != "days" || e.WaitingPeriod != 2 || e.TemplateID != 1 || *e.TemplateHTML != `<p>Hand written for ((first_name))</p>` {
		t.Fatalf("email 2 %+v", e)
	}
	if e := rows[2]; e.WaitingType != "hours" || e.WaitingPeriod != 3 || e.TemplateID != 1 || *e.TemplateHTML != autoDesignHTML {
		t.Fatalf("email 3 %+v", e)
	}

	// The preview of the chosen design, sandboxed.
	for _, q := range []string{"?design=library-2", "?design=design-" + itoa(s.design), "?design=current&email=" + rows[1].Utr} {
		r = c.hxGet(base + "/emails/preview" + q)
		wantStatus(t, r, http.StatusOK)
		frame := first(r.doc, "#email-preview iframe")
		if sb, ok := attrOK(frame, "sandbox"); !ok || sb != "" || len(attr(frame, "srcdoc")) < 20 || strings.Contains(attr(frame, "srcdoc"), "((first_name))") {
			t.Fatalf("%s: preview %v %.200q", q, ok, attr(frame, "srcdoc"))
		}
	}
	if first(c.hxGet(base+"/emails/preview?design=html").doc, "iframe") != nil {
		t.Fatal("a preview of HTML not written yet")
	}

	// Edit: the form shows the email; its unchanged library design is chosen.
	r = c.get(base + "/emails/" + rows[0].Utr + "/edit")
	wantStatus(t, r, http.StatusOK)
	if value(r.doc, "#email-subject") != "Welcome ((first_name))" || first(r.doc, `#email-design option[value="library-2"][selected]`) == nil ||
		first(r.doc, `#email-design option[value="current"]`) == nil || first(r.doc, `a#open-editor[href="`+base+`/emails/`+rows[0].Utr+`/design"]`) == nil {
		t.Fatalf("edit form:\n%s", text(first(r.doc, "main")))
	}
	if r = c.get(base + "/emails/" + rows[1].Utr + "/edit"); first(r.doc, `#email-design option[value="current"][selected]`) == nil {
		t.Fatal("a written design is not kept by default")
	}
	r = c.hxPost(base+"/emails/"+rows[1].Utr, url.Values{"waiting_type": {"hours"}, "waiting_period": {"5"}, "sender_id": {itoa(s.sender)}, "subject": {"Rewritten"}, "design": {"current"}})
	wantStatus(t, r, http.StatusNoContent)
	if e := s.emails(a.Utr)[1]; e.Subject != "Rewritten" || e.WaitingType != "hours" || e.WaitingPeriod != 5 || *e.TemplateHTML != `<p>Hand written for ((first_name))</p>` {
		t.Fatalf("edited %+v", e)
	}
	// An optional preheader: kept on the email and copied onto its send;
	// a save from the design editor leaves it as it is.
	r = c.hxPost(base+"/emails/"+rows[1].Utr, url.Values{"waiting_type": {"hours"}, "waiting_period": {"5"}, "sender_id": {itoa(s.sender)}, "subject": {"Rewritten"},
		"preheader": {" Short news "}, "design": {"current"}})
	wantStatus(t, r, http.StatusNoContent)
	e := s.emails(a.Utr)[1]
	if e.Preheader != "Short news" || e.SendID == nil {
		t.Fatalf("preheader %q, send %v", e.Preheader, e.SendID)
	}
	var sendPreheader string
	if err := s.a.svc.DB.R.Raw("SELECT preheader FROM single_sends WHERE id = ?", *e.SendID).Scan(&sendPreheader).Error; err != nil || sendPreheader != "Short news" {
		t.Fatalf("the email's send has preheader %q (%v)", sendPreheader, err)
	}
	if got := value(c.get(base+"/emails/"+rows[1].Utr+"/edit").doc, "#email-preheader"); got != "Short news" {
		t.Fatalf("edit form preheader %q", got)
	}
	wantStatus(t, c.post(base+"/emails/"+rows[1].Utr+"/design", url.Values{"template_id": {"1"}, "template_html": {`<p>Hand written for ((first_name))</p>`}}), http.StatusSeeOther)
	if e := s.emails(a.Utr)[1]; e.Preheader != "Short news" {
		t.Fatalf("the design editor's save changed the preheader to %q", e.Preheader)
	}
	r = c.hxPost(base+"/emails/"+rows[1].Utr, url.Values{"waiting_type": {"hours"}, "waiting_period": {"5"}, "sender_id": {""}, "subject": {"x"}, "design": {"current"}})
	wantStatus(t, r, http.StatusUnprocessableEntity)
	if got := text(first(r.doc, "#email-sender-error")); got != "Choose a verified sender." {
		t.Fatalf("no sender: %q", got)
	}

	// Move: the timeline comes back in its new order, with the status panel.
	r = c.hxPost(base+"/emails/"+rows[2].Utr+"/move", url.Values{"direction": {"up"}})
	wantStatus(t, r, http.StatusOK)
	if got := subjects(s.emails(a.Utr)); !slices.Equal(got, []string{"Welcome ((first_name))", "Own", "Rewritten"}) {
		t.Fatalf("after moving up %q", got)
	}
	if ids := attrs(all(r.doc, "#automation-timeline li.timeline-item"), "id"); !slices.Equal(ids, []string{"email-" + rows[0].Utr, "email-" + rows[2].Utr, "email-" + rows[1].Utr}) {
		t.Fatalf("timeline answer %q", ids)
	}
	if first(r.doc, `#automation-status[hx-swap-oob]`) == nil || !strings.Contains(text(first(r.doc, "#flash")), "moved up") {
		t.Fatal("no status panel or flash out of band")
	}
	r = c.post(base+"/emails/"+rows[0].Utr+"/move", url.Values{"direction": {"down"}})
	wantRedirect(t, r, base)
	if got := subjects(s.emails(a.Utr)); !slices.Equal(got, []string{"Own", "Welcome ((first_name))", "Rewritten"}) {
		t.Fatalf("after moving down %q", got)
	}
	wantStatus(t, c.hxPost(base+"/emails/"+rows[0].Utr+"/move", url.Values{"direction": {"sideways"}}), http.StatusUnprocessableEntity)

	// Remove.
	r = c.hxPost(base+"/emails/"+rows[0].Utr+"/delete", nil)
	wantStatus(t, r, http.StatusOK)
	if got := subjects(s.emails(a.Utr)); !slices.Equal(got, []string{"Own", "Rewritten"}) {
		t.Fatalf("after removing %q", got)
	}
	if len(all(r.doc, "#automation-timeline li.timeline-item")) != 2 || first(r.doc, "#email-"+rows[0].Utr) != nil {
		t.Fatal("the removed email is still on the timeline")
	}
	wantStatus(t, c.hxPost(base+"/emails/"+rows[0].Utr+"/delete", nil), http.StatusNotFound)
}

func attrs(nodes []*html.Node, key string) []string {
	var out []string
	for _, n := range nodes {
		out = append(out, attr(n, key))
	}
	return out
}

func TestAutomationSettingsAndLive(t *testing.T) {
	t.Parallel()
	s := newAutoSetup(t)
	c := s.c
	a := s.create("custom", "Onboarding", "0", [3]string{"instantly", "0", "One"}, [3]string{"days", "2", "Two"})
	base := "/automations/" + a.Utr
	c.get(base)

	// Without a group, set live is refused with the service's reason,
	// in the status panel (htmx) or a flash message.
	r := c.hxPost(base+"/live", nil)
	wantStatus(t, r, http.StatusUnprocessableEntity)
	if got := text(first(r.doc, "#automation-status #live-problem")); got != service.MsgGroupRequired {
		t.Fatalf("refusal %q\n%.2000s", got, r.body)
	}
	r = c.post(base+"/live", nil)
	wantRedirect(t, r, base)
	if r = c.get(base); !strings.Contains(text(first(r.doc, "#flash")), service.MsgGroupRequired) {
		t.Fatalf("flash %q", text(first(r.doc, "#flash")))
	}
	if s.get(a.Utr).Status != models.AutomationDraft {
		t.Fatal("went live without a group")
	}

	// Settings: invalid, then the group and the rest.
	r = c.hxPost(base, url.Values{"automation_name": {"Onboarding"}, "automation_for": {"contacts_999999"}, "unsubscribe_group_id": {itoa(s.group)}, "exit_criteria": {"0"}})
	wantStatus(t, r, http.StatusUnprocessableEntity)
	if first(r.doc, "form#automation-settings") == nil || text(first(r.doc, "#automation-settings-target-error")) == "" {
		t.Fatalf("settings errors:\n%.2000s", r.body)
	}
	r = c.hxPost(base, url.Values{"automation_name": {"Onboarding 2"}, "automation_for": {"segments_" + itoa(s.segment)}, "unsubscribe_group_id": {itoa(s.group)}, "exit_criteria": {"2"}})
	wantStatus(t, r, http.StatusNoContent)
	if r.header.Get("HX-Redirect") != base {
		t.Fatalf("HX-Redirect %q", r.header.Get("HX-Redirect"))
	}
	got := s.get(a.Utr)
	if got.AutomationName != "Onboarding 2" || got.AutomationForTable != "segments_" || got.AutomationFor != s.segment || got.UnsubscribeGroupID != itoa(s.group) || got.ExitCriteria != 2 {
		t.Fatalf("settings saved %+v", got)
	}
	r = c.post(base, url.Values{"automation_name": {"Onboarding"}, "automation_for": {"contacts_" + itoa(s.ctype)}, "unsubscribe_group_id": {itoa(s.group)}, "exit_criteria": {"1"}})
	wantRedirect(t, r, base)

	// Set live: accepted now.
	r = c.hxPost(base+"/live", nil)
	wantStatus(t, r, http.StatusNoContent)
	if r.header.Get("HX-Redirect") != base || s.get(a.Utr).Status != models.AutomationLive {
		t.Fatal("not live")
	}
	r = c.get(base)
	st := first(r.doc, "#automation-status")
	if attr(st, "data-status") != "Live" || first(st, "#pause-automation") == nil || first(st, "#set-live") != nil || first(st, "#automation-missing") != nil ||
		!strings.Contains(text(st), "Contact type: Customers") {
		t.Fatalf("live panel:\n%s", text(st))
	}
	if first(r.doc, "#automation-settings-target") != nil || text(first(r.doc, "#automation-settings-target-locked")) != "Contact type: Customers" {
		t.Fatal("a live automation's target is offered for change")
	}
	if len(all(r.doc, ".email-stats")) != 2 {
		t.Fatal("no statistics per email once live")
	}
	// Live: the target cannot change; the name can.
	r = c.hxPost(base, url.Values{"automation_name": {"Renamed"}, "automation_for": {"segments_" + itoa(s.segment)}, "unsubscribe_group_id": {itoa(s.group)}, "exit_criteria": {"1"}})
	wantStatus(t, r, http.StatusUnprocessableEntity)
	if !strings.Contains(text(first(r.doc, "#automation-settings-target-error")), "Pause it first") {
		t.Fatalf("live target change:\n%.2000s", r.body)
	}
	r = c.hxPost(base, url.Values{"automation_name": {"Renamed"}, "automation_for": {"contacts_" + itoa(s.ctype)}, "unsubscribe_group_id": {itoa(s.group)}, "exit_criteria": {"1"}})
	wantStatus(t, r, http.StatusNoContent)
	if s.get(a.Utr).AutomationName != "Renamed" {
		t.Fatal("live rename")
	}

	// Pause (and a second pause is refused with the reason).
	r = c.hxPost(base+"/pause", nil)
	wantStatus(t, r, http.StatusNoContent)
	if s.get(a.Utr).Status != models.AutomationDraft {
		t.Fatal("not paused")
	}
	r = c.get(base)
	if attr(first(r.doc, "#automation-status"), "data-status") != "Paused" || first(r.doc, "#automation-paused-note") == nil || first(r.doc, "#set-live") == nil {
		t.Fatalf("paused panel:\n%s", text(first(r.doc, "#automation-status")))
	}
	r = c.hxPost(base+"/pause", nil)
	wantStatus(t, r, http.StatusUnprocessableEntity)
	if got := text(first(r.doc, "#live-problem")); got != "Only a live automation can be paused." {
		t.Fatalf("second pause %q", got)
	}
}

func TestAutomationDuplicateAndDelete(t *testing.T) {
	t.Parallel()
	s := newAutoSetup(t)
	c := s.c
	a := s.create("custom", "Original", itoa(s.group), [3]string{"instantly", "0", "One"}, [3]string{"days", "2", "Two"})
	if err := s.a.svc.Automations.SetLive(context.Background(), s.acct, a.Utr); err != nil {
		t.Fatal(err)
	}
	c.get("/automations")
	r := c.post("/automations/"+a.Utr+"/duplicate", nil)
	wantRedirect(t, r, "/automations/")
	cp := s.get(strings.TrimPrefix(r.location(), "/automations/"))
	if cp.Utr == a.Utr || cp.AutomationName != "Copy of Original" || cp.Status != models.AutomationDraft || len(s.emails(cp.Utr)) != 2 {
		t.Fatalf("copy %+v", cp)
	}
	if r = c.get(r.location()); !strings.Contains(text(first(r.doc, "#flash")), "Copy of Original") {
		t.Fatal("no flash on the copy")
	}
	r = c.hxPost("/automations/"+cp.Utr+"/duplicate", nil)
	wantStatus(t, r, http.StatusNoContent)
	if !strings.HasPrefix(r.header.Get("HX-Redirect"), "/automations/") {
		t.Fatal("htmx duplicate")
	}

	// Delete from the list (htmx): the list without it.
	r = c.hxPost("/automations/"+a.Utr+"/delete", url.Values{"q": {""}, "page": {"1"}})
	wantStatus(t, r, http.StatusOK)
	if first(r.doc, "#automation-"+itoa(a.ID)) != nil || len(all(r.doc, "#automations-list tbody tr")) != 2 || !strings.Contains(text(first(r.doc, "#flash")), "Original") {
		t.Fatalf("after delete:\n%.2000s", r.body)
	}
	if _, err := s.a.svc.Automations.Get(context.Background(), s.acct, a.Utr); !service.IsNotFound(err) {
		t.Fatal("not deleted")
	}
	// From the builder (a plain form): back to the list.
	r = c.post("/automations/"+cp.Utr+"/delete", nil)
	wantRedirect(t, r, "/automations")
	wantStatus(t, c.get("/automations/"+cp.Utr), http.StatusNotFound)
	wantStatus(t, c.post("/automations/"+cp.Utr+"/delete", nil), http.StatusNotFound)
}

// editorAnswer is the JSON the design editor's script reads.
type editorAnswer struct {
	ID      int64               `json:"id"`
	URL     string              `json:"url"`
	Message string              `json:"message"`
	Errors  map[string][]string `json:"errors"`
}

func (c *client) editorSave(path string, form url.Values) (*response, editorAnswer) {
	c.t.Helper()
	form.Set("_csrf", c.csrf)
	r := c.do("POST", path, form, false, "Accept", "application/json", "X-CSRF-Token", c.csrf)
	var ans editorAnswer
	if err := json.Unmarshal([]byte(r.body), &ans); err != nil {
		c.t.Fatalf("answer %d %q: %v", r.status, r.body, err)
	}
	return r, ans
}

func TestAutomationEmailDesign(t *testing.T) {
	t.Parallel()
	s := newAutoSetup(t)
	c := s.c
	a := s.create("custom", "Designs", "0", [3]string{"instantly", "0", "One"}, [3]string{"days", "2", "Two"})
	rows := s.emails(a.Utr)
	path := "/automations/" + a.Utr + "/emails/" + rows[1].Utr + "/design"
	if rows[1].DesignURL != "http://localhost:8080"+path {
		t.Fatalf("the API's design_url %q is not this page %q", rows[1].DesignURL, path)
	}

	r := c.get(path)
	wantStatus(t, r, http.StatusOK)
	if csp := r.header.Get("Content-Security-Policy"); !strings.Contains(csp, "style-src 'self' 'unsafe-inline'") || strings.Contains(csp, "script-src 'self' 'unsafe") {
		t.Fatalf("CSP %q", csp)
	}
	form := first(r.doc, "form#design-form[data-editor]")
	if form == nil || attr(form, "action") != path || value(form, "#design-name") != "Two" || value(form, `input[name="template_id"]`) != "2" ||
		!strings.Contains(value(form, "#design-html"), "<") {
		t.Fatalf("editor form:\n%.3000s", r.body)
	}
	for _, src := range []string{"/static/js/editor.js", "/static/vendor/grapesjs/grapes-0.23.6.min.js"} {
		if first(r.doc, `script[src="`+src+`"]`) == nil {
			t.Fatalf("no %s", src)
		}
	}
	var data struct {
		ID      int64  `json:"id"`
		HTML    string `json:"template_html"`
		SaveURL string `json:"save_url"`
	}
	if err := json.Unmarshal([]byte(first(r.doc, "script#editor-data").FirstChild.Data), &data); err != nil || data.ID != rows[1].ID || data.SaveURL != path || data.HTML != *rows[1].TemplateHTML {
		t.Fatalf("editor data %+v %v", data, err)
	}
	if first(r.doc, `a.nav-link.is-active[href="/automations"]`) == nil {
		t.Fatal("nav")
	}
	// The merge tags and saved blocks beside the canvas, as on a design's editor.
	if first(r.doc, `#editor-tools #merge-tag-pick option[value="((unsubscribe_preferences))"]`) == nil || first(r.doc, "#editor-tools #saved-blocks") == nil {
		t.Fatal("the email's editor has no merge tags or saved blocks")
	}

	// The editor's script saves the project JSON and the HTML.
	html := `<!doctype html><html><body><p>New look for ((first_name))</p></body></html>`
	resp, ans := c.editorSave(path, url.Values{"name": {"Two"}, "template_id": {"2"}, "template_json": {`{"pages":[],"html":"x"}`}, "template_html": {html}})
	wantStatus(t, resp, http.StatusOK)
	if ans.ID != rows[1].ID || ans.URL != path || !strings.Contains(ans.Message, "email 2") {
		t.Fatalf("answer %+v", ans)
	}
	e := s.emails(a.Utr)[1]
	if *e.TemplateHTML != html || e.TemplateJSON == nil || *e.TemplateJSON != `{"pages":[],"html":"x"}` || e.Subject != "Two" || e.WaitingPeriod != 2 || e.SenderID != s.sender {
		t.Fatalf("saved %+v", e)
	}
	// The builder now previews it in a sandboxed frame.
	if r = c.get("/automations/" + a.Utr); !strings.Contains(attr(first(r.doc, "#email-"+rows[1].Utr+" .email-thumb iframe"), "srcdoc"), "New look for Alex") {
		t.Fatal("the builder does not preview the saved design")
	}
	// A plain form (no JavaScript): the HTML; back to the editor.
	r = c.post(path, url.Values{"template_id": {"2"}, "template_html": {`<p>Plain</p>`}})
	wantRedirect(t, r, path)
	if e := s.emails(a.Utr)[1]; *e.TemplateHTML != `<p>Plain</p>` || e.TemplateJSON != nil {
		t.Fatalf("plain save %+v", e)
	}
	// Empty HTML of a custom design is refused beside the HTML.
	if _, err := s.a.svc.Automations.UpdateSchedule(context.Background(), s.acct, rows[1].Utr, service.ScheduleInput{Utr: a.Utr, SenderID: itoa(s.sender),
		Subject: "Two", WaitingType: "days", WaitingPeriod: "2", TemplateID: "1", PreviewImg: "01-blank.png", TemplateHTML: "<p>x</p>"}); err != nil {
		t.Fatal(err)
	}
	resp, ans = c.editorSave(path, url.Values{"template_id": {"1"}, "template_html": {" "}})
	wantStatus(t, resp, http.StatusUnprocessableEntity)
	if len(ans.Errors["template_html"]) == 0 {
		t.Fatalf("empty design: %+v", ans)
	}
	r = c.post(path, url.Values{"template_html": {""}})
	wantStatus(t, r, http.StatusUnprocessableEntity)
	if text(first(r.doc, "#design-html-error")) == "" {
		t.Fatalf("plain empty design:\n%.2000s", r.body)
	}
	// An email whose sender is gone: the reason, to fix in its form.
	if err := s.a.svc.Senders.Delete(context.Background(), s.acct, s.sender); err != nil {
		t.Fatal(err)
	}
	resp, ans = c.editorSave(path, url.Values{"template_html": {"<p>y</p>"}})
	wantStatus(t, resp, http.StatusUnprocessableEntity)
	if !strings.Contains(ans.Message, "settings need fixing first") {
		t.Fatalf("no sender: %+v", ans)
	}
	// Unknown email: JSON 404 to the script.
	resp, ans = c.editorSave("/automations/"+a.Utr+"/emails/nope/design", url.Values{"template_html": {"<p>y</p>"}})
	wantStatus(t, resp, http.StatusNotFound)
	if ans.Message == "" {
		t.Fatal("no message for an unknown email")
	}
}

// Account B can neither see, change, start, stop, copy nor delete account
// A's automations and emails: each is "not found" to B (404), and A's
// records stay as they were.
func TestAutomationsAreIsolated(t *testing.T) {
	t.Parallel()
	s := newAutoSetup(t)
	a := s.create("custom", "Secret drip", itoa(s.group), [3]string{"instantly", "0", "Secret subject"})
	email := s.emails(a.Utr)[0]
	b, acctB := s.a.account("Bob", "bob@example.com")
	typeB := s.a.audience(acctB).contactType("Bob's people")
	own, err := s.a.svc.Automations.Create(context.Background(), acctB, service.AutomationInput{Type: "custom", AutomationFor: "contacts_" + itoa(typeB), UnsubscribeGroupID: "0"})
	if err != nil {
		t.Fatal(err)
	}

	for _, path := range []string{"/automations", "/automations?q=secret", "/automations/" + own.Utr, "/automations/" + own.Utr + "/emails/new"} {
		r := b.get(path)
		wantStatus(t, r, http.StatusOK)
		for _, leak := range []string{"Secret", "Customers", "Org people", "Own letter", "news@shop.example.com", "Members only"} {
			if strings.Contains(r.body, leak) {
				t.Fatalf("%s shows A's %q", path, leak)
			}
		}
	}
	// B's own automation cannot take A's target, group, sender or design.
	r := b.hxPost("/automations/"+own.Utr, url.Values{"automation_for": {"contacts_" + itoa(s.ctype)}, "unsubscribe_group_id": {itoa(s.group)}, "exit_criteria": {"0"}})
	wantStatus(t, r, http.StatusUnprocessableEntity)
	if first(r.doc, "#automation-settings-target-error") == nil || first(r.doc, "#automation-settings-group-error") == nil {
		t.Fatalf("B took A's target or group:\n%.2000s", r.body)
	}
	r = b.hxPost("/automations/"+own.Utr+"/emails", url.Values{"waiting_type": {"instantly"}, "sender_id": {itoa(s.sender)}, "subject": {"x"}, "design": {"design-" + itoa(s.design)}})
	wantStatus(t, r, http.StatusUnprocessableEntity)
	if first(r.doc, "#email-design-error") == nil {
		t.Fatal("B used A's design")
	}
	if first(b.hxGet("/automations/"+own.Utr+"/emails/preview?design=design-"+itoa(s.design)).doc, "iframe") != nil {
		t.Fatal("B previews A's design")
	}

	base := "/automations/" + a.Utr
	eb := base + "/emails/" + email.Utr
	settings := url.Values{"automation_name": {"Taken"}, "automation_for": {"contacts_" + itoa(typeB)}, "unsubscribe_group_id": {"0"}, "exit_criteria": {"0"}}
	emailForm := url.Values{"waiting_type": {"instantly"}, "sender_id": {itoa(s.sender)}, "subject": {"Taken"}, "design": {"library-2"}}
	tests := []struct {
		method, path string
		form         url.Values
	}{
		{"GET", base, nil},
		{"GET", "/automations/" + itoa(a.ID), nil},
		{"POST", base, settings},
		{"POST", base + "/live", nil},
		{"POST", base + "/pause", nil},
		{"POST", base + "/duplicate", nil},
		{"POST", base + "/delete", nil},
		{"GET", base + "/emails/new", nil},
		{"POST", base + "/emails", emailForm},
		{"GET", base + "/emails/preview?design=library-2", nil},
		{"GET", "/automations/" + own.Utr + "/emails/preview?design=current&email=" + email.Utr, nil},
		{"GET", eb + "/edit", nil},
		{"POST", eb, emailForm},
		{"POST", eb + "/move", url.Values{"direction": {"down"}}},
		{"POST", eb + "/delete", nil},
		{"GET", eb + "/design", nil},
		{"POST", eb + "/design", url.Values{"template_html": {"<p>taken</p>"}}},
		{"GET", "/automations/" + own.Utr + "/emails/" + email.Utr + "/edit", nil},
		{"POST", "/automations/" + own.Utr + "/emails/" + email.Utr + "/delete", nil},
	}
	for _, tc := range tests {
		for _, hx := range []bool{false, true} {
			var r *response
			switch {
			case tc.method == "GET" && hx:
				r = b.hxGet(tc.path)
			case tc.method == "GET":
				r = b.get(tc.path)
			case hx:
				r = b.hxPost(tc.path, tc.form)
			default:
				form := url.Values{}
				for k, v := range tc.form {
					form[k] = v
				}
				r = b.post(tc.path, form)
			}
			if r.status != http.StatusNotFound {
				t.Errorf("%s %s (htmx %v): %d, want 404", tc.method, tc.path, hx, r.status)
			}
			if strings.Contains(r.body, "Secret") {
				t.Errorf("%s %s shows A's automation", tc.method, tc.path)
			}
		}
	}
	resp, _ := b.editorSave(eb+"/design", url.Values{"template_html": {"<p>taken</p>"}})
	wantStatus(t, resp, http.StatusNotFound)

	got := s.get(a.Utr)
	rows := s.emails(a.Utr)
	if got.AutomationName != "Secret drip" || got.Status != models.AutomationDraft || len(rows) != 1 || rows[0].Subject != "Secret subject" ||
		*rows[0].TemplateHTML != *email.TemplateHTML {
		t.Fatalf("A's automation changed: %+v %+v", got, rows)
	}
	if n, _ := s.a.svc.Automations.Count(context.Background(), s.acct); n != 1 {
		t.Fatalf("A has %d automations", n)
	}
}

// A live automation shows where its enrolled contacts stand, and per
// email how many wait for it; one nobody joined says so.
func TestAutomationShowsEnrolledContacts(t *testing.T) {
	t.Parallel()
	s := newAutoSetup(t)
	c := s.c
	ctx := context.Background()
	a := s.create("custom", "Onboarding", itoa(s.group), [3]string{"instantly", "0", "One"}, [3]string{"days", "2", "Two"})
	if err := s.a.svc.Automations.SetLive(ctx, s.acct, a.Utr); err != nil {
		t.Fatal(err)
	}
	r := c.get("/automations/" + a.Utr)
	wantStatus(t, r, http.StatusOK)
	if !strings.Contains(text(first(r.doc, "#enrolment-none")), "Nobody has joined yet") {
		t.Fatalf("a live automation nobody joined:\n%.2000s", text(first(r.doc, ".automation-enrolment")))
	}
	due := time.Now().Add(48 * time.Hour).UnixMilli()
	now := models.Now()
	for i, st := range []struct{ step, state int }{{0, models.EnrolActive}, {1, models.EnrolActive}, {1, models.EnrolActive}, {2, models.EnrolDone}, {1, models.EnrolExited}} {
		if err := s.a.svc.DB.W.Exec("INSERT INTO automation_contacts (automation_id, user_id, email, step, due_at, state, enrolled_at, updated_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?)",
			a.ID, s.acct, fmt.Sprintf("c%d@example.com", i), st.step, due+int64(i), st.state, now, now).Error; err != nil {
			t.Fatal(err)
		}
	}
	r = c.get("/automations/" + a.Utr)
	got := map[string]string{}
	for _, d := range all(r.doc, "#automation-enrolment .send-stat") {
		got[attr(d, "id")] = text(first(d, ".send-stat-value"))
	}
	want := map[string]string{"enrolled": "5", "enrolled-active": "3", "enrolled-finished": "1", "enrolled-exited": "1"}
	for k, v := range want {
		if got[k] != v {
			t.Fatalf("%s = %q, want %q (all: %v)", k, got[k], v, got)
		}
	}
	if w := attrs(all(r.doc, ".email-waiting"), "data-waiting"); !slices.Equal(w, []string{"1", "2"}) {
		t.Fatalf("waiting per email %v", w)
	}
}
