package engine_test

import (
	"context"
	"errors"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"herald/models"
	"herald/service"
	"herald/service/engine"
	"herald/service/servicetest"
)

// The tests of the scheduler's rounds each run one round alone (through
// the scheduler's list: engine.RunRound) over a real database, with the
// engine stopped, and check what that round did and nothing else.

func TestRoundsRunInTheirOrder(t *testing.T) {
	t.Parallel()
	f := servicetest.NewSendFixture(t, false)
	want := []string{"reclaim", "start", "abtests", "complete", "purge", "notices", "automations"}
	if got := engine.RoundNames(f.Sending); !slices.Equal(got, want) {
		t.Fatalf("rounds %v, want %v", got, want)
	}
}

// A round's error ends the tick and names the round; the cause stays
// reachable.
func TestRoundErrorNamesTheRound(t *testing.T) {
	t.Parallel()
	f := servicetest.NewSendFixture(t, false)
	ctx, cancel := context.WithCancel(f.Ctx)
	cancel()
	err := f.Sending.Tick(ctx)
	if err == nil || !errors.Is(err, context.Canceled) || !strings.HasPrefix(err.Error(), "scheduler: reclaim: ") {
		t.Fatalf("tick with a cancelled context: %v, want scheduler: reclaim: … context canceled", err)
	}
}

// The reclaim round gives a dead process's claims back to the queue,
// leaves a live one's, and forgets heartbeats silent for an hour.
func TestRoundReclaimReturnsDeadClaims(t *testing.T) {
	t.Parallel()
	f := servicetest.NewSendFixture(t, false)
	typeA := f.ContactType("Customers")
	ss := f.Create(f.Input("Claimed", []string{"contacts_" + strconv.FormatInt(typeA, 10)}, nil))
	now := time.Now() // heartbeats are wall-clock times
	f.Exec("INSERT INTO send_workers (id, heartbeat_at) VALUES (?, ?), (?, ?), (?, ?)",
		"dead", now.Add(-time.Minute).UnixMilli(), "live", now.Add(time.Minute).UnixMilli(), "ancient", now.Add(-2*time.Hour).UnixMilli())
	claim := func(email, worker string) {
		w := worker
		if err := f.Svc.DB.W.Create(&models.SendMessage{SendID: ss.ID, UserID: f.Acct, Email: email, State: models.MessageClaimed, Worker: &w}).Error; err != nil {
			t.Fatal(err)
		}
	}
	state := func(email string) (models.MessageState, string) {
		var m models.SendMessage
		if err := f.Svc.DB.R.Where("send_id = ? AND email = ?", ss.ID, email).Take(&m).Error; err != nil {
			t.Fatal(err)
		}
		if m.Worker == nil {
			return m.State, ""
		}
		return m.State, *m.Worker
	}
	claim("a@example.com", "dead")
	claim("b@example.com", "live")
	claim("c@example.com", "ancient")
	round(t, f, "reclaim") // the first round sweeps every claim of a process not alive
	for email, worker := range map[string]string{"a@example.com": "", "b@example.com": "live", "c@example.com": ""} {
		st, w := state(email)
		if want := map[bool]models.MessageState{true: models.MessageQueued, false: models.MessageClaimed}[worker == ""]; st != want || w != worker {
			t.Fatalf("%s after the reclaim: state %d worker %q, want %d %q", email, st, w, want, worker)
		}
	}
	if n := f.Scalar("SELECT COUNT(*) FROM send_workers WHERE id IN ('dead', 'live', 'ancient')"); n != 2 {
		t.Fatalf("%d of the three heartbeats left, want 2 (the hour-old one forgotten)", n)
	}
	// Within the minute, a round takes back the claims of the processes
	// it finds dead.
	claim("d@example.com", "dead")
	round(t, f, "reclaim")
	if st, w := state("d@example.com"); st != models.MessageQueued || w != "" {
		t.Fatalf("a later claim of the dead process: state %d worker %q, want queued", st, w)
	}
	if st, w := state("b@example.com"); st != models.MessageClaimed || w != "live" {
		t.Fatalf("the live process's claim: state %d worker %q", st, w)
	}
}

