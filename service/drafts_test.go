package service_test

import (
	"context"
	"strconv"
	"testing"
	"time"

	"herald/models"
	"herald/service"
	"herald/service/servicetest"
)

// A draft is saved in status 0 but never armed: ticks of the scheduler
// past its schedule, and the engine running, send nothing. Sent (updated
// as a send), it goes at once.
func TestDraftNeverSends(t *testing.T) {
	t.Parallel()
	f := servicetest.NewSendFixture(t, false)
	typeA := f.ContactType("Customers", "ann@example.com", "bob@example.com")
	to := []string{"contacts_" + strconv.FormatInt(typeA, 10)}

	// A complete draft "to go now", and one scheduled in 10 minutes.
	now := f.Input("Now draft", to, nil)
	d1, err := f.Svc.SingleSends.SaveDraft(f.Ctx, f.Acct, now)
	if err != nil {
		t.Fatal(err)
	}
	later := f.Input("Later draft", to, nil)
	at := f.Now().Add(10 * time.Minute).UTC()
	later.ScheduleType, later.ScheduleDate, later.ScheduleTime = "1", at.Format("2006-01-02"), at.Format("15:04")
	d2, err := f.Svc.SingleSends.SaveDraft(f.Ctx, f.Acct, later)
	if err != nil {
		t.Fatal(err)
	}
	// An incomplete draft: only its name.
	d3, err := f.Svc.SingleSends.SaveDraft(f.Ctx, f.Acct, service.SingleSendInput{SingleSendName: "Idea"})
	if err != nil {
		t.Fatalf("a draft with only a name: %v", err)
	}
	// Without a name it is refused, and a wrong value stays wrong.
	if _, err := f.Svc.SingleSends.SaveDraft(f.Ctx, f.Acct, service.SingleSendInput{Subject: "x"}); service.ErrorCode(err) != service.CodeValidation {
		t.Fatalf("a draft without a name: %v", err)
	}
	if _, err := f.Svc.SingleSends.SaveDraft(f.Ctx, f.Acct, service.SingleSendInput{SingleSendName: "Bad", SenderID: "999999"}); service.ErrorCode(err) != service.CodeValidation {
		t.Fatalf("a draft with another account's sender: %v", err)
	}
	for _, d := range []*models.SingleSend{d1, d2, d3} {
		if d.Status != models.SendInitiate || d.Armed != 0 || !isDraft(d) {
			t.Fatalf("draft %q: status %d armed %d", d.SingleSendName, d.Status, d.Armed)
		}
	}
	if d2.ScheduleType != 1 || d2.ScheduleDate != at.Format("2006-01-02") {
		t.Fatalf("the draft's schedule was not kept: %d %s", d2.ScheduleType, d2.ScheduleDate)
	}

	// A scheduled send turned back into a draft is disarmed.
	sched := f.Input("Scheduled", to, nil)
	sched.ScheduleType, sched.ScheduleDate, sched.ScheduleTime = "1", at.Format("2006-01-02"), at.Format("15:04")
	s4 := f.Create(sched)
	sched.Utr = s4.Utr
	if s4, err = f.Svc.SingleSends.SaveDraft(f.Ctx, f.Acct, sched); err != nil || !isDraft(s4) {
		t.Fatalf("back to draft: %v %+v", err, s4)
	}

	tick := func() {
		t.Helper()
		if err := f.Sending.Tick(f.Ctx); err != nil {
			t.Fatal(err)
		}
	}
	tick()
	f.Advance(time.Hour) // well past the drafts' schedule
	tick()
	ctx, cancel := context.WithCancel(f.Ctx)
	done := make(chan struct{})
	go func() { defer close(done); f.Sending.Run(ctx) }()
	time.Sleep(500 * time.Millisecond) // the engine's ticks are 20 ms
	tick()
	for _, d := range []*models.SingleSend{d1, d2, d3, s4} {
		got, err := f.Svc.SingleSends.Get(f.Ctx, f.Acct, d.Utr)
		if err != nil {
			t.Fatal(err)
		}
		if got.Status != models.SendInitiate || got.Armed != 0 || got.Triggered != 0 {
			t.Fatalf("draft %q moved: status %d armed %d triggered %d", got.SingleSendName, got.Status, got.Armed, got.Triggered)
		}
		if n := len(f.Sent(d.Utr)); n != 0 {
			t.Fatalf("draft %q sent %d messages", got.SingleSendName, n)
		}
	}

	// Opened and sent: the draft goes.
	now.Utr = d1.Utr
	if _, err := f.Svc.SingleSends.Update(f.Ctx, f.Acct, now); err != nil {
		t.Fatal(err)
	}
	f.WaitStatus(d1.Utr, models.SendCompleted, 20*time.Second)
	cancel()
	<-done
	if got := recipients(f.Sent(d1.Utr)); len(got) != 2 {
		t.Fatalf("the sent draft reached %v", got)
	}
}

// isDraft: a send waiting and not armed, as the console calls a draft.
func isDraft(ss *models.SingleSend) bool { return ss.Status == models.SendInitiate && ss.Armed == 0 }
