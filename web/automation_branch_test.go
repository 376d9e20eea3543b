package web_test

import (
	"context"
	"net/http"
	"net/url"
	"strings"
	"testing"
	"time"

	"herald/models"
)

// TestAutomationBranchFlow: an editor adds a branch after the main
// line's emails and an email to each of its paths; the page shows the
// main line, the branch node and the two paths.
func TestAutomationBranchFlow(t *testing.T) {
	t.Parallel()
	s := newAutoSetup(t)
	c := s.c
	a := s.create("custom", "Branching", itoa(s.group), [3]string{"instantly", "0", "Hello"})
	base := "/automations/" + a.Utr

	r := c.get(base)
	if first(r.doc, "#add-branch-form") == nil || first(r.doc, "#automation-branch") != nil || first(r.doc, "#add-email") == nil {
		t.Fatal("an automation without a branch offers no branch form")
	}
	// A wait of none is refused, with the reason on the page.
	r = c.post(base+"/branch", url.Values{"waiting_period": {"0"}, "waiting_type": {"days"}})
	wantRedirect(t, r, base)
	r = c.get(r.location())
	if f := text(first(r.doc, "#flash")); !strings.Contains(f, "waiting period") {
		t.Fatalf("flash %q", f)
	}
	r = c.post(base+"/branch", url.Values{"waiting_period": {"2"}, "waiting_type": {"days"}})
	wantRedirect(t, r, base)
	rows := s.emails(a.Utr)
	if len(rows) != 2 || rows[1].Kind != models.StepBranch || rows[1].WaitingPeriod != 2 || rows[1].WaitingType != "days" {
		t.Fatalf("steps after adding a branch: %+v", rows)
	}
	r = c.get(base)
	if first(r.doc, "#add-branch-form") != nil || first(r.doc, "#add-email") != nil {
		t.Fatal("the main line still takes an email or a branch after the branch")
	}
	if got := text(first(r.doc, "#automation-branch .wait-label")); got != "Waits up to 2 days" {
		t.Fatalf("branch wait %q", got)
	}
	if first(r.doc, "#remove-branch") == nil {
		t.Fatal("an empty branch cannot be removed")
	}
	for _, p := range []string{"a", "b"} {
		if attr(first(r.doc, "#add-email-"+p), "href") != base+"/emails/new?path="+p {
			t.Fatalf("path %s: add link %q", p, attr(first(r.doc, "#add-email-"+p), "href"))
		}
	}

	// An email on each path, through the form of the path.
	for _, p := range []string{"a", "b"} {
		r = c.get(base + "/emails/new?path=" + p)
		if value(r.doc, `#email-form input[name="path"]`) != p {
			t.Fatalf("path %s: the form does not carry its path", p)
		}
		r = c.post(base+"/emails", url.Values{"waiting_type": {"instantly"}, "sender_id": {itoa(s.sender)}, "subject": {"Path " + p}, "design": {"library-2"}, "path": {p}})
		wantRedirect(t, r, base)
	}
	r = c.get(base)
	if got := text(first(r.doc, "#path-a-steps .email-subject")); got != "Path a" {
		t.Fatalf("path a shows %q", got)
	}
	if got := text(first(r.doc, "#path-b-steps .email-subject")); got != "Path b" {
		t.Fatalf("path b shows %q", got)
	}
	if n := len(all(r.doc, "#automation-steps .timeline-item")); n != 1 {
		t.Fatalf("the main line shows %d emails, want 1", n)
	}
	if got := text(first(r.doc, "#path-a-steps .timeline-wait span")); got != "after the branch" {
		t.Fatalf("a path's first wait counts from %q", got)
	}
	if first(r.doc, "#remove-branch") != nil {
		t.Fatal("a branch with emails offers its removal")
	}
	// Who waits at the branch: 51 contacts, two pages of 50 and 1.
	if err := s.a.svc.Automations.SetLive(context.Background(), s.acct, a.Utr); err != nil {
		t.Fatal(err)
	}
	db := s.a.svc.DB.W
	for i := 0; i < 51; i++ {
		if err := db.Exec(`INSERT INTO automation_contacts (automation_id, user_id, email, first_name, last_name, step, due_at, state, enrolled_at, updated_at, path)
			VALUES (?, ?, ?, 'W', 'Aiting', 1, ?, 0, ?, ?, '')`, a.ID, s.acct, "w"+itoa(int64(i))+"@example.com", time.Now().Add(time.Hour).UnixMilli(), time.Now(), time.Now()).Error; err != nil {
			t.Fatal(err)
		}
	}
	r = c.get(base)
	who := first(r.doc, "#branch-who")
	if who == nil || attr(who, "href") != base+"/emails/"+rows[1].Utr+"/contacts" {
		t.Fatal("the branch does not link to who waits there")
	}
	r = c.get(attr(who, "href"))
	wantStatus(t, r, http.StatusOK)
	if n := len(all(r.doc, "#step-contacts tbody tr")); n != 50 {
		t.Fatalf("page 1 lists %d contacts, want 50", n)
	}
	next := first(r.doc, `#step-contacts a[rel="next"]`)
	if next == nil {
		t.Fatal("no next page")
	}
	r = c.hxGet(attr(next, "href"))
	if n := len(all(r.doc, "#step-contacts tbody tr")); n != 1 || first(r.doc, `a[rel="next"]`) != nil {
		t.Fatalf("page 2 lists %d contacts", n)
	}
	// Another account's step is not found.
	other, _ := s.a.account("Eve", "eve@example.com")
	if r := other.get(attr(who, "href")); r.status != http.StatusNotFound {
		t.Fatalf("another account reads the list: %d", r.status)
	}

	// The branch has no email to edit.
	if r := c.get(base + "/emails/" + rows[1].Utr + "/edit"); r.status != http.StatusNotFound {
		t.Fatalf("edit of the branch: %d", r.status)
	}
}

