package engine

import (
	"context"
	"fmt"
	"log/slog"
	"sync/atomic"
	"time"
)

// purgeRound deletes, once an hour, the sends deleted past the time their
// links are kept, with their ledgers, prunes old feedback rows and deletes
// the contacts unconfirmed for 30 days.
type purgeRound struct {
	now   func() time.Time
	purge func(context.Context) (int64, error) // SingleSends.PurgeDeleted
	prune func(context.Context) error          // Feedback.Prune: untied reports, kept mails and spent webhook tokens; nil: none
	// expire deletes contacts unconfirmed for 30 days
	// (Contacts.PurgeUnconfirmed); nil: none.
	expire func(context.Context) (int64, error)
	log    *slog.Logger

	lastPurge atomic.Int64 // Unix ms (injected clock) of the last purge
}

func newPurgeRound(now func() time.Time, purge func(context.Context) (int64, error), prune func(context.Context) error, expire func(context.Context) (int64, error), log *slog.Logger) *purgeRound {
	return &purgeRound{now: now, purge: purge, prune: prune, expire: expire, log: log}
}

func (r *purgeRound) name() string { return "purge" }

// run purges when the last purge is more than an hour old. A failed
// prune is only logged.
func (r *purgeRound) run(ctx context.Context) error {
	nowMS := r.now().UnixMilli()
	if last := r.lastPurge.Load(); nowMS-last > time.Hour.Milliseconds() && r.lastPurge.CompareAndSwap(last, nowMS) {
		if n, err := r.purge(ctx); err != nil {
			return fmt.Errorf("purge deleted sends: %w", err)
		} else if n > 0 {
			r.log.Info("sending: deleted sends purged with their ledgers", "sends", n)
		}
		if r.prune != nil {
			if err := r.prune(ctx); err != nil {
				r.log.Warn("sending: pruning old feedback rows", "err", err)
			}
		}
		if r.expire != nil {
			if n, err := r.expire(ctx); err != nil {
				r.log.Warn("sending: deleting contacts unconfirmed for 30 days", "err", err)
			} else if n > 0 {
				r.log.Info("sending: contacts unconfirmed for 30 days deleted", "contacts", n)
			}
		}
	}
	return nil
}
