package delivery

import (
	"context"
	"errors"
	"log/slog"
	"sync"
	"sync/atomic"
	"time"

	"golang.org/x/time/rate"
)

// Job is one claimed message of the send ledger: one address of one send.
type Job struct {
	ID       int64 // ledger row
	SendID   int64
	Account  int64
	From     string // envelope sender
	To       string
	Attempts int // failed attempts before this one
	// Build renders and writes the message; it runs on a sending worker, so
	// that rendering is spread over the cores. An error is permanent.
	Build func() ([]byte, error)
	// Fresh reports whether the claim is surely still this process's; the
	// transport asks it at the last moment before the message is handed
	// over (WithFence). nil: always.
	Fresh func() bool

	lane bool // queued in the workers' lane queue (LaneWaiting)
}

// Outcome is what became of one Job.
type Outcome struct {
	Job *Job
	// Err is nil when the relay (or the outbox) accepted the message. A
	// *SendError carries the relay's answer (Verdict reads it); any other
	// error is a message that could not be built (a failure of the send).
	Err error
	// Relay is the name of the relay that took the message, when the
	// transport is Relays (WithCarrier); "" otherwise.
	Relay string
}

// ErrSkip is what a Job's Build returns when its message must not be sent
// any more (its send was deleted): nothing goes to the transport.
var ErrSkip = errors.New("delivery: message no longer wanted")

// ErrStale is what a Job's Build returns when its claim may no longer be
// this process's: its heartbeat lapsed after the claim (the process was
// stopped or starved), so another process may have taken the message
// over. Nothing goes to the transport; the store gives the claim back if
// it is still this process's.
var ErrStale = errors.New("delivery: claim may have been taken over")

// ErrHeld is what a Job's Build returns when its send was paused after
// the claim: nothing goes to the transport and the store gives the
// message back to the queue, to go when the send resumes.
var ErrHeld = errors.New("delivery: send paused")

// Verdict classifies the outcome (see ClassifyError); final says the
// message's retry window is over.
func (o Outcome) Verdict(final bool) Verdict { return ClassifyError(o.Err, final) }

// Store is the ledger the engine works from; the service layer implements
// it over the database.
type Store interface {
	// Claim marks up to max due messages as this process's and returns
	// them; none when nothing is due.
	Claim(ctx context.Context, max int) ([]*Job, error)
	// Record writes outcomes, all in one transaction (a group commit).
	Record(ctx context.Context, outs []Outcome) error
	// Release gives back claimed jobs that were never handed to the
	// transport (shutdown).
	Release(ctx context.Context, jobs []*Job) error
}

// LaneStore is a Store with a lane of urgent messages (single messages,
// decisions.md 11): the engine claims them with a claimer of their own,
// woken by WakeLane, and its workers take a lane job before any other, so
// that one does not wait behind the batches of a large send.
type LaneStore interface {
	Store
	// ClaimLane marks up to max due lane messages as this process's.
	ClaimLane(ctx context.Context, max int) ([]*Job, error)
}

// EngineConfig tunes an Engine.
type EngineConfig struct {
	// Conns is how many messages are handed to the transport at once (the
	// transport's connections). Default DefaultMaxConns.
	Conns int
	// Rate limits messages per second per account; 0 is no limit.
	Rate float64
	// Poll is how long an idle engine waits before looking for work again
	// when nobody calls Wake. Default 500 ms.
	Poll time.Duration
	// Recorders is how many group commits may run at once (default 1).
	// A commit's latency, not its size, bounds the rate: the outcomes of
	// the in-flight slots wait for it, and every commit frees its slots
	// only when the store says it is recorded. Several at once overlap
	// their round trips.
	Recorders int
	// Logger for failures of the store; default slog.Default().
	Logger *slog.Logger
	// JobContext, when set, derives the context a job's message is handed
	// to the transport with (the outbox files a message under its account).
	JobContext func(ctx context.Context, j *Job) context.Context
}

// Engine sends the ledger's messages: a claimer takes due messages in
// batches, Conns workers build and send them, and a recorder writes the
// outcomes in group commits. At most 2 x Conns messages are ever handed to
// the transport without their outcome recorded: a crash resends at most
// those.
type Engine struct {
	store     Store
	transport Transport
	cfg       EngineConfig

	wake     chan struct{}
	laneWake chan struct{}
	// laneWaiting counts lane jobs handed to the workers' lane queue and
	// not yet taken by a worker (LaneWaiting).
	laneWaiting atomic.Int64

	mu       sync.Mutex
	limiters map[int64]*rate.Limiter
}

// NewEngine builds an engine over store and t.
func NewEngine(store Store, t Transport, cfg EngineConfig) *Engine {
	if cfg.Conns < 1 {
		cfg.Conns = DefaultMaxConns
	}
	if cfg.Poll <= 0 {
		cfg.Poll = 500 * time.Millisecond
	}
	cfg.Recorders = max(cfg.Recorders, 1)
	if cfg.Logger == nil {
		cfg.Logger = slog.Default()
	}
	return &Engine{store: store, transport: t, cfg: cfg, wake: make(chan struct{}, 1), laneWake: make(chan struct{}, 1), limiters: map[int64]*rate.Limiter{}}
}

