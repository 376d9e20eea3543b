package web_test

import (
	"context"
	"net/http"
	"strings"
	"testing"
)

// TestAutomationEmailReport: an email of an automation that went to
// somebody links to its report, which shows the figures of the send that
// carries it (no click map or comparison: those are single sends'
// pages); an email nobody got yet has no link and an empty report; the
// branch and another account's automation are not found.
func TestAutomationEmailReport(t *testing.T) {
	t.Parallel()
	s := newAutoSetup(t)
	c := s.c
	a := s.create("custom", "Onboarding", itoa(s.group), [3]string{"instantly", "0", "Welcome <aboard>"}, [3]string{"days", "2", "Second"})
	if err := s.a.svc.Automations.SetLive(context.Background(), s.acct, a.Utr); err != nil {
		t.Fatal(err)
	}
	emails := s.emails(a.Utr)
	if emails[0].SendID == nil || emails[1].SendID == nil {
		t.Fatalf("emails without a carrier send: %+v", emails)
	}
	if err := s.a.svc.DB.W.Exec("UPDATE single_sends SET triggered = 4, delivered = 3, unique_opens = 2, human_unique_opens = 1, total_opens = 5 WHERE id = ?",
		*emails[0].SendID).Error; err != nil {
		t.Fatal(err)
	}
	report := "/automations/" + a.Utr + "/emails/" + emails[0].Utr + "/report"

	r := c.get("/automations/" + a.Utr)
	wantStatus(t, r, http.StatusOK)
	links := all(r.doc, "a[data-report]")
	if len(links) != 1 || attr(links[0], "href") != report || attr(links[0], "aria-label") != "Report of email 1" {
		t.Fatalf("report links %d (want one, to %s):\n%.3000s", len(links), report, r.body)
	}

	r = c.get(report)
	wantStatus(t, r, http.StatusOK)
	if got := text(first(r.doc, "#stat-delivered .send-stat-value")); got != "3" {
		t.Fatalf("delivered %q", got)
	}
	if got := text(first(r.doc, "#stat-unique-opens .send-stat-human-value")); got != "1" {
		t.Fatalf("opens by people %q", got)
	}
	if first(r.doc, "#reach-title") == nil || first(r.doc, "#open-click-map") != nil || first(r.doc, "#open-compare") != nil {
		t.Fatalf("reach without the single sends' pages expected:\n%.3000s", r.body)
	}
	if !strings.Contains(r.body, "Welcome &lt;aboard&gt;") || strings.Contains(r.body, "Welcome <aboard>") {
		t.Fatal("the subject is not in the title, escaped")
	}

	r = c.get("/automations/" + a.Utr + "/emails/" + emails[1].Utr + "/report")
	wantStatus(t, r, http.StatusOK)
	if first(r.doc, "#send-statistics") != nil || !strings.Contains(r.body, "Nothing sent yet") {
		t.Fatalf("an email nobody got:\n%.2000s", r.body)
	}

	b, _ := s.a.account("Bob", "bob@example.com")
	wantStatus(t, b.get(report), http.StatusNotFound)
	wantStatus(t, c.get("/automations/"+a.Utr+"/emails/no-such-email/report"), http.StatusNotFound)
}
