package deliverability

import (
	"context"
	"fmt"
	"slices"
	"sync"
	"time"

	"gorm.io/gorm"

	"herald/delivery"
	"herald/service/core"
)

// RelayRates is the delivery.RateStore shared by every herald process on
// one database (relay_rates): a relay's rate= holds for the installation,
// and the console reads what each relay carried today and in the last
// hour. Relays take tokens from it in batches (10 by default), so the
// database sees one short transaction per batch, not one per message;
// delivery.RateStore says why batching cannot overshoot a limit.
//
// The windows are calendar ones keyed by the clock of the process that
// takes (delivery.WindowStart): processes whose clocks differ by s may
// exceed a limit at a window's edge by what is sent in s.
type RelayRates struct {
	db *core.DB

	mu     sync.Mutex
	purged time.Time
}

// NewRelayRates is the shared rate store over db.
func NewRelayRates(db *core.DB) *RelayRates { return &RelayRates{db: db} }

var _ delivery.RateStore = (*RelayRates)(nil)

// Take implements delivery.RateStore: in one transaction, each limit's
// window row is created if missing and locked (PostgreSQL: FOR UPDATE, in
// the order of the windows' lengths, the same in every process; SQLite:
// the one writer), the grant is what every limit leaves, and every
// window counts it.
func (r *RelayRates) Take(ctx context.Context, relay string, limits []delivery.RateLimit, at time.Time, n int) (int, time.Time, error) {
	ls := slices.Clone(limits)
	slices.SortFunc(ls, func(a, b delivery.RateLimit) int { return int(a.Per - b.Per) })
	var got int
	var retry time.Time
	err := r.db.W.WithContext(ctx).Transaction(func(tx *gorm.DB) error {
		got, retry = n, time.Time{}
		counts := make([]int64, len(ls))
		for i, l := range ls {
			per, start := int64(l.Per/time.Second), delivery.WindowStart(at, l.Per).Unix()
			if err := tx.Exec("INSERT INTO relay_rates (relay, per, start, count) VALUES (?, ?, ?, 0) ON CONFLICT (relay, per, start) DO NOTHING",
				relay, per, start).Error; err != nil {
				return fmt.Errorf("relay rates: open a window of %s: %w", relay, err)
			}
			if err := tx.Raw("SELECT count FROM relay_rates WHERE relay = ? AND per = ? AND start = ?"+r.db.SQL().ForUpdate(),
				relay, per, start).Scan(&counts[i]).Error; err != nil {
				return fmt.Errorf("relay rates: read a window of %s: %w", relay, err)
			}
			if l.N > 0 {
				got = min(got, int(max(int64(l.N)-counts[i], 0)))
			}
		}
		for i, l := range ls {
			if l.N > 0 && counts[i]+int64(got) >= int64(l.N) && got < n {
				if end := delivery.WindowStart(at, l.Per).Add(l.Per); end.After(retry) {
					retry = end
				}
			}
		}
		if got == 0 {
			return nil
		}
		for _, l := range ls {
			if err := tx.Exec("UPDATE relay_rates SET count = count + ? WHERE relay = ? AND per = ? AND start = ?",
				got, relay, int64(l.Per/time.Second), delivery.WindowStart(at, l.Per).Unix()).Error; err != nil {
				return fmt.Errorf("relay rates: count for %s: %w", relay, err)
			}
		}
		return nil
	})
	if err != nil {
		return 0, time.Time{}, err
	}
	r.purge(ctx, at, ls)
	return got, retry, nil
}

// Return implements delivery.RateStore.
func (r *RelayRates) Return(ctx context.Context, relay string, limits []delivery.RateLimit, at time.Time, n int) error {
	ls := slices.Clone(limits)
	slices.SortFunc(ls, func(a, b delivery.RateLimit) int { return int(a.Per - b.Per) })
	return r.db.W.WithContext(ctx).Transaction(func(tx *gorm.DB) error {
		for _, l := range ls {
			if err := tx.Exec("UPDATE relay_rates SET count = CASE WHEN count > ? THEN count - ? ELSE 0 END WHERE relay = ? AND per = ? AND start = ?",
				n, n, relay, int64(l.Per/time.Second), delivery.WindowStart(at, l.Per).Unix()).Error; err != nil {
				return fmt.Errorf("relay rates: give back to %s: %w", relay, err)
			}
		}
		return nil
	})
}

// Count implements delivery.RateStore (the primary key's prefix is the
// index).
func (r *RelayRates) Count(ctx context.Context, relay string, per time.Duration, from, to time.Time) (int64, error) {
	var n int64
	if err := r.db.R.WithContext(ctx).Raw("SELECT COALESCE(SUM(count), 0) FROM relay_rates WHERE relay = ? AND per = ? AND start >= ? AND start < ?",
		relay, int64(per/time.Second), from.Unix(), to.Unix()).Scan(&n).Error; err != nil {
		return 0, fmt.Errorf("relay rates: count %s: %w", relay, err)
	}
	return n, nil
}

// purge drops, once a minute, the windows no one reads any more
// (delivery.RateKeep): a failure is only logged by the next purge.
func (r *RelayRates) purge(ctx context.Context, now time.Time, ls []delivery.RateLimit) {
	r.mu.Lock()
	if now.Sub(r.purged) < time.Minute {
		r.mu.Unlock()
		return
	}
	r.purged = now
	r.mu.Unlock()
	for _, l := range ls {
		_ = r.db.W.WithContext(ctx).Exec("DELETE FROM relay_rates WHERE per = ? AND start < ?",
			int64(l.Per/time.Second), now.Add(-delivery.RateKeep(l.Per)).Unix()).Error
	}
}
