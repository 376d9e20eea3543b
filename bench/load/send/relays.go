package send

// `load relays` (decisions.md 11: several relays in HERALD_SMTP_URL): one
// single send over two relays of equal weight beside the same send over
// one relay, and the failover when one of the two fails during a send.
//
// Set-up as `load send` (setup.go: everything through herald's command
// line and API) with -contacts contacts. Two sinks (`load sink
// -return-paths`, each its own process on its own port) stand for the
// relays a and b; a run's recipients are read back from both, so that an
// address that went to both counts as a duplicate.
//
// Throughput. -rounds rounds, each one herald run of every -variants in
// turn, the order reversed every other round (1 2, 2 1, …), so that a
// ratio compares runs of the same minute. A run is a fresh `herald serve`
// (HERALD_SMTP_MAX_CONNS=-conns) with HERALD_SMTP_URL:
//
//	1    smtp://A?tls=none: one plain relay, herald's SMTP pool (what an
//	     installation of one relay runs)
//	2    smtp://A?tls=none&name=a&weight=1 smtp://B?tls=none&name=b&weight=1:
//	     Relays, each relay -conns connections (twice the connections)
//	2h   the same with max_conns=-conns/2 each: as many connections as 1
//	1n   smtp://A?tls=none&name=a: Relays over one relay (its own cost)
//
// The clock starts at the create call and stops at the last message
// accepted by either sink once they hold -contacts between them; herald's
// CPU time (utime + stime) is read at both ends, and on a PostgreSQL of
// this machine that of the backends serving herald. Then the run waits for the
// send to be completed and checks that every address got exactly one
// message across both sinks and that the API says delivered = -contacts.
//
// Failover (-failover close,421; "" skips). A fresh herald on both relays
// (variant 2, HERALD_RETRY_BACKOFF=-retry-backoff so that messages whose
// relay vanished after their final dot come back within the run) sends to
// the contacts; the driver reads both sinks every -poll. When the sinks
// hold -down-at of the messages, sink a fails: close (its listener closed
// and every connection dropped: dials are refused) or 421 (it answers 421
// to EHLO and MAIL); -down-for later it accepts mail again on the same
// port. Measured on the polls:
//
//	rate before   both sinks' messages in the second before the failure
//	failover      from the failure to the start of the first 200 ms window
//	              in which b alone took ≥ 90 % of the rate before (and of
//	              b's own rate while a was down, which b alone may not
//	              raise to the rate of two)
//	longest gap   the longest time without a new message at either sink
//	              in the 5 s after the failure
//	back          from a's return to its first message: herald probes a
//	              paused relay when its pause (5 s, doubling while the
//	              probe fails) is over, once a second
//
// End state: every address once across both sinks; the messages beyond
// the first to an address are counted (a message cut after its final dot
// may be sent again: the in-flight bound), and the API's delivered must
// equal -contacts.
//
// It prints every run and markdown tables; it asserts nothing about speed.

import (
	"bufio"
	"context"
	"errors"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"time"

	"herald/bench/harness"
)

type relayOptions struct {
	rounds       int
	variants     []string
	failover     []string
	downAt       float64
	downFor      time.Duration
	retryBackoff time.Duration
	poll         time.Duration
}

func (r *relayOptions) flags() {
	flag.IntVar(&r.rounds, "rounds", 2, "throughput rounds: one run of every -variants each, the order reversed every other round (0: no throughput runs)")
	flag.Func("variants", `throughput variants, comma-separated: 1 (one plain relay), 2 (two relays of weight 1, -conns connections each), 2h (two relays of -conns/2 connections each), 1n (one named relay, through Relays) (default "1,2")`,
		func(s string) error {
			r.variants = strings.Split(s, ",")
			return nil
		})
	flag.Func("failover", `failover runs, comma-separated: close (relay a's listener closed and its connections dropped), 421 (relay a answers 421); "" for none (default "close,421")`,
		func(s string) error {
			r.failover = nil
			if s != "" {
				r.failover = strings.Split(s, ",")
			}
			return nil
		})
	flag.Float64Var(&r.downAt, "down-at", 0.25, "failover: relay a fails when the sinks hold this fraction of the messages")
	flag.DurationVar(&r.downFor, "down-for", 3*time.Second, "failover: how long relay a stays failed")
	flag.DurationVar(&r.retryBackoff, "retry-backoff", 5*time.Second, "failover: herald's HERALD_RETRY_BACKOFF (a message cut after its final dot is retried after it)")
	flag.DurationVar(&r.poll, "poll", 10*time.Millisecond, "failover: interval of the reads of both sinks")
	r.variants = []string{"1", "2"}
	r.failover = []string{"close", "421"}
}

