package engine

import (
	"context"
	"fmt"
	"time"

	"herald/delivery"
	"herald/service/core"
)

// RoundNames are the names of sg's scheduler rounds, in the order Tick
// runs them.
func RoundNames(sg *Sending) []string {
	var out []string
	for _, r := range sg.scheduler.rounds {
		out = append(out, r.name())
	}
	return out
}

// RunRound runs only the round of sg's scheduler named name, once, with
// the state it keeps between ticks.
func RunRound(ctx context.Context, sg *Sending, name string) error {
	for _, r := range sg.scheduler.rounds {
		if r.name() == name {
			return r.run(ctx)
		}
	}
	return fmt.Errorf("no scheduler round %q", name)
}

// Paused queues the pause notices of sends, as the ledger does when it
// pauses them.
func Paused(sg *Sending, ids ...int64) { sg.scheduler.paused(ids) }

// DecideTest is decideTest (an A/B test's winner chosen and the rest
// released) on db at a time, for the test that two processes choose it
// once.
func DecideTest(ctx context.Context, db *core.DB, sendID int64, now time.Time) (int, error) {
	return decideTest(ctx, db, sendID, now.UnixMilli())
}

// Resolve resolves send id's audience into the ledger with sg's resolver
// (benchmarks that time the resolution alone).
func Resolve(ctx context.Context, sg *Sending, id int64) error {
	return sg.scheduler.audience.Resolve(ctx, id)
}

// Beat writes sg's heartbeat.
func Beat(ctx context.Context, sg *Sending) error { return sg.live.beat(ctx) }

// Claim claims up to max due messages for sg's process, as its engine
// does.
func Claim(ctx context.Context, sg *Sending, max int) ([]*delivery.Job, error) {
	return sg.scheduler.ledger.Claim(ctx, max)
}

// Worker is sg's worker id, the one its claims carry.
func Worker(sg *Sending) string { return sg.live.worker }

// ForgetServerStart makes sg's next heartbeat see the database server as
// started again (as after a crash of the server): the start it remembers
// is moved one millisecond back.
func ForgetServerStart(sg *Sending) {
	sg.live.mu.Lock()
	sg.live.serverStart--
	sg.live.mu.Unlock()
}
