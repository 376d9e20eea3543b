package web_test

import (
	"context"
	"net/http"
	"net/url"
	"strings"
	"testing"

	"herald/models"
	"herald/service"
)

// bareHTML fails the checklist: no unsubscribe link, no postal address.
const bareHTML = `<html><body><p>Hello ((first_name)), our autumn sale starts on Monday.</p></body></html>`

// severities reads the checklist panel's items as rule=severity.
func severities(t *testing.T, r *response) map[string]string {
	t.Helper()
	out := map[string]string{}
	for _, li := range all(r.doc, "#checklist-items li.checklist-item") {
		out[attr(li, "data-rule")] = attr(li, "data-severity")
	}
	if len(out) == 0 {
		t.Fatalf("no checklist items:\n%s", r.body)
	}
	return out
}

func TestChecklistPanelAndSetting(t *testing.T) {
	t.Parallel()
	s := newSendSetup(t)
	c, ctx := s.c, context.Background()
	bare, err := s.a.svc.Designs.Create(ctx, s.acct, service.DesignInput{Name: "Bare", TemplateID: "1", TemplateHTML: bareHTML})
	if err != nil {
		t.Fatal(err)
	}

	// The compose page holds the panel, checked again on every change.
	r := c.get("/single-sends/new")
	wantStatus(t, r, http.StatusOK)
	panel := first(r.doc, "#send-checklist")
	if attr(panel, "hx-post") != "/single-sends/checklist" || attr(panel, "hx-trigger") != "change from:#send-form" {
		t.Fatalf("panel: %v", attr(panel, "hx-trigger"))
	}
	if !strings.Contains(text(first(r.doc, "#checklist-summary")), "Warnings only") {
		t.Fatalf("summary %q", text(first(r.doc, "#checklist-summary")))
	}

	// A design that passes, then one that fails: the answer of the re-check.
	f := s.form("Autumn")
	f.Set("template", "design-"+itoa(s.design))
	r = c.hxPost("/single-sends/checklist", f)
	wantStatus(t, r, http.StatusOK)
	got := severities(t, r)
	if got["unsubscribe"] != "ok" || got["postal_address"] != "ok" || got["from_domain"] != "warning" || got["bounce_rate"] != "ok" {
		t.Fatalf("good design: %v", got)
	}
	f.Set("template", "design-"+itoa(bare.ID))
	r = c.hxPost("/single-sends/checklist", f)
	if got := severities(t, r); got["unsubscribe"] != "failure" || got["postal_address"] != "failure" || got["text"] != "ok" {
		t.Fatalf("bare design: %v", got)
	}
	if !strings.Contains(text(first(r.doc, "#checklist-summary")), "2 checks fail.") {
		t.Fatalf("summary %q", text(first(r.doc, "#checklist-summary")))
	}

	// Warnings only: the failing send is saved.
	r = c.hxPost("/single-sends", f)
	if r.status != http.StatusNoContent || r.header.Get("HX-Redirect") == "" {
		t.Fatalf("save while warning: %d\n%s", r.status, r.body)
	}

	// The account page turns blocking on.
	r = c.get("/account")
	if first(r.doc, `#checklist input#checklist-warn[checked]`) == nil || first(r.doc, `#checklist input#checklist-block[checked]`) != nil {
		t.Fatal("the account page does not show warnings only")
	}
	r = c.hxPost("/account/checklist", url.Values{"checklist_blocks": {"1"}})
	wantStatus(t, r, http.StatusOK)
	if first(r.doc, `#checklist input#checklist-block[checked]`) == nil || first(r.doc, "#checklist-saved") == nil {
		t.Fatalf("saved setting:\n%s", r.body)
	}
	if on, _ := s.a.svc.Checklist.Blocks(ctx, s.acct); !on {
		t.Fatal("not stored")
	}

	// Blocking: the save is refused (422), the form explains why.
	f.Set("single_send_name", "Refused")
	r = c.hxPost("/single-sends", f)
	wantStatus(t, r, http.StatusUnprocessableEntity)
	if first(r.doc, "#checklist-refused") == nil {
		t.Fatalf("no refusal in the panel:\n%s", r.body)
	}
	alert := text(first(r.doc, "#send-form .alert-error"))
	if !strings.Contains(alert, "Not saved: this send fails the pre-send checklist") || !strings.Contains(alert, "add ((unsubscribe_preferences)) to it") {
		t.Fatalf("alert %q", alert)
	}
	if value(r.doc, "#send-name") != "Refused" {
		t.Fatal("the form lost what was typed")
	}
	n := 0
	_ = s.a.svc.SingleSends.Each(ctx, s.acct, service.ListFilter{}, func(*models.SingleSend) error { n++; return nil })
	if n != 1 {
		t.Fatalf("%d sends, want the one saved while warning", n)
	}

	// Off again from a plain form post.
	wantRedirect(t, c.post("/account/checklist", url.Values{"checklist_blocks": {"0"}}), "/account")
	if on, _ := s.a.svc.Checklist.Blocks(ctx, s.acct); on {
		t.Fatal("still blocking")
	}
}

