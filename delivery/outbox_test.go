package delivery

import (
	"bytes"
	"context"
	"errors"
	"testing"
)

type failingStore struct{ err error }

func (f failingStore) SaveOutbox(context.Context, string, []string, []byte) error { return f.err }

func TestOutbox(t *testing.T) {
	t.Parallel()
	store := &MemoryOutbox{}
	tr := NewOutbox(store)
	msg := testMsg(1)
	to := []string{"a@example.test"}
	if err := tr.Send(context.Background(), "bounce@herald.test", to, msg); err != nil {
		t.Fatal(err)
	}
	msg[0], to[0] = 'X', "changed" // the store kept copies
	got := store.Messages()
	if len(got) != 1 || got[0].From != "bounce@herald.test" || got[0].To[0] != "a@example.test" || !bytes.Equal(got[0].Data, testMsg(1)) || got[0].At.IsZero() {
		t.Fatalf("stored %+v", got)
	}

	err := tr.Send(context.Background(), "bounce@herald.test", nil, msg)
	if se := asSendError(t, err); se.Temporary || se.Stage != StageEnvelope {
		t.Fatalf("no recipient: %+v", se)
	}
	if err := tr.Close(); err != nil {
		t.Fatal(err)
	}
	if err := tr.Send(context.Background(), "b@herald.test", []string{"a@example.test"}, msg); !errors.Is(err, ErrClosed) {
		t.Fatalf("after Close: %v", err)
	}

	boom := errors.New("database is locked")
	err = NewOutbox(failingStore{boom}).Send(context.Background(), "b@herald.test", []string{"a@example.test"}, msg)
	if se := asSendError(t, err); !se.Temporary || se.Stage != StageStore || !errors.Is(err, boom) {
		t.Fatalf("store failure: %+v", se)
	}
}

func TestOpenTransport(t *testing.T) {
	t.Parallel()
	tr, err := OpenTransport("", 0, &MemoryOutbox{})
	if err != nil {
		t.Fatal(err)
	}
	if _, ok := tr.(*outbox); !ok {
		t.Fatalf("unset URL gave %T", tr)
	}
	tr, err = OpenTransport("smtp://u:p@mail.example.com:587?tls=starttls", 0, nil)
	if err != nil {
		t.Fatal(err)
	}
	p, ok := tr.(*SMTPPool)
	if !ok || cap(p.slots) != DefaultMaxConns || p.cfg.Host != "mail.example.com" {
		t.Fatalf("got %T %+v", tr, tr)
	}
	tr.Close()
	if _, err := OpenTransport("smtp://mail.example.com?tls=maybe", 4, nil); err == nil {
		t.Fatal("bad URL accepted")
	}
}
