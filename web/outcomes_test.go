package web_test

import (
	"context"
	"net/http"
	"strings"
	"testing"
	"time"

	"herald/models"
	"herald/service"
)

// TestPausedSendShowsTheRelaysAnswerAndResumes: a send that paused itself
// after repeated blocks shows the pause with the relay's answer and a
// Resume button (and stops polling); Resume queues the refused messages
// again and lifts the pause. Failures show with their reason in plain
// words.
func TestPausedSendShowsTheRelaysAnswerAndResumes(t *testing.T) {
	t.Parallel()
	s := newSendSetup(t)
	c := s.c
	ss := s.create("Autumn")
	const reason = "delivery: permanent failure at mail: 553 5.7.1 Sender address rejected: not owned by user news@shop.example.com"
	paused := models.NewTimestamp(time.Now())
	s.exec(`UPDATE single_sends SET status = 2, resolved = 1, triggered = 14, delivered = 2, blocks = 10, block_streak = 10,
		last_block = ?, paused_at = ?, pause_reason = ?, failures = 2, first_failure = ?, last_failure = ? WHERE id = ?`,
		reason, paused, reason, "delivery: invalid message: display name with a line break", "delivery: invalid DKIM key: no PEM block", ss.ID)
	for i := range 12 {
		state := models.MessageBlocked
		if i >= 10 {
			state = models.MessageDelivered
		}
		s.exec(`INSERT INTO send_messages (send_id, user_id, email, state, error) VALUES (?, ?, ?, ?, ?)`, ss.ID, s.acct, "r"+itoa(int64(i))+"@example.com", state, reason)
	}

	r := c.get("/single-sends/" + ss.Utr)
	wantStatus(t, r, http.StatusOK)
	panel := first(r.doc, "#send-status")
	if attr(panel, "data-status") != "Paused" || attr(panel, "hx-trigger") != "" {
		t.Fatalf("panel status %q trigger %q", attr(panel, "data-status"), attr(panel, "hx-trigger"))
	}
	note := first(r.doc, "#send-paused")
	if note == nil {
		t.Fatalf("no pause note:\n%.4000s", r.body)
	}
	if got := text(first(note, "#send-pause-reply")); got != "553 5.7.1 Sender address rejected: not owned by user news@shop.example.com (at MAIL FROM)" {
		t.Fatalf("relay's answer %q", got)
	}
	if !strings.Contains(text(note), "nobody was suppressed") {
		t.Fatalf("pause note: %s", text(note))
	}
	form := first(note, "form")
	if attr(form, "action") != "/single-sends/"+ss.Utr+"/resume" || first(form, "#resume-send") == nil || first(form, `input[name="_csrf"]`) == nil {
		t.Fatalf("resume form: %v", form)
	}
	fail := first(r.doc, "#send-failures")
	if got := text(fail); !strings.Contains(got, "2 messages could not be built: the message is not valid mail (display name with a line break)") ||
		!strings.Contains(got, "The last one: the DKIM key of the sender's domain cannot be used: no PEM block") {
		t.Fatalf("failures: %q", got)
	}
	if got := text(first(r.doc, "#send-blocked")); got != "10" {
		t.Fatalf("refused count %q", got)
	}
	// The list says Paused too.
	if got := text(first(c.get("/single-sends").doc, "#send-"+itoa(ss.ID)+" td[data-label=Status]")); got != "Paused" {
		t.Fatalf("list status %q", got)
	}

	// Another account cannot resume it.
	other, _ := s.a.account("Eve", "eve@example.com")
	other.get("/single-sends") // its form token
	wantStatus(t, other.post("/single-sends/"+ss.Utr+"/resume", nil), http.StatusNotFound)
	if s.get(ss.Utr).PausedAt == nil {
		t.Fatal("another account resumed the send")
	}

	r = c.post("/single-sends/"+ss.Utr+"/resume", nil)
	if r.status != http.StatusSeeOther || r.location() != "/single-sends/"+ss.Utr {
		t.Fatalf("resume: %d %q", r.status, r.location())
	}
	got := s.get(ss.Utr)
	if got.PausedAt != nil || got.Blocks != 0 || got.PauseReason != "" || got.Status != models.SendRunning {
		t.Fatalf("after resume: paused %v blocks %d reason %q status %d", got.PausedAt, got.Blocks, got.PauseReason, got.Status)
	}
	var queued int64
	s.a.svc.DB.R.Model(&models.SendMessage{}).Where("send_id = ? AND state = ?", ss.ID, models.MessageQueued).Count(&queued)
	if queued != 10 {
		t.Fatalf("%d messages queued again, want 10", queued)
	}
	r = c.get("/single-sends/" + ss.Utr)
	if first(r.doc, "#send-paused") != nil || !strings.Contains(r.body, "resumed: 10 refused messages go again") {
		t.Fatalf("after resume:\n%.3000s", r.body)
	}
	// Twice: not paused any more, said plainly.
	c.post("/single-sends/"+ss.Utr+"/resume", nil)
	if r = c.get("/single-sends/" + ss.Utr); !strings.Contains(r.body, "is not paused") {
		t.Fatalf("second resume:\n%.3000s", r.body)
	}
}

