package service_test

import (
	"context"
	"strings"
	"testing"

	"herald/dbtest"
	"herald/models"
	"herald/service"
	"herald/service/servicetest"
)

func TestOutboxKeepsMessagesPerAccount(t *testing.T) {
	t.Parallel()
	svc := dbtest.Service(t)
	a := servicetest.NewAccount(t, svc, "a@example.com")
	b := servicetest.NewAccount(t, svc, "b@example.com")
	msg := "From: A <a@example.com>\r\nTo: x@example.com\r\nSubject: =?utf-8?q?H=C3=A9llo?=\r\n\r\nbody\r\n"
	if err := svc.Outbox.SaveOutbox(service.WithAccount(context.Background(), a), "a@example.com", []string{"x@example.com"}, []byte(msg)); err != nil {
		t.Fatal(err)
	}
	var got []*models.OutboxMessage
	_ = svc.Outbox.Each(context.Background(), a, service.ListFilter{}, func(m *models.OutboxMessage) error { got = append(got, m); return nil })
	if len(got) != 1 || got[0].Subject != "Héllo" || got[0].RcptTo != "x@example.com" {
		t.Fatalf("outbox: %+v", got)
	}
	full, err := svc.Outbox.Get(context.Background(), a, got[0].ID)
	if err != nil || !strings.Contains(string(full.Message), "body") {
		t.Fatalf("get: %v", err)
	}
	if _, err := svc.Outbox.Get(context.Background(), b, got[0].ID); !service.IsNotFound(err) {
		t.Fatalf("b reads a's message: %v", err)
	}
}

// TestOutboxListsNewestFirst: the mail just sent is the one a person
// looks for, on the whole list and page by page.
func TestOutboxListsNewestFirst(t *testing.T) {
	t.Parallel()
	svc := dbtest.Service(t)
	a := servicetest.NewAccount(t, svc, "a@example.com")
	ctx := service.WithAccount(context.Background(), a)
	for _, subj := range []string{"one", "two", "three"} {
		msg := "From: a@example.com\r\nTo: x@example.com\r\nSubject: " + subj + "\r\n\r\nbody\r\n"
		if err := svc.Outbox.SaveOutbox(ctx, "a@example.com", []string{"x@example.com"}, []byte(msg)); err != nil {
			t.Fatal(err)
		}
	}
	subjects := func(f service.ListFilter) string {
		var got []string
		if err := svc.Outbox.Each(context.Background(), a, f, func(m *models.OutboxMessage) error { got = append(got, m.Subject); return nil }); err != nil {
			t.Fatal(err)
		}
		return strings.Join(got, ",")
	}
	if got := subjects(service.ListFilter{}); got != "three,two,one" {
		t.Fatalf("whole list: %s", got)
	}
	if got := subjects(service.ListFilter{Page: 2, PerPage: 2}); got != "one" {
		t.Fatalf("page 2 of 2: %s", got)
	}
	var ids []int64
	_ = svc.Outbox.Each(context.Background(), a, service.ListFilter{}, func(m *models.OutboxMessage) error { ids = append(ids, m.ID); return nil })
	if got := subjects(service.ListFilter{AfterID: ids[0]}); got != "two,one" {
		t.Fatalf("resumed below the newest: %s", got)
	}
}
