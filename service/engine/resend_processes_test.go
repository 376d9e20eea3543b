package engine_test

import (
	"context"
	"fmt"
	"slices"
	"strconv"
	"testing"
	"time"

	"herald/dbtest"
	"herald/delivery"
	"herald/eventually"
	"herald/models"
	"herald/service"
	"herald/service/servicetest"
	"herald/smtptest"
)

// TestResendAcrossProcesses: process one sends a letter to 12 contacts;
// four open it as people (their ledger rows carry a person's open, as
// the tracker writes it); process one schedules the resend two days on and
// stops. Two other processes on the same database run when its time
// comes: the resend starts once and each of the eight who did not open
// gets exactly one message.
func TestResendAcrossProcesses(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	srv := smtptest.Start(t)
	tr, err := delivery.OpenTransport(srv.URL(), 4, nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { tr.Close() })
	clock := dbtest.NewClock(time.Date(2030, 5, 1, 10, 0, 0, 0, time.UTC))
	procs := dbtest.Processes(t, 3, service.Config{Transport: tr, BaseURL: "http://herald.test", SystemFrom: "no-reply@herald.test", Now: clock.Now})
	svc := procs[0]
	acct := servicetest.NewAccount(t, svc, "owner@herald.test")
	snd, err := svc.Senders.Create(ctx, acct, service.SenderInput{FromName: "Shop", FromEmail: "news@shop.example.com",
		ReplyToEmail: "help@shop.example.com", CountryID: "250", CompanyAddress: "1 rue de Rivoli", Nickname: "shop"})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := svc.Senders.Verify(ctx, snd.VerifyToken); err != nil {
		t.Fatal(err)
	}
	srv.WaitCount(1, 5*time.Second) // the verification mail
	g, err := svc.Groups.Create(ctx, acct, service.GroupInput{GroupName: "News", Description: "News", IsDisplay: "1"})
	if err != nil {
		t.Fatal(err)
	}
	ct, err := svc.ContactTypes.Create(ctx, acct, "Customers")
	if err != nil {
		t.Fatal(err)
	}
	var all []string
	for i := range 12 {
		e := "r" + strconv.Itoa(i) + "@example.com"
		all = append(all, e)
		if _, err := svc.Contacts.Create(ctx, acct, service.ContactInput{ContactTypeID: strconv.FormatInt(ct.ID, 10), Email: e, Country: "250"}); err != nil {
			t.Fatal(err)
		}
	}
	run := func(svc *service.Service) (stop func()) {
		sg, err := svc.NewSending(ctx, service.SendingConfig{Conns: 2, Backoff: 30 * time.Millisecond, Window: time.Hour, Tick: 20 * time.Millisecond})
		if err != nil {
			t.Fatal(err)
		}
		cctx, cancel := context.WithCancel(ctx)
		done := make(chan struct{})
		go func() { defer close(done); sg.Run(cctx) }()
		return func() { cancel(); <-done }
	}
	stop := run(procs[0])
	orig, err := svc.SingleSends.Create(ctx, acct, service.SingleSendInput{
		TemplateID: "1", TemplateHTML: `<html><body><p>Hello</p><a href="((unsubscribe_preferences))">Preferences</a></body></html>`,
		SenderID: strconv.FormatInt(snd.ID, 10), UnsubscribeGroupID: strconv.FormatInt(g.ID, 10),
		SingleSendName: "Spring", Subject: "Spring sale", Preheader: "News",
		RecipientID: []string{"contacts_" + strconv.FormatInt(ct.ID, 10)}, ScheduleType: "0",
	})
	if err != nil {
		t.Fatal(err)
	}
	eventually.NoError(t, 20*time.Second, func() error {
		got, err := svc.SingleSends.Get(ctx, acct, orig.Utr)
		if err != nil {
			t.Fatal(err)
		}
		if got.Status != models.SendCompleted || got.Delivered != 12 {
			return fmt.Errorf("status %d, delivered %d", got.Status, got.Delivered)
		}
		return nil
	})
	opened := all[:4]
	if err := svc.DB.W.Exec("UPDATE send_messages SET human_opened_at = ? WHERE send_id = ? AND email IN ?", clock.Now().UnixMilli(), orig.ID, opened).Error; err != nil {
		t.Fatal(err)
	}
	rs, err := svc.SingleSends.ScheduleResend(ctx, acct, orig.Utr, service.ResendInput{Subject: "Last days of the sale", When: "days", Days: "2"})
	if err != nil {
		t.Fatal(err)
	}
	stop()

	clock.Set(rs.SendAfter.Time.Add(time.Second))
	stop1, stop2 := run(procs[1]), run(procs[2])
	defer stop1()
	defer stop2()
	eventually.NoError(t, 30*time.Second, func() error {
		got, err := procs[1].SingleSends.Get(ctx, acct, rs.Utr)
		if err != nil {
			t.Fatal(err)
		}
		if got.Status != models.SendCompleted {
			return fmt.Errorf("resend status %d, delivered %d", got.Status, got.Delivered)
		}
		return nil
	})
	got := map[string]int{}
	for _, m := range srv.Messages() {
		if m.Header().Get("X-Herald-Send") == rs.Utr {
			got[m.To]++
		}
	}
	var to []string
	for e, n := range got {
		to = append(to, e)
		if n != 1 {
			t.Errorf("%s got the resend %d times", e, n)
		}
	}
	slices.Sort(to)
	want := slices.Clone(all[4:])
	slices.Sort(want)
	if !slices.Equal(to, want) {
		t.Fatalf("resent to %v, want %v", to, want)
	}
}
