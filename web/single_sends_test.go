package web_test

import (
	"context"
	"errors"
	"net/http"
	"net/url"
	"strings"
	"testing"
	"time"

	"golang.org/x/net/html"

	"herald/eventually"
	"herald/models"
	"herald/service"
	"herald/views/account"
	"herald/web"
)

// sendSetup is an account with what a single send needs: a verified
// sender (and an unverified one), a group, a contact type of three
// contacts, a segment of the two at example.org and a design; mail goes
// to the outbox.
type sendSetup struct {
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

const designHTML = `<html><body><p>Hello ((first_name))!</p>` +
	`<a href="https://shop.example.com/sale">Sale</a> <a href="https://shop.example.com/new">New</a>` +
	`<p>((sender_name)), ((sender_address))</p><a href="((unsubscribe_preferences))">Preferences</a></body></html>`

func newSendSetup(t *testing.T) *sendSetup {
	t.Helper()
	ctx := context.Background()
	s := newSendSetupWith(t, web.Options{})
	a, acct := s.a, s.acct
	snd, err := a.svc.Senders.Create(ctx, acct, service.SenderInput{FromName: "Shop", FromEmail: "waiting@shop.example.com",
		ReplyToEmail: "help@shop.example.com", CountryID: "250", CompanyAddress: "1 rue de Rivoli", Nickname: "waiting"})
	if err != nil {
		t.Fatal(err)
	}
	s.unverified = snd.ID
	seg, err := a.svc.Segments.Create(ctx, acct, service.SegmentInput{ContactTypeID: itoa(s.ctype), SegmentName: "Org people",
		SelectField: []string{"email"}, SelectOperator: []string{"ends_with"}, Value: []string{"example.org"}})
	if err != nil {
		t.Fatal(err)
	}
	s.segment = seg.ID
	d, err := a.svc.Designs.Create(ctx, acct, service.DesignInput{Name: "Sale letter", TemplateID: "1", TemplateHTML: designHTML})
	if err != nil {
		t.Fatal(err)
	}
	s.design = d.ID
	return s
}

// form is a complete send form: library design 2, to the contact type, now.
func (s *sendSetup) form(name string) url.Values {
	return url.Values{
		"single_send_name": {name}, "template": {"library-2"}, "sender_id": {itoa(s.sender)},
		"unsubscribe_group_id": {itoa(s.group)}, "subject": {"Hello ((first_name))"}, "preheader": {"Our news"},
		"recipient_id": {"contacts_" + itoa(s.ctype)}, "schedule_type": {"0"},
	}
}

// create saves a send through the service (no engine runs in these tests,
// so it stays where it is).
func (s *sendSetup) create(name string, mutate ...func(*service.SingleSendInput)) *models.SingleSend {
	s.t.Helper()
	in := service.SingleSendInput{TemplateID: "2", SenderID: itoa(s.sender), UnsubscribeGroupID: itoa(s.group), SingleSendName: name,
		Subject: "Hello", Preheader: "News", RecipientID: []string{"contacts_" + itoa(s.ctype)}, ScheduleType: "0"}
	for _, m := range mutate {
		m(&in)
	}
	ss, err := s.a.svc.SingleSends.Create(context.Background(), s.acct, in)
	if err != nil {
		s.t.Fatal(err)
	}
	return ss
}

// get reads a send back.
func (s *sendSetup) get(utr string) *models.SingleSend {
	s.t.Helper()
	ss, err := s.a.svc.SingleSends.Get(context.Background(), s.acct, utr)
	if err != nil {
		s.t.Fatal(err)
	}
	return ss
}

// exec changes the database behind the service's back, to put a send in
// a state no engine runs here to reach.
func (s *sendSetup) exec(sql string, args ...any) {
	s.t.Helper()
	if err := s.a.svc.DB.W.Exec(sql, args...).Error; err != nil {
		s.t.Fatal(err)
	}
}

// outbox lists the recipients of the outbox's messages and their subjects.
func (s *sendSetup) outbox() map[string][]string {
	s.t.Helper()
	out := map[string][]string{}
	err := s.a.svc.Outbox.Each(context.Background(), s.acct, service.ListFilter{}, func(m *models.OutboxMessage) error {
		out[m.RcptTo] = append(out[m.RcptTo], m.Subject)
		return nil
	})
	if err != nil {
		s.t.Fatal(err)
	}
	return out
}

func TestSingleSendsList(t *testing.T) {
	t.Parallel()
	s := newSendSetup(t)
	c := s.c
	r := c.get("/single-sends")
	wantStatus(t, r, http.StatusOK)
	if first(r.doc, `a.nav-link.is-active[href="/single-sends"]`) == nil || first(r.doc, "#sends-list .empty") == nil || first(r.doc, "#sends-list .empty a[href=\"/single-sends/new\"]") == nil {
		t.Fatalf("empty list:\n%.3000s", r.body)
	}

	done := s.create("October news")
	s.exec("UPDATE single_sends SET status = 3, triggered = 120, delivered = 118, unique_opens = 40, unique_clicks = 7, bounces = 2, sent_at = ? WHERE id = ?",
		models.NewTimestamp(time.Now().Add(-time.Hour)), done.ID)
	tomorrow := time.Now().Add(48 * time.Hour).Format("2006-01-02")
	later := s.create("Winter sale", func(in *service.SingleSendInput) {
		in.ScheduleType, in.ScheduleDate, in.ScheduleTime = "1", tomorrow, "09:30"
	})
	copyOf, err := s.a.svc.SingleSends.Duplicate(context.Background(), s.acct, done.Utr)
	if err != nil {
		t.Fatal(err)
	}

	r = c.get("/single-sends")
	rows := all(r.doc, "#sends-list tbody tr")
	if len(rows) != 3 {
		t.Fatalf("%d rows", len(rows))
	}
	row := first(r.doc, "#send-"+itoa(done.ID))
	if text(first(row, ".cell-main a")) != "October news" || attr(first(row, ".cell-main a"), "href") != "/single-sends/"+done.Utr {
		t.Fatalf("row:\n%s", text(row))
	}
	cells := map[string]string{}
	for _, td := range all(row, "td[data-label]") {
		cells[attr(td, "data-label")] = text(td)
	}
	if cells["Status"] != "Completed" || cells["Recipients"] != "120" || cells["Delivered"] != "118" || cells["Opens"] != "40" || cells["Clicks"] != "7" || cells["Sent"] == "–" {
		t.Fatalf("cells %q", cells)
	}
	if first(row, "a[data-edit]") != nil {
		t.Fatal("a completed send offers Edit")
	}
	if got := text(first(r.doc, "#send-"+itoa(later.ID)+" td[data-label=Status]")); got != "Scheduled" {
		t.Fatalf("scheduled status %q", got)
	}
	if got := text(first(r.doc, "#send-"+itoa(later.ID)+" td[data-label=Sent]")); !strings.HasPrefix(got, "Goes ") {
		t.Fatalf("scheduled sent cell %q", got)
	}
	if got := text(first(r.doc, "#send-"+itoa(copyOf.ID)+" td[data-label=Status]")); got != "Draft" {
		t.Fatalf("copy status %q", got)
	}
	if first(r.doc, "#send-"+itoa(copyOf.ID)+" a[data-edit]") == nil || first(r.doc, "#send-"+itoa(copyOf.ID)+" button[data-duplicate]") == nil {
		t.Fatal("a draft lacks Edit or Duplicate")
	}
	// The duplicate button does not ask the bulk delete's question.
	if got := attr(first(row, "button[data-duplicate]"), "hx-confirm"); got != "unset" {
		t.Fatalf("duplicate hx-confirm %q", got)
	}

	// Search, as htmx sends it: the table only.
	r = c.hxGet("/single-sends?q=winter")
	if first(r.doc, "nav.nav") != nil || len(all(r.doc, "#sends-list tbody tr")) != 1 {
		t.Fatalf("search:\n%.2000s", r.body)
	}

	// Pages of 50.
	for i := range 50 {
		s.create("Bulk " + itoa(int64(i)))
	}
	r = c.get("/single-sends")
	if got := len(all(r.doc, "#sends-list tbody tr")); got != 50 || first(r.doc, `#sends-list a[rel="next"]`) == nil {
		t.Fatalf("%d rows, next %v", got, first(r.doc, `#sends-list a[rel="next"]`) != nil)
	}
	if first(r.doc, `#sends-list-form a[rel="next"]`) != nil {
		t.Fatal("the pager is inside the form: its links would ask the bulk delete's question")
	}
	r = c.hxGet("/single-sends?page=2")
	if got := len(all(r.doc, "#sends-list tbody tr")); got != 3 {
		t.Fatalf("%d rows on page 2", got)
	}
}

func TestSingleSendForm(t *testing.T) {
	t.Parallel()
	s := newSendSetup(t)
	c := s.c
	if err := s.a.svc.Accounts.SetTimeZone(context.Background(), s.acct, "Asia/Tokyo"); err != nil {
		t.Fatal(err)
	}

	r := c.get("/single-sends/new")
	wantStatus(t, r, http.StatusOK)
	if csp := r.header.Get("Content-Security-Policy"); !strings.Contains(csp, "style-src 'self' 'unsafe-inline'") || !strings.Contains(csp, "script-src 'self';") {
		t.Fatalf("CSP %q", csp)
	}
	if first(r.doc, `#send-template option[value="library-2"]`) == nil || first(r.doc, `#send-template option[value="library-1"]`) != nil ||
		first(r.doc, `#send-template option[value="design-`+itoa(s.design)+`"]`) == nil || first(r.doc, `#send-template option[value="current"]`) != nil {
		t.Fatalf("design choices:\n%s", text(first(r.doc, "#send-template")))
	}
	if attr(first(r.doc, "#send-template"), "hx-get") != "/single-sends/preview" || first(r.doc, "#send-preview .preview-empty") == nil {
		t.Fatal("the design select does not load a preview")
	}
	// Verified senders only; the lone sender and group are chosen.
	if first(r.doc, `#send-sender option[value="`+itoa(s.sender)+`"][selected]`) == nil || first(r.doc, `#send-sender option[value="`+itoa(s.unverified)+`"]`) != nil {
		t.Fatalf("senders:\n%s", text(first(r.doc, "#send-sender")))
	}
	if first(r.doc, `#send-group option[value="`+itoa(s.group)+`"][selected]`) == nil {
		t.Fatal("the group is not offered")
	}
	for _, v := range []string{"contacts_" + itoa(s.ctype), "segments_" + itoa(s.segment)} {
		if first(r.doc, `#send-audience input[type="checkbox"][name="recipient_id"][value="`+v+`"]`) == nil ||
			first(r.doc, `#send-audience input[type="checkbox"][name="exclude_specific_recipient_id"][value="`+v+`"]`) == nil {
			t.Fatalf("no checkboxes for %s", v)
		}
	}
	count := first(r.doc, "#send-count")
	if attr(count, "hx-post") != "/single-sends/count" || attr(count, "hx-trigger") != "change from:#send-audience" || text(first(count, "#send-count-value")) != "0" {
		t.Fatalf("count:\n%s", text(count))
	}
	if first(r.doc, `#send-subject-placeholder[data-insert-into="#send-subject"] option[value="((first_name))"]`) == nil ||
		first(r.doc, `#send-preheader-placeholder option[value="((sender_name))"]`) == nil {
		t.Fatal("no placeholder picker")
	}
	if first(r.doc, `#send-now[checked]`) == nil || !strings.Contains(text(first(r.doc, "#send-zone")), "Asia/Tokyo") {
		t.Fatal("schedule: now not chosen, or no time zone shown")
	}
	if value(r.doc, "#send-test-email") != "ada@example.com" || attr(first(r.doc, "#send-test"), "hx-post") != "/single-sends/test" {
		t.Fatal("no test box")
	}
	// Enter does not save: the form's default button is disabled.
	if b := first(r.doc, "#send-form button[type=submit]"); b == nil || !hasAttr(b, "disabled") {
		t.Fatal("the first submit button of the form is not a disabled one")
	}

	// The preview of a library design and of the account's design, with
	// sample values, in a sandboxed frame.
	for _, choice := range []string{"library-2", "design-" + itoa(s.design)} {
		r = c.hxGet("/single-sends/preview?template=" + choice)
		wantStatus(t, r, http.StatusOK)
		frame := first(r.doc, "#send-preview iframe#send-preview-frame")
		if sb, ok := attrOK(frame, "sandbox"); !ok || sb != "" {
			t.Fatalf("%s: sandbox %q %v", choice, sb, ok)
		}
		if doc := attr(frame, "srcdoc"); len(doc) < 50 || strings.Contains(doc, "((first_name))") {
			t.Fatalf("%s: srcdoc %.300q", choice, doc)
		}
	}
	// The preview shows the account's first contact, and the chosen
	// sender's name and address rather than a sample brand.
	r = c.hxGet("/single-sends/preview?template=design-" + itoa(s.design))
	if doc := attr(first(r.doc, "iframe"), "srcdoc"); !strings.Contains(doc, "Hello Ann!") || !strings.Contains(doc, "Northwind Studio") {
		t.Fatalf("design preview %.300q", doc)
	}
	if got := text(first(r.doc, "#send-preview-for")); !strings.Contains(got, "As ann@example.com would get it; choose a sender") {
		t.Fatalf("preview note %q", got)
	}
	r = c.hxGet("/single-sends/preview?template=design-" + itoa(s.design) + "&sender_id=" + itoa(s.sender))
	if doc := attr(first(r.doc, "iframe"), "srcdoc"); !strings.Contains(doc, "Hello Ann!") || !strings.Contains(doc, "Shop, 1 rue de Rivoli") || strings.Contains(doc, "Northwind") {
		t.Fatalf("preview with the sender %.300q", doc)
	}
	if got := text(first(r.doc, "#send-preview-for")); got != "As ann@example.com would get it from the chosen sender." {
		t.Fatalf("preview note %q", got)
	}
	if attr(first(c.get("/single-sends/new").doc, "#send-template"), "hx-include") != "#send-sender" {
		t.Fatal("the preview does not follow the sender's choice")
	}
	if first(c.hxGet("/single-sends/preview?template=").doc, "iframe") != nil {
		t.Fatal("a preview of nothing")
	}

	// The live count: the type's 3 contacts; less the segment's 2; less a
	// contact who left the group.
	countOf := func(form url.Values) string {
		t.Helper()
		r := c.hxPost("/single-sends/count", form)
		wantStatus(t, r, http.StatusOK)
		return text(first(r.doc, "#send-count-value"))
	}
	to := url.Values{"recipient_id": {"contacts_" + itoa(s.ctype)}}
	if got := countOf(to); got != "3" {
		t.Fatalf("count %s", got)
	}
	to.Set("exclude_specific_recipient_id", "segments_"+itoa(s.segment))
	if got := countOf(to); got != "1" {
		t.Fatalf("count with exclusion %s", got)
	}
	if _, err := s.a.svc.Groups.AddRecipients(context.Background(), s.acct, service.RecipientsInput{GroupID: itoa(s.group), EmailAddress: "bob@example.org"}); err != nil {
		t.Fatal(err)
	}
	if got := countOf(url.Values{"recipient_id": {"contacts_" + itoa(s.ctype)}, "unsubscribe_group_id": {itoa(s.group)}}); got != "2" {
		t.Fatalf("count without the group's leaver %s", got)
	}
	if r := c.hxPost("/single-sends/count", url.Values{}); text(first(r.doc, "#send-count-value")) != "0" || !strings.Contains(text(first(r.doc, ".count-hint")), "Choose") {
		t.Fatalf("empty count:\n%s", r.body)
	}

	// Validation: each message beside its field, values kept (htmx: the form).
	r = c.hxPost("/single-sends", url.Values{"subject": {"Kept subject"}, "schedule_type": {"1"}, "recipient_id": {"segments_" + itoa(s.segment)}})
	wantStatus(t, r, http.StatusUnprocessableEntity)
	if first(r.doc, "nav.nav") != nil || first(r.doc, "form#send-form") == nil {
		t.Fatal("the htmx answer is not the form alone")
	}
	for id, want := range map[string]string{
		"send-name-error": "Give this send a name.", "send-template-error": "Choose a design.", "send-group-error": "Choose an unsubscribe group.",
		"send-sender-error": "Choose a verified sender.", "send-date-error": "Choose the date.", "send-time-error": "Choose the time.",
	} {
		if got := text(first(r.doc, "#"+id)); !strings.Contains(got, want) {
			t.Errorf("%s = %q, want %q", id, got, want)
		}
	}
	// The preheader is optional in the console (the API requires one).
	if first(r.doc, "#send-preheader-error") != nil || first(r.doc, "#send-preheader[required]") != nil {
		t.Error("the console asks for a preheader")
	}
	if value(r.doc, "#send-subject") != "Kept subject" || first(r.doc, `#send-later[checked]`) == nil ||
		first(r.doc, `input[name="recipient_id"][value="segments_`+itoa(s.segment)+`"][checked]`) == nil {
		t.Fatal("the form lost its values")
	}
	if got := text(first(r.doc, "#send-count-value")); got != "2" {
		t.Fatalf("the answered form counts %s", got)
	}
	// An unverified sender, no audience, a date in the past.
	form := s.form("Bad")
	form.Set("sender_id", itoa(s.unverified))
	form.Del("recipient_id")
	form.Set("schedule_type", "1")
	form.Set("schedule_date", "2001-01-01")
	form.Set("schedule_time", "10:00")
	r = c.post("/single-sends", form)
	wantStatus(t, r, http.StatusUnprocessableEntity)
	if first(r.doc, "nav.nav") == nil {
		t.Fatal("a plain post's errors are not a whole page")
	}
	for id, want := range map[string]string{
		"send-sender-error": "not verified", "send-to-error": "Choose at least one contact type or segment.", "send-date-error": "future",
	} {
		if got := text(first(r.doc, "#"+id)); !strings.Contains(got, want) {
			t.Errorf("%s = %q, want %q", id, got, want)
		}
	}

	// Create: now, from a library design; the send's page follows it.
	r = c.post("/single-sends", s.form("October news"))
	wantRedirect(t, r, "/single-sends/")
	utr := strings.TrimPrefix(r.location(), "/single-sends/")
	ss := s.get(utr)
	if ss.SingleSendName != "October news" || ss.TemplateID != 2 || ss.SenderID != s.sender || ss.UnsubscribeGroupID != s.group ||
		len(ss.RecipientID) != 1 || ss.RecipientID[0].ID != itoa(s.ctype) || ss.ScheduleType != 0 || ss.Armed != 1 {
		t.Fatalf("stored %+v", ss)
	}
	r = c.get(r.location())
	wantStatus(t, r, http.StatusOK)
	if !strings.Contains(text(first(r.doc, "#flash .flash-success")), "starts within seconds") {
		t.Fatalf("flash %q", text(first(r.doc, "#flash")))
	}
	panel := first(r.doc, "#send-status")
	if attr(panel, "data-status") != "Starting" || attr(panel, "hx-trigger") != "every 2s" || attr(panel, "hx-get") != "/single-sends/"+utr+"/progress" {
		t.Fatalf("a starting send's panel does not poll:\n%s", r.body)
	}
	if frame := first(r.doc, "iframe#send-design-frame"); frame == nil || attr(frame, "sandbox") != "" || strings.Contains(attr(frame, "srcdoc"), "((") {
		t.Fatal("no sandboxed design on the send's page")
	}
	if got := texts(r.doc, "#send-details dd .name-list li"); len(got) != 1 || got[0] != "Contact type: Customers" {
		t.Fatalf("targets %q", got)
	}

	// Create from the account's design, scheduled in the account's zone,
	// through htmx (HX-Redirect).
	form = s.form("Winter sale")
	form.Set("template", "design-"+itoa(s.design))
	form.Set("recipient_id", "segments_"+itoa(s.segment))
	form.Set("exclude_specific_recipient_id", "contacts_"+itoa(s.ctype))
	form.Set("schedule_type", "1")
	day := time.Now().Add(72 * time.Hour).Format("2006-01-02")
	form.Set("schedule_date", day)
	form.Set("schedule_time", "10:30")
	r = c.hxPost("/single-sends", form)
	wantStatus(t, r, http.StatusNoContent)
	page := r.header.Get("HX-Redirect")
	utr2 := strings.TrimPrefix(page, "/single-sends/")
	ss = s.get(utr2)
	tokyo, _ := time.LoadLocation("Asia/Tokyo")
	want, _ := time.ParseInLocation("2006-01-02 15:04", day+" 10:30", tokyo)
	if ss.TemplateID != 1 || ss.TemplateHTML == nil || *ss.TemplateHTML != designHTML || ss.Status != models.SendReady || ss.SendAfter == nil || !ss.SendAfter.Equal(want) {
		t.Fatalf("stored %+v (send after %v, want %v)", ss, ss.SendAfter, want)
	}
	r = c.get(page)
	if !strings.Contains(text(first(r.doc, "#flash")), "scheduled for") {
		t.Fatalf("flash %q", text(first(r.doc, "#flash")))
	}
	if panel := first(r.doc, "#send-status"); attr(panel, "hx-trigger") != "every 15s" || attr(panel, "hx-get") != "/single-sends/"+utr2+"/progress?from=scheduled" ||
		!strings.Contains(text(first(panel, "#send-schedule")), "10:30") {
		t.Fatalf("scheduled panel:\n%s", text(panel))
	}
	if first(r.doc, "a#edit-send") == nil {
		t.Fatal("a scheduled send cannot be edited")
	}

	// Edit: the form comes back as saved.
	r = c.get("/single-sends/" + utr2 + "/edit")
	wantStatus(t, r, http.StatusOK)
	if value(r.doc, "#send-name") != "Winter sale" || first(r.doc, `#send-template option[value="design-`+itoa(s.design)+`"][selected]`) == nil ||
		first(r.doc, `#send-template option[value="current"]`) == nil || first(r.doc, `#send-later[checked]`) == nil ||
		value(r.doc, "#send-date") != day || value(r.doc, "#send-time") != "10:30" ||
		first(r.doc, `input[name="recipient_id"][value="segments_`+itoa(s.segment)+`"][checked]`) == nil ||
		first(r.doc, `input[name="exclude_specific_recipient_id"][value="contacts_`+itoa(s.ctype)+`"][checked]`) == nil ||
		attr(first(r.doc, "#send-form"), "action") != "/single-sends/"+utr2 || value(r.doc, `input[name="utr"]`) != utr2 {
		t.Fatalf("edit form:\n%.4000s", r.body)
	}
	if !strings.Contains(attr(first(r.doc, "#send-template"), "hx-get"), "utr="+utr2) {
		t.Fatal("the edit form's preview does not name the send")
	}
	if doc := attr(first(c.hxGet("/single-sends/preview?template=current&utr="+utr2).doc, "iframe"), "srcdoc"); !strings.Contains(doc, "Hello Ann!") {
		t.Fatalf("current preview %.200q", doc)
	}
	// Save it with the design it has (current), now, with a new subject.
	form.Set("template", "current")
	form.Set("subject", "Changed subject")
	form.Set("schedule_type", "0")
	r = c.post("/single-sends/"+utr2, form)
	wantRedirect(t, r, "/single-sends/"+utr2)
	ss = s.get(utr2)
	if ss.Subject != "Changed subject" || ss.Status != models.SendInitiate || ss.TemplateHTML == nil || *ss.TemplateHTML != designHTML {
		t.Fatalf("updated %+v", ss)
	}
	// An edit with errors answers the form of that send.
	form.Set("subject", "")
	r = c.hxPost("/single-sends/"+utr2, form)
	wantStatus(t, r, http.StatusUnprocessableEntity)
	if first(r.doc, "#send-subject-error") == nil || attr(first(r.doc, "#send-form"), "action") != "/single-sends/"+utr2 {
		t.Fatalf("edit errors:\n%.2000s", r.body)
	}
}

func TestSingleSendStartedIsNotEditable(t *testing.T) {
	t.Parallel()
	s := newSendSetup(t)
	c := s.c
	for _, status := range []models.SendStatus{models.SendRunning, models.SendCompleted} {
		ss := s.create("Started")
		s.exec("UPDATE single_sends SET status = ? WHERE id = ?", status, ss.ID)

		r := c.get("/single-sends/" + ss.Utr + "/edit")
		wantRedirect(t, r, "/single-sends/"+ss.Utr)
		r = c.get(r.location())
		if first(r.doc, "a#edit-send") != nil || !strings.Contains(text(first(r.doc, "#flash")), "can no longer be changed") {
			t.Fatalf("status %d: page offers Edit or lacks the message", status)
		}
		form := s.form("Taken over")
		r = c.post("/single-sends/"+ss.Utr, form)
		wantRedirect(t, r, "/single-sends/"+ss.Utr)
		r = c.hxPost("/single-sends/"+ss.Utr, form)
		if r.status != http.StatusNoContent || r.header.Get("HX-Redirect") != "/single-sends/"+ss.Utr {
			t.Fatalf("htmx: %d %q", r.status, r.header.Get("HX-Redirect"))
		}
		if got := s.get(ss.Utr); got.SingleSendName != "Started" || got.Status != status {
			t.Fatalf("status %d: changed to %+v", status, got)
		}
	}
}

func TestSingleSendDuplicateAndDelete(t *testing.T) {
	t.Parallel()
	s := newSendSetup(t)
	c := s.c
	one, two, three := s.create("One"), s.create("Two"), s.create("Three")
	c.get("/single-sends")

	// Duplicate: the copy's form opens; the copy is a draft.
	r := c.post("/single-sends/"+one.Utr+"/duplicate", nil)
	wantRedirect(t, r, "/single-sends/")
	if !strings.HasSuffix(r.location(), "/edit") {
		t.Fatalf("duplicate goes to %s", r.location())
	}
	copyUtr := strings.TrimSuffix(strings.TrimPrefix(r.location(), "/single-sends/"), "/edit")
	cp := s.get(copyUtr)
	if cp.SingleSendName != "Copy of One" || cp.Status != models.SendInitiate || cp.Armed != 0 {
		t.Fatalf("copy %+v", cp)
	}
	r = c.get(r.location())
	if value(r.doc, "#send-name") != "Copy of One" || !strings.Contains(text(first(r.doc, "#flash")), "sends nothing until you save it") {
		t.Fatalf("copy's form:\n%.2000s", r.body)
	}
	if first(r.doc, `#send-template option[value="library-2"][selected]`) == nil {
		t.Fatal("the copy's design is not chosen")
	}
	r = c.get("/single-sends/" + copyUtr)
	if attr(first(r.doc, "#send-status"), "data-status") != "Draft" || first(r.doc, "#send-draft") == nil || attr(first(r.doc, "#send-status"), "hx-trigger") != "" {
		t.Fatal("the copy's page does not say it is a draft")
	}
	r = c.hxPost("/single-sends/"+two.Utr+"/duplicate", nil)
	if r.status != http.StatusNoContent || !strings.HasSuffix(r.header.Get("HX-Redirect"), "/edit") {
		t.Fatalf("htmx duplicate: %d %q", r.status, r.header.Get("HX-Redirect"))
	}

	// Delete through htmx: the list without it, and a message.
	c.get("/single-sends")
	r = c.hxPost("/single-sends/"+one.Utr+"/delete", url.Values{"q": {""}, "page": {"1"}})
	wantStatus(t, r, http.StatusOK)
	if first(r.doc, "#send-"+itoa(one.ID)) != nil || first(r.doc, "#send-"+itoa(two.ID)) == nil || !strings.Contains(text(first(r.doc, "#flash")), "“One” deleted") {
		t.Fatalf("after delete:\n%.2000s", r.body)
	}
	if _, err := s.a.svc.SingleSends.Get(context.Background(), s.acct, one.Utr); !service.IsNotFound(err) {
		t.Fatalf("still there: %v", err)
	}
	// From its page (a plain form): back to the list.
	r = c.post("/single-sends/"+copyUtr+"/delete", nil)
	wantRedirect(t, r, "/single-sends")
	wantStatus(t, c.get("/single-sends/"+copyUtr), http.StatusNotFound)

	// Bulk delete: none chosen is refused; two chosen go.
	r = c.hxPost("/single-sends/bulk-delete", url.Values{})
	wantStatus(t, r, http.StatusUnprocessableEntity)
	if !strings.Contains(text(r.doc), "Select at least one") {
		t.Fatalf("empty bulk delete:\n%s", r.body)
	}
	r = c.hxPost("/single-sends/bulk-delete", url.Values{"ids": {two.Utr, three.Utr}})
	wantStatus(t, r, http.StatusOK)
	if first(r.doc, "#send-"+itoa(two.ID)) != nil || first(r.doc, "#send-"+itoa(three.ID)) != nil || !strings.Contains(text(first(r.doc, "#flash")), "Deleted 2 single sends") {
		t.Fatalf("after bulk delete:\n%.2000s", r.body)
	}

	// Without the CSRF token, nothing is deleted.
	four := s.create("Four")
	r = c.do("POST", "/single-sends/"+four.Utr+"/delete", url.Values{}, false)
	wantStatus(t, r, http.StatusForbidden)
	s.get(four.Utr)
}

func TestSingleSendTestMail(t *testing.T) {
	t.Parallel()
	s := newSendSetup(t)
	c := s.c
	c.get("/single-sends/new")

	form := s.form("")
	form.Set("test_email", "tester@example.net")
	form.Del("recipient_id") // a test needs no audience or name
	r := c.hxPost("/single-sends/test", form)
	wantStatus(t, r, http.StatusOK)
	if got := text(first(r.doc, "#send-test-result .alert-success")); got != "Test sent to tester@example.net." {
		t.Fatalf("result %q\n%s", got, r.body)
	}
	if got := s.outbox()["tester@example.net"]; len(got) != 1 || got[0] != "[Test] Hello Alex" {
		t.Fatalf("outbox %q", got)
	}

	// A bad address, a missing subject: said in the box, nothing sent.
	form.Set("test_email", "not an address")
	form.Set("subject", "")
	r = c.hxPost("/single-sends/test", form)
	wantStatus(t, r, http.StatusUnprocessableEntity)
	if got := text(first(r.doc, "#send-test-result .alert-error")); !strings.Contains(got, "valid email address") {
		t.Fatalf("bad address: %q", got)
	}
	form.Set("test_email", "tester@example.net")
	r = c.hxPost("/single-sends/test", form)
	wantStatus(t, r, http.StatusUnprocessableEntity)
	if got := text(first(r.doc, "#send-test-result .alert-error")); !strings.Contains(got, "subject field is required") {
		t.Fatalf("no subject: %q", got)
	}
	if got := s.outbox()["tester@example.net"]; len(got) != 1 {
		t.Fatalf("%d tests in the outbox", len(got))
	}

	// Without JavaScript the button posts the whole form: the page comes
	// back with the result and the values.
	form.Set("subject", "Plain ((first_name))")
	r = c.post("/single-sends/test", form)
	wantStatus(t, r, http.StatusOK)
	if first(r.doc, "#send-test-result .alert-success") == nil || value(r.doc, "#send-subject") != "Plain ((first_name))" {
		t.Fatalf("plain test:\n%.3000s", r.body)
	}
	if got := s.outbox()["tester@example.net"]; len(got) != 2 || got[0] != "[Test] Plain Alex" { // newest first
		t.Fatalf("outbox %q", got)
	}
}

func TestSingleSendProgressAndStatistics(t *testing.T) {
	t.Parallel()
	s := newSendSetup(t)
	c := s.c

	// Running: a bar of delivered over total, the rate, the time left;
	// the panel polls every 2 s.
	run := s.create("Running")
	s.exec("UPDATE single_sends SET status = 2, resolved = 1, triggered = 10, delivered = 3, bounces = 1, sent_at = ? WHERE id = ?",
		models.NewTimestamp(time.Now().Add(-30*time.Second)), run.ID)
	r := c.get("/single-sends/" + run.Utr)
	wantStatus(t, r, http.StatusOK)
	panel := first(r.doc, "#send-status")
	if attr(panel, "data-status") != "Sending" || attr(panel, "hx-trigger") != "every 2s" || attr(panel, "hx-swap") != "outerHTML" {
		t.Fatalf("running panel:\n%s", r.body)
	}
	bar := first(panel, "progress#send-bar")
	if attr(bar, "max") != "10" || attr(bar, "value") != "4" || text(first(panel, "#send-percent")) != "40%" {
		t.Fatalf("bar max %q value %q", attr(bar, "max"), attr(bar, "value"))
	}
	if got := text(first(panel, "#send-delivered")); got != "3 of 10" {
		t.Fatalf("delivered %q", got)
	}
	if first(panel, "#send-rate") == nil || first(panel, "#send-left") == nil {
		t.Fatal("no rate or time left")
	}
	r = c.hxGet("/single-sends/" + run.Utr + "/progress")
	if first(r.doc, "nav.nav") != nil || attr(first(r.doc, "#send-status"), "hx-trigger") != "every 2s" {
		t.Fatalf("progress partial:\n%s", r.body)
	}
	wantRedirect(t, c.get("/single-sends/"+run.Utr+"/progress"), "/single-sends/"+run.Utr)
	// A send deleted while its page polls: the page goes to the list.
	gone := s.create("Gone")
	s.exec("DELETE FROM single_sends WHERE id = ?", gone.ID)
	r = c.hxGet("/single-sends/" + gone.Utr + "/progress")
	if r.status != http.StatusNotFound || r.header.Get("HX-Redirect") != "/single-sends" {
		t.Fatalf("deleted send's progress: %d %q", r.status, r.header.Get("HX-Redirect"))
	}
	if first(c.get("/single-sends/"+run.Utr).doc, "a#edit-send") != nil {
		t.Fatal("a running send offers Edit")
	}
	// A scheduled send's page asks every 15 s; when the send has started,
	// the answer makes the whole page reload.
	sched := s.create("Scheduled")
	s.exec("UPDATE single_sends SET status = 1, armed = 1, send_after = ? WHERE id = ?", models.NewTimestamp(time.Now().Add(time.Hour)), sched.ID)
	r = c.hxGet("/single-sends/" + sched.Utr + "/progress?from=scheduled")
	if r.header.Get("HX-Refresh") != "" || attr(first(r.doc, "#send-status"), "hx-trigger") != "every 15s" {
		t.Fatalf("scheduled: HX-Refresh %q\n%s", r.header.Get("HX-Refresh"), r.body)
	}
	s.exec("UPDATE single_sends SET status = 2 WHERE id = ?", sched.ID)
	r = c.hxGet("/single-sends/" + sched.Utr + "/progress?from=scheduled")
	if r.header.Get("HX-Refresh") != "true" || attr(first(r.doc, "#send-status"), "hx-trigger") != "every 2s" {
		t.Fatalf("started: HX-Refresh %q\n%s", r.header.Get("HX-Refresh"), r.body)
	}
	if r = c.hxGet("/single-sends/" + run.Utr + "/progress"); r.header.Get("HX-Refresh") != "" {
		t.Fatal("a running send's own polling reloads the page")
	}

	// The real engine sends one to the end.
	ctx, cancel := context.WithCancel(context.Background())
	sg, err := s.a.svc.NewSending(ctx, service.SendingConfig{Conns: 2, Tick: 20 * time.Millisecond, Backoff: 30 * time.Millisecond, Window: time.Hour})
	if err != nil {
		t.Fatal(err)
	}
	s.exec("DELETE FROM single_sends WHERE id IN (?, ?)", run.ID, sched.ID) // not the engine's to finish
	done := make(chan struct{})
	go func() { defer close(done); sg.Run(ctx) }()
	t.Cleanup(func() { cancel(); <-done })

	form := s.form("Sale")
	form.Set("template", "design-"+itoa(s.design))
	c.get("/single-sends/new")
	r = c.post("/single-sends", form)
	wantRedirect(t, r, "/single-sends/")
	utr := strings.TrimPrefix(r.location(), "/single-sends/")
	eventually.NoError(t, 30*time.Second, func() error {
		r = c.hxGet("/single-sends/" + utr + "/progress")
		wantStatus(t, r, http.StatusOK)
		panel = first(r.doc, "#send-status")
		if attr(panel, "data-status") == "Completed" {
			return nil
		}
		if attr(panel, "hx-trigger") != "every 2s" {
			t.Fatalf("a %s send does not poll", attr(panel, "data-status"))
		}
		return errors.New("the send did not complete in 30 s")
	})
	if attr(panel, "hx-trigger") != "" || attr(panel, "hx-get") != "" {
		t.Fatal("a completed send still polls")
	}
	if got := text(first(panel, "#stat-delivered .send-stat-value")); got != "3" {
		t.Fatalf("delivered %q", got)
	}
	// One message per contact in the outbox (the transport without
	// HERALD_SMTP_URL), filed under the sending account.
	var kept []models.OutboxMessage
	if err := s.a.svc.DB.R.Select("rcpt_to", "subject", "user_id").Where("rcpt_to IN ?", []string{"ann@example.com", "bob@example.org", "cy@example.org"}).Find(&kept).Error; err != nil {
		t.Fatal(err)
	}
	per := map[string]int{}
	for _, m := range kept {
		if !strings.HasPrefix(m.Subject, "Hello ") || m.UserID != s.acct {
			t.Fatalf("subject %q, account %d (want %d)", m.Subject, m.UserID, s.acct)
		}
		per[m.RcptTo]++
	}
	if len(per) != 3 || per["ann@example.com"] != 1 || per["bob@example.org"] != 1 || per["cy@example.org"] != 1 {
		t.Fatalf("outbox per contact %v", per)
	}

	// Opens and clicks, through the real tracking.
	ss := s.get(utr)
	var msgs []models.SendMessage
	if err := s.a.svc.DB.R.Where("send_id = ?", ss.ID).Order("id").Find(&msgs).Error; err != nil {
		t.Fatal(err)
	}
	for i, m := range msgs {
		tok, err := s.a.svc.Tracking.Token(context.Background(), m.ID)
		if err != nil {
			t.Fatal(err)
		}
		if err := s.a.svc.Tracking.Open(context.Background(), tok); err != nil {
			t.Fatal(err)
		}
		if i == 0 {
			// A second open within the minute does not count (decisions.md 8).
			_ = s.a.svc.Tracking.Open(context.Background(), tok)
			if _, err := s.a.svc.Tracking.Click(context.Background(), tok, 0); err != nil {
				t.Fatal(err)
			}
		}
	}
	r = c.get("/single-sends/" + utr)
	wantStatus(t, r, http.StatusOK)
	stats := map[string]string{}
	for _, d := range all(r.doc, "#send-statistics .send-stat") {
		stats[attr(d, "id")] = text(first(d, ".send-stat-value")) + " " + text(first(d, ".send-stat-rate"))
	}
	want := map[string]string{
		"stat-recipients": "3 ", "stat-delivered": "3 100.0%", "stat-bounces": "0 0.0%", "stat-unique-opens": "3 100.0%",
		"stat-total-opens": "3 ", "stat-unique-clicks": "1 33.3%", "stat-total-clicks": "1 ", "stat-unsubscribes": "0 0.0%",
	}
	for k, v := range want {
		if stats[k] != v {
			t.Errorf("%s = %q, want %q", k, stats[k], v)
		}
	}
	svg := first(r.doc, "#send-chart svg.chart-svg")
	if svg == nil || attr(svg, "role") != "img" || !strings.Contains(attr(svg, "aria-label"), "3 opens and 1 click") {
		t.Fatalf("chart:\n%s", r.body)
	}
	// Activity within a minute is one period: drawn as bars, not as two
	// dots joined across the width.
	if first(svg, "polyline") != nil || first(svg, "g.chart-bar.chart-opens rect.chart-bar-raw") == nil || first(svg, "g.chart-bar.chart-clicks title") == nil {
		t.Fatal("the chart of one period has no bars")
	}
	// People's opens and clicks inside the bars: these came with nothing
	// known of the request, so none counts as a person's.
	if first(svg, "g.chart-bar.chart-opens rect.chart-bar-human") == nil || !strings.Contains(attr(svg, "aria-label"), "by people (machines left out): 0 opens and 0 clicks") ||
		first(r.doc, "#send-chart .legend-human") == nil {
		t.Fatalf("no human part in the chart: %q", attr(svg, "aria-label"))
	}
	links := map[string]string{}
	for _, tr := range all(r.doc, "#send-links tbody tr") {
		links[text(first(tr, "td.link-url"))] = text(first(tr, "td.cell-num"))
	}
	if links["https://shop.example.com/sale"] != "1" || links["https://shop.example.com/new"] != "0" {
		t.Fatalf("links %q", links)
	}
	if first(r.doc, "#main script") != nil {
		t.Fatal("a script in the page")
	}
}

func TestBouncedAddresses(t *testing.T) {
	t.Parallel()
	a := newTestApp(t, web.Options{})
	c, acct := a.account("Ada", "ada@example.com")
	r := c.get("/suppressions/bounced")
	wantStatus(t, r, http.StatusOK)
	if first(r.doc, `a.nav-link.is-active[href="/suppressions/bounced"]`) == nil || first(r.doc, "#bounced-list .empty") == nil {
		t.Fatalf("empty page:\n%.2000s", r.body)
	}
	at := models.NewTimestamp(time.Date(2025, 3, 4, 10, 0, 0, 0, time.UTC))
	rows := []models.Suppression{
		{UserID: acct, Email: "gone@example.com", Reason: "550 5.1.1 <gone@example.com>: user unknown", CreatedAt: at},
		{UserID: acct, Email: "nodomain@example.invalid", Reason: "no such domain", CreatedAt: at},
	}
	for i := range rows {
		if err := a.svc.DB.W.Create(&rows[i]).Error; err != nil {
			t.Fatal(err)
		}
	}
	r = c.get("/suppressions/bounced")
	tr := first(r.doc, "#bounced-"+itoa(rows[0].ID))
	if text(first(tr, "td.cell-main")) != "gone@example.com" || !strings.Contains(text(first(tr, "td[data-label=Reason]")), "user unknown") ||
		text(first(tr, "td[data-label=Bounced] time")) != "Mar 4, 2025" {
		t.Fatalf("row:\n%s", text(tr))
	}
	form := first(r.doc, "form#bounced-form")
	lift := first(tr, "button[data-lift]")
	if attr(form, "hx-post") != "/suppressions/bounced/lift" || attr(form, "method") != "post" || first(form, `input[name="_csrf"]`) == nil ||
		attr(lift, "hx-post") != "/suppressions/bounced/"+itoa(rows[0].ID)+"/lift" || attr(lift, "formaction") != attr(lift, "hx-post") ||
		attr(first(tr, `input[name="ids"]`), "value") != itoa(rows[0].ID) || first(form, "button[data-bulk-lift]") == nil {
		t.Fatalf("no lift form or buttons:\n%s", r.body)
	}
	r = c.hxGet("/suppressions/bounced?q=nodomain")
	if got := texts(r.doc, "#bounced-list tbody td.cell-main"); len(got) != 1 || got[0] != "nodomain@example.invalid" {
		t.Fatalf("search %q", got)
	}

	r = c.hxPost("/suppressions/bounced/"+itoa(rows[0].ID)+"/lift", url.Values{"q": {""}, "page": {"1"}})
	wantStatus(t, r, http.StatusOK)
	if got := texts(r.doc, "#bounced-list tbody td.cell-main"); len(got) != 1 || got[0] != "nodomain@example.invalid" || !strings.Contains(text(first(r.doc, "#flash")), "lifted") {
		t.Fatalf("after lift %q", got)
	}
	if n, _ := a.svc.Suppressions.Count(context.Background(), acct); n != 1 {
		t.Fatalf("%d suppressed", n)
	}
	wantStatus(t, c.hxPost("/suppressions/bounced/"+itoa(rows[0].ID)+"/lift", nil), http.StatusNotFound)
	r = c.post("/suppressions/bounced/"+itoa(rows[1].ID)+"/lift", nil)
	wantRedirect(t, r, "/suppressions/bounced")
	if first(c.get("/suppressions/bounced").doc, "#bounced-list .empty") == nil {
		t.Fatal("not empty after lifting both")
	}

	// Bulk lift: all or none, another account's id makes it none.
	more := []models.Suppression{
		{UserID: acct, Email: "a@example.net", Reason: "550", CreatedAt: at},
		{UserID: acct, Email: "b@example.net", Reason: "550", CreatedAt: at},
		{UserID: acct, Email: "c@example.net", Reason: "550", CreatedAt: at},
	}
	for i := range more {
		if err := a.svc.DB.W.Create(&more[i]).Error; err != nil {
			t.Fatal(err)
		}
	}
	wantStatus(t, c.hxPost("/suppressions/bounced/lift", url.Values{}), http.StatusUnprocessableEntity)
	wantRedirect(t, c.post("/suppressions/bounced/lift", url.Values{}), "/suppressions/bounced")
	wantStatus(t, c.hxPost("/suppressions/bounced/lift", url.Values{"ids": {itoa(more[0].ID), "999999"}}), http.StatusNotFound)
	if n, _ := a.svc.Suppressions.Count(context.Background(), acct); n != 3 {
		t.Fatalf("%d suppressed after a refused bulk lift, want 3", n)
	}
	r = c.hxPost("/suppressions/bounced/lift", url.Values{"ids": {itoa(more[0].ID), itoa(more[2].ID)}, "q": {""}, "page": {"1"}})
	wantStatus(t, r, http.StatusOK)
	if got := texts(r.doc, "#bounced-list tbody td.cell-main"); len(got) != 1 || got[0] != "b@example.net" || !strings.Contains(text(first(r.doc, "#flash")), "2 addresses lifted") {
		t.Fatalf("after bulk lift %q, flash %q", got, text(first(r.doc, "#flash")))
	}
	wantRedirect(t, c.post("/suppressions/bounced/lift", url.Values{"ids": {itoa(more[1].ID)}}), "/suppressions/bounced")
	if n, _ := a.svc.Suppressions.Count(context.Background(), acct); n != 0 {
		t.Fatalf("%d suppressed after lifting all", n)
	}
}

func TestAccountTimeZone(t *testing.T) {
	t.Parallel()
	a := newTestApp(t, web.Options{})
	c, acct := a.account("Ada", "ada@example.com")
	r := c.get("/account")
	wantStatus(t, r, http.StatusOK)
	if first(r.doc, `#time-zone-select optgroup[label="Europe"] option[value="Europe/Paris"]`) == nil ||
		first(r.doc, `#time-zone-select option[value="UTC"][selected]`) == nil {
		t.Fatal("no time zone select")
	}
	r = c.hxPost("/account/time-zone", url.Values{"time_zone": {"Europe/Paris"}})
	wantStatus(t, r, http.StatusOK)
	if first(r.doc, `#time-zone-select option[value="Europe/Paris"][selected]`) == nil || first(r.doc, "#time-zone-saved") == nil || first(r.doc, "#flash") == nil {
		t.Fatalf("saved form:\n%.2000s", r.body)
	}
	if u, _ := a.svc.Accounts.Get(context.Background(), acct); u.TimeZone != "Europe/Paris" {
		t.Fatalf("stored %q", u.TimeZone)
	}
	r = c.hxPost("/account/time-zone", url.Values{"time_zone": {"Mars/Olympus"}})
	wantStatus(t, r, http.StatusUnprocessableEntity)
	if got := text(first(r.doc, "#time-zone-select-error")); !strings.Contains(got, "valid zone") {
		t.Fatalf("error %q", got)
	}
	r = c.post("/account/time-zone", url.Values{"time_zone": {"America/New_York"}})
	wantRedirect(t, r, "/account")
	r = c.get("/account")
	if first(r.doc, `#time-zone-select option[value="America/New_York"][selected]`) == nil || !strings.Contains(text(first(r.doc, "#flash")), "America/New_York") {
		t.Fatal("the plain save is not shown")
	}
	r = c.get("/single-sends/new")
	if !strings.Contains(text(first(r.doc, "#send-zone")), "America/New_York") {
		t.Fatal("the send form does not show the zone")
	}

	// Every zone offered is one the service takes.
	for _, z := range account.ZoneNames() {
		if _, err := time.LoadLocation(z); err != nil {
			t.Errorf("zone %s: %v", z, err)
		}
	}
}

func hasAttr(n *html.Node, key string) bool {
	_, ok := attrOK(n, key)
	return ok
}
