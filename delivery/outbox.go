package delivery

import (
	"context"
	"slices"
	"sync"
	"time"
)

// OutboxStore keeps the messages of the built-in outbox (HERALD_SMTP_URL unset).
// The service layer implements it with a database table; MemoryOutbox is one for
// tests.
type OutboxStore interface {
	SaveOutbox(ctx context.Context, from string, to []string, msg []byte) error
}

// NewOutbox returns the transport that stores every message in store and sends
// nothing. A store failure is a temporary SendError (the database may be busy).
func NewOutbox(store OutboxStore) Transport {
	return &outbox{store: store}
}

type outbox struct {
	store OutboxStore

	mu     sync.RWMutex
	closed bool
}

func (o *outbox) Send(ctx context.Context, from string, to []string, msg []byte) error {
	if err := checkEnvelope(from, to); err != nil {
		return err
	}
	o.mu.RLock()
	defer o.mu.RUnlock()
	if o.closed {
		return &SendError{Temporary: true, Stage: StageStore, Message: ErrClosed.Error(), Err: ErrClosed}
	}
	if fenced(ctx) {
		return staleError(StageStore)
	}
	if err := o.store.SaveOutbox(ctx, from, to, msg); err != nil {
		return &SendError{Temporary: true, Stage: StageStore, Message: err.Error(), Err: err}
	}
	return nil
}

// Close stops accepting messages; the store is the caller's to close.
func (o *outbox) Close() error {
	o.mu.Lock()
	o.closed = true
	o.mu.Unlock()
	return nil
}

// OutboxMessage is one message kept by MemoryOutbox.
type OutboxMessage struct {
	From string
	To   []string
	Data []byte
	At   time.Time
}

// MemoryOutbox is an OutboxStore in memory, safe for concurrent use.
type MemoryOutbox struct {
	mu   sync.Mutex
	msgs []OutboxMessage
}

// SaveOutbox keeps a copy of the message (the caller may reuse its buffers).
func (m *MemoryOutbox) SaveOutbox(ctx context.Context, from string, to []string, msg []byte) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	m.msgs = append(m.msgs, OutboxMessage{From: from, To: slices.Clone(to), Data: slices.Clone(msg), At: time.Now()})
	return nil
}

// Messages returns the kept messages, oldest first.
func (m *MemoryOutbox) Messages() []OutboxMessage {
	m.mu.Lock()
	defer m.mu.Unlock()
	return slices.Clone(m.msgs)
}
