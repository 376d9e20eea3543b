package service_test

import (
	"context"
	"fmt"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"herald/delivery"
	"herald/models"
	"herald/service"
	"herald/service/servicetest"
)

// refusingRelay stands in front of the sink as a relay that refuses the
// sender (550 5.7.1 at DATA) until fix is called. One recipient's message
// (slow) stays on the wire until release is closed: it is then refused,
// as the relay answered before it was fixed. The rest goes to the sink.
type refusingRelay struct {
	next     delivery.Transport
	slow     string
	fixed    atomic.Bool
	onWire   chan struct{} // closed when slow's first message is on the wire
	release  chan struct{} // closed by the test: slow's first message is answered
	slowOnce sync.Once
}

func (r *refusingRelay) Send(ctx context.Context, from string, to []string, msg []byte) error {
	if !strings.HasSuffix(to[0], "@example.com") {
		return r.next.Send(ctx, from, to, msg) // the sender's verification, notices
	}
	first := false
	if to[0] == r.slow {
		r.slowOnce.Do(func() { first = true })
	}
	if first {
		close(r.onWire)
		<-r.release
		return r.refusal()
	}
	if !r.fixed.Load() {
		return r.refusal()
	}
	return r.next.Send(ctx, from, to, msg)
}

func (r *refusingRelay) refusal() error {
	return &delivery.SendError{Code: 550, Enhanced: delivery.EnhancedCode{5, 7, 1}, Stage: delivery.StageData,
		Message: "Email address is not verified"}
}

func (r *refusingRelay) Close() error { return r.next.Close() }

// TestResumeWhileAMessageIsOnTheWire: a send pauses because the relay
// refuses the sender; one message was handed to the relay before the
// pause and its answer (the same refusal) comes only after the send was
// resumed. That message was refused for the cause the resume says is
// fixed: it goes again, like the messages blocked before the resume, and
// is neither counted in the blocks nor lost (before, it stayed blocked
// and the send completed without it).
func TestResumeWhileAMessageIsOnTheWire(t *testing.T) {
	t.Parallel()
	relay := &refusingRelay{slow: "r00@example.com", onWire: make(chan struct{}), release: make(chan struct{})}
	f := servicetest.NewSendFixtureWith(t, true, 0, func(cfg *service.Config) {
		relay.next = cfg.Transport
		cfg.Transport = relay
	})
	var emails []string
	for i := range 12 {
		emails = append(emails, fmt.Sprintf("r%02d@example.com", i))
	}
	typeA := f.ContactType("Customers", emails...)
	ss := f.Create(f.Input("Blocked", []string{"contacts_" + strconv.FormatInt(typeA, 10)}, nil))

	// r00 is on the wire; the others are refused and pause the send (the
	// last ones may go back to the queue unsent: the pause holds them).
	select {
	case <-relay.onWire:
	case <-time.After(20 * time.Second):
		t.Fatal("r00 never reached the relay")
	}
	f.WaitFor("the send to pause, with only r00 still claimed", 20*time.Second, func() bool {
		var claimed int64
		f.Svc.DB.R.Model(&models.SendMessage{}).Where("send_id = ? AND state = ?", ss.ID, models.MessageClaimed).Count(&claimed)
		return f.PausedOrFail(ss.Utr).PausedAt != nil && claimed == 1
	})
	var blocked int64
	for _, r := range f.Ledger(ss.ID) {
		switch {
		case r.Email == "r00@example.com" && r.State != models.MessageClaimed:
			t.Fatalf("r00 in state %d while on the wire, want claimed", r.State)
		case r.State == models.MessageBlocked:
			blocked++
		}
	}

	// The relay is fixed; resume; only then does r00's refusal come back.
	relay.fixed.Store(true)
	n, err := f.Svc.SingleSends.Resume(f.Ctx, f.Acct, ss.Utr)
	if err != nil || n != blocked || n < 10 {
		t.Fatalf("resume: %d %v; want the %d blocked", n, err, blocked)
	}
	close(relay.release)

	done := f.WaitStatus(ss.Utr, models.SendCompleted, 20*time.Second)
	if done.Delivered != 12 || done.Blocks != 0 || done.Bounces != 0 || done.PausedAt != nil {
		rows := f.Ledger(ss.ID)
		t.Fatalf("after resume: delivered %d blocks %d bounces %d paused %v; r00 in state %d (%s)",
			done.Delivered, done.Blocks, done.Bounces, done.PausedAt, rows["r00@example.com"].State, rows["r00@example.com"].Error)
	}
	if r := recipients(f.Sent(ss.Utr)); len(r) != 12 || r[0] != "r00@example.com" {
		t.Fatalf("reached the sink: %v", r)
	}
}