// The start round starts a send whose time has come, not one whose time
// is ahead, and resolves its audience.
func TestRoundStartStartsDueSends(t *testing.T) {
	t.Parallel()
	f := servicetest.NewSendFixture(t, false)
	if err := f.Svc.Accounts.SetTimeZone(f.Ctx, f.Acct, "Asia/Tokyo"); err != nil {
		t.Fatal(err)
	}
	tokyo, _ := time.LoadLocation("Asia/Tokyo")
	f.Set(time.Date(2030, 5, 1, 8, 0, 0, 0, tokyo))
	typeA := f.ContactType("Customers", "ann@example.com", "bob@example.com")
	to := []string{"contacts_" + strconv.FormatInt(typeA, 10)}
	now := f.Create(f.Input("Now", to, nil))
	in := f.Input("Later", to, nil)
	in.ScheduleType, in.ScheduleDate, in.ScheduleTime = "1", "2030-05-01", "09:30"
	later := f.Create(in)
	round(t, f, "start")
	if st := f.Status(now.ID); st != models.SendRunning {
		t.Fatalf("the send for now: status %d, want running", st)
	}
	f.WaitResolved(now.ID)
	if n := f.Scalar("SELECT COUNT(*) FROM send_messages WHERE send_id = ?", now.ID); n != 2 {
		t.Fatalf("%d ledger rows, want 2", n)
	}
	if st := f.Status(later.ID); st != models.SendReady {
		t.Fatalf("the send for 09:30 at 08:00: status %d, want ready", st)
	}
	f.Advance(91 * time.Minute) // 09:31
	round(t, f, "start")
	if st := f.Status(later.ID); st != models.SendRunning {
		t.Fatalf("the send for 09:30 at 09:31: status %d, want running", st)
	}
	f.WaitResolved(later.ID)
}

// The A/B round decides a test once its wait is over, not before, and
// releases the rest of the audience with the winner.
func TestRoundABTestsDecidesAfterTheWait(t *testing.T) {
	t.Parallel()
	f := servicetest.NewSendFixture(t, false)
	var emails []string
	for i := range 20 {
		emails = append(emails, "ab"+strconv.Itoa(i)+"@example.com")
	}
	typeA := f.ContactType("Customers", emails...)
	in := f.Input("Test", []string{"contacts_" + strconv.FormatInt(typeA, 10)}, nil)
	in.AB = &service.ABTestInput{On: true, Subjects: []string{"One", "Two"}, Share: "50", Metric: service.ABOpens, Wait: "60"}
	ss := f.Create(in)
	round(t, f, "start")
	f.WaitResolved(ss.ID)
	held := func() int64 {
		return f.Scalar("SELECT COUNT(*) FROM send_messages WHERE send_id = ? AND variant = 0", ss.ID)
	}
	if held() == 0 {
		t.Fatal("no row held back for the winner")
	}
	f.Advance(59 * time.Minute)
	round(t, f, "abtests")
	if w := f.Scalar("SELECT ab_winner FROM single_sends WHERE id = ?", ss.ID); w != 0 || held() == 0 {
		t.Fatalf("before the wait is over: winner %d, %d rows held", w, held())
	}
	f.Advance(2 * time.Minute)
	round(t, f, "abtests")
	if w := f.Scalar("SELECT ab_winner FROM single_sends WHERE id = ?", ss.ID); w != 1 { // no opens: the first variant
		t.Fatalf("after the wait: winner %d, want 1", w)
	}
	if n, r := held(), f.Scalar("SELECT ab_released FROM single_sends WHERE id = ?", ss.ID); n != 0 || r != 1 {
		t.Fatalf("after the decision: %d rows held, released %d", n, r)
	}
}

// The complete round completes a running send once none of its messages
// is queued or claimed, and mails its summary.
func TestRoundCompleteCompletesFinishedSends(t *testing.T) {
	t.Parallel()
	f := servicetest.NewSendFixture(t, false)
	if _, err := f.Svc.Notifications.Save(f.Ctx, f.Acct, service.NotificationInput{EmailAddress: "boss@example.com", EmailOwner: "Boss"}); err != nil {
		t.Fatal(err)
	}
	typeA := f.ContactType("Customers", "ann@example.com", "bob@example.com")
	ss := f.Create(f.Input("Done", []string{"contacts_" + strconv.FormatInt(typeA, 10)}, nil))
	round(t, f, "start")
	f.WaitResolved(ss.ID)
	round(t, f, "complete")
	if st := f.Status(ss.ID); st != models.SendRunning {
		t.Fatalf("with messages queued: status %d, want running", st)
	}
	f.Exec("UPDATE send_messages SET state = ? WHERE send_id = ? AND email = ?", models.MessageDelivered, ss.ID, "ann@example.com")
	f.Exec("UPDATE send_messages SET state = ?, worker = 'w' WHERE send_id = ? AND email = ?", models.MessageClaimed, ss.ID, "bob@example.com")
	round(t, f, "complete")
	if st := f.Status(ss.ID); st != models.SendRunning {
		t.Fatalf("with a message claimed: status %d, want running", st)
	}
	f.Exec("UPDATE send_messages SET state = ?, worker = NULL WHERE send_id = ?", models.MessageDelivered, ss.ID)
	round(t, f, "complete")
	if st := f.Status(ss.ID); st != models.SendCompleted {
		t.Fatalf("with every message delivered: status %d, want completed", st)
	}
	if n := f.SMTP.PerRecipient()["boss@example.com"]; n != 1 {
		t.Fatalf("%d summaries mailed, want 1", n)
	}
	round(t, f, "complete")
	if n := f.SMTP.PerRecipient()["boss@example.com"]; n != 1 {
		t.Fatalf("%d summaries mailed after a second round, want 1", n)
	}
}