func (r relayOptions) check(conns int) error {
	for _, v := range r.variants {
		if !slices.Contains([]string{"1", "2", "2h", "1n"}, v) {
			return fmt.Errorf("-variants: unknown variant %q (1, 2, 2h, 1n)", v)
		}
		if v == "2h" && conns < 2 {
			return errors.New("-variants 2h needs -conns of at least 2")
		}
	}
	for _, f := range r.failover {
		if f != "close" && f != "421" {
			return fmt.Errorf("-failover: unknown kind %q (close, 421)", f)
		}
	}
	if r.rounds < 0 || r.downAt <= 0 || r.downAt >= 1 || r.downFor <= 0 || r.poll <= 0 || r.retryBackoff <= 0 {
		return errors.New("need -rounds >= 0, 0 < -down-at < 1, and -down-for, -poll and -retry-backoff > 0")
	}
	return nil
}

// relayBench is a relays benchmark's two sinks beside the shared set-up.
type relayBench struct {
	*bench
	ro   relayOptions
	a, b *sinkProc
}

// smtpURL is HERALD_SMTP_URL of a variant.
func (rb *relayBench) smtpURL(variant string) string {
	a, b := "smtp://"+rb.a.Addr+"?tls=none", "smtp://"+rb.b.Addr+"?tls=none"
	switch variant {
	case "1":
		return a
	case "1n":
		return a + "&name=a"
	case "2h":
		half := fmt.Sprintf("&max_conns=%d", rb.o.conns/2)
		return a + "&name=a&weight=1" + half + " " + b + "&name=b&weight=1" + half
	}
	return a + "&name=a&weight=1 " + b + "&name=b&weight=1"
}

// relayRun is one herald run of the relays benchmark.
type relayRun struct {
	variant   string // a throughput variant, or "failover close" / "failover 421"
	round     int
	messages  int64 // at both sinks
	atA, atB  int64
	elapsed   time.Duration
	cpu       time.Duration // herald
	sinkCPU   time.Duration // both sinks
	dbCPU     time.Duration // the PostgreSQL backends serving herald (a local server)
	distinct  int64         // addresses across both sinks
	dups      int64         // messages beyond the first to an address, across both
	delivered int64         // the API's
	loadAvg   string
	hwm       int64
	fail      *failoverTimes // failover runs
}

func (r relayRun) rate() float64 { return float64(r.messages) / r.elapsed.Seconds() }

func (r relayRun) perMsg(d time.Duration) float64 {
	return float64(d) / float64(time.Microsecond) / float64(r.messages)
}

func (r relayRun) print() {
	fmt.Printf("round %d  %-14s %8s msgs in %6.2f s = %6s msg/s  a %s / b %s  herald CPU %6.1f µs/msg (%.2f cores)  sinks CPU %5.1f µs/msg  distinct %d, duplicates %d, API delivered %d  peak RSS %s  load %s\n",
		r.round+1, r.variant, harness.Thousands(float64(r.messages)), r.elapsed.Seconds(), harness.Thousands(r.rate()),
		harness.Thousands(float64(r.atA)), harness.Thousands(float64(r.atB)), r.perMsg(r.cpu), r.cpu.Seconds()/r.elapsed.Seconds(),
		r.perMsg(r.sinkCPU), r.distinct, r.dups, r.delivered, mib(r.hwm), r.loadAvg)
	if r.dbCPU > 0 {
		fmt.Printf("          PostgreSQL backends serving herald: %.1f µs of CPU per message\n", r.perMsg(r.dbCPU))
	}
	if f := r.fail; f != nil {
		fmt.Printf("          %s\n", f)
	}
}

