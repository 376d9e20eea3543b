package engine

import (
	"context"
	"fmt"
	"sync"
	"time"

	"gorm.io/gorm"

	"herald/service/core"
	"herald/service/internal/record"
)

// Warm-up plans in the engine (decisions.md 11): a campaign send whose
// From domain follows a plan is claimed in a transaction that locks the
// domain's counter of the day (record.LockWarmupCount), claims no more
// than the day's cap leaves and adds what it claimed: the cap holds for
// every process sharing the database. What is over the cap stays queued
// in the ledger and is claimed once the next local day of the account
// starts. Single messages (the lane) are counted against the cap but
// never held: they go at once (docs/API-NOTES.md).
//
// The count is of messages handed to the transport: a message deferred
// and retried counts on each try, one given back unsent (a stalled or
// paused claim) still counts. Either way the domain sends fewer than its
// cap, never more.

// warmupRead is how often a process reads the plans again: a plan started
// or ended by another process applies here within it (this process's own
// changes apply at once, Signals.WarmupChanged).
const warmupRead = 2 * time.Second

type warmupKey struct {
	account int64
	domain  string
}

type warmupPlan struct {
	record.WarmupPlan
	loc *time.Location
}

// warmups is this process's copy of the plans, with the domains whose
// cap it found used up on a day (so that a capped domain costs one
// transaction per read, not one per claim).
type warmups struct {
	db *core.DB

	mu     sync.Mutex
	readAt time.Time
	plans  map[warmupKey]*warmupPlan
	full   map[warmupKey]int64 // local day whose cap was found used up
}

func newWarmups(db *core.DB) *warmups { return &warmups{db: db} }

// read refreshes the plans when they are older than warmupRead.
func (w *warmups) read(ctx context.Context) (map[warmupKey]*warmupPlan, error) {
	w.mu.Lock()
	if w.plans != nil && time.Since(w.readAt) < warmupRead {
		p := w.plans
		w.mu.Unlock()
		return p, nil
	}
	w.mu.Unlock()
	var rows []struct {
		record.WarmupPlan
		TimeZone string
	}
	if err := w.db.R.WithContext(ctx).Raw(`SELECT p.user_id, p.domain, p.start_volume, p.growth, p.until_volume, p.first_day, u.time_zone
		FROM warmup_plans p JOIN users u ON u.id = p.user_id`).Scan(&rows).Error; err != nil {
		return nil, fmt.Errorf("warm-up: read plans: %w", err)
	}
	plans := make(map[warmupKey]*warmupPlan, len(rows))
	for _, r := range rows {
		plans[warmupKey{r.UserID, r.Domain}] = &warmupPlan{WarmupPlan: r.WarmupPlan, loc: record.AccountLocation(r.TimeZone)}
	}
	w.mu.Lock()
	w.plans, w.readAt, w.full = plans, time.Now(), map[warmupKey]int64{}
	w.mu.Unlock()
	return plans, nil
}

// plan is the plan of the account's domain; nil when it has none.
func (w *warmups) plan(ctx context.Context, account int64, domain string) (*warmupPlan, error) {
	plans, err := w.read(ctx)
	if err != nil || len(plans) == 0 {
		return nil, err
	}
	return plans[warmupKey{account, domain}], nil
}

// changed makes the next claim read the plans again.
func (w *warmups) changed() {
	w.mu.Lock()
	w.readAt = time.Time{}
	w.mu.Unlock()
}

func (w *warmups) isFull(k warmupKey, day int64) bool {
	w.mu.Lock()
	defer w.mu.Unlock()
	d, ok := w.full[k]
	return ok && d == day
}

func (w *warmups) setFull(k warmupKey, day int64) {
	w.mu.Lock()
	if w.full != nil {
		w.full[k] = day
	}
	w.mu.Unlock()
}

// claimCapped claims up to n due rows of a send whose domain follows a
// plan with a cap today: in one transaction with the day's counter
// locked, no more than the cap leaves.
func (l *Ledger) claimCapped(ctx context.Context, p *warmupPlan, sendID int64, n int) ([]claimedRow, error) {
	k := warmupKey{p.UserID, p.Domain}
	day := record.LocalDay(l.now(), p.loc)
	limit, ok := p.CapOn(day)
	if !ok {
		return l.claimRows(ctx, l.db.W, sendID, n)
	}
	if l.warmup.isFull(k, day) {
		return nil, nil
	}
	var rows []claimedRow
	err := l.db.W.WithContext(ctx).Transaction(func(tx *gorm.DB) error {
		rows = nil
		used, err := record.LockWarmupCount(tx, l.db.SQL(), p.UserID, p.Domain, day)
		if err != nil {
			return err
		}
		left := limit - used
		if left <= 0 {
			l.warmup.setFull(k, day)
			return nil
		}
		if rows, err = l.claimRows(ctx, tx, sendID, int(min(int64(n), left))); err != nil {
			return err
		}
		return record.AddWarmupCount(tx, p.UserID, p.Domain, day, int64(len(rows)))
	})
	if err != nil {
		l.forgetPlace(sendID)
		return nil, err
	}
	return rows, nil
}

// countLane counts a claimed single message against its domain's plan:
// it is never held (decisions.md 11: it goes at once), but what it takes
// of the day's cap is not left to campaigns.
func (l *Ledger) countLane(ctx context.Context, c *compiledSend) {
	p, err := l.warmup.plan(ctx, c.account, c.fromDomain)
	if err != nil || p == nil {
		return
	}
	day := record.LocalDay(l.now(), p.loc)
	if _, ok := p.CapOn(day); !ok {
		return
	}
	if err := record.AddWarmupCount(l.db.W.WithContext(ctx), p.UserID, p.Domain, day, 1); err != nil {
		l.log.Error("sending: count a single message against its warm-up plan", "err", err)
	}
}
