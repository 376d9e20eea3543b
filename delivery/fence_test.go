package delivery

import (
	"context"
	"errors"
	"sync/atomic"
	"testing"
)

// TestSMTPFence: a message whose fence says no is not handed over. Asked
// before a connection is taken, nothing is sent; asked again before the dot
// that ends DATA, the server keeps nothing (it never saw the end) and the
// connection, left inside DATA, is closed. Both answer ErrStale, which the
// ledger takes for "give the claim back". A fresh fence sends as before.
func TestSMTPFence(t *testing.T) {
	t.Parallel()
	s := startServer(t, serverOpts{tls: TLSNone})
	p := NewSMTPPool(s.config(TLSNone), 1)
	defer p.Close()
	send := func(fresh func() bool, to string) error {
		return p.Send(WithFence(context.Background(), fresh), "bounce@herald.test", []string{to}, testMsg(1))
	}

	err := send(func() bool { return false }, "before@example.test")
	if !errors.Is(err, ErrStale) {
		t.Fatalf("stale before a connection: %v, want ErrStale", err)
	}
	if n := s.connections(); n != 0 {
		t.Fatalf("%d connections for a message held back before one, want 0", n)
	}

	var asked atomic.Int32
	err = send(func() bool { return asked.Add(1) == 1 }, "atdot@example.test") // fresh at the start, stale at the dot
	if !errors.Is(err, ErrStale) {
		t.Fatalf("stale at the dot: %v, want ErrStale", err)
	}
	if asked.Load() != 2 {
		t.Fatalf("the fence was asked %d times, want 2 (before a connection, before the dot)", asked.Load())
	}
	if got := s.messages(); len(got) != 0 {
		t.Fatalf("the server kept %d messages held back at the dot: %+v", len(got), got)
	}
	if st := p.Stats(); st.Idle != 0 || st.Open != 0 {
		t.Fatalf("pool after a message held back inside DATA: %+v, want its connection closed", st)
	}

	if err := send(func() bool { return true }, "ok@example.test"); err != nil {
		t.Fatalf("fresh: %v", err)
	}
	if got := s.messages(); len(got) != 1 || got[0].To[0] != "ok@example.test" {
		t.Fatalf("server got %+v, want the fresh message only", got)
	}
}

// TestOutboxFence: the outbox stores nothing for a stale message.
func TestOutboxFence(t *testing.T) {
	t.Parallel()
	st := &memOutbox{}
	o := NewOutbox(st)
	err := o.Send(WithFence(context.Background(), func() bool { return false }), "b@herald.test", []string{"a@example.test"}, testMsg(1))
	if !errors.Is(err, ErrStale) || st.n != 0 {
		t.Fatalf("stale: %v, %d stored; want ErrStale and none", err, st.n)
	}
}

// memOutbox counts what it stores.
type memOutbox struct{ n int }

func (m *memOutbox) SaveOutbox(context.Context, string, []string, []byte) error {
	m.n++
	return nil
}