// Wake tells an idle engine that messages may be due now.
func (e *Engine) Wake() {
	select {
	case e.wake <- struct{}{}:
	default:
	}
}

// LaneWaiting is how many claimed lane jobs wait in the workers' queue:
// the next worker that comes free takes one of them before any campaign
// job. A lane row is marked claimed in the ledger before its job is built
// and queued; this tells when the job is there.
func (e *Engine) LaneWaiting() int { return int(e.laneWaiting.Load()) }

// WakeLane tells the engine that a lane message may be due now.
func (e *Engine) WakeLane() {
	select {
	case e.laneWake <- struct{}{}:
	default:
	}
}

func (e *Engine) limiter(account int64) *rate.Limiter {
	if e.cfg.Rate <= 0 {
		return nil
	}
	e.mu.Lock()
	defer e.mu.Unlock()
	l := e.limiters[account]
	if l == nil {
		burst := int(e.cfg.Rate)
		if burst < 1 {
			burst = 1
		}
		l = rate.NewLimiter(rate.Limit(e.cfg.Rate), burst)
		e.limiters[account] = l
	}
	return l
}

// Run sends until ctx ends. It then stops claiming, gives back the jobs it
// has not started, lets the messages on the wire finish (within a grace
// period) and records their outcomes before it returns.
func (e *Engine) Run(ctx context.Context) {
	inFlight := 2 * e.cfg.Conns
	// A whole claim fits in the queue, so that the claimer takes the next
	// batch while the workers still have this one: with a queue of Conns
	// jobs the workers ran dry during every claim on PostgreSQL. Queued
	// jobs are claimed, not in flight; a shutdown gives them back.
	jobs := make(chan *Job, e.claimBatch())
	// The lane's jobs wait in a queue of their own, which the workers
	// read first: a lane message waits at most for one worker to finish
	// the message it is sending, never behind the claimed batch. A store
	// without a lane leaves it nil (never ready).
	var lane chan *Job
	ls, hasLane := e.store.(LaneStore)
	if hasLane {
		lane = make(chan *Job, e.cfg.Conns)
	}
	outcomes := make(chan Outcome, inFlight)
	slots := make(chan struct{}, inFlight) // a slot: sent or sending, not yet recorded

	// The transport gets a context that outlives ctx by a grace period, so
	// that a shutdown does not cut a message in the middle of DATA.
	sendCtx, stopSends := context.WithCancel(context.WithoutCancel(ctx))
	defer stopSends()
	context.AfterFunc(ctx, func() { time.AfterFunc(10*time.Second, stopSends) })

	var workers sync.WaitGroup
	var unsentMu sync.Mutex
	var unsent []*Job
	for range e.cfg.Conns {
		workers.Add(1)
		go func() {
			defer workers.Done()
			for {
				j := next(jobs, lane)
				if j == nil {
					return
				}
				if j.lane {
					e.laneWaiting.Add(-1)
				}
				if ctx.Err() != nil {
					unsentMu.Lock()
					unsent = append(unsent, j)
					unsentMu.Unlock()
					continue
				}
				if l := e.limiter(j.Account); l != nil {
					if err := l.Wait(ctx); err != nil {
						unsentMu.Lock()
						unsent = append(unsent, j)
						unsentMu.Unlock()
						continue
					}
				}
				// The slot is taken once the message is built: building
				// hands nothing to the transport.
				msg, err := j.Build()
				slots <- struct{}{}
				relay := ""
				if err == nil { // ErrSkip, ErrStale and ErrHeld: nothing was sent
					relay, err = e.send(sendCtx, j, msg)
				}
				outcomes <- Outcome{Job: j, Err: err, Relay: relay}
			}
		}()
	}

	var recorders sync.WaitGroup
	for range e.cfg.Recorders {
		recorders.Add(1)
		go func() {
			defer recorders.Done()
			e.record(sendCtx, outcomes, slots)
		}()
	}

	var laneDone sync.WaitGroup
	if hasLane {
		laneDone.Add(1)
		go func() {
			defer laneDone.Done()
			e.claimLane(ctx, ls, lane)
			close(lane)
		}()
	}
	e.claim(ctx, jobs)
	close(jobs)
	laneDone.Wait()
	workers.Wait()
	close(outcomes)
	recorders.Wait()
	if len(unsent) > 0 {
		rctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 10*time.Second)
		if err := e.store.Release(rctx, unsent); err != nil {
			e.cfg.Logger.Error("delivery: release unsent jobs", "jobs", len(unsent), "err", err)
		}
		cancel()
	}
}

