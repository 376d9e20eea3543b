package engine

import (
	"context"
	"fmt"
	"herald/service/core"
	"herald/service/deliverability"
	"herald/service/internal/record"
	"log/slog"
	"sync"
	"time"
)

// Scheduler decides what is due: scheduled sends start (their audience is
// resolved into the ledger by the Audience), automation steps are queued,
// claims of dead processes go back to the queue, sends with nothing left
// complete, and the notices of paused and completed sends are mailed. It
// keeps this process's heartbeat.
//
// Each job is a round (round_*.go) with the state it keeps; Tick runs
// them in a fixed order.
type Scheduler struct {
	live     *liveness
	ledger   *Ledger
	audience *Audience
	sends    *runningSends
	tick     time.Duration
	log      *slog.Logger

	wake    chan struct{}
	notices *noticesRound // sends paused by this process, whose notice is not mailed yet
	rounds  []round       // in the order Tick runs them
}

// round is one job of the scheduler's tick.
type round interface {
	// name names the round in errors and logs.
	name() string
	// run does the round's work once.
	run(ctx context.Context) error
}

// schedulerParts are what the scheduler's rounds work with.
type schedulerParts struct {
	db       *core.DB
	live     *liveness
	ledger   *Ledger
	audience *Audience
	sends    *runningSends
	mail     *deliverability.Mail
	events   *record.Events
	now      func() time.Time
	tick     time.Duration
	log      *slog.Logger
	purge    func(context.Context) (int64, error) // SingleSends.PurgeDeleted
	prune    func(context.Context) error          // Feedback.Prune: untied reports, kept mails and spent webhook tokens
	expire   func(context.Context) (int64, error) // Contacts.PurgeUnconfirmed
	sent     func()                               // wakes the engine: messages were queued
}

// newScheduler builds the scheduler and its rounds, in the order Tick
// runs them.
func newScheduler(p schedulerParts) *Scheduler {
	sc := &Scheduler{
		live: p.live, ledger: p.ledger, audience: p.audience, sends: p.sends, tick: p.tick, log: p.log,
		wake: make(chan struct{}, 1), notices: newNoticesRound(p.db, p.mail, p.log),
	}
	sc.rounds = []round{
		newReclaimRound(p.db, p.live, p.ledger),
		newStartRound(p.db, p.audience, p.now, p.log, p.sent),
		newABTestsRound(p.db, p.now, p.log, p.sent),
		newCompleteRound(p.db, p.sends, p.mail),
		newPurgeRound(p.now, p.purge, p.prune, p.expire, p.log),
		sc.notices,
		newAutomationsRound(p.db, p.events, p.now, p.sent),
	}
	return sc
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
	sc.notices.add(ids)
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

// Tick runs the scheduler's rounds once, in order: claims of dead
// processes go back to the queue, due sends start (their audience is
// resolved into the ledger), A/B tests whose wait is over are decided,
// sends with nothing left complete, deleted sends are purged (hourly),
// pause notices are mailed and automations are run. A round that fails
// ends the tick: the later rounds wait for the next one.
func (sc *Scheduler) Tick(ctx context.Context) error {
	for _, r := range sc.rounds {
		if err := r.run(ctx); err != nil {
			return fmt.Errorf("scheduler: %s: %w", r.name(), err)
		}
	}
	return nil
}