func runRelays(ctx context.Context, o options, ro relayOptions) error {
	if _, err := os.Stat(o.herald); err != nil {
		return fmt.Errorf("%s is missing: build it first (make bench-relays builds bin/herald)", o.herald)
	}
	dir, cleanup, err := begin(o, "herald relays benchmark", "herald-relays-")
	if err != nil {
		return err
	}
	defer cleanup()
	start := time.Now()
	fmt.Printf("%s contacts, %d connections (HERALD_SMTP_MAX_CONNS), %d throughput rounds of %s, failover %q (at %.0f %% of the messages, for %s, HERALD_RETRY_BACKOFF %s)\n\n",
		harness.Thousands(float64(o.contacts)), o.conns, ro.rounds, strings.Join(ro.variants, ", "), strings.Join(ro.failover, ","), 100*ro.downAt, ro.downFor, ro.retryBackoff)
	dsn, drop, err := database(o, dir)
	if err != nil {
		return err
	}
	defer drop()
	rb := &relayBench{bench: &bench{o: o, dir: dir, dsn: dsn, bin: o.herald, pgPort: localPostgresPort(o.database)}, ro: ro}
	t0 := time.Now()
	f, err := rb.prepare(ctx, o.contacts, o.dkim)
	if err != nil {
		return fmt.Errorf("prepare the database: %w", err)
	}
	fmt.Printf("database prepared through herald's API (untimed) in %s: %s contacts imported as CSV\n",
		time.Since(t0).Round(10*time.Millisecond), harness.Thousands(float64(o.contacts)))
	if rb.a, err = startSink("-return-paths"); err != nil {
		return err
	}
	defer rb.a.Stop()
	if rb.b, err = startSink("-return-paths"); err != nil {
		return err
	}
	defer rb.b.Stop()
	fmt.Printf("sinks: relay a pid %d at %s, relay b pid %d at %s (go-smtp servers, each its own process)\n\n",
		rb.a.Cmd.Process.Pid, rb.a.Addr, rb.b.Cmd.Process.Pid, rb.b.Addr)

	var runs []relayRun
	for round := range ro.rounds {
		order := slices.Clone(ro.variants)
		if round%2 == 1 {
			slices.Reverse(order)
		}
		for _, v := range order {
			r, err := rb.run(ctx, v, round, f.audience, "")
			if err != nil {
				return fmt.Errorf("round %d, %s: %w", round+1, v, err)
			}
			r.print()
			runs = append(runs, r)
		}
	}
	for _, kind := range ro.failover {
		r, err := rb.run(ctx, "2", 0, f.audience, kind)
		if err != nil {
			return fmt.Errorf("failover %s: %w", kind, err)
		}
		r.print()
		runs = append(runs, r)
	}
	fmt.Printf("\nload average at end: %s; whole run %s\n\n", harness.LoadAvg(), time.Since(start).Round(time.Second))
	rb.printTables(runs)
	var problems []string
	for _, r := range runs {
		if r.distinct != int64(o.contacts) || r.delivered != int64(o.contacts) || (r.fail == nil && r.dups != 0) {
			problems = append(problems, fmt.Sprintf("%s round %d: %d distinct addresses, %d duplicates, API delivered %d", r.variant, r.round+1, r.distinct, r.dups, r.delivered))
		}
	}
	if len(problems) > 0 {
		return errors.New("relays: " + strings.Join(problems, "; "))
	}
	return nil
}

