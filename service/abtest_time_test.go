package service_test

import (
	"fmt"
	"strconv"
	"testing"
	"time"

	"herald/eventually"
	"herald/models"
	"herald/service"
	"herald/service/servicetest"
)

// TestABSendTimeTest: a send-time test on 20 contacts, the second half two
// hours after the first, compared by opens an hour after it. The first
// half goes at once, with the send's subject, and nothing else; two hours
// on, the second half goes; a person opens one message of the second
// half; an hour after the second half the test marks it the better, and
// every contact got one message. A time test at a local time, or a
// second half a minute after the first, is refused.
func TestABSendTimeTest(t *testing.T) {
	t.Parallel()
	f := servicetest.NewSendFixture(t, true)
	var emails []string
	for i := range 20 {
		emails = append(emails, "w"+strconv.Itoa(i)+"@example.com")
	}
	typeA := f.ContactType("Customers", emails...)
	in := f.Input("Timing", []string{"contacts_" + strconv.FormatInt(typeA, 10)}, nil)

	bad := in
	bad.AB = &service.ABTestInput{On: true, Kind: service.ABTime, TimeAfter: "1", Metric: service.ABOpens, Wait: "60"}
	if _, err := f.Svc.SingleSends.Create(f.Ctx, f.Acct, bad); !hasField(err, "ab_time_after") {
		t.Fatalf("a second half a minute later: %v", err)
	}
	bad.AB = &service.ABTestInput{On: true, Kind: "colour", Metric: service.ABOpens, Wait: "60"}
	if _, err := f.Svc.SingleSends.Create(f.Ctx, f.Acct, bad); !hasField(err, "ab_kind") {
		t.Fatalf("an unknown kind: %v", err)
	}

	in.AB = &service.ABTestInput{On: true, Kind: service.ABTime, TimeAfter: "120", Metric: service.ABOpens, Wait: "60",
		Subjects: []string{"ignored", "also ignored"}}
	ss, err := f.Svc.SingleSends.Create(f.Ctx, f.Acct, in)
	if err != nil {
		t.Fatal(err)
	}
	if ss.ABTimeAfter != 120 || ss.ABShare != 100 || len(ss.ABSubjects) != 2 || ss.ABSubjects[1] != in.Subject {
		t.Fatalf("saved test: after %d share %d subjects %q", ss.ABTimeAfter, ss.ABShare, ss.ABSubjects)
	}
	start := f.Now()
	half := func(v int) int64 {
		return f.Scalar("SELECT COUNT(*) FROM send_messages WHERE send_id = ? AND variant = ?", ss.ID, v)
	}
	eventually.NoError(t, 20*time.Second, func() error {
		if f.Scalar("SELECT resolved FROM single_sends WHERE id = ?", ss.ID) != 1 {
			return fmt.Errorf("not resolved")
		}
		if n := int64(len(f.Sent(ss.Utr))); n != half(1) {
			return fmt.Errorf("first half: %d of %d sent", n, half(1))
		}
		return nil
	})
	if half(1) == 0 || half(2) == 0 || half(1)+half(2) != 20 {
		t.Fatalf("halves %d and %d", half(1), half(2))
	}
	if n := f.Scalar("SELECT COUNT(*) FROM send_messages WHERE send_id = ? AND variant = 2 AND state <> ?", ss.ID, models.MessageQueued); n != 0 {
		t.Fatalf("%d messages of the second half left before its time", n)
	}
	got := f.Get(ss.Utr)
	if got.Status != models.SendRunning {
		t.Fatalf("status %d while the second half waits", got.Status)
	}
	ab, err := f.Svc.SingleSends.ABTest(f.Ctx, f.Acct, got)
	if err != nil {
		t.Fatal(err)
	}
	if ab.TimeAfter != 2*time.Hour || ab.Second.Before(start.Add(2*time.Hour-time.Second)) || ab.Second.After(start.Add(2*time.Hour+time.Minute)) {
		t.Fatalf("second half at %v (started %v)", ab.Second, start)
	}

	f.Set(ab.Second.Add(time.Second))
	done := f.WaitStatus(ss.Utr, models.SendCompleted, 20*time.Second)
	if done.Delivered != 20 || done.ABWinner != 0 {
		t.Fatalf("delivered %d winner %d", done.Delivered, done.ABWinner)
	}
	var second string
	for _, m := range f.Sent(ss.Utr) {
		if servicetest.DecodeSubject(t, m) == "" {
			t.Errorf("%s: no subject", m.To)
		}
		if f.Scalar("SELECT variant FROM send_messages WHERE send_id = ? AND email = ?", ss.ID, m.To) == 2 && second == "" {
			second = m.To
			if err := f.Svc.Tracking.OpenHit(f.Ctx, tokenOf(t, m), personHit); err != nil {
				t.Fatal(err)
			}
		}
	}
	per := f.SMTP.PerRecipient()
	for _, e := range emails {
		if per[e] != 1 {
			t.Errorf("%s got %d messages", e, per[e])
		}
	}
	f.Set(ab.DecideAt.Add(time.Second))
	eventually.NoError(t, 20*time.Second, func() error {
		if w := f.Get(ss.Utr).ABWinner; w != 2 {
			return fmt.Errorf("winner %d", w)
		}
		return nil
	})
	ab, err = f.Svc.SingleSends.ABTest(f.Ctx, f.Acct, f.Get(ss.Utr))
	if err != nil {
		t.Fatal(err)
	}
	if ab.Variants[0].Recipients+ab.Variants[1].Recipients != 20 || ab.Variants[1].HumanOpens != 1 || !ab.Variants[1].Winner || ab.Rest.Recipients != 0 {
		t.Fatalf("figures %+v rest %+v", ab.Variants, ab.Rest)
	}
}