// TestPausedAutomationEmailShowsAndResumes: an automation's email whose
// sending paused itself shows the relay's answer and the count of refused
// messages on the automation's page, with a Resume button that works.
func TestPausedAutomationEmailShowsAndResumes(t *testing.T) {
	t.Parallel()
	s := newSendSetup(t)
	c := s.c
	ctx := context.Background()
	svc := s.a.svc
	a, err := svc.Automations.Create(ctx, s.acct, service.AutomationInput{Type: "custom", AutomationFor: "contacts_" + itoa(s.ctype),
		AutomationName: "Onboarding", UnsubscribeGroupID: itoa(s.group), ExitCriteria: "0"})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := svc.Automations.AddSchedule(ctx, s.acct, service.ScheduleInput{Utr: a.Utr, SenderID: itoa(s.sender), Subject: "Welcome",
		WaitingPeriod: "1", WaitingType: "instantly", TemplateID: "1", PreviewImg: "01-blank.png", TemplateHTML: "<p>Hi</p>"}); err != nil {
		t.Fatal(err)
	}
	if err := svc.Automations.SetLive(ctx, s.acct, a.Utr); err != nil {
		t.Fatal(err)
	}
	steps, err := svc.Automations.Steps(ctx, s.acct, a.Utr)
	if err != nil || len(steps) != 1 || steps[0].Send == nil {
		t.Fatalf("steps %+v %v", steps, err)
	}
	sendID := steps[0].Send.ID
	const reason = "delivery: permanent failure at rcpt: 554 5.7.1 <x@example.com>: Relay access denied"
	s.exec(`UPDATE single_sends SET blocks = 3, block_streak = 3, triggered = 3, paused_at = ?, pause_reason = ?, last_block = ? WHERE id = ?`,
		models.NewTimestamp(time.Now()), reason, reason, sendID)
	for _, e := range []string{"x@example.com", "y@example.com", "z@example.com"} {
		s.exec(`INSERT INTO send_messages (send_id, user_id, email, state, error) VALUES (?, ?, ?, ?, ?)`, sendID, s.acct, e, models.MessageBlocked, reason)
	}

	r := c.get("/automations/" + a.Utr)
	wantStatus(t, r, http.StatusOK)
	note := first(r.doc, "[data-paused]")
	if note == nil || !strings.Contains(text(note), "554 5.7.1 <x@example.com>: Relay access denied (at RCPT TO)") {
		t.Fatalf("pause note:\n%.4000s", r.body)
	}
	if got := text(first(r.doc, "[data-blocks]")); got != "3" {
		t.Fatalf("refused %q", got)
	}
	if got := text(first(r.doc, "#total-blocks .send-stat-value")); got != "3" {
		t.Fatalf("total refused %q", got)
	}
	action := attr(first(note, "form"), "action")
	if action != "/automations/"+a.Utr+"/emails/"+steps[0].Schedule.Utr+"/resume" {
		t.Fatalf("resume action %q", action)
	}
	r = c.post(action, nil)
	if r.status != http.StatusSeeOther || r.location() != "/automations/"+a.Utr {
		t.Fatalf("resume: %d %q", r.status, r.location())
	}
	steps, _ = svc.Automations.Steps(ctx, s.acct, a.Utr)
	if steps[0].Send.PausedAt != nil || steps[0].Send.Blocks != 0 {
		t.Fatalf("after resume: paused %v blocks %d", steps[0].Send.PausedAt, steps[0].Send.Blocks)
	}
	if r = c.get("/automations/" + a.Utr); first(r.doc, "[data-paused]") != nil {
		t.Fatal("still shown paused")
	}
}
