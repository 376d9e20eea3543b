package service

import (
	"context"
	"log/slog"
	"sync"
	"sync/atomic"
	"time"

	"herald/models"
)

// Scheduler decides what is due: scheduled sends start (their audience is
// resolved into the ledger by the Audience), automation steps are queued,
// claims of dead processes go back to the queue, sends with nothing left
// complete, and the notices of paused and completed sends are mailed. It
// keeps this process's heartbeat.
type Scheduler struct {
	db       *DB
	live     *liveness
	ledger   *Ledger
	audience *Audience
	sends    *runningSends
	mail     *Mail
	events   *Events
	now      func() time.Time
	tick     time.Duration
	log      *slog.Logger
	purge    func(context.Context) (int64, error) // SingleSends.PurgeDeleted
	prune    func(context.Context) error          // Feedback.Prune: untied reports, kept mails and spent webhook tokens
	sent     func()                               // wakes the engine: messages were queued

	wake      chan struct{}
	resolving sync.Map     // send id → struct{}: audiences this process is resolving
	lastPurge atomic.Int64 // Unix ms (injected clock): Tick purges once an hour

	mu      sync.Mutex
	notices []int64 // sends paused by this process, whose notice is not mailed yet
}

// Wake has the scheduler look for due work now.
func (sc *Scheduler) Wake() {
	select {
	case sc.wake <- struct{}{}:
	default:
	}
}

// paused queues the notices of sends this process paused and wakes the
// scheduler to mail them.
func (sc *Scheduler) paused(ids []int64) {
	sc.mu.Lock()
	sc.notices = append(sc.notices, ids...)
	sc.mu.Unlock()
	sc.Wake()
}

// Run keeps the heartbeat and ticks until ctx ends. The heartbeat has its
// own loop: a long audience resolution must not make other processes think
// this one died. Sending.Run writes the first heartbeat before the
// engine's first claim.
func (sc *Scheduler) Run(ctx context.Context) {
	var wg sync.WaitGroup
	wg.Go(func() {
		t := time.NewTicker(sc.live.deadAfter / 3)
		defer t.Stop()
		for {
			select {
			case <-ctx.Done():
				return
			case <-t.C:
				if err := sc.live.beat(ctx); err != nil && ctx.Err() == nil {
					sc.log.Error("sending: heartbeat", "err", err)
				}
			}
		}
	})
	wg.Go(func() {
		t := time.NewTicker(sc.tick)
		defer t.Stop()
		for {
			if err := sc.Tick(ctx); err != nil && ctx.Err() == nil {
				sc.log.Error("sending: tick", "err", err)
			}
			select {
			case <-ctx.Done():
				return
			case <-t.C:
			case <-sc.wake:
			}
		}
	})
	wg.Wait()
}

// Tick does the scheduler's rounds once: claims of dead processes go back
// to the queue, due sends start (their audience is resolved into the
// ledger), and sends with nothing left are completed.
func (sc *Scheduler) Tick(ctx context.Context) error {
	alive := sc.live.aliveSince()
	if err := sc.ledger.reclaim(ctx, alive); err != nil {
		return err
	}
	if err := sc.db.W.WithContext(ctx).Exec("DELETE FROM send_workers WHERE heartbeat_at < ?", alive-time.Hour.Milliseconds()).Error; err != nil {
		return err
	}
	if err := sc.startDue(ctx); err != nil {
		return err
	}
	if err := sc.decideTests(ctx); err != nil {
		return err
	}
	if err := sc.completeSends(ctx); err != nil {
		return err
	}
	nowMS := sc.now().UnixMilli()
	if last := sc.lastPurge.Load(); nowMS-last > time.Hour.Milliseconds() && sc.lastPurge.CompareAndSwap(last, nowMS) {
		if n, err := sc.purge(ctx); err != nil {
			return err
		} else if n > 0 {
			sc.log.Info("sending: deleted sends purged with their ledgers", "sends", n)
		}
		if sc.prune != nil {
			if err := sc.prune(ctx); err != nil {
				sc.log.Warn("sending: pruning old feedback rows", "err", err)
			}
		}
	}
	sc.mailNotices(ctx)
	return sc.tickAutomations(ctx)
}

// startDue moves armed sends that are due to running and resolves their
// audiences, and those of running sends a dead process left half resolved.
func (sc *Scheduler) startDue(ctx context.Context) error {
	var due []int64
	now := models.NewTimestamp(sc.now())
	if err := sc.db.R.WithContext(ctx).Model(&models.SingleSend{}).
		Where("armed = 1 AND (status = ? OR (status = ? AND send_after <= ?))", models.SendInitiate, models.SendReady, now).
		Order("id").Limit(100).Pluck("id", &due).Error; err != nil {
		return err
	}
	for _, id := range due {
		res := sc.db.W.WithContext(ctx).Model(&models.SingleSend{}).Where("id = ? AND armed = 1 AND status IN ?", id, []models.SendStatus{models.SendInitiate, models.SendReady}).
			Updates(map[string]any{"status": models.SendRunning, "updated_at": models.Now()})
		if res.Error != nil {
			return res.Error
		}
		if res.RowsAffected == 1 {
			sc.startResolve(ctx, id)
		}
	}
	var stuck []int64
	if err := sc.db.R.WithContext(ctx).Model(&models.SingleSend{}).Where("status = ? AND resolved = 0", models.SendRunning).Pluck("id", &stuck).Error; err != nil {
		return err
	}
	for _, id := range stuck {
		sc.startResolve(ctx, id)
	}
	return nil
}

// startResolve resolves a send's audience in the background (once per
// process at a time; resolution is idempotent, so a second process doing
// the same after a crash adds nothing twice).
func (sc *Scheduler) startResolve(ctx context.Context, id int64) {
	if _, busy := sc.resolving.LoadOrStore(id, struct{}{}); busy {
		return
	}
	go func() {
		defer sc.resolving.Delete(id)
		if err := sc.audience.Resolve(ctx, id); err != nil && ctx.Err() == nil {
			sc.log.Error("sending: resolve audience", "send", id, "err", err)
		}
		sc.sent()
	}()
}

// completeSends moves running sends with nothing queued, claimed or
// awaiting a retry to completed, and mails the summary.
func (sc *Scheduler) completeSends(ctx context.Context) error {
	var ids []int64
	if err := sc.db.R.WithContext(ctx).Model(&models.SingleSend{}).Where("status = ? AND resolved = 1 AND automation_id IS NULL AND paused_at IS NULL", models.SendRunning).Pluck("id", &ids).Error; err != nil {
		return err
	}
	for _, id := range ids {
		now := models.NewTimestamp(models.Now())
		res := sc.db.W.WithContext(ctx).Exec(completeSend, models.SendCompleted, now, now, id, models.SendRunning, id)
		if res.Error != nil {
			return res.Error
		}
		if res.RowsAffected == 1 {
			sc.sends.forget(id)
			sc.sendSummary(ctx, id)
		}
	}
	return nil
}

// completeSend completes a running, resolved, unpaused send when none of
// its messages is queued or claimed: status, completed_at, updated_at,
// the send id, running, the send id again.
var completeSend = ledgerSQL(`UPDATE single_sends SET status = ?, completed_at = ?, updated_at = ?
	WHERE id = ? AND status = ? AND resolved = 1 AND paused_at IS NULL
	AND NOT EXISTS (SELECT 1 FROM send_messages m WHERE m.send_id = ? AND m.state IN ({queued}, {claimed}))`)