func TestChecklistOnAutomationPage(t *testing.T) {
	t.Parallel()
	s := newSendSetup(t)
	c, ctx := s.c, context.Background()
	a, err := s.a.svc.Automations.Create(ctx, s.acct, service.AutomationInput{Type: "custom", AutomationFor: "contacts_" + itoa(s.ctype),
		AutomationName: "Onboarding", UnsubscribeGroupID: itoa(s.group)})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := s.a.svc.Automations.AddSchedule(ctx, s.acct, service.ScheduleInput{Utr: a.Utr, SenderID: itoa(s.sender), Subject: "Welcome",
		WaitingPeriod: "1", WaitingType: "instantly", TemplateID: "1", PreviewImg: "01-blank.png", TemplateHTML: bareHTML}); err != nil {
		t.Fatal(err)
	}
	r := c.get("/automations/" + a.Utr)
	wantStatus(t, r, http.StatusOK)
	if got := severities(t, r); got["unsubscribe"] != "failure" {
		t.Fatalf("automation checklist: %v", got)
	}
	if !strings.HasPrefix(text(first(r.doc, `#checklist-items li[data-rule="unsubscribe"]`)), "Failed: Email 1: The design has no unsubscribe link") {
		t.Fatalf("item %q", text(first(r.doc, `#checklist-items li[data-rule="unsubscribe"]`)))
	}
	if err := s.a.svc.Checklist.SetBlocks(ctx, s.acct, true); err != nil {
		t.Fatal(err)
	}
	r = c.hxPost("/automations/"+a.Utr+"/live", url.Values{})
	wantStatus(t, r, http.StatusUnprocessableEntity)
	if !strings.Contains(text(first(r.doc, "#live-problem")), "fails the pre-send checklist") || first(r.doc, "#automation-status #checklist-refused") == nil {
		t.Fatalf("refusal:\n%s", r.body)
	}
	// Without htmx the refusal is a flash: its head line, then one
	// failure a line.
	r = c.post("/automations/"+a.Utr+"/live", url.Values{})
	wantStatus(t, r, http.StatusSeeOther)
	r = c.get("/automations/" + a.Utr)
	flash := first(r.doc, "[data-flash]")
	if flash == nil || !strings.Contains(text(first(flash, "p")), "Not set live: the pre-send checklist fails") {
		t.Fatalf("flash:\n%s", r.body)
	}
	items := all(flash, "li")
	if len(items) < 2 || !strings.HasPrefix(text(items[0]), "Email 1: The design has no unsubscribe link") {
		t.Fatalf("flash items %d: %q", len(items), text(flash))
	}
	if cur, _ := s.a.svc.Automations.Get(ctx, s.acct, a.Utr); cur.Status != 0 {
		t.Fatal("went live")
	}
}
