package service_test

import (
	"strconv"
	"strings"
	"testing"
	"time"

	"herald/models"
	"herald/service"
	"herald/service/servicetest"
)

// TestEngagementFromPeopleOnly: a send to three addresses. ann opens as a
// person; bob's mail is fetched by a privacy proxy only; a link scanner
// clicks every link of cy's mail half a minute after delivery (its first
// click counts as a person's until the next link within 2 s takes it
// back). Only ann is engaged, from her open's time; bob and cy, mailed
// today, are new. 40 days on ann is lapsing and bob and cy are not
// engaged; 100 days on nobody is engaged. A segment on the level counts
// and explains the same, and refuses an unknown level.
func TestEngagementFromPeopleOnly(t *testing.T) {
	t.Parallel()
	f := servicetest.NewSendFixture(t, true)
	typeA := f.ContactType("Customers", "ann@example.com", "bob@example.com", "cy@example.com")
	in := f.Input("Spring", []string{"contacts_" + strconv.FormatInt(typeA, 10)}, nil)
	in.TemplateHTML = `<html><body><p>Hello ((first_name))</p><a href="https://shop.example.com/a">A</a> <a href="https://shop.example.com/b">B</a>` +
		`<p>((sender_name)), ((sender_address))</p><a href="((unsubscribe_preferences))">Preferences</a></body></html>`
	ss := f.WaitStatus(f.Create(in).Utr, models.SendCompleted, 20*time.Second)
	ledger := f.Ledger(ss.ID)
	tok := map[string]string{}
	for _, m := range f.Sent(ss.Utr) {
		tok[m.To] = tokenOf(t, m)
	}
	sent := ledger["ann@example.com"].SentAt.Time
	set := func(email string, d time.Duration) { f.Set(ledger[email].SentAt.Time.Add(d)) }

	set("ann@example.com", 2*time.Hour)
	annAt := f.Now()
	if err := f.Svc.Tracking.OpenHit(f.Ctx, tok["ann@example.com"], personHit); err != nil {
		t.Fatal(err)
	}
	set("bob@example.com", 3*time.Second)
	if err := f.Svc.Tracking.OpenHit(f.Ctx, tok["bob@example.com"], appleProxyHit); err != nil {
		t.Fatal(err)
	}
	for i, d := range []time.Duration{30000, 30600} {
		set("cy@example.com", d*time.Millisecond)
		if _, err := f.Svc.Tracking.ClickHit(f.Ctx, tok["cy@example.com"], i, scannerHit); err != nil {
			t.Fatal(err)
		}
	}

	id := func(email string) int64 {
		return f.Scalar("SELECT id FROM contacts WHERE email = ? AND user_id = ?", email, f.Acct)
	}
	levels := func(when string, want map[string]string) {
		t.Helper()
		for email, level := range want {
			e, err := f.Svc.Contacts.Engagement(f.Ctx, f.Acct, id(email))
			if err != nil {
				t.Fatal(err)
			}
			if e.Level != level {
				t.Errorf("%s: %s is %q, want %q", when, email, e.Level, level)
			}
		}
		// The contact list's levels, read for a page at once, agree.
		var rows []models.ContactView
		if err := f.Svc.Contacts.Each(f.Ctx, f.Acct, service.ContactFilter{}, func(v *models.ContactView) error {
			rows = append(rows, *v)
			return nil
		}); err != nil {
			t.Fatal(err)
		}
		page, err := f.Svc.Contacts.Levels(f.Ctx, f.Acct, rows)
		if err != nil {
			t.Fatal(err)
		}
		for email, level := range want {
			if got := page[id(email)]; got != level {
				t.Errorf("%s: the list shows %s as %q, want %q", when, email, got, level)
			}
		}
	}
	f.Set(sent.Add(3 * time.Hour))
	levels("today", map[string]string{"ann@example.com": "engaged", "bob@example.com": "new", "cy@example.com": "new"})
	if e, _ := f.Svc.Contacts.Engagement(f.Ctx, f.Acct, id("ann@example.com")); !e.LastEngaged.Equal(annAt.Truncate(time.Millisecond)) {
		t.Errorf("ann last engaged %v, want %v", e.LastEngaged, annAt)
	}
	if e, _ := f.Svc.Contacts.Engagement(f.Ctx, f.Acct, id("cy@example.com")); !e.LastEngaged.IsZero() {
		t.Errorf("cy's scanner click left last engaged %v", e.LastEngaged)
	}

	// A segment of the not engaged, saved today, holds nobody.
	coldSeg, err := f.Svc.Segments.Create(f.Ctx, f.Acct, service.SegmentInput{ContactTypeID: strconv.FormatInt(typeA, 10), SegmentName: "Cold",
		SelectField: []string{"engagement"}, SelectOperator: []string{"equals"}, Value: []string{"not_engaged"}})
	if err != nil {
		t.Fatal(err)
	}
	if n, err := f.Svc.Segments.RecipientCount(f.Ctx, f.Acct, coldSeg.ID); err != nil || n != 0 {
		t.Fatalf("cold today: %d %v", n, err)
	}

	f.Set(sent.Add(40 * 24 * time.Hour))
	levels("40 days on", map[string]string{"ann@example.com": "lapsing", "bob@example.com": "not_engaged", "cy@example.com": "not_engaged"})
	seg, err := f.Svc.Segments.Create(f.Ctx, f.Acct, service.SegmentInput{ContactTypeID: strconv.FormatInt(typeA, 10), SegmentName: "Lapsing or worse",
		SelectField: []string{"engagement"}, SelectOperator: []string{"in"}, Value: []string{"lapsing|Not engaged"}})
	if err != nil {
		t.Fatal(err)
	}
	if n, err := f.Svc.Segments.RecipientCount(f.Ctx, f.Acct, seg.ID); err != nil || n != 3 {
		t.Fatalf("segment of lapsing or not engaged: %d %v, want 3", n, err)
	}
	cold := service.SegmentInput{ContactTypeID: strconv.FormatInt(typeA, 10), SegmentName: "Cold",
		SelectField: []string{"engagement"}, SelectOperator: []string{"equals"}, Value: []string{"not_engaged"}}
	if n, err := f.Svc.Segments.Count(f.Ctx, f.Acct, cold); err != nil || n != 2 {
		t.Fatalf("count of not engaged: %d %v, want 2", n, err)
	}
	// A send to the segment saved 40 days ago reaches the contacts that
	// are not engaged now: the send brings the segment up to date first.
	again := f.WaitStatus(f.Create(f.Input("Win back", []string{"segments_" + strconv.FormatInt(coldSeg.ID, 10)}, nil)).Utr, models.SendCompleted, 20*time.Second)
	if got := f.Ledger(again.ID); len(got) != 2 || got["bob@example.com"].ID == 0 || got["cy@example.com"].ID == 0 {
		t.Fatalf("win-back send reached %v, want bob and cy", got)
	}
	x, err := f.Svc.Segments.Explain(f.Ctx, f.Acct, seg.ID, id("ann@example.com"))
	if err != nil {
		t.Fatal(err)
	}
	if !x.ConditionsMet || len(x.Conditions) != 1 || !x.Conditions[0].Met || x.Conditions[0].Value != "lapsing" {
		t.Fatalf("explain ann: met %v %+v", x.ConditionsMet, x.Conditions)
	}

	f.Set(sent.Add(100 * 24 * time.Hour))
	levels("100 days on", map[string]string{"ann@example.com": "not_engaged"})
	if n, err := f.Svc.Segments.Count(f.Ctx, f.Acct, cold); err != nil || n != 3 {
		t.Fatalf("count of not engaged 100 days on: %d %v, want 3", n, err)
	}
	if _, err := f.Svc.Fields.Create(f.Ctx, f.Acct, service.FieldInput{FieldName: "Engagement", FieldType: "text"}); err == nil || !strings.Contains(err.Error(), "reserved") {
		t.Fatal("a custom field named engagement was accepted")
	}
	cold.Value = []string{"asleep"}
	if _, err := f.Svc.Segments.Count(f.Ctx, f.Acct, cold); err == nil {
		t.Fatal("an unknown level was accepted")
	}
}
