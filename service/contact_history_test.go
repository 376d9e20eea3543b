package service_test

import (
	"context"
	"fmt"
	"strconv"
	"strings"
	"testing"
	"time"

	"herald/dbtest"
	"herald/delivery"
	"herald/models"
	"herald/service"
	"herald/service/servicetest"
)

// A contact's history lists the ledger rows of its address, newest first,
// paged, each with what became of it; another account's mails to the
// same address never show.
func TestContactHistory(t *testing.T) {
	t.Parallel()
	svc := dbtest.Service(t)
	ctx := context.Background()
	acct := servicetest.NewAccount(t, svc, "hist@example.com")
	other := servicetest.NewAccount(t, svc, "other@example.com")
	ct, err := svc.ContactTypes.Create(ctx, acct, "People")
	if err != nil {
		t.Fatal(err)
	}
	v, err := svc.Contacts.Create(ctx, acct, service.ContactInput{ContactTypeID: fmt.Sprint(ct.ID), Email: "Ann@Example.com", Country: "FR"})
	if err != nil {
		t.Fatal(err)
	}
	now := models.NewTimestamp(models.Now())
	send := func(owner int64, name string) int64 {
		ss := models.SingleSend{UserID: owner, SingleSendName: name, Subject: "About " + name, Utr: "utr-" + name + fmt.Sprint(owner), CreatedAt: now, UpdatedAt: now}
		if err := svc.DB.W.Create(&ss).Error; err != nil {
			t.Fatal(err)
		}
		return ss.ID
	}
	ledger := func(owner, sendID int64, state models.MessageState, set func(*models.SendMessage)) {
		m := models.SendMessage{SendID: sendID, UserID: owner, Email: "ann@example.com", State: state}
		if set != nil {
			set(&m)
		}
		if err := svc.DB.W.Create(&m).Error; err != nil {
			t.Fatal(err)
		}
	}
	ledger(acct, send(acct, "delivered"), models.MessageDelivered, nil)
	ledger(acct, send(acct, "opened"), models.MessageDelivered, func(m *models.SendMessage) { m.OpenedAt = &now })
	ledger(acct, send(acct, "clicked"), models.MessageDelivered, func(m *models.SendMessage) { m.OpenedAt, m.ClickedAt = &now, &now })
	ledger(acct, send(acct, "bounced"), models.MessageBounced, nil)
	ledger(other, send(other, "theirs"), models.MessageDelivered, nil)
	ledger(acct, send(acct, "unsubscribed"), models.MessageDelivered, func(m *models.SendMessage) { m.OpenedAt, m.UnsubscribedAt = &now, &now })
	ledger(acct, send(acct, "refused"), models.MessageBlocked, nil)

	page := func(before int64, n int) ([]service.ContactMail, string) {
		ms, err := svc.Contacts.History(ctx, acct, v.ID, before, n)
		if err != nil {
			t.Fatal(err)
		}
		var got []string
		for _, m := range ms {
			got = append(got, m.SendName+"="+m.Outcome())
		}
		return ms, strings.Join(got, ",")
	}
	first, got := page(0, 4)
	if got != "refused=refused,unsubscribed=unsubscribed,bounced=bounced,clicked=clicked" {
		t.Fatalf("first page: %s", got)
	}
	if _, got := page(first[len(first)-1].ID, 4); got != "opened=opened,delivered=delivered" {
		t.Fatalf("second page: %s", got)
	}
	if first[0].Subject != "About refused" || first[0].SendUtr == "" {
		t.Fatalf("row: %+v", first[0])
	}
	if _, err := svc.Contacts.History(ctx, other, v.ID, 0, 10); !service.IsNotFound(err) {
		t.Fatalf("another account reads the history: %v", err)
	}
}

