package service_test

import (
	"errors"
	"slices"
	"strconv"
	"testing"
	"time"

	"herald/delivery"
	"herald/models"
	"herald/service"
	"herald/service/servicetest"
)

// TestResendGoesToThoseWhoDidNotOpen: a send to six addresses. ann opens
// as a person; bob's mail is fetched by Apple's privacy proxy only; cy
// does nothing; dan unsubscribes by the one-click link; eve complains;
// fay clicks as a person after the resend is chosen (the audience is read
// when the resend starts). The preview counts bob, cy and fay; the resend,
// scheduled a day after the send, waits for its time, then goes to bob and
// cy only, with the new subject and the same design, as a send of its own
// that names its original.
func TestResendGoesToThoseWhoDidNotOpen(t *testing.T) {
	t.Parallel()
	f := servicetest.NewSendFixture(t, true)
	emails := []string{"ann@example.com", "bob@example.com", "cy@example.com", "dan@example.com", "eve@example.com", "fay@example.com"}
	typeA := f.ContactType("Customers", emails...)
	in := f.Input("Spring", []string{"contacts_" + strconv.FormatInt(typeA, 10)}, nil)
	in.TemplateHTML = `<html><body><p>Spring sale, ((first_name))</p><a href="https://shop.example.com/a">A</a>` +
		`<p>((sender_name)), ((sender_address))</p><a href="((unsubscribe_preferences))">Preferences</a></body></html>`
	orig := f.WaitStatus(f.Create(in).Utr, models.SendCompleted, 20*time.Second)
	ledger := f.Ledger(orig.ID)
	tok := map[string]string{}
	for _, m := range f.Sent(orig.Utr) {
		tok[m.To] = tokenOf(t, m)
	}
	sent := ledger["ann@example.com"].SentAt.Time

	f.Set(sent.Add(2 * time.Hour))
	if err := f.Svc.Tracking.OpenHit(f.Ctx, tok["ann@example.com"], personHit); err != nil {
		t.Fatal(err)
	}
	f.Set(ledger["bob@example.com"].SentAt.Time.Add(3 * time.Second))
	if err := f.Svc.Tracking.OpenHit(f.Ctx, tok["bob@example.com"], appleProxyHit); err != nil {
		t.Fatal(err)
	}
	f.Set(sent.Add(3 * time.Hour))
	if err := f.Svc.Tracking.OneClick(f.Ctx, tok["dan@example.com"]); err != nil {
		t.Fatal(err)
	}
	f.Handle(service.Report{Kind: delivery.ReportComplaint, Source: delivery.SourceARF,
		Token: returnToken(t, f.SentTo(orig.Utr, "eve@example.com")), At: f.Now(), Recipient: "eve@example.com"})
	if got := f.Scalar("SELECT human_opened_at FROM send_messages WHERE send_id = ? AND email = ?", orig.ID, "bob@example.com"); got != 0 {
		t.Fatalf("bob's proxy open counted as a person's (%d)", got)
	}

	n, err := f.Svc.SingleSends.NotOpened(f.Ctx, f.Acct, orig)
	if err != nil {
		t.Fatal(err)
	}
	if n != 3 {
		t.Fatalf("did not open: %d, want 3 (bob, cy, fay)", n)
	}

	// What the form refuses.
	for _, c := range []struct {
		in    service.ResendInput
		field string
	}{
		{service.ResendInput{Subject: "", When: "days", Days: "1"}, "subject"},
		{service.ResendInput{Subject: "Again", When: "days", Days: "0"}, "wait_days"},
		{service.ResendInput{Subject: "Again", When: "days", Days: "15"}, "wait_days"},
		{service.ResendInput{Subject: "Again", When: "soon"}, "wait_days"},
		{service.ResendInput{Subject: "Again", When: "at", Date: sent.Add(-48 * time.Hour).Format("2006-01-02"), Time: "10:00"}, "schedule_date"},
	} {
		_, err := f.Svc.SingleSends.ScheduleResend(f.Ctx, f.Acct, orig.Utr, c.in)
		if !hasField(err, c.field) {
			t.Errorf("%+v: %v, want a problem on %s", c.in, err, c.field)
		}
	}
	// Another account's send is not found.
	other := f.SecondAccount("other@herald.test")
	if _, err := other.Svc.SingleSends.ScheduleResend(f.Ctx, other.Acct, orig.Utr, service.ResendInput{Subject: "x", When: "days", Days: "2"}); !service.IsNotFound(err) {
		t.Fatalf("another account's resend: %v", err)
	}

	rs, err := f.Svc.SingleSends.ScheduleResend(f.Ctx, f.Acct, orig.Utr, service.ResendInput{Subject: "Did you see our sale, ((first_name))?", When: "days", Days: "1"})
	if err != nil {
		t.Fatal(err)
	}
	if rs.ResendOf == nil || *rs.ResendOf != orig.ID || rs.Status != models.SendReady || rs.SendAfter == nil ||
		!rs.SendAfter.Time.Equal(orig.SentAt.Time.Add(24*time.Hour).Truncate(time.Second)) {
		t.Fatalf("resend %+v", rs)
	}
	if _, err := f.Svc.SingleSends.ScheduleResend(f.Ctx, f.Acct, orig.Utr, service.ResendInput{Subject: "Twice", When: "days", Days: "2"}); err == nil {
		t.Fatal("a second resend was saved")
	}
	if _, err := f.Svc.SingleSends.ScheduleResend(f.Ctx, f.Acct, rs.Utr, service.ResendInput{Subject: "Again", When: "days", Days: "2"}); err == nil {
		t.Fatal("a resend was resent")
	}
	if got, err := f.Svc.SingleSends.Resend(f.Ctx, f.Acct, orig); err != nil || got == nil || got.ID != rs.ID {
		t.Fatalf("resend of the original: %v %v", got, err)
	}
	if got, err := f.Svc.SingleSends.Original(f.Ctx, f.Acct, rs); err != nil || got == nil || got.ID != orig.ID {
		t.Fatalf("original of the resend: %v %v", got, err)
	}

	f.Set(sent.Add(5 * time.Hour))
	if _, err := f.Svc.Tracking.ClickHit(f.Ctx, tok["fay@example.com"], 0, personHit); err != nil {
		t.Fatal(err)
	}
	if st := f.Status(rs.ID); st != models.SendReady || len(f.Sent(rs.Utr)) != 0 {
		t.Fatalf("before its time the resend is in status %d with %d mails", st, len(f.Sent(rs.Utr)))
	}

	f.Set(rs.SendAfter.Time.Add(time.Second))
	done := f.WaitStatus(rs.Utr, models.SendCompleted, 30*time.Second)
	var to []string
	for _, m := range f.Sent(rs.Utr) {
		to = append(to, m.To)
		if s := servicetest.DecodeSubject(t, m); s != "Did you see our sale, Name"+strconv.Itoa(slices.Index(emails, m.To))+"?" {
			t.Errorf("%s: subject %q", m.To, s)
		}
	}
	slices.Sort(to)
	if !slices.Equal(to, []string{"bob@example.com", "cy@example.com"}) {
		t.Fatalf("resent to %v, want bob and cy", to)
	}
	if done.Triggered != 2 || done.Delivered != 2 {
		t.Fatalf("resend figures: triggered %d delivered %d", done.Triggered, done.Delivered)
	}
	// The original's figures are its own.
	if o := f.Get(orig.Utr); o.Triggered != int64(len(emails)) {
		t.Fatalf("original triggered %d", o.Triggered)
	}
	// A resend is not edited.
	upd := in
	upd.Utr = rs.Utr
	if _, err := f.Svc.SingleSends.Update(f.Ctx, f.Acct, upd); err == nil {
		t.Fatal("a resend was updated")
	}
}

// hasField reports whether err is a validation error with a problem on
// field.
func hasField(err error, field string) bool {
	var e *service.Error
	if !errors.As(err, &e) || e.Code != service.CodeValidation {
		return false
	}
	_, has := e.Fields[field]
	return has
}
