package service_test

import (
	"context"
	"fmt"
	"strconv"
	"testing"
	"time"

	"herald/models"
	"herald/service/servicetest"
)

// TestMessageOvertakesALargeSend: while a send's messages hold every
// connection (the relay keeps them before its 250) and a claimed batch of
// it waits behind them, a single message is claimed by the lane and goes
// with the first connection that comes free: one campaign message let
// through is enough for it to arrive.
func TestMessageOvertakesALargeSend(t *testing.T) {
	t.Parallel()
	f := servicetest.NewSendFixture(t, true)
	gate := f.SMTP.Hold("*@bulk.example.com")
	t.Cleanup(gate.Open)
	const n = 200
	emails := make([]string, n)
	for i := range emails {
		emails[i] = fmt.Sprintf("c%03d@bulk.example.com", i)
	}
	typeID := f.ContactType("Bulk", emails...)
	ss := f.Create(f.Input("Large", []string{"contacts_" + strconv.FormatInt(typeID, 10)}, nil))
	// Every connection (4) holds a campaign message; more are claimed.
	f.WaitFor("every connection busy with the send", 20*time.Second, func() bool { return gate.Waiting() == 4 })
	f.WaitFor("a batch claimed behind them", 10*time.Second, func() bool {
		return f.Scalar("SELECT COUNT(*) FROM send_messages WHERE send_id = ? AND state = ?", ss.ID, models.MessageClaimed) > 4
	})

	sent, err := f.Svc.Messages.Send(f.Ctx, f.Acct, messageInput(f, "ann@example.com"))
	if err != nil {
		t.Fatal(err)
	}
	f.WaitFor("the message claimed by the lane", 10*time.Second, func() bool {
		return f.Scalar("SELECT COUNT(*) FROM send_messages WHERE lane = 1 AND state = ?", models.MessageClaimed) == 1
	})
	// Claimed in the ledger comes before built and queued for the workers:
	// released before that, the freed worker would rightly take a campaign
	// job (a -race run on PostgreSQL saw it).
	f.WaitFor("the message queued for the next free worker", 20*time.Second, func() bool { return f.Sending.LaneWaiting() == 1 })
	if got := f.SMTP.PerRecipient()["ann@example.com"]; got != 0 {
		t.Fatalf("the message went before any connection was free (%d)", got)
	}
	gate.Release(1)
	m := sentTo(t, f, "ann@example.com", 1)
	if m.Header().Get("Message-Id") != "<"+sent.ID+">" {
		t.Fatalf("Message-Id %q", m.Header().Get("Message-Id"))
	}
	campaign := 0
	for rcpt, k := range f.SMTP.PerRecipient() {
		if len(rcpt) > 17 && rcpt[len(rcpt)-17:] == "@bulk.example.com" {
			campaign += k
		}
	}
	// One let through, so at most one went: the message did not wait
	// for the claimed batch (which only more releases would have sent).
	if campaign != 1 {
		t.Fatalf("campaign messages accepted before the single message: %d, want 1", campaign)
	}
	gate.Open()
	done := f.WaitStatus(ss.Utr, models.SendCompleted, 60*time.Second)
	if done.Delivered != n {
		t.Fatalf("the send delivered %d of %d", done.Delivered, n)
	}
}

// TestMessageClaimOfADeadProcessGoesBack: a single message claimed by a
// process that died before sending it goes back to the lane and is sent by
// a live one.
func TestMessageClaimOfADeadProcessGoesBack(t *testing.T) {
	t.Parallel()
	f := servicetest.NewSendFixture(t, false)
	sent, err := f.Svc.Messages.Send(f.Ctx, f.Acct, messageInput(f, "eve@example.com"))
	if err != nil {
		t.Fatal(err)
	}
	// Claimed by a process that left no heartbeat.
	f.Exec("UPDATE send_messages SET state = ?, worker = 'gone' WHERE lane = 1", models.MessageClaimed)
	ctx, stop := context.WithCancel(f.Ctx)
	done := make(chan struct{})
	go func() { defer close(done); f.Sending.Run(ctx) }()
	t.Cleanup(func() { stop(); <-done })
	m := sentTo(t, f, "eve@example.com", 1)
	if m.Header().Get("Message-Id") != "<"+sent.ID+">" {
		t.Fatalf("Message-Id %q", m.Header().Get("Message-Id"))
	}
	f.WaitFor("the delivery recorded", 10*time.Second, func() bool {
		return f.Scalar("SELECT COUNT(*) FROM send_messages WHERE lane = 1 AND state = ?", models.MessageDelivered) == 1
	})
}