// TestAutomationAPITriggerSettings: the settings form chooses how
// contacts start an automation; one started from the API shows the call
// that starts it, and refuses a segment.
func TestAutomationAPITriggerSettings(t *testing.T) {
	t.Parallel()
	s := newAutoSetup(t)
	c := s.c
	r := c.get("/automations")
	if first(r.doc, "#automation-create-trigger-api") == nil || first(r.doc, "#automation-create-trigger-target[checked]") == nil {
		t.Fatal("the create form does not offer the start choice, target first")
	}
	r = c.hxPost("/automations", url.Values{"type": {"custom"}, "automation_name": {"Upgrade"}, "automation_for": {"segments_" + itoa(s.segment)},
		"unsubscribe_group_id": {"0"}, "trigger": {"api"}})
	wantStatus(t, r, http.StatusUnprocessableEntity)
	if got := text(first(r.doc, "#automation-create-target-error")); !strings.Contains(got, "targets a contact type, not a segment") {
		t.Fatalf("segment with the API start: %q", got)
	}
	r = c.post("/automations", url.Values{"type": {"custom"}, "automation_name": {"Upgrade"}, "automation_for": {"contacts_" + itoa(s.ctype)},
		"unsubscribe_group_id": {"0"}, "trigger": {"api"}})
	wantRedirect(t, r, "/automations/")
	a := s.get(strings.TrimPrefix(r.location(), "/automations/"))
	if a.TriggerKind != models.TriggerAPI {
		t.Fatalf("trigger kind %q", a.TriggerKind)
	}
	r = c.get(r.location())
	if got := text(first(r.doc, "#automation-api-trigger pre")); !strings.Contains(got, `"automation": "`+a.Utr+`"`) {
		t.Fatalf("the page shows the call %q", got)
	}
	if first(r.doc, "#automation-settings-trigger-api[checked]") == nil {
		t.Fatal("the settings do not show the API start")
	}
	// Saving the settings keeps the choice.
	r = c.post("/automations/"+a.Utr, url.Values{"automation_name": {"Upgrade 2"}, "automation_for": {"contacts_" + itoa(s.ctype)},
		"unsubscribe_group_id": {"0"}, "exit_criteria": {"0"}, "trigger": {"api"}})
	wantRedirect(t, r, "/automations/"+a.Utr)
	if got := s.get(a.Utr); got.TriggerKind != models.TriggerAPI || got.AutomationName != "Upgrade 2" {
		t.Fatalf("after saving: %+v", got)
	}
}

// TestAutomationBranchWaitForm: the branch's wait is changed from the
// form at the branch, refused with the reason when it is no wait, and
// shown again with the new value.
func TestAutomationBranchWaitForm(t *testing.T) {
	t.Parallel()
	s := newAutoSetup(t)
	c := s.c
	a := s.create("custom", "Branch wait", itoa(s.group), [3]string{"instantly", "0", "Hello"})
	base := "/automations/" + a.Utr
	c.get(base)
	wantRedirect(t, c.post(base+"/branch", url.Values{"waiting_period": {"2"}, "waiting_type": {"days"}}), base)
	r := c.get(base)
	if value(r.doc, `#branch-wait-form input[name="waiting_period"]`) != "2" || attr(first(r.doc, "#branch-wait-form"), "action") != base+"/branch/wait" {
		t.Fatal("the branch offers no form of its wait, with the current one")
	}
	r = c.post(base+"/branch/wait", url.Values{"waiting_period": {"0"}, "waiting_type": {"hours"}})
	wantRedirect(t, r, base)
	r = c.get(r.location())
	if f := text(first(r.doc, "#flash")); !strings.Contains(f, "waiting period") {
		t.Fatalf("flash %q", f)
	}
	r = c.post(base+"/branch/wait", url.Values{"waiting_period": {"6"}, "waiting_type": {"hours"}})
	wantRedirect(t, r, base)
	rows := s.emails(a.Utr)
	if len(rows) != 2 || rows[1].Kind != models.StepBranch || rows[1].WaitingPeriod != 6 || rows[1].WaitingType != "hours" {
		t.Fatalf("steps after the wait changed: %+v", rows)
	}
	r = c.get(base)
	if got := text(first(r.doc, "#automation-branch .wait-label")); got != "Waits up to 6 hours" {
		t.Fatalf("branch wait %q", got)
	}
}
