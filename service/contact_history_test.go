package service_test

import (
	"context"
	"fmt"
	"strings"
	"testing"

	"herald/dbtest"
	"herald/models"
	"herald/service"
)

// A contact's history lists the ledger rows of its address, newest first,
// paged, each with what became of it; another account's mails to the
// same address never show (issue 15, part 2).
func TestContactHistory(t *testing.T) {
	svc := dbtest.Service(t)
	ctx := context.Background()
	acct := newAccount(t, svc, "hist@example.com")
	other := newAccount(t, svc, "other@example.com")
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
