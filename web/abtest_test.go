package web_test

import (
	"context"
	"net/http"
	"strings"
	"testing"
	"time"

	"herald/service"
)

// The compose page's A/B subject test and each variant's
// figures on the send's page.
func TestSingleSendABTest(t *testing.T) {
	t.Parallel()
	s := newSendSetup(t)
	c := s.c
	r := c.get("/single-sends/new")
	wantStatus(t, r, http.StatusOK)
	if first(r.doc, `#send-ab input#send-ab-on[type="checkbox"][name="ab_on"]`) == nil || first(r.doc, `#send-ab-on[checked]`) != nil ||
		first(r.doc, `input#send-ab-subject-4[name="ab_subject_4"]`) == nil || first(r.doc, `input#send-ab-preheader-1[name="ab_preheader_1"]`) == nil ||
		first(r.doc, `select#send-ab-metric option[value="clicks"]`) == nil || first(r.doc, `select#send-ab-share option[value="20"][selected]`) == nil {
		t.Fatalf("no A/B option:\n%s", text(first(r.doc, "#send-form")))
	}

	// On with one subject: the error is beside the first subject.
	form := s.form("Spring")
	form.Set("ab_on", "1")
	form.Set("ab_subject_1", "Spring sale")
	form.Set("ab_share", "20")
	form.Set("ab_metric", "opens")
	form.Set("ab_wait", "240")
	r = c.post("/single-sends", form)
	wantStatus(t, r, http.StatusUnprocessableEntity)
	if got := text(first(r.doc, "#send-ab-subject-1-error")); !strings.Contains(got, "two to four subjects") {
		t.Fatalf("subjects error %q", got)
	}
	if first(r.doc, `#send-ab-on[checked]`) == nil || value(r.doc, "#send-ab-subject-1") != "Spring sale" {
		t.Fatal("the option is not kept as posted")
	}

	form.Set("ab_subject_2", "Half price")
	form.Set("ab_preheader_2", "Until Sunday")
	r = c.post("/single-sends", form)
	wantRedirect(t, r, "/single-sends/")
	utr := strings.TrimPrefix(r.location(), "/single-sends/")
	ss := s.get(utr)
	if len(ss.ABSubjects) != 2 || ss.ABSubjects[1] != "Half price" || ss.ABPreheaders[1] != "Until Sunday" || ss.ABShare != 20 || ss.ABMetric != "opens" || ss.ABWait != 240 {
		t.Fatalf("stored %v %v %d %q %d", ss.ABSubjects, ss.ABPreheaders, ss.ABShare, ss.ABMetric, ss.ABWait)
	}
	// Its edit form shows the option as saved.
	s.exec("UPDATE single_sends SET armed = 0 WHERE id = ?", ss.ID)
	r = c.get("/single-sends/" + utr + "/edit")
	if first(r.doc, `#send-ab-on[checked]`) == nil || value(r.doc, "#send-ab-subject-2") != "Half price" || value(r.doc, "#send-ab-preheader-2") != "Until Sunday" ||
		first(r.doc, `#send-ab-wait option[value="240"][selected]`) == nil {
		t.Fatalf("edit form:\n%s", text(first(r.doc, "#send-ab")))
	}

	// While the test waits, the winner may be chosen now: the wait ends
	// and the scheduler's next round decides.
	later := time.Now().Add(4 * time.Hour).UnixMilli()
	s.exec("UPDATE single_sends SET status = 2, resolved = 1, ab_decide_at = ? WHERE id = ?", later, ss.ID)
	r = c.get("/single-sends/" + utr)
	if first(r.doc, `#send-ab-test form#ab-decide-form button#ab-decide-now`) == nil {
		t.Fatalf("no way to choose the winner now:\n%s", text(first(r.doc, "#send-ab-test")))
	}
	r = c.post("/single-sends/"+utr+"/ab/decide", nil)
	wantRedirect(t, r, "/single-sends/"+utr)
	if got := s.get(utr).ABDecideAt; got >= later || got > time.Now().UnixMilli() {
		t.Fatalf("decide at %d after choosing now (was %d)", got, later)
	}
	r = c.get("/single-sends/" + utr)
	if first(r.doc, "#ab-decide-now") != nil {
		t.Fatal("the button stays after the wait ended")
	}
	wantRedirect(t, c.post("/single-sends/"+utr+"/ab/decide", nil), "/single-sends/"+utr)
	if got := text(first(c.get("/single-sends/"+utr).doc, "#flash .flash")); !strings.Contains(got, "no longer waiting") {
		t.Fatalf("a second choice: flash %q", got)
	}

	// The ledger as a decided test leaves it: B won, the rest got it.
	decided := time.Date(2030, 5, 1, 14, 0, 0, 0, time.UTC).UnixMilli()
	s.exec("UPDATE single_sends SET status = 3, resolved = 1, triggered = 6, ab_decide_at = ?, ab_winner = 2 WHERE id = ?", decided, ss.ID)
	now := "2030-05-01 10:00:00"
	for i, row := range []struct {
		variant int
		release int64
		opened  bool
		clicked bool
	}{{1, 0, false, false}, {2, 0, true, true}, {2, 0, true, false}, {2, decided, false, false}, {2, decided, true, false}, {2, decided, false, false}} {
		var opened, clicked any
		if row.opened {
			opened = now
		}
		if row.clicked {
			clicked = now
		}
		s.exec("INSERT INTO send_messages (send_id, user_id, email, state, variant, release_at, opened_at, clicked_at, sent_at) VALUES (?, ?, ?, 2, ?, ?, ?, ?, ?)",
			ss.ID, s.acct, "r"+string(rune('a'+i))+"@example.com", row.variant, row.release, opened, clicked, now)
	}
	r = c.get("/single-sends/" + utr)
	wantStatus(t, r, http.StatusOK)
	panel := first(r.doc, "#send-ab-test")
	if panel == nil {
		t.Fatal("no A/B panel on the send's page")
	}
	for id, want := range map[string][5]string{
		"#ab-variant-1": {"Spring sale", "1", "1", "0", "0"},
		"#ab-variant-2": {"Half price Until Sunday", "2", "2", "2", "1"},
		"#ab-rest":      {"The winner, B", "3", "3", "1", "0"},
	} {
		row := first(panel, id)
		if row == nil {
			t.Fatalf("no row %s", id)
		}
		got := [5]string{strings.Join(strings.Fields(text(first(row, "td"))), " "), text(first(row, ".ab-recipients")), text(first(row, ".ab-delivered")), text(first(row, ".ab-opens")), text(first(row, ".ab-clicks"))}
		if got != want {
			t.Errorf("%s: %v, want %v", id, got, want)
		}
	}
	if first(panel, "#ab-variant-2 .ab-winner") == nil || first(panel, "#ab-variant-1 .ab-winner") != nil {
		t.Error("the winner badge is not on B alone")
	}
	if !strings.Contains(text(first(panel, "#send-ab-rule")), "20 % of the audience tests 2 subjects; the most unique opens by people after 4 hours wins and went to the rest.") {
		t.Errorf("rule %q", text(first(panel, "#send-ab-rule")))
	}
}