// TestContactTimeline: a contact gets two sends. It opens the first
// twice (Apple's proxy at once, the person an hour later) and clicks its
// second link; the second soft-bounces, then hard-bounces, then draws a
// complaint (which unsubscribes the address). Each mail's timeline has
// exactly those events, in time order, with the clicked link's URL and
// the machine flags. A mail recorded before open and click rows named
// their message shows its first open and click from the ledger; a mail
// a scanner clicked more than MaxMailEvents times lists that many and
// says how many more. Paged by mail; another account reads nothing.
func TestContactTimeline(t *testing.T) {
	t.Parallel()
	f := servicetest.NewSendFixture(t, true)
	typeA := f.ContactType("Customers", "ann@example.com")
	var contactID int64
	if err := f.Svc.DB.R.Model(&models.Contact{}).Select("id").Where("user_id = ? AND email = ?", f.Acct, "ann@example.com").Scan(&contactID).Error; err != nil {
		t.Fatal(err)
	}
	audience := []string{"contacts_" + strconv.FormatInt(typeA, 10)}

	// A mail of an older herald: its ledger row has a first open and
	// click; its send's open row names no message.
	now := models.NewTimestamp(models.Now().Add(-48 * time.Hour))
	old := models.SingleSend{UserID: f.Acct, SingleSendName: "Old", Subject: "Old news", Utr: "utr-old", CreatedAt: now, UpdatedAt: now}
	if err := f.Svc.DB.W.Create(&old).Error; err != nil {
		t.Fatal(err)
	}
	opened, clicked := models.NewTimestamp(now.Add(time.Hour)), models.NewTimestamp(now.Add(2*time.Hour))
	oldMail := models.SendMessage{SendID: old.ID, UserID: f.Acct, Email: "ann@example.com", State: models.MessageDelivered,
		SentAt: &now, OpenedAt: &opened, ClickedAt: &clicked}
	if err := f.Svc.DB.W.Create(&oldMail).Error; err != nil {
		t.Fatal(err)
	}
	if err := f.Svc.DB.W.Exec("INSERT INTO send_events (send_id, kind, link, at) VALUES (?, 1, -1, ?)", old.ID, opened).Error; err != nil {
		t.Fatal(err)
	}

	in := f.Input("Spring", audience, nil)
	in.TemplateHTML = twoLinks
	first := f.WaitStatus(f.Create(in).Utr, models.SendCompleted, 20*time.Second)
	in = f.Input("Summer", audience, nil)
	in.TemplateHTML = twoLinks
	second := f.WaitStatus(f.Create(in).Utr, models.SendCompleted, 20*time.Second)
	m1, m2 := f.Ledger(first.ID)["ann@example.com"], f.Ledger(second.ID)["ann@example.com"]
	tok1 := tokenOf(t, f.SentTo(first.Utr, "ann@example.com"))
	d1, d2 := m1.SentAt.Time, m2.SentAt.Time

	f.Set(d1.Add(time.Second))
	if err := f.Svc.Tracking.OpenHit(f.Ctx, tok1, appleProxyHit); err != nil {
		t.Fatal(err)
	}
	f.Set(d1.Add(time.Hour))
	if err := f.Svc.Tracking.OpenHit(f.Ctx, tok1, personHit); err != nil {
		t.Fatal(err)
	}
	f.Set(d1.Add(time.Hour + 30*time.Second))
	if _, err := f.Svc.Tracking.ClickHit(f.Ctx, tok1, 1, personHit); err != nil {
		t.Fatal(err)
	}
	// The reports of the second, dated a few microseconds after its
	// delivery: the complaint's unsubscribe is written at the wall clock,
	// later.
	f.Set(d2.Add(time.Hour))
	rt := returnToken(t, f.SentTo(second.Utr, "ann@example.com"))
	f.Handle(service.Report{Kind: delivery.ReportSoftBounce, Source: delivery.SourceDSN, Token: rt, At: d2.Add(time.Microsecond),
		Recipient: "ann@example.com", Status: "4.2.2", Diagnostic: "smtp; 452 4.2.2 Mailbox full"},
		service.Report{Kind: delivery.ReportHardBounce, Source: delivery.SourceDSN, Token: rt, At: d2.Add(2 * time.Microsecond),
			Recipient: "ann@example.com", Status: "5.1.1", Diagnostic: "smtp; 550 5.1.1 <ann@example.com>: User unknown"},
		service.Report{Kind: delivery.ReportComplaint, Source: delivery.SourceARF, Token: rt, At: d2.Add(3 * time.Microsecond), Recipient: "ann@example.com"})

	show := func(m service.ContactMail) string {
		var b []string
		for _, e := range m.Events {
			s := e.Kind
			if e.Machine {
				s += " machine"
			}
			if e.Ledger {
				s += " ledger"
			}
			if e.URL != "" {
				s += " " + e.URL
			}
			if e.Status != "" {
				s += " " + e.Status + " " + e.Diagnostic
			}
			if e.Via != "" {
				s += " via " + e.Via
			}
			b = append(b, s)
		}
		return strings.Join(b, " | ")
	}
	page, err := f.Svc.Contacts.History(f.Ctx, f.Acct, contactID, 0, 2)
	if err != nil {
		t.Fatal(err)
	}
	if len(page) != 2 || page[0].ID != m2.ID || page[1].ID != m1.ID {
		t.Fatalf("first page: %+v", page)
	}
	want2 := "delivered | soft_bounce 4.2.2 smtp; 452 4.2.2 Mailbox full | hard_bounce 5.1.1 smtp; 550 5.1.1 <ann@example.com>: User unknown | complaint | unsubscribe via complaint"
	if got := show(page[0]); got != want2 {
		t.Errorf("second send:\n got %s\nwant %s", got, want2)
	}
	want1 := "delivered | open machine | open | click " + first.Links[1]
	if got := show(page[1]); got != want1 {
		t.Errorf("first send:\n got %s\nwant %s", got, want1)
	}
	if first.Links[1] != "https://shop.example.com/b?x=1&y=<2>" {
		t.Errorf("links %q", first.Links)
	}
	times := func(m service.ContactMail) []time.Time {
		var out []time.Time
		for _, e := range m.Events {
			out = append(out, e.At.Time)
		}
		return out
	}
	wantTimes := []time.Time{d1, d1.Add(time.Second), d1.Add(time.Hour), d1.Add(time.Hour + 30*time.Second)}
	for i, at := range times(page[1]) {
		if !at.Equal(models.NewTimestamp(wantTimes[i]).Time) {
			t.Errorf("first send, event %d at %v, want %v", i, at, wantTimes[i])
		}
	}
	if ev := page[0].Events; ev[1].Source != delivery.SourceDSN || ev[3].Source != delivery.SourceARF || !ev[4].At.After(ev[3].At.Time) {
		t.Errorf("second send's reports: %+v", ev)
	}

	// The next page: the old mail, its first open and click from the
	// ledger.
	older, err := f.Svc.Contacts.History(f.Ctx, f.Acct, contactID, page[1].ID, 2)
	if err != nil {
		t.Fatal(err)
	}
	if len(older) != 1 || older[0].ID != oldMail.ID || show(older[0]) != "delivered | open ledger | click ledger" {
		t.Fatalf("older page: %d mails, %s", len(older), show(older[0]))
	}

	// A scanner clicks the first send's first link once a minute for
	// an hour and more: the timeline keeps the first MaxMailEvents.
	for i := range service.MaxMailEvents + 7 {
		f.Set(d1.Add(2*time.Hour + time.Duration(i)*61*time.Second))
		if _, err := f.Svc.Tracking.ClickHit(f.Ctx, tok1, 0, service.Hit{Method: "GET", UserAgent: "python-requests/2.31", IP: personHit.IP}); err != nil {
			t.Fatal(err)
		}
	}
	page, err = f.Svc.Contacts.History(f.Ctx, f.Acct, contactID, 0, 2)
	if err != nil {
		t.Fatal(err)
	}
	ev := page[1].Events
	if n := len(ev); n != 1+service.MaxMailEvents || page[1].MoreEvents != 3+7 { // 3 rows of the person and the proxy, 57 of the scanner
		t.Fatalf("capped: %d events, %d more", n, page[1].MoreEvents)
	}
	if last := ev[len(ev)-1]; last.Kind != service.MailClick || !last.Machine || last.URL != first.Links[0] {
		t.Errorf("the last listed: %+v", last)
	}

	// Another account: not found.
	other := servicetest.NewAccount(t, f.Svc, "other@example.org")
	if _, err := f.Svc.Contacts.History(f.Ctx, other, contactID, 0, 20); !service.IsNotFound(err) {
		t.Fatalf("another account reads the timeline: %v", err)
	}
}
