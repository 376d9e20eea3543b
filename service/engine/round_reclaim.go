package engine

import (
	"context"
	"fmt"
	"herald/service/core"
	"time"
)

// reclaimRound gives the claims of dead processes back to the queue (a
// process is dead when its heartbeat is older than deadAfter) and forgets
// the heartbeats of processes silent for an hour.
type reclaimRound struct {
	db     *core.DB
	live   *liveness
	ledger *Ledger
}

func newReclaimRound(db *core.DB, live *liveness, ledger *Ledger) *reclaimRound {
	return &reclaimRound{db: db, live: live, ledger: ledger}
}

func (r *reclaimRound) name() string { return "reclaim" }

func (r *reclaimRound) run(ctx context.Context) error {
	alive := r.live.aliveSince()
	if err := r.ledger.reclaim(ctx, alive); err != nil {
		return err
	}
	if err := r.db.W.WithContext(ctx).Exec("DELETE FROM send_workers WHERE heartbeat_at < ?", alive-time.Hour.Milliseconds()).Error; err != nil {
		return fmt.Errorf("forget old workers: %w", err)
	}
	return nil
}