// A test of content through the compose form: variant B has one of the
// account's designs and no subject. It is saved with that design's HTML
// and the send's subject (variant A is the send as it is); the edit form
// chooses the design again; the send's page marks B's own design.
func TestSingleSendABContentTest(t *testing.T) {
	t.Parallel()
	s := newSendSetup(t)
	c := s.c
	d, err := s.a.svc.Designs.Create(context.Background(), s.acct, service.DesignInput{Name: "Bold letter", TemplateID: "1",
		TemplateHTML: `<html><body><h1>Bold</h1><a href="((unsubscribe_preferences))">Unsubscribe</a></body></html>`})
	if err != nil {
		t.Fatal(err)
	}
	r := c.get("/single-sends/new")
	if first(r.doc, `select#send-ab-design-2[name="ab_design_2"] option[value="design-`+itoa(d.ID)+`"]`) == nil {
		t.Fatalf("no design choice for variant B:\n%s", text(first(r.doc, "#send-ab")))
	}
	form := s.form("Bold")
	form.Set("ab_on", "1")
	form.Set("ab_design_2", "design-"+itoa(d.ID))
	form.Set("ab_share", "20")
	form.Set("ab_metric", "clicks")
	form.Set("ab_wait", "240")
	r = c.post("/single-sends", form)
	wantRedirect(t, r, "/single-sends/")
	utr := strings.TrimPrefix(r.location(), "/single-sends/")
	ss := s.get(utr)
	if len(ss.ABSubjects) != 2 || ss.ABSubjects[0] != ss.Subject || ss.ABSubjects[1] != ss.Subject ||
		len(ss.ABDesigns) != 2 || ss.ABDesigns[0] != "" || ss.ABDesigns[1] != d.TemplateHTML {
		t.Fatalf("stored %q designs %q", ss.ABSubjects, ss.ABDesigns)
	}
	s.exec("UPDATE single_sends SET armed = 0 WHERE id = ?", ss.ID)
	r = c.get("/single-sends/" + utr + "/edit")
	if first(r.doc, `#send-ab-design-2 option[value="design-`+itoa(d.ID)+`"][selected]`) == nil {
		t.Fatalf("edit form:\n%s", text(first(r.doc, "#send-ab")))
	}
	r = c.get("/single-sends/" + utr)
	if got := text(first(r.doc, "#ab-variant-2")); !strings.Contains(got, "Its own design") {
		t.Fatalf("variant B row %q", got)
	}
	if got := text(first(r.doc, "#ab-variant-1")); strings.Contains(got, "Its own design") {
		t.Fatalf("variant A row %q", got)
	}
}

