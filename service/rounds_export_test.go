package service

import (
	"context"
	"fmt"
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
