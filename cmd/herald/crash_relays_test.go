package main

import (
	"testing"
	"time"

	"herald/smtptest"
)

// TestSendSurvivesKill9OverTwoRelays runs a send spread over two relays
// (HERALD_SMTP_URL with two URLs, two connections each) in `herald
// serve` and kills the process with SIGKILL three times: while both
// relays carry mail, and twice while relay b answers 421 to every MAIL
// FROM (paused, its mail going to a). Then b answers again and is back in
// use. No address is lost, each kill sends again exactly the messages it
// left in flight (at most 2 x the connections of both relays), and the
// counters are exact.
func TestSendSurvivesKill9OverTwoRelays(t *testing.T) {
	t.Parallel()
	if testing.Short() {
		t.Skip("kills and restarts herald during a send over two relays")
	}
	const (
		contacts = 8000
		bound    = 2 * (2 + 2) // in flight: twice the connections of both relays
	)
	bin := buildHerald(t)
	a, b := smtptest.Start(t), smtptest.Start(t)
	a.Discard, b.Discard = true, true
	count := func() int { return a.Count() + b.Count() }
	received := func() map[string]int {
		per := a.PerRecipient()
		for addr, n := range b.PerRecipient() {
			per[addr] += n
		}
		return per
	}

	dsn, u, ss, addr := prepareSend(t, contacts)
	db, svc, delivered := readSend(t, dsn, ss.ID)

	logf := heraldLog(t)
	env := sendEnv(t, dsn, a, 4)
	env["HERALD_SMTP_URL"] = a.URL() + "&name=a&max_conns=2 " + b.URL() + "&name=b&max_conns=2"
	// wait waits (up to d) until cond holds or the process p exited.
	wait := func(p *heraldProcess, what string, d time.Duration, cond func() bool) {
		t.Helper()
		for deadline := time.Now().Add(d); !cond(); time.Sleep(5 * time.Millisecond) {
			select {
			case <-p.exited:
				t.Fatalf("%s: herald exited (relay a %d, relay b %d)", what, a.Count(), b.Count())
			default:
			}
			if time.Now().After(deadline) {
				t.Fatalf("%s: not within %v (relay a %d, relay b %d)", what, d, a.Count(), b.Count())
			}
		}
	}

	run := killRun{contacts: contacts, addr: addr, bound: bound}
	unrecorded := 0
	p := startHerald(t, bin, env, logf)
	killAndRestart := func(why string) {
		t.Helper()
		p.kill()
		at := settleCount(count)
		run.snaps = append(run.snaps, received())
		row, n := delivered()
		run.inFlight = append(run.inFlight, at-int(n)-unrecorded)
		unrecorded = at - int(n)
		run.kills++
		if row.Delivered != n {
			t.Errorf("kill %d: delivered counter %d, but %d ledger rows delivered", run.kills, row.Delivered, n)
		}
		if at >= contacts {
			t.Fatalf("kill %d came after the send was over (%d messages): it proves nothing", run.kills, at)
		}
		t.Logf("kill %d %s at %d messages (relay a %d, relay b %d): %d in flight", run.kills, why, at, a.Count(), b.Count(), run.inFlight[run.kills-1])
		p = startHerald(t, bin, env, logf)
	}

	// Both relays carry the send (weights 1 and 1).
	wait(p, "both relays in use", 2*time.Minute, func() bool { return count() >= contacts/8 && a.Count() > 0 && b.Count() > 0 })
	killAndRestart("with both relays up")

	// b closes its door: 421 to every MAIL FROM. Its mail goes to a.
	b.Refuse(smtptest.AtMail, "*", 421, "4.3.2", "Service shutting down")
	refusedAt := settleCount(b.Count)
	wait(p, "a carries the send alone", 2*time.Minute, func() bool { return count() >= 3*contacts/8 })
	killAndRestart("while relay b refuses")
	// The new process learns of b's refusal afresh.
	wait(p, "a carries the send after a restart", 2*time.Minute, func() bool { return count() >= 5*contacts/8 })
	killAndRestart("again while relay b refuses")
	if got := b.Count(); got != refusedAt {
		t.Fatalf("relay b accepted %d messages while it refused", got-refusedAt)
	}

	// b answers again: once its pause is over it is probed and back in use.
	b.Lift(smtptest.AtMail, "*")
	wait(p, "relay b back in use", 2*time.Minute, func() bool { return b.Count() > refusedAt })

	wait(p, "the send's last message", 3*time.Minute, func() bool { return count() >= contacts })
	done := waitCompleted(t, svc, u.ID, ss.Utr)
	p.kill()
	run.final = received()
	run.check(t, count())
	t.Logf("relay a carried %d messages, relay b %d", a.Count(), b.Count())
	if done.Triggered != contacts || done.Delivered != contacts || done.Bounces != 0 {
		t.Errorf("counters: triggered %d delivered %d bounces %d; want %d, %d, 0", done.Triggered, done.Delivered, done.Bounces, contacts, contacts)
	}
	checkAllDelivered(t, db, ss.ID, contacts)
}
