package service_test

import (
	"context"
	"errors"
	"fmt"
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

// A warm-up plan (start 4, growth 2) on a 20-recipient send, with two
// engines on one database: day 1 (in the account's zone, Tokyo) carries
// 4 campaign messages and the rest waits, shown in the send's waiting; a
// single message goes at once although the cap is used up, and counts; the
// next Tokyo day (the same UTC day) carries 8 more; ending the plan lets
// the rest go.
func TestWarmupCapHoldsAcrossProcessesAndDays(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	srv := smtptest.Start(t)
	tr, err := delivery.OpenTransport(srv.URL(), 4, nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { tr.Close() })
	clock := dbtest.NewClock(time.Date(2030, 5, 1, 10, 0, 0, 0, time.UTC)) // 19:00 in Tokyo
	procs := dbtest.Processes(t, 2, service.Config{Transport: tr, BaseURL: "http://herald.test", SystemFrom: "no-reply@herald.test", Now: clock.Now})
	svc := procs[0]
	acct := servicetest.NewAccount(t, svc, "owner@herald.test")
	if err := svc.Accounts.SetTimeZone(ctx, acct, "Asia/Tokyo"); err != nil {
		t.Fatal(err)
	}
	snd, err := svc.Senders.Create(ctx, acct, service.SenderInput{FromName: "Shop", FromEmail: "news@Shop.example.com",
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
	const n = 20
	for i := range n {
		if _, err := svc.Contacts.Create(ctx, acct, service.ContactInput{ContactTypeID: strconv.FormatInt(ct.ID, 10),
			Email: fmt.Sprintf("c%02d@example.com", i), Country: "250"}); err != nil {
			t.Fatal(err)
		}
	}
	plan, err := svc.Warmups.Start(ctx, acct, service.WarmupInput{Domain: "shop.example.com", Start: "4", Growth: "2", Until: "100"})
	if err != nil {
		t.Fatal(err)
	}
	if plan.StartedOn != "2030-05-01" || plan.Days != 6 || plan.TodayCap != 4 || plan.EndsOn != "2030-05-06" {
		t.Fatalf("plan %+v", plan)
	}
	for _, p := range procs {
		sg, err := p.NewSending(ctx, service.SendingConfig{Conns: 2, Backoff: 30 * time.Millisecond, Window: time.Hour, Tick: 20 * time.Millisecond})
		if err != nil {
			t.Fatal(err)
		}
		cctx, cancel := context.WithCancel(ctx)
		done := make(chan struct{})
		go func() { defer close(done); sg.Run(cctx) }()
		t.Cleanup(func() { cancel(); <-done })
	}
	ss, err := svc.SingleSends.Create(ctx, acct, service.SingleSendInput{
		TemplateID: "1", TemplateHTML: `<html><body><p>Hello</p><a href="((unsubscribe_preferences))">Preferences</a></body></html>`,
		SenderID: strconv.FormatInt(snd.ID, 10), UnsubscribeGroupID: strconv.FormatInt(g.ID, 10),
		SingleSendName: "Warm", Subject: "Warm", Preheader: "News",
		RecipientID: []string{"contacts_" + strconv.FormatInt(ct.ID, 10)}, ScheduleType: "0",
	})
	if err != nil {
		t.Fatal(err)
	}
	campaign := func() int {
		k := 0
		for _, m := range srv.Messages() {
			if m.Header().Get("X-Herald-Send") == ss.Utr {
				k++
			}
		}
		return k
	}
	scalar := func(q string, args ...any) int64 {
		var v int64
		if err := svc.DB.R.Raw(q, args...).Scan(&v).Error; err != nil {
			t.Fatal(err)
		}
		return v
	}
	// handed is every message of the send that left the queue: the cap
	// bounds it at every moment, whichever process claimed.
	handed := func() int64 {
		return scalar("SELECT COUNT(*) FROM send_messages WHERE send_id = ? AND state <> ?", ss.ID, models.MessageQueued)
	}
	waitSent := func(day string, want int) {
		t.Helper()
		eventually.NoError(t, 20*time.Second, func() error {
			if h := handed(); h > int64(want) {
				t.Fatalf("%s: %d messages left the queue, the cap allows %d", day, h, want)
			}
			got, err := svc.SingleSends.Get(ctx, acct, ss.Utr)
			if err != nil {
				t.Fatal(err)
			}
			if c := campaign(); c != want || got.Delivered != int64(want) {
				return fmt.Errorf("%s: the relay got %d, delivered %d; want %d", day, c, got.Delivered, want)
			}
			if got.Waiting != int64(n-want) {
				return fmt.Errorf("%s: waiting %d, want %d", day, got.Waiting, n-want)
			}
			return nil
		})
	}
	waitSent("day 1", 4)

	// A single message is not held by the used-up cap, and counts on it.
	msg, err := procs[1].Messages.Send(ctx, acct, service.MessageInput{SenderID: strconv.FormatInt(snd.ID, 10), To: "single@example.com",
		Subject: "Your code", TemplateHTML: "<p>1234</p>"})
	if err != nil {
		t.Fatal(err)
	}
	eventually.NoError(t, 20*time.Second, func() error {
		for _, m := range srv.Messages() {
			if m.To == "single@example.com" && m.Header().Get("Message-Id") == "<"+msg.ID+">" {
				return nil
			}
		}
		return fmt.Errorf("the single message has not arrived")
	})
	// The lane's claims ran beside the campaign's: still 4 of the send.
	if c, h := campaign(), handed(); c != 4 || h != 4 {
		t.Fatalf("after the single message: the relay got %d of the send, %d left the queue", c, h)
	}
	plans, err := svc.Warmups.List(ctx, acct)
	if err != nil || len(plans) != 1 {
		t.Fatalf("plans %+v, %v", plans, err)
	}
	if p := plans[0]; p.Day != 1 || p.TodayCap != 4 || p.TodaySent != 5 || p.TodayLeft != 0 || p.Done {
		t.Fatalf("day 1's plan %+v", p)
	}

	// 15:00 UTC is midnight in Tokyo: day 2, cap 8.
	clock.Set(time.Date(2030, 5, 1, 15, 0, 1, 0, time.UTC))
	waitSent("day 2", 12)
	chart, err := svc.Warmups.Chart(ctx, acct, "shop.example.com")
	if err != nil || len(chart) != 6 {
		t.Fatalf("chart %+v, %v", chart, err)
	}
	if chart[0].Cap != 4 || chart[0].Sent != 5 || !chart[0].Past || chart[1].Cap != 8 || chart[1].Sent != 8 || !chart[1].Today || chart[5].Cap != 100 {
		t.Fatalf("chart %+v", chart)
	}

	// Ended (by the other process): the rest goes at once.
	if err := procs[1].Warmups.End(ctx, acct, "shop.example.com"); err != nil {
		t.Fatal(err)
	}
	eventually.NoError(t, 20*time.Second, func() error {
		got, err := svc.SingleSends.Get(ctx, acct, ss.Utr)
		if err != nil {
			t.Fatal(err)
		}
		if got.Status != models.SendCompleted || got.Delivered != n || got.Waiting != 0 {
			return fmt.Errorf("status %d, delivered %d, waiting %d", got.Status, got.Delivered, got.Waiting)
		}
		return nil
	})
	if c := campaign(); c != n {
		t.Fatalf("the relay got %d of the send", c)
	}
	if err := svc.Warmups.End(ctx, acct, "shop.example.com"); !service.IsNotFound(err) {
		t.Fatalf("ending again: %v", err)
	}
}

// The plan's validation: each field's problem, and a domain of no sender
// of the account.
func TestWarmupValidation(t *testing.T) {
	t.Parallel()
	f := servicetest.NewSendFixture(t, false)
	for _, c := range []struct {
		in    service.WarmupInput
		field string
		msg   string
	}{
		{service.WarmupInput{Start: "1", Growth: "2", Until: "10"}, "domain", "The domain field is required."},
		{service.WarmupInput{Domain: "not a domain", Start: "1", Growth: "2", Until: "10"}, "domain", "The domain must be a valid domain name."},
		{service.WarmupInput{Domain: "other.example.com", Start: "1", Growth: "2", Until: "10"}, "domain", "The domain must be the domain of one of your senders."},
		{service.WarmupInput{Domain: "shop.example.com", Start: "0", Growth: "2", Until: "10"}, "start", "The start must be at least 1."},
		{service.WarmupInput{Domain: "shop.example.com", Start: "x", Growth: "2", Until: "10"}, "start", "The start must be an integer."},
		{service.WarmupInput{Domain: "shop.example.com", Start: "5", Growth: "1", Until: "10"}, "growth", "The growth must be greater than 1 and at most 10."},
		{service.WarmupInput{Domain: "shop.example.com", Start: "5", Growth: "NaN", Until: "10"}, "growth", "The growth must be a number."},
		{service.WarmupInput{Domain: "shop.example.com", Start: "5", Growth: "1.5", Until: "5"}, "until", "The until must be greater than the start."},
	} {
		_, err := f.Svc.Warmups.Start(f.Ctx, f.Acct, c.in)
		var se *service.Error
		if !asServiceError(err, &se) || len(se.Fields[c.field]) != 1 || se.Fields[c.field][0] != c.msg {
			t.Errorf("%+v: %v (%+v)", c.in, err, se)
		}
	}
	p, err := f.Svc.Warmups.Start(f.Ctx, f.Acct, service.WarmupInput{Domain: " SHOP.example.com ", Start: "50", Growth: "1.5", Until: "1000"})
	if err != nil {
		t.Fatal(err)
	}
	// 50, 75, 113 (112.5 rounded), 169, 253, 380, 570, 854, then 1000.
	if p.Domain != "shop.example.com" || p.Days != 9 || p.TodayCap != 50 {
		t.Fatalf("plan %+v", p)
	}
	chart, err := f.Svc.Warmups.Chart(f.Ctx, f.Acct, "shop.example.com")
	if err != nil || chart[2].Cap != 113 || chart[7].Cap != 854 || chart[8].Cap != 1000 {
		t.Fatalf("chart %+v, %v", chart, err)
	}
	// Another account's plan is not this one's.
	other := servicetest.NewAccount(t, f.Svc, "other@herald.test")
	if _, err := f.Svc.Warmups.Get(f.Ctx, other, "shop.example.com"); !service.IsNotFound(err) {
		t.Fatalf("another account reads the plan: %v", err)
	}
	if err := f.Svc.Warmups.End(f.Ctx, other, "shop.example.com"); !service.IsNotFound(err) {
		t.Fatalf("another account ends the plan: %v", err)
	}
}

func asServiceError(err error, se **service.Error) bool { return errors.As(err, se) }

// The checklist warns of a send larger than what is left of today's cap,
// with the days it will take; a send within it is an OK item.
func TestWarmupChecklist(t *testing.T) {
	t.Parallel()
	f := servicetest.NewSendFixture(t, false)
	typeID := f.ContactType("Five", "a@example.com", "b@example.com", "c@example.com", "d@example.com", "e@example.com")
	in := f.Input("Warm", []string{"contacts_" + strconv.FormatInt(typeID, 10)}, nil)
	rule := func() *service.CheckItem {
		items, err := f.Svc.Checklist.ForInput(f.Ctx, f.Acct, in)
		if err != nil {
			t.Fatal(err)
		}
		for i := range items {
			if items[i].Rule == "warmup" {
				return &items[i]
			}
		}
		return nil
	}
	if it := rule(); it != nil {
		t.Fatalf("a warm-up item with no plan: %+v", it)
	}
	// 2, 4, 8, …: five recipients take two days.
	if _, err := f.Svc.Warmups.Start(f.Ctx, f.Acct, service.WarmupInput{Domain: "shop.example.com", Start: "2", Growth: "2", Until: "100"}); err != nil {
		t.Fatal(err)
	}
	want := "The domain shop.example.com is warming up: today's cap is 2 (2 left) and this send has 5 recipients, so it will take 2 days; the rest waits for the next days' caps."
	if it := rule(); it == nil || it.OK || it.Severity != "warning" || it.Message != want {
		t.Fatalf("item %+v", it)
	}
	if _, err := f.Svc.Warmups.Start(f.Ctx, f.Acct, service.WarmupInput{Domain: "shop.example.com", Start: "5", Growth: "2", Until: "100"}); err != nil {
		t.Fatal(err)
	}
	if it := rule(); it == nil || !it.OK {
		t.Fatalf("a send within the cap: %+v", it)
	}
}
