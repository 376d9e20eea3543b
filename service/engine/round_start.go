package engine

import (
	"context"
	"fmt"
	"log/slog"
	"sync"
	"time"

	"herald/models"
	"herald/service/core"
)

// startRound moves armed sends that are due to running and resolves their
// audiences in the background, and those of running sends a dead process
// left half resolved.
type startRound struct {
	db       *core.DB
	audience *Audience
	now      func() time.Time
	log      *slog.Logger
	sent     func() // wakes the engine: an audience is resolved

	resolving sync.Map // send id → struct{}: audiences this process is resolving
}

func newStartRound(db *core.DB, audience *Audience, now func() time.Time, log *slog.Logger, sent func()) *startRound {
	return &startRound{db: db, audience: audience, now: now, log: log, sent: sent}
}

func (r *startRound) name() string { return "start" }

func (r *startRound) run(ctx context.Context) error {
	var due []int64
	now := models.NewTimestamp(r.now())
	if err := r.db.R.WithContext(ctx).Model(&models.SingleSend{}).
		Where("armed = 1 AND (status = ? OR (status = ? AND send_after <= ?))", models.SendInitiate, models.SendReady, now).
		Order("id").Limit(100).Pluck("id", &due).Error; err != nil {
		return fmt.Errorf("due sends: %w", err)
	}
	for _, id := range due {
		res := r.db.W.WithContext(ctx).Model(&models.SingleSend{}).Where("id = ? AND armed = 1 AND status IN ?", id, []models.SendStatus{models.SendInitiate, models.SendReady}).
			Updates(map[string]any{"status": models.SendRunning, "updated_at": r.now()})
		if res.Error != nil {
			return fmt.Errorf("start send %d: %w", id, res.Error)
		}
		if res.RowsAffected == 1 {
			r.startResolve(ctx, id)
		}
	}
	var stuck []int64
	if err := r.db.R.WithContext(ctx).Model(&models.SingleSend{}).Where("status = ? AND resolved = 0", models.SendRunning).Pluck("id", &stuck).Error; err != nil {
		return fmt.Errorf("stuck sends: %w", err)
	}
	for _, id := range stuck {
		r.startResolve(ctx, id)
	}
	return nil
}

// startResolve resolves a send's audience in the background (once per
// process at a time; resolution is idempotent, so a second process doing
// the same after a crash adds nothing twice).
func (r *startRound) startResolve(ctx context.Context, id int64) {
	if _, busy := r.resolving.LoadOrStore(id, struct{}{}); busy {
		return
	}
	go func() {
		defer r.resolving.Delete(id)
		if err := r.audience.Resolve(ctx, id); err != nil && ctx.Err() == nil {
			r.log.Error("sending: resolve audience", "send", id, "err", err)
		}
		r.sent()
	}()
}