// run is one herald run of variant; with kind ("close", "421") relay a
// fails during the send.
func (rb *relayBench) run(ctx context.Context, variant string, round int, audience int64, kind string) (relayRun, error) {
	r := relayRun{variant: variant, round: round}
	name := fmt.Sprintf("round%d-%s", round+1, variant)
	var extra []string
	if kind != "" {
		r.variant, name = "failover "+kind, "failover-"+kind
		extra = append(extra, "HERALD_RETRY_BACKOFF="+rb.ro.retryBackoff.String())
	}
	h, err := rb.startHerald(ctx, name, rb.smtpURL(variant), extra...)
	if err != nil {
		return r, err
	}
	defer h.proc.Stop()
	fail := func(err error) (relayRun, error) {
		return r, fmt.Errorf("%w; herald log: %s", err, h.proc.Tail())
	}
	time.Sleep(time.Second) // let the start-up settle
	for _, s := range []*sinkProc{rb.a, rb.b} {
		if err := s.reset(); err != nil {
			return r, err
		}
	}
	a0, b0, err := rb.both()
	if err != nil {
		return r, err
	}
	pid := h.pid()
	want := int64(rb.o.contacts)
	r.loadAvg = harness.LoadAvg()
	pg0 := rb.backendCPU(pid)
	cpu0, t0 := harness.ProcCPU(pid), time.Now()
	utr, err := rb.createSend(ctx, h, "Relays "+name, audience)
	if err != nil {
		return fail(err)
	}

	var tl timeline
	var downAt, upAt time.Time
	every := 20 * time.Millisecond
	if kind != "" {
		every = rb.ro.poll
	}
	// mark has sink a fail or come back, with a read of both sinks at that
	// moment, so that what a took before it is not counted after it.
	mark := func(cmd string) (time.Time, error) {
		if err := rb.a.command(cmd); err != nil {
			return time.Time{}, err
		}
		t := time.Now()
		a, b, err := rb.both()
		tl = append(tl, tick{at: t, a: a.messages - a0.messages, b: b.messages - b0.messages})
		return t, err
	}
	lastCount, lastMove := int64(-1), time.Now()
	var a, b sinkStats
	for {
		if a, b, err = rb.both(); err != nil {
			return r, err
		}
		now := time.Now()
		got := a.messages - a0.messages + b.messages - b0.messages
		tl = append(tl, tick{at: now, a: a.messages - a0.messages, b: b.messages - b0.messages})
		if kind != "" && downAt.IsZero() && float64(got) >= rb.ro.downAt*float64(want) {
			if downAt, err = mark(map[string]string{"close": "down", "421": "refuse"}[kind]); err != nil {
				return r, err
			}
		}
		if !downAt.IsZero() && upAt.IsZero() && now.Sub(downAt) >= rb.ro.downFor {
			if upAt, err = mark("up"); err != nil {
				return r, err
			}
		}
		// The runs stop at the last message; a failover run not before
		// relay a was given back.
		if got >= want && (kind == "" || !upAt.IsZero()) {
			break
		}
		if got != lastCount {
			lastCount, lastMove = got, now
		} else if now.Sub(lastMove) > time.Minute+rb.ro.retryBackoff {
			return fail(fmt.Errorf("no message for a minute after %d of %d", got, want))
		}
		if syscall.Kill(pid, 0) != nil {
			return fail(errors.New("herald exited"))
		}
		if ctx.Err() != nil {
			return r, ctx.Err()
		}
		time.Sleep(every)
	}
	// CPU times when the sinks hold every message.
	cpuTimes := func() {
		r.cpu = harness.ProcCPU(pid) - cpu0
		for p, d := range rb.backendCPU(pid) {
			r.dbCPU += d - pg0[p]
		}
	}
	if kind == "" {
		cpuTimes()
		r.elapsed = later(a.last, b.last).Sub(t0)
	}
	d, err := rb.waitCompleted(ctx, []*heraldProc{h}, utr)
	if err != nil {
		return fail(err)
	}
	r.delivered = d.Delivered
	if kind != "" {
		// The timeline goes on to the sinks' last message (messages the
		// ledger retried may come after the first count reached want).
		for {
			if a, b, err = rb.both(); err != nil {
				return r, err
			}
			tl = append(tl, tick{at: time.Now(), a: a.messages - a0.messages, b: b.messages - b0.messages})
			if a.messages-a0.messages+b.messages-b0.messages >= want || ctx.Err() != nil {
				break
			}
			time.Sleep(every)
		}
		cpuTimes()
		r.elapsed = later(a.last, b.last).Sub(t0)
		ft := tl.failover(downAt, upAt)
		r.fail = &ft
	}
	time.Sleep(300 * time.Millisecond) // a straggler would show here
	if a, b, err = rb.both(); err != nil {
		return r, err
	}
	r.atA, r.atB = a.messages-a0.messages, b.messages-b0.messages
	r.messages = r.atA + r.atB
	r.sinkCPU = a.cpu - a0.cpu + b.cpu - b0.cpu
	_, r.hwm, _ = harness.ProcMem(pid)
	if r.distinct, r.dups, err = rb.union(name); err != nil {
		return r, err
	}
	return r, nil
}

