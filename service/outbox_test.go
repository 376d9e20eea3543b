package service_test

import (
	"context"
	"strings"
	"testing"

	"herald/dbtest"
	"herald/models"
	"herald/service"
)

func TestOutboxKeepsMessagesPerAccount(t *testing.T) {
	svc := dbtest.Service(t)
	a := newAccount(t, svc, "a@example.com")
	b := newAccount(t, svc, "b@example.com")
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
