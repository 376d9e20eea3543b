package service_test

import (
	"strconv"
	"testing"
	"time"

	"herald/models"
	"herald/service"
)

// The unsubscribe and preference links of a mail keep working after its
// send is deleted (issue 11, finding 8; decisions.md 8): before, the
// ledger went with the send and every link of its mails answered 404.
// The send itself is gone from every list and lookup, and purged with its
// ledger a year (and more) later.
func TestLinksOfADeletedSendKeepWorking(t *testing.T) {
	f := newSendFixture(t, true)
	typeA := f.contactType("Customers", "ann@example.com", "bob@example.com")
	ss := f.create(f.input("First", []string{"contacts_" + strconv.FormatInt(typeA, 10)}, nil))
	f.waitStatus(ss.Utr, models.SendCompleted, 20*time.Second)
	msgs := f.sent(ss.Utr)
	annTok, bobTok := tokenOf(t, msgs[0]), tokenOf(t, msgs[1])
	if msgs[0].To != "ann@example.com" {
		annTok, bobTok = bobTok, annTok
	}
	if err := f.svc.SingleSends.Delete(f.ctx, f.acct, ss.Utr); err != nil {
		t.Fatal(err)
	}
	if _, err := f.svc.SingleSends.Get(f.ctx, f.acct, ss.Utr); !service.IsNotFound(err) {
		t.Fatalf("a deleted send is found: %v", err)
	}
	if err := f.svc.SingleSends.Delete(f.ctx, f.acct, ss.Utr); !service.IsNotFound(err) {
		t.Fatalf("deleted twice: %v", err)
	}
	n := 0
	_ = f.svc.SingleSends.Each(f.ctx, f.acct, service.ListFilter{}, func(*models.SingleSend) error { n++; return nil })
	if n != 0 {
		t.Fatalf("%d sends listed", n)
	}

	p, err := f.svc.Tracking.Preferences(f.ctx, annTok)
	if err != nil || len(p.Groups) != 1 || p.Email != "ann@example.com" {
		t.Fatalf("preference page of a deleted send's mail: %+v %v", p, err)
	}
	if err := f.svc.Tracking.SavePreferences(f.ctx, annTok, []int64{f.group}, false); err != nil {
		t.Fatal(err)
	}
	if err := f.svc.Tracking.OneClick(f.ctx, bobTok); err != nil {
		t.Fatalf("one-click of a deleted send's mail: %v", err)
	}
	if to, err := f.svc.Tracking.Click(f.ctx, annTok, 0); err != nil || to != "https://shop.example.com/sale" {
		t.Fatalf("a link of a deleted send's mail: %q %v", to, err)
	}
	// Both left the group: the next send to the type skips them.
	var members int64
	if err := f.svc.DB.R.Model(&models.Unsubscriber{}).Where("user_id = ? AND unsubscribe_groups_id = ?", f.acct, f.group).Count(&members).Error; err != nil || members != 2 {
		t.Fatalf("group members %d %v", members, err)
	}

	// A year and more later the send is purged with its ledger.
	f.Advance(401 * 24 * time.Hour)
	if err := f.sg.Tick(f.ctx); err != nil {
		t.Fatal(err)
	}
	if _, err := f.svc.Tracking.Preferences(f.ctx, annTok); !service.IsNotFound(err) {
		t.Fatalf("after the purge: %v", err)
	}
}