// both reads both sinks.
func (rb *relayBench) both() (a, b sinkStats, err error) {
	if a, err = rb.a.stats(); err != nil {
		return
	}
	b, err = rb.b.stats()
	return
}

// union counts the addresses across both sinks since their reset and
// the messages beyond the first to an address (within a sink or across
// both), from the sinks' recipient files.
func (rb *relayBench) union(name string) (distinct, dups int64, err error) {
	seen := map[string]bool{}
	for i, s := range []*sinkProc{rb.a, rb.b} {
		st, err := s.stats()
		if err != nil {
			return 0, 0, err
		}
		dups += st.dups
		file := filepath.Join(rb.dir, fmt.Sprintf("%s-sink%d.rcpts", name, i))
		if err := s.paths(file); err != nil {
			return 0, 0, err
		}
		f, err := os.Open(file)
		if err != nil {
			return 0, 0, err
		}
		in := bufio.NewScanner(f)
		for in.Scan() {
			rcpt, _, _ := strings.Cut(in.Text(), " ")
			if seen[rcpt] {
				dups++ // at both sinks
			}
			seen[rcpt] = true
		}
		f.Close()
		os.Remove(file)
		if err := in.Err(); err != nil {
			return 0, 0, err
		}
	}
	return int64(len(seen)), dups, nil
}

func later(a, b time.Time) time.Time {
	if a.After(b) {
		return a
	}
	return b
}

// tick is one read of both sinks: the messages each holds since the run
// began.
type tick struct {
	at   time.Time
	a, b int64
}

type timeline []tick

// failoverTimes is what a failover run measured.
type failoverTimes struct {
	poll        time.Duration // the median interval between reads
	rateBefore  float64       // both sinks, the second before the failure, msg/s
	rateBDown   float64       // b alone while a was down (from 1 s after the failure when a was down 2 s or more), msg/s
	toRate      time.Duration // to b ≥ 90 % of rateBefore; -1: never while a was down
	toOwn       time.Duration // to b ≥ 90 % of rateBDown
	gap         time.Duration // the longest time without a new message in the 5 s after the failure
	downFor     time.Duration
	back        time.Duration // from a's return to its first message; -1: not before the send ended
	atAWhileOut int64         // messages a took between the failure and its return (none expected)
	steps       []float64     // b's rate in the 100 ms windows after the failure, over rateBefore
}

func (f failoverTimes) String() string {
	never := func(d time.Duration, what string) string {
		if d < 0 {
			return what
		}
		return ms(d)
	}
	steps := make([]string, len(f.steps))
	for i, x := range f.steps {
		steps[i] = pct(x)
	}
	return fmt.Sprintf("failover: rate before %s msg/s; b alone %s msg/s while a was down (%.0f %%); b ≥ 90 %% of the rate before (200 ms windows): %s, ≥ 90 %% of its own: %s; b in the 100 ms windows after the failure: %s of the rate before; longest gap %s; a down %s, a's first message %s after its return; a took %d messages while down; reads every %s",
		harness.Thousands(f.rateBefore), harness.Thousands(f.rateBDown), 100*f.rateBDown/f.rateBefore,
		f.reached(f.toRate), f.reached(f.toOwn), strings.Join(steps, ", "), ms(f.gap), f.downFor.Round(time.Millisecond),
		never(f.back, "never (the send ended first)"), f.atAWhileOut, f.poll)
}

