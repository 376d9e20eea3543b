package engine

import (
	"context"
	"log/slog"
	"time"

	"herald/delivery"
	"herald/service/core"
	"herald/service/deliverability"
	"herald/service/internal/record"
)

// SendingConfig tunes the sending engine (decisions.md section 1).
type SendingConfig struct {
	Conns   int           // HERALD_SMTP_MAX_CONNS
	Rate    float64       // HERALD_SEND_RATE, messages per second per account; 0 no limit
	Backoff time.Duration // HERALD_RETRY_BACKOFF, first retry delay (doubling); default 1m
	Window  time.Duration // HERALD_RETRY_WINDOW; default 24h
	// Tick is how often the scheduler looks for due sends, keeps this
	// process's heartbeat and completes sends. Default 1 s.
	Tick time.Duration
	// DeadAfter is how long a process's heartbeat may be silent before its
	// claims go back to the queue. Default 3 s.
	DeadAfter time.Duration
}

func (c *SendingConfig) defaults() {
	if c.Backoff <= 0 {
		c.Backoff = time.Minute
	}
	if c.Window <= 0 {
		c.Window = 24 * time.Hour
	}
	if c.Tick <= 0 {
		c.Tick = time.Second
	}
	if c.DeadAfter <= 0 {
		c.DeadAfter = 3 * time.Second
	}
	if c.Conns < 1 {
		c.Conns = delivery.DefaultMaxConns
	}
}

// Sending is the engine of one process, assembled from its parts (see
// ARCHITECTURE.md, "The engine, part by part"):
//
//   - the Scheduler decides what is due and keeps the heartbeat;
//   - the Audience resolves a due send's targets into the ledger;
//   - the Ledger claims due messages, takes back and records outcomes
//     (delivery.Store);
//   - delivery.Engine is the worker loop: it builds the claimed messages
//     and puts them on the wire, at most two per connection in flight.
type Sending struct {
	scheduler *Scheduler
	engine    *delivery.Engine
	live      *liveness
}

// SendingParts are what the engine takes from the rest of the service.
type SendingParts struct {
	DB        *core.DB
	Events    *record.Events
	Recorders *record.Recorders
	Mail      *deliverability.Mail // notices (pause, summary) and the transport
	Transport delivery.Transport
	BaseURL   string
	Key       []byte // the tracking key
	VERP      *delivery.VERP
	Signals   *Signals
	Now       func() time.Time
	// Purge deletes deleted sends with their ledgers; Prune drops old
	// feedback rows (rounds of the scheduler).
	Purge func(ctx context.Context) (int64, error)
	Prune func(ctx context.Context) error
	// Expire deletes the contacts unconfirmed for 30 days (the purge
	// round); nil: none.
	Expire func(ctx context.Context) (int64, error)
	// Refresh brings an account's segments whose conditions depend on
	// the time (engagement levels) up to date before a send reads its
	// segments; nil: none.
	Refresh func(ctx context.Context, accountID int64) error
}

// NewSending assembles the engine from p. Call Run to start it.
func NewSending(p SendingParts, cfg SendingConfig) *Sending {
	cfg.defaults()
	log := slog.Default()
	live := newLiveness(p.DB, cfg.DeadAfter)
	sends := newRunningSends(p.DB, p.BaseURL, p.VERP)
	ledger := &Ledger{
		db: p.DB, live: live, sends: sends, events: p.Events, rec: p.Recorders, key: p.Key, verp: p.VERP, now: p.Now,
		retry: RetryPolicy{First: cfg.Backoff, Window: cfg.Window}, log: log, warmup: newWarmups(p.DB),
	}
	engine := delivery.NewEngine(ledger, p.Transport, delivery.EngineConfig{Conns: cfg.Conns, Rate: cfg.Rate, Recorders: p.DB.SQL().Recorders(),
		JobContext: func(ctx context.Context, j *delivery.Job) context.Context { return core.WithAccount(ctx, j.Account) }})
	sc := newScheduler(schedulerParts{
		db: p.DB, live: live, ledger: ledger, sends: sends, mail: p.Mail, events: p.Events, now: p.Now, tick: cfg.Tick, log: log,
		purge: p.Purge, prune: p.Prune, expire: p.Expire, sent: engine.Wake,
		audience: &Audience{db: p.DB, events: p.Events, sends: sends, dialect: p.DB.SQL(), log: log, refresh: p.Refresh,
			// Local time first, then the A/B test, whose expressions win
			// (validation refuses a send with both).
			planner: planners{&localPlanner{db: p.DB, dialect: p.DB.SQL(), now: p.Now}, &abPlanner{db: p.DB, now: p.Now}}},
	})
	ledger.paused = sc.paused
	sg := &Sending{scheduler: sc, engine: engine, live: live}
	p.Signals.listen(sg)
	return sg
}

// Wake tells the scheduler and the engine that a send may be due now.
func (sg *Sending) Wake() {
	sg.scheduler.Wake()
	sg.engine.Wake()
}

// LaneWaiting is how many claimed single messages wait for the next free
// worker (delivery.Engine.LaneWaiting).
func (sg *Sending) LaneWaiting() int { return sg.engine.LaneWaiting() }

// Tick runs the scheduler's rounds once (tests that drive the engine step
// by step).
func (sg *Sending) Tick(ctx context.Context) error { return sg.scheduler.Tick(ctx) }

// Run sends until ctx ends, then drains (see delivery.Engine.Run) and
// gives back this process's claims.
func (sg *Sending) Run(ctx context.Context) {
	// The first heartbeat before the first claim: a claim of a worker with
	// no heartbeat is taken for a dead process's by the others.
	if err := sg.live.beat(ctx); err != nil {
		sg.scheduler.log.Error("sending: heartbeat", "err", err)
	}
	done := make(chan struct{})
	go func() {
		defer close(done)
		sg.scheduler.Run(ctx)
	}()
	sg.engine.Run(ctx)
	<-done
	bg, cancel := context.WithTimeout(context.WithoutCancel(ctx), 5*time.Second)
	defer cancel()
	_ = sg.live.leave(bg)
}