// The purge round deletes the sends deleted past the time their links
// are kept, and purges at most once an hour.
func TestRoundPurgeDeletesPastRetentionHourly(t *testing.T) {
	t.Parallel()
	f := servicetest.NewSendFixture(t, false)
	typeA := f.ContactType("Customers", "ann@example.com")
	to := []string{"contacts_" + strconv.FormatInt(typeA, 10)}
	old, recent := f.Create(f.Input("Old", to, nil)), f.Create(f.Input("Recent", to, nil))
	for _, ss := range []*models.SingleSend{old, recent} {
		if err := f.Svc.SingleSends.Delete(f.Ctx, f.Acct, ss.Utr); err != nil {
			t.Fatal(err)
		}
	}
	longAgo := func(id int64) {
		f.Exec("UPDATE single_sends SET deleted_at = ? WHERE id = ?", models.NewTimestamp(f.Now().Add(-401*24*time.Hour)), id)
	}
	exists := func(id int64) bool { return f.Scalar("SELECT COUNT(*) FROM single_sends WHERE id = ?", id) == 1 }
	longAgo(old.ID)
	round(t, f, "purge")
	if exists(old.ID) || !exists(recent.ID) {
		t.Fatalf("after the first purge: old kept %v, recently deleted kept %v; want false, true", exists(old.ID), exists(recent.ID))
	}
	longAgo(recent.ID)
	f.Advance(30 * time.Minute)
	round(t, f, "purge")
	if !exists(recent.ID) {
		t.Fatal("purged twice within the hour")
	}
	f.Advance(31 * time.Minute)
	round(t, f, "purge")
	if exists(recent.ID) {
		t.Fatal("not purged an hour after the last purge")
	}
}

// The notices round mails the notice of each send this process paused,
// once.
func TestRoundNoticesMailsPauseNoticesOnce(t *testing.T) {
	t.Parallel()
	f := servicetest.NewSendFixture(t, false)
	if _, err := f.Svc.Notifications.Save(f.Ctx, f.Acct, service.NotificationInput{EmailAddress: "boss@example.com", EmailOwner: "Boss"}); err != nil {
		t.Fatal(err)
	}
	typeA := f.ContactType("Customers", "ann@example.com")
	ss := f.Create(f.Input("Paused", []string{"contacts_" + strconv.FormatInt(typeA, 10)}, nil))
	f.Exec("UPDATE single_sends SET paused_at = ?, pause_reason = ?, block_streak = 10 WHERE id = ?",
		models.NewTimestamp(f.Now()), "delivery: permanent failure at MAIL FROM: 553 5.7.1 Sender address rejected", ss.ID)
	round(t, f, "notices")
	if n := f.SMTP.PerRecipient()["boss@example.com"]; n != 0 {
		t.Fatalf("%d notices mailed with none queued", n)
	}
	engine.Paused(f.Sending, ss.ID, 1<<40) // the second send does not exist: no notice, no error
	round(t, f, "notices")
	round(t, f, "notices")
	if n := f.SMTP.PerRecipient()["boss@example.com"]; n != 1 {
		t.Fatalf("%d notices mailed, want 1", n)
	}
	m := f.SMTP.Messages()[f.SMTP.Count()-1]
	if s := servicetest.DecodeSubject(t, m); m.To != "boss@example.com" || !strings.HasPrefix(s, "Sending of “Paused” paused") {
		t.Fatalf("notice to %s: %q", m.To, s)
	}
}

// The automations round enrols the contacts that entered a live
// automation's target and queues their due email, once.
func TestRoundAutomationsEnrolsAndQueues(t *testing.T) {
	t.Parallel()
	f := servicetest.NewSendFixture(t, false)
	typeA := f.ContactType("Customers", "before@example.com")
	a := f.Automation(typeA, "0")
	if err := f.Svc.Automations.SetLive(f.Ctx, f.Acct, a.Utr); err != nil {
		t.Fatal(err)
	}
	f.AddContact(typeA, "new@example.com")
	queued := func(email string) int64 {
		return f.Scalar("SELECT COUNT(*) FROM send_messages m JOIN single_sends s ON s.id = m.send_id WHERE s.automation_id = ? AND m.email = ?", a.ID, email)
	}
	if queued("new@example.com") != 0 {
		t.Fatal("queued before the round")
	}
	round(t, f, "automations")
	round(t, f, "automations")
	if n := queued("new@example.com"); n != 1 {
		t.Fatalf("%d emails queued for the new contact, want 1 (its first step)", n)
	}
	if n := queued("before@example.com"); n != 0 {
		t.Fatalf("%d emails queued for a contact in the type before the automation went live", n)
	}
	if n := f.Scalar("SELECT step FROM automation_contacts WHERE automation_id = ? AND email = ?", a.ID, "new@example.com"); n != 1 {
		t.Fatalf("the enrolment is at step %d, want 1", n)
	}
}

// round runs one round of f's scheduler.
func round(t *testing.T, f *servicetest.SendFixture, name string) {
	t.Helper()
	if err := engine.RunRound(f.Ctx, f.Sending, name); err != nil {
		t.Fatalf("round %s: %v", name, err)
	}
}