// reached says when b reached a rate: "never", "in the first window" (the
// window starting at the failure already had it: sooner than the
// measurement can tell), else the start of the first such window.
func (f failoverTimes) reached(d time.Duration) string {
	switch {
	case d < 0:
		return "never"
	case d < f.poll:
		return "first window"
	}
	return ms(d)
}

// failover reads the timeline around the failure (down) and the return
// (up) of relay a.
func (tl timeline) failover(down, up time.Time) failoverTimes {
	const window = 200 * time.Millisecond
	f := failoverTimes{toRate: -1, toOwn: -1, back: -1, downFor: up.Sub(down)}
	var gaps []float64
	for i := 1; i < len(tl); i++ {
		gaps = append(gaps, float64(tl[i].at.Sub(tl[i-1].at)))
	}
	f.poll = time.Duration(harness.Median(gaps)).Round(100 * time.Microsecond)
	// at is the last read at or before t.
	at := func(t time.Time) tick {
		k, _ := slices.BinarySearchFunc(tl, t, func(x tick, t time.Time) int { return x.at.Compare(t) })
		if k < len(tl) && tl[k].at.Equal(t) {
			return tl[k]
		}
		return tl[max(k-1, 0)]
	}
	rate := func(from, to tick, n func(tick) int64) float64 {
		if !to.at.After(from.at) {
			return 0
		}
		return float64(n(to)-n(from)) / to.at.Sub(from.at).Seconds()
	}
	total := func(x tick) int64 { return x.a + x.b }
	onB := func(x tick) int64 { return x.b }
	d0 := at(down)
	f.rateBefore = rate(at(down.Add(-time.Second)), d0, total)
	settled := down.Add(time.Second) // b's own rate leaves out its first second
	if !settled.Before(up.Add(-time.Second)) {
		settled = down
	}
	f.rateBDown = rate(at(settled), at(up), onB)
	f.atAWhileOut = at(up).a - d0.a
	end := down.Add(time.Second)
	if up.Before(end) {
		end = up
	}
	for t := down; !t.Add(100 * time.Millisecond).After(end); t = t.Add(100 * time.Millisecond) {
		f.steps = append(f.steps, rate(at(t), at(t.Add(100*time.Millisecond)), onB)/f.rateBefore)
	}
	for i, x := range tl {
		switch {
		case x.at.Before(down):
			continue
		case x.at.After(up):
			if f.back < 0 && x.a > at(up).a {
				f.back = x.at.Sub(up)
			}
			continue
		}
		// The window starting at this read, while a is still down.
		j := i
		for j < len(tl) && tl[j].at.Sub(x.at) < window {
			j++
		}
		if j == len(tl) || tl[j].at.After(up) {
			continue
		}
		rb := rate(x, tl[j], onB)
		if f.toRate < 0 && rb >= 0.9*f.rateBefore {
			f.toRate = x.at.Sub(down)
		}
		if f.toOwn < 0 && rb >= 0.9*f.rateBDown {
			f.toOwn = x.at.Sub(down)
		}
	}
	last := d0
	for _, x := range tl {
		if x.at.Before(down) || x.at.After(down.Add(5*time.Second)) {
			continue
		}
		if total(x) > total(last) {
			f.gap = max(f.gap, x.at.Sub(last.at))
			last = x
		}
	}
	return f
}