// send hands one message to the transport; relay is the relay that took
// it, when the transport says.
func (e *Engine) send(ctx context.Context, j *Job, msg []byte) (relay string, err error) {
	if e.cfg.JobContext != nil {
		ctx = e.cfg.JobContext(ctx, j)
	}
	if j.Fresh != nil {
		ctx = WithFence(ctx, j.Fresh)
	}
	ctx, carrier := WithCarrier(ctx)
	err = e.transport.Send(ctx, j.From, []string{j.To}, msg)
	return carrier(), err
}

// claimBatch is how many jobs one claim asks for.
func (e *Engine) claimBatch() int { return max(4*e.cfg.Conns, 64) }

// claim feeds jobs until ctx ends.
func (e *Engine) claim(ctx context.Context, jobs chan<- *Job) {
	batch := e.claimBatch()
	backoff := e.cfg.Poll
	for ctx.Err() == nil {
		got, err := e.store.Claim(ctx, batch)
		if err != nil {
			if ctx.Err() == nil {
				e.cfg.Logger.Error("delivery: claim", "err", err)
			}
			e.idle(ctx, backoff)
			continue
		}
		if len(got) == 0 {
			e.idle(ctx, e.cfg.Poll)
			continue
		}
		for i, j := range got {
			select {
			case jobs <- j:
			case <-ctx.Done():
				// Not handed to a worker: give them back at once.
				rctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 10*time.Second)
				if err := e.store.Release(rctx, got[i:]); err != nil {
					e.cfg.Logger.Error("delivery: release jobs", "err", err)
				}
				cancel()
				return
			}
		}
	}
}

// next is a worker's next job: a lane job if one waits, else whichever
// comes first; nil once both queues are closed and empty.
func next(jobs, lane <-chan *Job) *Job {
	select {
	case j, ok := <-lane:
		if ok {
			return j
		}
		lane = nil
	default:
	}
	for jobs != nil || lane != nil {
		select {
		case j, ok := <-lane:
			if ok {
				return j
			}
			lane = nil
		case j, ok := <-jobs:
			if !ok {
				jobs = nil
				continue
			}
			return j
		}
	}
	return nil
}

// claimLane feeds the lane until ctx ends: a claim when WakeLane is
// called, and every Poll for retries and other processes' messages.
func (e *Engine) claimLane(ctx context.Context, ls LaneStore, lane chan<- *Job) {
	for ctx.Err() == nil {
		got, err := ls.ClaimLane(ctx, cap(lane))
		if err != nil {
			if ctx.Err() == nil {
				e.cfg.Logger.Error("delivery: claim lane", "err", err)
			}
		}
		if len(got) == 0 {
			t := time.NewTimer(e.cfg.Poll)
			select {
			case <-ctx.Done():
			case <-e.laneWake:
			case <-t.C:
			}
			t.Stop()
			continue
		}
		for i, j := range got {
			j.lane = true
			e.laneWaiting.Add(1)
			select {
			case lane <- j:
			case <-ctx.Done():
				e.laneWaiting.Add(-1)
				rctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 10*time.Second)
				if err := e.store.Release(rctx, got[i:]); err != nil {
					e.cfg.Logger.Error("delivery: release lane jobs", "err", err)
				}
				cancel()
				return
			}
		}
	}
}

func (e *Engine) idle(ctx context.Context, d time.Duration) {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-ctx.Done():
	case <-e.wake:
	case <-t.C:
	}
}

// gatherWait is how long the recorder waits for more outcomes before a
// commit.
const gatherWait = 5 * time.Millisecond

// record writes outcomes as they come, each write taking all that is
// waiting (a group commit across workers), and frees their slots after the
// commit. A commit carries at most half of the slots' outcomes, so that
// the workers keep sending on the other half while it runs: with all of
// them in one commit, every worker waited for every commit. A failed
// write is retried: an outcome is never dropped while the process lives.
func (e *Engine) record(ctx context.Context, outcomes <-chan Outcome, slots <-chan struct{}) {
	buf := make([]Outcome, 0, max(1, cap(slots)/2))
	for o := range outcomes {
		buf = append(buf[:0], o)
		// Gather for a few milliseconds (or until every slot's outcome is
		// here): one commit then carries many outcomes. Committing as soon
		// as one waited gave 2.7 outcomes per commit in the send benchmark,
		// about 19 with this wait.
		gather := time.NewTimer(gatherWait)
	more:
		for len(buf) < cap(buf) {
			select {
			case o, ok := <-outcomes:
				if !ok {
					break more
				}
				buf = append(buf, o)
			case <-gather.C:
				break more
			}
		}
		gather.Stop()
		wait := 50 * time.Millisecond
		for {
			err := e.store.Record(ctx, buf)
			if err == nil {
				break
			}
			e.cfg.Logger.Error("delivery: record outcomes", "outcomes", len(buf), "err", err)
			if ctx.Err() != nil {
				// Shutting down past the grace period: the claims stay and
				// a later process sends these again (they were in flight).
				break
			}
			time.Sleep(wait)
			wait = min(wait*2, 2*time.Second)
		}
		for range buf {
			<-slots
		}
	}
}
