package web_test

import (
	"net/http"
	"strings"
	"testing"
	"time"

	"herald/dbtest"
	"herald/delivery"
	"herald/models"
	"herald/service"
	"herald/web"
)

// The compose page saves a draft: with only a name, or complete but not
// sent; the list shows its Draft badge, the form opens it again and the
// send button then sends it.
func TestSaveDraftFromTheComposePage(t *testing.T) {
	t.Parallel()
	s := newSendSetup(t)
	c := s.c
	before := len(s.outbox())
	r := c.get("/single-sends/new")
	wantStatus(t, r, http.StatusOK)
	b := first(r.doc, `#send-form button#send-save-draft[formaction="/single-sends/draft"]`)
	if b == nil || attr(b, "hx-post") != "/single-sends/draft" {
		t.Fatalf("no draft button:\n%.3000s", r.body)
	}
	// Without a name: refused, beside the name.
	f := s.form("")
	r = c.post("/single-sends/draft", f)
	wantStatus(t, r, http.StatusUnprocessableEntity)
	if first(r.doc, `.has-error #send-name`) == nil && !strings.Contains(r.body, "Give this send a name.") {
		t.Fatalf("no name error:\n%.3000s", r.body)
	}
	// Only a name: saved as a draft.
	r = c.post("/single-sends/draft", map[string][]string{"single_send_name": {"Idea"}})
	wantRedirect(t, r, "/single-sends/")
	// Complete, "now": saved, not armed.
	r = c.post("/single-sends/draft", s.form("Spring letter"))
	wantRedirect(t, r, "/single-sends/")
	utr := strings.TrimPrefix(r.location(), "/single-sends/")
	ss := s.get(utr)
	if !isDraft(ss) || ss.SingleSendName != "Spring letter" {
		t.Fatalf("saved: status %d armed %d", ss.Status, ss.Armed)
	}
	if len(s.outbox()) != before {
		t.Fatal("a draft sent mail")
	}
	r = c.get("/single-sends")
	row := first(r.doc, "#send-"+itoa(ss.ID))
	if row == nil || first(row, `.badge[data-status="Draft"]`) == nil || first(row, `a[href="/single-sends/`+utr+`/edit"]`) == nil {
		t.Fatalf("the list's draft row:\n%.4000s", r.body)
	}
	// Opened again, saved again as a draft (with its utr), then sent.
	r = c.get("/single-sends/" + utr + "/edit")
	wantStatus(t, r, http.StatusOK)
	if value(r.doc, "#send-name") != "Spring letter" {
		t.Fatalf("the edit form lost the name:\n%.2000s", r.body)
	}
	f = s.form("Spring letter 2")
	f.Set("utr", utr)
	r = c.post("/single-sends/draft", f)
	wantRedirect(t, r, "/single-sends/"+utr)
	if ss = s.get(utr); !isDraft(ss) || ss.SingleSendName != "Spring letter 2" {
		t.Fatalf("draft update: %q status %d armed %d", ss.SingleSendName, ss.Status, ss.Armed)
	}
	r = c.get("/single-sends/" + utr)
	if !strings.Contains(r.body, "Not scheduled: a draft is not sent until you schedule it or send it now") || strings.Contains(r.body, "As soon as it is saved") {
		t.Fatalf("a draft's page says when it leaves:\n%.4000s", r.body)
	}
	r = c.post("/single-sends/"+utr, s.form("Spring letter 2"))
	wantRedirect(t, r, "/single-sends/"+utr)
	if ss = s.get(utr); ss.Armed != 1 || ss.Status != models.SendInitiate {
		t.Fatalf("sent draft: status %d armed %d", ss.Status, ss.Armed)
	}
	// A send that has started cannot become a draft.
	s.exec("UPDATE single_sends SET status = 2 WHERE id = ?", ss.ID)
	f.Set("single_send_name", "Back")
	r = c.post("/single-sends/draft", f)
	wantRedirect(t, r, "/single-sends/"+utr)
	if s.get(utr).SingleSendName == "Back" {
		t.Fatal("a running send was changed into a draft")
	}
}

// An editor saves drafts, but a send an admin scheduled is not turned
// back into a draft by an editor (that would take it off its schedule):
// refused with the reason, and the send stays scheduled.
func TestEditorCannotUnscheduleBySavingADraft(t *testing.T) {
	t.Parallel()
	mem := &delivery.MemoryOutbox{}
	a := newTestAppOn(t, dbtest.Service(t, service.Config{Transport: delivery.NewOutbox(mem)}), web.Options{})
	s := newSendSetupOn(t, a)
	bob := joinTeam(t, a, mem, s.c, "bob@example.com", "editor")

	form := s.form("Scheduled by the owner")
	form.Set("schedule_type", "1")
	form.Set("schedule_date", time.Now().Add(72*time.Hour).Format("2006-01-02"))
	form.Set("schedule_time", "10:30")
	r := s.c.hxPost("/single-sends", form)
	wantStatus(t, r, http.StatusNoContent)
	utr := strings.TrimPrefix(r.header.Get("HX-Redirect"), "/single-sends/")
	if ss := s.get(utr); ss.Armed == 0 || isDraft(ss) {
		t.Fatalf("not scheduled: status %d armed %d", ss.Status, ss.Armed)
	}

	f := s.form("Changed by the editor")
	f.Set("utr", utr)
	bob.get("/single-sends/new")
	r = bob.post("/single-sends/draft", f)
	wantStatus(t, r, http.StatusForbidden)
	if !strings.Contains(pageText(r), "Your role (Editor) may not start, schedule or delete sends") {
		t.Fatalf("refusal: %q", pageText(r))
	}
	if ss := s.get(utr); ss.Armed == 0 || ss.SingleSendName != "Scheduled by the owner" {
		t.Fatalf("the editor's draft changed the scheduled send: %q armed %d", ss.SingleSendName, ss.Armed)
	}

	// Its own drafts, new and saved again, are an editor's work.
	r = bob.post("/single-sends/draft", s.form("Editor's idea"))
	wantRedirect(t, r, "/single-sends/")
	mine := strings.TrimPrefix(r.location(), "/single-sends/")
	f = s.form("Editor's idea, again")
	f.Set("utr", mine)
	wantRedirect(t, bob.post("/single-sends/draft", f), "/single-sends/"+mine)
	if ss := s.get(mine); !isDraft(ss) || ss.SingleSendName != "Editor's idea, again" {
		t.Fatalf("the editor's draft: %q status %d armed %d", ss.SingleSendName, ss.Status, ss.Armed)
	}
}

// isDraft: a send waiting and not armed, as the console calls a draft.
func isDraft(ss *models.SingleSend) bool { return ss.Status == models.SendInitiate && ss.Armed == 0 }
