package engine_test

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"sync"
	"testing"
	"time"

	"herald/dbtest"
	"herald/delivery"
	"herald/eventually"
	"herald/models"
	"herald/service"
	"herald/service/engine"
	"herald/service/servicetest"
	"herald/smtptest"
)

// An A/B test of three subjects on half of 40 contacts, by unique opens,
// after an hour. Process one sends the test share, each message with its
// variant's subject, and nothing else; opens make variant 2 the winner.
// Process one stops; process two, on the same database, sends nothing
// more before the hour. Then two processes choose the winner at once: one
// of them does. Both run: the rest gets variant 2's subject, every
// recipient one message, and the statistics show each variant.
func TestABTestSendsTheWinnerToTheRest(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	srv := smtptest.Start(t)
	tr, err := delivery.OpenTransport(srv.URL(), 4, nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { tr.Close() })
	start := time.Date(2030, 5, 1, 10, 0, 0, 0, time.UTC)
	clock := dbtest.NewClock(start)
	procs := dbtest.Processes(t, 2, service.Config{Transport: tr, BaseURL: "http://herald.test", SystemFrom: "no-reply@herald.test", Now: clock.Now})
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
	for i := range 40 {
		e := "c" + strconv.Itoa(i) + "@example.com"
		all = append(all, e)
		if _, err := svc.Contacts.Create(ctx, acct, service.ContactInput{ContactTypeID: strconv.FormatInt(ct.ID, 10), Email: e, Country: "250"}); err != nil {
			t.Fatal(err)
		}
	}
	slices.Sort(all)

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

	subjects := []string{"Spring sale", "Half price this week", "Your spring picks"}
	ss, err := svc.SingleSends.Create(ctx, acct, service.SingleSendInput{
		TemplateID: "1", TemplateHTML: `<html><body><p>Hello</p><a href="((unsubscribe_preferences))">Preferences</a></body></html>`,
		SenderID: strconv.FormatInt(snd.ID, 10), UnsubscribeGroupID: strconv.FormatInt(g.ID, 10),
		SingleSendName: "Spring", Subject: "Spring sale", Preheader: "News",
		RecipientID: []string{"contacts_" + strconv.FormatInt(ct.ID, 10)}, ScheduleType: "0",
		AB: &service.ABTestInput{On: true, Subjects: append(slices.Clone(subjects), ""), Preheaders: []string{"", "Only until Sunday"},
			Share: "50", Metric: service.ABOpens, Wait: "60"},
	})
	if err != nil {
		t.Fatal(err)
	}
	// sent is the send's messages: address → subjects.
	sent := func() map[string][]string {
		out := map[string][]string{}
		for _, m := range srv.Messages() {
			if m.Header().Get("X-Herald-Send") == ss.Utr {
				out[m.To] = append(out[m.To], m.Header().Get("Subject"))
			}
		}
		return out
	}
	keys := func(m map[string][]string) []string {
		var out []string
		for k := range m {
			out = append(out, k)
		}
		slices.Sort(out)
		return out
	}
	still := func(when string, want []string) {
		t.Helper()
		time.Sleep(1200 * time.Millisecond)
		if got := keys(sent()); !slices.Equal(got, want) {
			t.Fatalf("%s: sent to %v, want %v", when, got, want)
		}
	}
	waitFor := func(when string, want []string) {
		t.Helper()
		eventually.NoError(t, 15*time.Second, func() error {
			if got := keys(sent()); !slices.Equal(got, want) {
				return fmt.Errorf("%s: sent to %v, want %v", when, got, want)
			}
			return nil
		})
	}

	// The split, once the audience is resolved.
	eventually.NoError(t, 10*time.Second, func() error {
		if got, _ := svc.SingleSends.Get(ctx, acct, ss.Utr); got.Triggered == 40 {
			return nil
		}
		return errors.New("not resolved")
	})
	var rows []struct {
		ID      int64
		Email   string
		Variant int
	}
	if err := svc.DB.R.Raw("SELECT id, email, variant FROM send_messages WHERE send_id = ? ORDER BY email", ss.ID).Scan(&rows).Error; err != nil {
		t.Fatal(err)
	}
	variantOf := map[string]int{}
	perVariant := make([]int, 4)
	var test, rest []string
	for _, r := range rows {
		variantOf[r.Email] = r.Variant
		perVariant[r.Variant]++
		if r.Variant > 0 {
			test = append(test, r.Email)
		} else {
			rest = append(rest, r.Email)
		}
	}
	t.Logf("split: %d held, variants %v", perVariant[0], perVariant[1:])
	if len(test) < 10 || len(test) > 30 || perVariant[1] == 0 || perVariant[2] == 0 || perVariant[3] == 0 {
		t.Fatalf("split of 40 at 50%%: %d held, variants %v", perVariant[0], perVariant[1:])
	}

	// The test share goes first, each with its variant's subject; the rest waits.
	waitFor("the test share", test)
	still("after the test share", test)
	for addr, subj := range sent() {
		if want := subjects[variantOf[addr]-1]; len(subj) != 1 || subj[0] != want {
			t.Errorf("%s (variant %d) got %q, want %q", addr, variantOf[addr], subj, want)
		}
	}
	// Opens make variant 2 the winner: all of its messages open, one of
	// variant 1's (a repeated open counts once).
	opened := map[int]int{}
	for _, r := range rows {
		if r.Variant == 2 || r.Variant == 1 && opened[1] == 0 {
			tok, err := svc.Tracking.Token(ctx, r.ID)
			if err != nil {
				t.Fatal(err)
			}
			for range 2 {
				if err := svc.Tracking.Open(ctx, tok); err != nil {
					t.Fatal(err)
				}
			}
			opened[r.Variant]++
		}
	}
	if opened[2] < 2 {
		t.Fatalf("variant 2 has %d messages: the test needs 2 for its win", opened[2])
	}

	// A restart before the wait ends: process two sends nothing more.
	stop()
	clock.Set(start.Add(59 * time.Minute))
	stop = run(procs[1])
	still("a minute before the winner, after the restart", test)
	stop()
	got, _ := svc.SingleSends.Get(ctx, acct, ss.Utr)
	if got.ABWinner != 0 || got.Status != models.SendRunning {
		t.Fatalf("before the wait: winner %d status %d", got.ABWinner, got.Status)
	}

	// Two processes choose the winner at once: one of them does.
	clock.Set(start.Add(61 * time.Minute))
	var wg sync.WaitGroup
	var mu sync.Mutex
	var winners []int
	for i := range 8 {
		wg.Go(func() {
			w, err := engine.DecideTest(ctx, procs[i%2].DB, ss.ID, clock.Now())
			if err != nil {
				t.Error(err)
				return
			}
			mu.Lock()
			winners = append(winners, w)
			mu.Unlock()
		})
	}
	wg.Wait()
	slices.Sort(winners)
	if want := []int{0, 0, 0, 0, 0, 0, 0, 2}; !slices.Equal(winners, want) {
		t.Fatalf("winners chosen %v, want %v", winners, want)
	}

	// Both processes send the rest, with the winner's subject.
	stop = run(procs[0])
	defer func() { stop() }()
	stopSecond := run(procs[1])
	defer stopSecond()
	waitFor("the rest", all)
	for addr, subj := range sent() {
		want := subjects[1]
		if v := variantOf[addr]; v > 0 {
			want = subjects[v-1]
		}
		if len(subj) != 1 || subj[0] != want {
			t.Errorf("%s (variant %d) got %q, want %q", addr, variantOf[addr], subj, want)
		}
	}
	eventually.NoError(t, 10*time.Second, func() error {
		got, _ = svc.SingleSends.Get(ctx, acct, ss.Utr)
		if got.Status == models.SendCompleted {
			return nil
		}
		return fmt.Errorf("status %d after the rest, want completed", got.Status)
	})
	if got.Delivered != 40 || got.ABWinner != 2 {
		t.Fatalf("delivered %d winner %d, want 40 and 2", got.Delivered, got.ABWinner)
	}
	for addr, n := range srv.PerRecipient() {
		if n != 1 && addr != "news@shop.example.com" && addr != "help@shop.example.com" {
			t.Errorf("%s got %d messages", addr, n)
		}
	}

	// The statistics: each variant's test figures, the winner, the rest.
	ab, err := svc.SingleSends.ABTest(ctx, acct, got)
	if err != nil {
		t.Fatal(err)
	}
	if ab == nil || ab.Winner != 2 || len(ab.Variants) != 3 || !ab.DecideAt.Equal(start.Add(time.Hour)) {
		t.Fatalf("test %+v", ab)
	}
	for i, v := range ab.Variants {
		n := int64(perVariant[i+1])
		if v.Subject != subjects[i] || v.Recipients != n || v.Delivered != n || v.UniqueOpens != int64(opened[i+1]) || v.UniqueClicks != 0 || v.Winner != (i == 1) {
			t.Errorf("variant %d: %+v; want %q, %d delivered, %d opens", i+1, v, subjects[i], n, opened[i+1])
		}
	}
	// A contact's history names the subject its message had.
	for _, r := range rows {
		if r.Variant != 3 {
			continue
		}
		var cid int64
		if err := svc.DB.R.Raw("SELECT id FROM contacts WHERE email = ? AND user_id = ?", r.Email, acct).Scan(&cid).Error; err != nil {
			t.Fatal(err)
		}
		h, err := svc.Contacts.History(ctx, acct, cid, 0, 10)
		if err != nil {
			t.Fatal(err)
		}
		if len(h) != 1 || h[0].Subject != subjects[2] {
			t.Fatalf("history of %s (variant 3): %+v", r.Email, h)
		}
		break
	}
	if ab.Variants[1].Preheader != "Only until Sunday" || ab.Rest.Delivered != int64(len(rest)) || ab.Held != 0 {
		t.Errorf("preheader %q, rest %+v held %d; want %d delivered", ab.Variants[1].Preheader, ab.Rest, ab.Held, len(rest))
	}
}