// printTables writes the throughput and failover tables.
func (rb *relayBench) printTables(runs []relayRun) {
	by := map[string][]relayRun{}
	for _, r := range runs {
		by[r.variant] = append(by[r.variant], r)
	}
	per := func(rs []relayRun, f func(relayRun) string) string {
		s := make([]string, len(rs))
		for i, r := range rs {
			s[i] = f(r)
		}
		return strings.Join(s, ", ")
	}
	med := func(rs []relayRun, f func(relayRun) float64) float64 {
		xs := make([]float64, len(rs))
		for i, r := range rs {
			xs[i] = f(r)
		}
		return harness.Median(xs)
	}
	rate := func(r relayRun) float64 { return r.rate() }
	cpu := func(r relayRun) float64 { return r.perMsg(r.cpu) }
	if len(by["1"]) > 0 {
		pgHead, pgRule := "", ""
		if rb.pgPort > 0 {
			pgHead, pgRule = " PostgreSQL backends' CPU µs/msg |", "---:|"
		}
		fmt.Println("| variant | msg/s (median) | per round | ratio to 1 relay, same round | split a / b | herald CPU µs/msg (cores busy) | sinks' CPU µs/msg |" + pgHead)
		fmt.Println("|---|---:|---|---|---|---|---:|" + pgRule)
		for _, v := range rb.ro.variants {
			rs := by[v]
			ratio := func(r relayRun) float64 {
				for _, one := range by["1"] {
					if one.round == r.round {
						return r.rate() / one.rate()
					}
				}
				return 0
			}
			pg := ""
			if rb.pgPort > 0 {
				pg = " " + per(rs, func(r relayRun) string { return fmt.Sprintf("%.1f", r.perMsg(r.dbCPU)) }) + " |"
			}
			fmt.Printf("| %s: %s | %s | %s | %s (median %.2f) | %s | %s (%.2f) | %.1f |%s\n", v, variantName(v, rb.o.conns), harness.Thousands(med(rs, rate)),
				per(rs, func(r relayRun) string { return harness.Thousands(r.rate()) }),
				per(rs, func(r relayRun) string { return fmt.Sprintf("%.2f", ratio(r)) }), med(rs, ratio),
				per(rs, func(r relayRun) string {
					return harness.Thousands(float64(r.atA)) + " / " + harness.Thousands(float64(r.atB))
				}),
				per(rs, func(r relayRun) string { return fmt.Sprintf("%.1f", cpu(r)) }), med(rs, func(r relayRun) float64 { return r.cpu.Seconds() / r.elapsed.Seconds() }),
				med(rs, func(r relayRun) float64 { return r.perMsg(r.sinkCPU) }), pg)
		}
		fmt.Println()
	}
	var fs []relayRun
	for _, r := range runs {
		if r.fail != nil {
			fs = append(fs, r)
		}
	}
	if len(fs) == 0 {
		return
	}
	fmt.Println("| failure of relay a | rate before, msg/s | b alone while a down | b ≥ 90 % of the rate before (200 ms windows from the failure) | b ≥ 90 % of its own | longest gap | a down for | a's first message after its return | addresses / duplicates / API delivered | whole send msg/s |")
	fmt.Println("|---|---:|---:|---:|---:|---:|---:|---:|---|---:|")
	never := func(d time.Duration, what string) string {
		if d < 0 {
			return what
		}
		return ms(d)
	}
	for _, r := range fs {
		f := r.fail
		fmt.Printf("| %s | %s | %s (%.0f %%) | %s | %s | %s | %s | %s | %s / %d / %s | %s |\n", strings.TrimPrefix(r.variant, "failover "),
			harness.Thousands(f.rateBefore), harness.Thousands(f.rateBDown), 100*f.rateBDown/f.rateBefore, f.reached(f.toRate), f.reached(f.toOwn),
			ms(f.gap), f.downFor.Round(time.Millisecond), never(f.back, "never"),
			harness.Thousands(float64(r.distinct)), r.dups, harness.Thousands(float64(r.delivered)), harness.Thousands(r.rate()))
	}
	fmt.Println()
}

func variantName(v string, conns int) string {
	switch v {
	case "1":
		return fmt.Sprintf("one plain relay, %d connections", conns)
	case "1n":
		return fmt.Sprintf("one named relay (Relays), %d connections", conns)
	case "2h":
		return fmt.Sprintf("two relays of weight 1, %d connections each", conns/2)
	}
	return fmt.Sprintf("two relays of weight 1, %d connections each", conns)
}
