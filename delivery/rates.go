package delivery

import (
	"context"
	"sync"
	"time"
)

// RateStore counts the messages handed to each relay in calendar windows
// (a window of a limit of Per starts at a time truncated to Per), so that
// a relay's limits hold for every process that shares the store. Relays
// take tokens from it in small batches and give back the ones they did
// not use, so that the counts are the messages handed over.
//
// Overshoot: none from batching, because a batch is used only inside the
// windows it was counted in (it expires at the end of the shortest) and
// the store grants no more than every limit leaves. What remains is the
// clocks: a process whose clock is ahead or behind by s may use tokens
// up to s outside their window, so a limit can be exceeded, at a window's
// edge, by what that process sends in s. The cost of batching is the
// other way: tokens another process holds and has not used yet are
// unavailable until it gives them back, so a relay may carry a little
// less than its quota in a window (at most one batch per process).
type RateStore interface {
	// Take counts up to n tokens of relay in the window of every limit
	// that holds at at, as many as every limit with N > 0 still leaves
	// (a limit with N == 0 only counts), and returns how many it counted.
	// When that is fewer than n, retry is when the first full window
	// among them ends (an earlier Take cannot succeed).
	Take(ctx context.Context, relay string, limits []RateLimit, at time.Time, n int) (got int, retry time.Time, err error)
	// Return uncounts n tokens that Take counted at at and were not used.
	Return(ctx context.Context, relay string, limits []RateLimit, at time.Time, n int) error
	// Count sums relay's counts in the windows of length per that start
	// in [from, to).
	Count(ctx context.Context, relay string, per time.Duration, from, to time.Time) (int64, error)
}

// MemoryRates is the RateStore of one process: limits hold for it alone.
type MemoryRates struct {
	mu     sync.Mutex
	counts map[rateKey]int64
	purged time.Time
}

type rateKey struct {
	relay string
	per   time.Duration
	start int64 // unix seconds
}

// NewMemoryRates returns an empty store.
func NewMemoryRates() *MemoryRates { return &MemoryRates{counts: map[rateKey]int64{}} }

// Take implements RateStore.
func (m *MemoryRates) Take(_ context.Context, relay string, limits []RateLimit, at time.Time, n int) (int, time.Time, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.purge(at)
	got, retry := n, time.Time{}
	for _, l := range limits {
		if l.N <= 0 {
			continue
		}
		c := m.counts[rateKey{relay, l.Per, WindowStart(at, l.Per).Unix()}]
		if left := max(int64(l.N)-c, 0); left < int64(got) {
			got = int(left)
		}
	}
	if got < n {
		retry = m.retry(relay, limits, at, got)
	}
	for _, l := range limits {
		m.counts[rateKey{relay, l.Per, WindowStart(at, l.Per).Unix()}] += int64(got)
	}
	return got, retry, nil
}

// retry is when the first window that got fills ends.
func (m *MemoryRates) retry(relay string, limits []RateLimit, at time.Time, got int) time.Time {
	var retry time.Time
	for _, l := range limits {
		if l.N <= 0 {
			continue
		}
		start := WindowStart(at, l.Per)
		if m.counts[rateKey{relay, l.Per, start.Unix()}]+int64(got) >= int64(l.N) {
			if end := start.Add(l.Per); end.After(retry) {
				retry = end
			}
		}
	}
	return retry
}

// Return implements RateStore.
func (m *MemoryRates) Return(_ context.Context, relay string, limits []RateLimit, at time.Time, n int) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	for _, l := range limits {
		k := rateKey{relay, l.Per, WindowStart(at, l.Per).Unix()}
		if _, ok := m.counts[k]; ok {
			m.counts[k] = max(m.counts[k]-int64(n), 0)
		}
	}
	return nil
}

// Count implements RateStore.
func (m *MemoryRates) Count(_ context.Context, relay string, per time.Duration, from, to time.Time) (int64, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	var sum int64
	for k, c := range m.counts {
		if k.relay == relay && k.per == per && k.start >= from.Unix() && k.start < to.Unix() {
			sum += c
		}
	}
	return sum, nil
}

// purge drops the windows no one reads any more, once a minute.
func (m *MemoryRates) purge(now time.Time) {
	if now.Sub(m.purged) < time.Minute {
		return
	}
	m.purged = now
	for k := range m.counts {
		if now.Unix()-k.start > int64(RateKeep(k.per).Seconds()) {
			delete(m.counts, k)
		}
	}
}

// WindowStart is the start of the window of length per that holds at t:
// t truncated to per since the Unix epoch (a day starts at 00:00 UTC).
func WindowStart(t time.Time, per time.Duration) time.Time {
	s := int64(per / time.Second)
	if s <= 0 {
		s = 1
	}
	u := t.Unix()
	return time.Unix(u-u%s, 0).UTC()
}

// RateKeep is how long a store keeps a window of length per: the
// console reads the minutes of the last hour and the days of the last
// week; a second is needed only while it lasts.
func RateKeep(per time.Duration) time.Duration {
	switch {
	case per < time.Minute:
		return time.Minute
	case per < time.Hour:
		return 2 * time.Hour
	case per < 24*time.Hour:
		return 2 * 24 * time.Hour
	}
	return 8 * 24 * time.Hour
}
