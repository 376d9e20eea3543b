package engine

import (
	"context"
	"fmt"
	"log/slog"
	"time"

	"herald/models"
	"herald/service/core"
)

// abTestsRound chooses the winners of the A/B tests whose wait is over
// and releases the rest of their audiences (also the rest of a test whose
// release a dead process left half done). Any status but deleted: a test
// whose rest is empty completes before its wait ends and still gets its
// winner for the statistics. The decision itself is decideTest
// (abtest.go).
type abTestsRound struct {
	db   *core.DB
	now  func() time.Time
	log  *slog.Logger
	sent func() // wakes the engine: held rows were released
}

func newABTestsRound(db *core.DB, now func() time.Time, log *slog.Logger, sent func()) *abTestsRound {
	return &abTestsRound{db: db, now: now, log: log, sent: sent}
}

func (r *abTestsRound) name() string { return "abtests" }

func (r *abTestsRound) run(ctx context.Context) error {
	now := r.now().UnixMilli()
	var due []int64
	if err := r.db.R.WithContext(ctx).Model(&models.SingleSend{}).
		Where("ab_share > 0 AND ab_released = 0 AND ab_decide_at > 0 AND ab_decide_at <= ? AND resolved = 1 AND deleted_at IS NULL", now).
		Order("id").Limit(100).Pluck("id", &due).Error; err != nil {
		return fmt.Errorf("due tests: %w", err)
	}
	for _, id := range due {
		won, err := decideTest(ctx, r.db, id, now)
		if err != nil {
			return fmt.Errorf("decide send %d: %w", id, err)
		}
		if won > 0 {
			r.log.Info("sending: A/B test decided", "send", id, "winner", won)
		}
		r.sent()
	}
	return nil
}
