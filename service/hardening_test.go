package service_test

import (
	"context"
	"strconv"
	"testing"
	"time"

	"herald/dbtest"
	"herald/models"
	"herald/service"
	"herald/service/servicetest"
)

// The unsubscribe and preference links of a mail keep working after its
// send is deleted (decisions.md 8): before, the
// ledger went with the send and every link of its mails answered 404.
// The send itself is gone from every list and lookup, and purged with its
// ledger a year (and more) later.
func TestLinksOfADeletedSendKeepWorking(t *testing.T) {
	t.Parallel()
	f := servicetest.NewSendFixture(t, true)
	typeA := f.ContactType("Customers", "ann@example.com", "bob@example.com")
	ss := f.Create(f.Input("First", []string{"contacts_" + strconv.FormatInt(typeA, 10)}, nil))
	f.WaitStatus(ss.Utr, models.SendCompleted, 20*time.Second)
	msgs := f.Sent(ss.Utr)
	annTok, bobTok := tokenOf(t, msgs[0]), tokenOf(t, msgs[1])
	if msgs[0].To != "ann@example.com" {
		annTok, bobTok = bobTok, annTok
	}
	if err := f.Svc.SingleSends.Delete(f.Ctx, f.Acct, ss.Utr); err != nil {
		t.Fatal(err)
	}
	if _, err := f.Svc.SingleSends.Get(f.Ctx, f.Acct, ss.Utr); !service.IsNotFound(err) {
		t.Fatalf("a deleted send is found: %v", err)
	}
	if err := f.Svc.SingleSends.Delete(f.Ctx, f.Acct, ss.Utr); !service.IsNotFound(err) {
		t.Fatalf("deleted twice: %v", err)
	}
	n := 0
	_ = f.Svc.SingleSends.Each(f.Ctx, f.Acct, service.ListFilter{}, func(*models.SingleSend) error { n++; return nil })
	if n != 0 {
		t.Fatalf("%d sends listed", n)
	}

	p, err := f.Svc.Tracking.Preferences(f.Ctx, annTok)
	if err != nil || len(p.Groups) != 1 || p.Email != "ann@example.com" {
		t.Fatalf("preference page of a deleted send's mail: %+v %v", p, err)
	}
	if err := f.Svc.Tracking.SavePreferences(f.Ctx, annTok, []int64{f.Group}, false); err != nil {
		t.Fatal(err)
	}
	if err := f.Svc.Tracking.OneClick(f.Ctx, bobTok); err != nil {
		t.Fatalf("one-click of a deleted send's mail: %v", err)
	}
	if to, err := f.Svc.Tracking.Click(f.Ctx, annTok, 0); err != nil || to != "https://shop.example.com/sale" {
		t.Fatalf("a link of a deleted send's mail: %q %v", to, err)
	}
	// Both left the group: the next send to the type skips them.
	var members int64
	if err := f.Svc.DB.R.Model(&models.Unsubscriber{}).Where("user_id = ? AND unsubscribe_groups_id = ?", f.Acct, f.Group).Count(&members).Error; err != nil || members != 2 {
		t.Fatalf("group members %d %v", members, err)
	}

	// A year and more later the send is purged with its ledger. The
	// engine's own scheduler stops first: its Tick, every 20 ms, would
	// otherwise take the hourly purge (one per hour of the clock) from
	// the test's Tick and run it concurrently, and the test would read
	// before that purge commits.
	f.Stop()
	f.Advance(401 * 24 * time.Hour)
	if err := f.Sending.Tick(f.Ctx); err != nil {
		t.Fatal(err)
	}
	if _, err := f.Svc.Tracking.Preferences(f.Ctx, annTok); !service.IsNotFound(err) {
		t.Fatalf("after the purge: %v", err)
	}
}

// Contact type and segment names may reach headers: like every other
// name, one with a line break or any other control character is refused
// on create and on update (decisions.md 8), and nothing is stored.
func TestNamesOfTypesAndSegmentsAreOneLine(t *testing.T) {
	t.Parallel()
	svc := dbtest.Service(t)
	ctx := context.Background()
	acct := servicetest.NewAccount(t, svc, "a@herald.test")
	ct, err := svc.ContactTypes.Create(ctx, acct, "Customers")
	if err != nil {
		t.Fatal(err)
	}
	typeID := strconv.FormatInt(ct.ID, 10)
	segIn := func(name string) service.SegmentInput {
		return service.SegmentInput{ContactTypeID: typeID, SegmentName: name,
			SelectField: []string{"email"}, SelectOperator: []string{"is_not_empty"}, Value: []string{""}}
	}
	seg, err := svc.Segments.Create(ctx, acct, segIn("Everyone"))
	if err != nil {
		t.Fatal(err)
	}
	refused := func(t *testing.T, err error, field, message string) {
		t.Helper()
		var se *service.Error
		if !asError(err, &se) || se.Code != service.CodeValidation || len(se.Fields[field]) != 1 || se.Fields[field][0] != message {
			t.Fatalf("want %s: %q, got %v", field, message, err)
		}
	}
	for _, bad := range []string{"VIP\r\nBcc: victim@example.com", "VIP\nList", "VIP\rList", "VIP\x00", "VIP\tList", "VIP\x7fList", "VIP\u0085List", "VIP\u2028List"} {
		t.Run(strconv.Quote(bad), func(t *testing.T) {
			_, err := svc.ContactTypes.Create(ctx, acct, bad)
			refused(t, err, "name", "The name must not contain line breaks.")
			_, err = svc.ContactTypes.Update(ctx, acct, ct.ID, bad)
			refused(t, err, "name", "The name must not contain line breaks.")
			_, err = svc.Segments.Create(ctx, acct, segIn(bad))
			refused(t, err, "segment_name", "The segment name must not contain line breaks.")
			_, err = svc.Segments.Update(ctx, acct, seg.ID, segIn(bad))
			refused(t, err, "segment_name", "The segment name must not contain line breaks.")
		})
	}
	if got, err := svc.ContactTypes.Get(ctx, acct, ct.ID); err != nil || got.Name != "Customers" {
		t.Fatalf("contact type after the refusals: %+v %v", got, err)
	}
	var names []string
	if err := svc.DB.R.Model(&models.Segment{}).Where("user_id = ?", acct).Pluck("segment_name", &names).Error; err != nil ||
		len(names) != 1 || names[0] != "Everyone" {
		t.Fatalf("segments after the refusals: %q %v", names, err)
	}
	var types int64
	if err := svc.DB.R.Model(&models.ContactType{}).Where("user_id = ?", acct).Count(&types).Error; err != nil || types != 1 {
		t.Fatalf("%d contact types, %v", types, err)
	}
	// Names from far away, with inner spaces, are fine.
	if _, err := svc.ContactTypes.Update(ctx, acct, ct.ID, "Kunden – Zoë 大塚"); err != nil {
		t.Fatal(err)
	}
	if _, err := svc.Segments.Update(ctx, acct, seg.ID, segIn("Alle Kunden – Ōtsuka")); err != nil {
		t.Fatal(err)
	}
}