// A send-time test through the compose form: saved with its gap and the
// send's subject for both halves; the edit form shows it as saved; the
// send's page says when each half goes and offers no "choose now".
func TestSingleSendABTimeTest(t *testing.T) {
	t.Parallel()
	s := newSendSetup(t)
	c := s.c
	r := c.get("/single-sends/new")
	if first(r.doc, `select#send-ab-kind[name="ab_kind"] option[value="time"]`) == nil || first(r.doc, `select#send-ab-after[name="ab_time_after"] option[value="120"]`) == nil {
		t.Fatalf("no send-time choice:\n%s", text(first(r.doc, "#send-ab")))
	}
	form := s.form("Timing")
	form.Set("ab_on", "1")
	form.Set("ab_kind", "time")
	form.Set("ab_time_after", "120")
	form.Set("ab_metric", "opens")
	form.Set("ab_wait", "240")
	r = c.post("/single-sends", form)
	wantRedirect(t, r, "/single-sends/")
	utr := strings.TrimPrefix(r.location(), "/single-sends/")
	ss := s.get(utr)
	if ss.ABTimeAfter != 120 || ss.ABShare != 100 || len(ss.ABSubjects) != 2 || ss.ABSubjects[0] != ss.Subject {
		t.Fatalf("stored after %d share %d subjects %q", ss.ABTimeAfter, ss.ABShare, ss.ABSubjects)
	}
	s.exec("UPDATE single_sends SET armed = 0 WHERE id = ?", ss.ID)
	r = c.get("/single-sends/" + utr + "/edit")
	if first(r.doc, `#send-ab-kind option[value="time"][selected]`) == nil || first(r.doc, `#send-ab-after option[value="120"][selected]`) == nil ||
		value(r.doc, "#send-ab-subject-1") != "" {
		t.Fatalf("edit form:\n%s", text(first(r.doc, "#send-ab")))
	}
	later := time.Now().Add(6 * time.Hour)
	s.exec("UPDATE single_sends SET status = 2, resolved = 1, ab_decide_at = ? WHERE id = ?", later.UnixMilli(), ss.ID)
	r = c.get("/single-sends/" + utr)
	if got := text(first(r.doc, "#send-ab-rule")); !strings.Contains(got, "Send-time test") {
		t.Fatalf("rule %q", got)
	}
	if got := text(first(r.doc, "#ab-variant-2")); !strings.Contains(got, "Half B, at") {
		t.Fatalf("second half row %q", got)
	}
	if first(r.doc, "#ab-decide-now") != nil || first(r.doc, "#ab-rest") != nil {
		t.Fatal("a send-time test offers a winner step or a rest")
	}
}
