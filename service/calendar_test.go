package service_test

import (
	"context"
	"testing"
	"time"

	"herald/dbtest"
	"herald/models"
	"herald/service"
	"herald/service/servicetest"
)

// The calendar holds the account's scheduled (armed, status 1) and sent
// sends of the range, by time; not drafts, whatever their schedule, nor
// another account's sends, nor those just outside the range.
func TestCalendarListsScheduledAndSentSendsOfTheRange(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	svc := dbtest.Service(t)
	acct := servicetest.NewAccount(t, svc, "cal@herald.test")
	other := servicetest.NewAccount(t, svc, "cal-other@herald.test")
	exec := func(sql string, args ...any) {
		t.Helper()
		if err := svc.DB.W.Exec(sql, args...).Error; err != nil {
			t.Fatal(err)
		}
	}
	mk := func(acct int64, name string) *models.SingleSend {
		t.Helper()
		ss, err := svc.SingleSends.SaveDraft(ctx, acct, service.SingleSendInput{SingleSendName: name})
		if err != nil {
			t.Fatal(err)
		}
		return ss
	}
	from := time.Date(2031, 3, 1, 0, 0, 0, 0, time.UTC)
	to := from.AddDate(0, 1, 0)
	at := func(d, h int) models.Timestamp {
		return models.NewTimestamp(from.Add(time.Duration(d)*24*time.Hour + time.Duration(h)*time.Hour))
	}
	dt := func(d, h int) models.DateTime { return models.DateTime{Time: at(d, h).Time} }

	sched := mk(acct, "scheduled")
	exec("UPDATE single_sends SET status = 1, armed = 1, schedule_type = 1, send_after = ? WHERE id = ?", at(9, 9), sched.ID)
	sent := mk(acct, "sent")
	exec("UPDATE single_sends SET status = 3, armed = 1, sent_at = ? WHERE id = ?", dt(2, 10), sent.ID)
	running := mk(acct, "running")
	exec("UPDATE single_sends SET status = 2, armed = 1, sent_at = ? WHERE id = ?", dt(20, 8), running.ID)
	draft := mk(acct, "draft")
	exec("UPDATE single_sends SET schedule_type = 1, send_after = ? WHERE id = ?", at(5, 0), draft.ID)
	before := mk(acct, "before")
	exec("UPDATE single_sends SET status = 3, armed = 1, sent_at = ? WHERE id = ?", dt(0, -1), before.ID)
	after := mk(acct, "after")
	exec("UPDATE single_sends SET status = 1, armed = 1, send_after = ? WHERE id = ?", models.NewTimestamp(to), after.ID)
	foreign := mk(other, "foreign")
	exec("UPDATE single_sends SET status = 1, armed = 1, send_after = ? WHERE id = ?", at(3, 0), foreign.ID)

	got, err := svc.SingleSends.Calendar(ctx, acct, from, to)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, e := range got {
		names = append(names, e.Name)
	}
	want := []string{"sent", "scheduled", "running"}
	if len(names) != len(want) {
		t.Fatalf("calendar: %v, want %v", names, want)
	}
	for i := range want {
		if names[i] != want[i] {
			t.Fatalf("calendar: %v, want %v", names, want)
		}
	}
	if !got[0].Sent || got[1].Sent || !got[1].At.Equal(at(9, 9).Time) || !got[2].Sent {
		t.Fatalf("entries: %+v", got)
	}
}
