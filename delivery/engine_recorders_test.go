package delivery

import (
	"context"
	"errors"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"herald/eventually"
)

// slowStore hands out n jobs and records outcomes with a commit latency,
// counting the messages handed to the transport whose outcome is not
// recorded yet (in flight) and the commits running at once.
type slowStore struct {
	mu        sync.Mutex
	next      int64
	n         int64
	recorded  map[int64]int
	inFlight  atomic.Int64
	maxFlight atomic.Int64
	running   atomic.Int64
	maxRun    atomic.Int64
	latency   time.Duration
}

func (s *slowStore) Claim(ctx context.Context, max int) ([]*Job, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	var out []*Job
	for len(out) < max && s.next < s.n {
		s.next++
		out = append(out, &Job{ID: s.next, To: "a@example.com", Build: func() ([]byte, error) { return []byte("x"), nil }})
	}
	return out, nil
}

func (s *slowStore) Record(ctx context.Context, outs []Outcome) error {
	r := s.running.Add(1)
	raise(&s.maxRun, r)
	time.Sleep(s.latency)
	s.running.Add(-1)
	s.mu.Lock()
	for _, o := range outs {
		s.recorded[o.Job.ID]++
	}
	s.mu.Unlock()
	s.inFlight.Add(-int64(len(outs)))
	return nil
}

func (s *slowStore) Release(ctx context.Context, jobs []*Job) error { return nil }

func raise(max *atomic.Int64, v int64) {
	for {
		m := max.Load()
		if v <= m || max.CompareAndSwap(m, v) {
			return
		}
	}
}

type countingTransport struct{ s *slowStore }

func (t countingTransport) Send(ctx context.Context, from string, to []string, msg []byte) error {
	raise(&t.s.maxFlight, t.s.inFlight.Add(1))
	time.Sleep(200 * time.Microsecond)
	return nil
}

// TestEngineRecordersKeepTheBound runs group commits several at a time, as
// on PostgreSQL: the commits overlap, every outcome is recorded once, and
// no more than 2 x Conns messages are ever handed to the transport without
// their outcome recorded.
func TestEngineRecordersKeepTheBound(t *testing.T) {
	t.Parallel()
	const conns, jobs = 4, 600
	s := &slowStore{n: jobs, recorded: map[int64]int{}, latency: 3 * time.Millisecond}
	e := NewEngine(s, countingTransport{s}, EngineConfig{Conns: conns, Recorders: 3, Poll: 10 * time.Millisecond})
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() { e.Run(ctx); close(done) }()
	// Not a failure here when they do not: the checks below say what is missing.
	_ = eventually.Wait(30*time.Second, func() error {
		s.mu.Lock()
		defer s.mu.Unlock()
		if len(s.recorded) != jobs {
			return errors.New("not all recorded")
		}
		return nil
	})
	cancel()
	<-done
	s.mu.Lock()
	defer s.mu.Unlock()
	if len(s.recorded) != jobs {
		t.Fatalf("%d of %d outcomes recorded", len(s.recorded), jobs)
	}
	for id, k := range s.recorded {
		if k != 1 {
			t.Errorf("job %d recorded %d times", id, k)
		}
	}
	if m := s.maxFlight.Load(); m > 2*conns {
		t.Errorf("%d messages in flight at once, bound %d", m, 2*conns)
	}
	if m := s.maxRun.Load(); m < 2 || m > 3 {
		t.Errorf("at most %d commits ran at once, want 2 or 3 (Recorders 3)", m)
	}
}

func (countingTransport) Close() error { return nil }
