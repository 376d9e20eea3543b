package send

// `load scaleout` (decisions.md 9): several `herald serve`
// processes on one PostgreSQL database share one single send while one of
// them is killed (SIGKILL) every -kill-every and started again.
//
// Set-up as `load send` (setup.go: everything through herald's CLI and
// API), on a fresh schema of HERALD_BENCH_DATABASE, with -contacts
// contacts. The sink (`load sink`, its own process) counts the messages
// of every address.
//
//	reference   one herald, no kill: a single send to the contacts, from
//	            the API call to the sink's last message (-reference=false
//	            skips it).
//	scale-out   -procs heralds (each HERALD_SMTP_MAX_CONNS=-conns) on the
//	            same database; a single send to the same contacts is
//	            created through the first one's API; every -kill-every the
//	            next process in turn is killed with SIGKILL and started
//	            again on the same address, until the sink has a message for
//	            every contact. Then the run waits for the send to be
//	            completed and reads its counters through the API.
//
// Checks (the exit status fails when one does not hold): every address got
// its message (sink: distinct recipients = contacts); the send's delivered
// counter from the API equals the sink's distinct count; duplicates (the
// messages beyond the first to an address) are at most 2 × -conns per
// kill, the in-flight bound. It reports the aggregate rate against the
// reference's.

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"time"

	"herald/bench/harness"
)

type scaleOptions struct {
	procs     int
	killEvery time.Duration
	reference bool
}

func (s *scaleOptions) flags() {
	flag.IntVar(&s.procs, "procs", 3, "herald processes sharing the send")
	flag.DurationVar(&s.killEvery, "kill-every", 5*time.Second, "kill -9 one process (in turn) this often, then start it again (0: never)")
	flag.BoolVar(&s.reference, "reference", true, "first time the same send by one herald, without kills")
}

// fleetMember is one of the scale-out's processes.
type fleetMember struct {
	name  string
	addr  string
	proc  *harness.Proc
	lives int
	hwm   int64 // largest VmHWM of its lives
}

func runScaleOut(ctx context.Context, o options, so scaleOptions) error {
	if o.database == "" {
		return errors.New("scaleout needs PostgreSQL: set HERALD_BENCH_DATABASE=postgres://…")
	}
	if so.procs < 1 {
		return errors.New("-procs must be at least 1")
	}
	if _, err := os.Stat(o.herald); err != nil {
		return fmt.Errorf("%s is missing: build it first (make bench-scaleout builds bin/herald)", o.herald)
	}
	dir, cleanup, err := begin(o, "herald scale-out benchmark", "herald-scaleout-")
	if err != nil {
		return err
	}
	defer cleanup()
	start := time.Now()
	fmt.Printf("%s contacts, %d processes of %d SMTP connections each, kill -9 every %s\n\n",
		harness.Thousands(float64(o.contacts)), so.procs, o.conns, so.killEvery)
	dsn, drop, err := database(o, dir)
	if err != nil {
		return err
	}
	defer drop()
	b := &bench{o: o, dir: dir, dsn: dsn, bin: o.herald, pgPort: localPostgresPort(o.database)}
	t0 := time.Now()
	f, err := b.prepare(ctx, o.contacts, o.dkim)
	if err != nil {
		return fmt.Errorf("prepare the database: %w", err)
	}
	fmt.Printf("database prepared through herald's API (untimed) in %s: %s contacts imported as CSV\n",
		time.Since(t0).Round(10*time.Millisecond), harness.Thousands(float64(o.contacts)))
	sink, err := startSink()
	if err != nil {
		return err
	}
	defer sink.Stop()
	b.sink = sink
	smtpURL := "smtp://" + sink.Addr + "?tls=none"
	fmt.Printf("sink: go-smtp server in its own process (pid %d) at %s\n\n", sink.Cmd.Process.Pid, sink.Addr)
	want := int64(o.contacts)

	var refRate float64
	var refHWM int64
	if so.reference {
		h, err := b.startHerald(ctx, "reference", smtpURL)
		if err != nil {
			return err
		}
		time.Sleep(time.Second)
		if err := sink.reset(); err != nil {
			h.proc.Stop()
			return err
		}
		st0, _ := sink.stats()
		t0 := time.Now()
		utr, err := b.createSend(ctx, h, "Reference", f.audience)
		if err != nil {
			h.proc.Stop()
			return err
		}
		st, err := b.waitDistinct(ctx, want, func() error {
			if syscall.Kill(h.pid(), 0) != nil {
				return errors.New("herald exited: " + h.proc.Tail())
			}
			return nil
		})
		if err != nil {
			h.proc.Stop()
			return err
		}
		d, err := b.waitCompleted(ctx, []*heraldProc{h}, utr)
		_, refHWM, _ = harness.ProcMem(h.pid())
		h.proc.Stop()
		if err != nil {
			return err
		}
		st, _ = sink.stats()
		elapsed := st.last.Sub(t0)
		refRate = float64(want) / elapsed.Seconds()
		fmt.Printf("reference: 1 process, %s messages in %.1f s = %s msg/s; sink %d messages, %d distinct, %d duplicates; API delivered %d; peak RSS %s; load average %s\n",
			harness.Thousands(float64(want)), elapsed.Seconds(), harness.Thousands(refRate), st.messages-st0.messages, st.distinct, st.dups, d.Delivered, mib(refHWM), harness.LoadAvg())
		if st.distinct != want || d.Delivered != want || st.dups != 0 {
			return fmt.Errorf("reference: sink %d distinct, %d duplicates, API delivered %d; want %d, 0, %d", st.distinct, st.dups, d.Delivered, want, want)
		}
	}

	// The fleet.
	fleet := make([]*fleetMember, so.procs)
	startMember := func(m *fleetMember) error {
		env := append(b.env(), "HERALD_ADDR="+m.addr, "HERALD_SMTP_URL="+smtpURL)
		p, err := harness.Start(ctx, m.name, b.bin, []string{"serve"}, env, filepath.Join(dir, m.name+"-herald.log"), "http://"+m.addr+"/healthz")
		if err != nil {
			return err
		}
		m.proc = p
		m.lives++
		return nil
	}
	defer func() {
		for _, m := range fleet {
			if m != nil && m.proc != nil {
				m.proc.Stop()
			}
		}
	}()
	for i := range fleet {
		addr, err := harness.FreeAddr()
		if err != nil {
			return err
		}
		fleet[i] = &fleetMember{name: fmt.Sprintf("p%d", i+1), addr: addr}
		if err := startMember(fleet[i]); err != nil {
			return err
		}
	}
	heralds := func() []*heraldProc {
		var out []*heraldProc
		for _, m := range fleet {
			out = append(out, &heraldProc{proc: m.proc, addr: m.addr})
		}
		return out
	}
	time.Sleep(time.Second)
	if err := sink.reset(); err != nil {
		return err
	}
	st0, err := sink.stats()
	if err != nil {
		return err
	}
	load0 := harness.LoadAvg()
	t1 := time.Now()
	utr, err := b.createSend(ctx, heralds()[0], "Scale-out", f.audience)
	if err != nil {
		return err
	}
	var kills int
	var killLog []string
	next := 0
	lastKill := time.Now()
	st, err := b.waitDistinct(ctx, want, func() error {
		if so.killEvery <= 0 || time.Since(lastKill) < so.killEvery {
			return nil
		}
		m := fleet[next%len(fleet)]
		next++
		if _, hwm, err := harness.ProcMem(m.proc.Cmd.Process.Pid); err == nil {
			m.hwm = max(m.hwm, hwm)
		}
		before, _ := sink.stats()
		_ = m.proc.Cmd.Process.Signal(syscall.SIGKILL)
		m.proc.Stop() // waits for the exit
		kills++
		killLog = append(killLog, fmt.Sprintf("%s at %.1f s (sink %s)", m.name, time.Since(t1).Seconds(), harness.Thousands(float64(before.messages-st0.messages))))
		lastKill = time.Now()
		return startMember(m)
	})
	if err != nil {
		return err
	}
	d, err := b.waitCompleted(ctx, heralds(), utr)
	if err != nil {
		return err
	}
	time.Sleep(2 * time.Second) // a straggler after completion would show here
	end, err := sink.stats()
	if err != nil {
		return err
	}
	for _, m := range fleet {
		if _, hwm, err := harness.ProcMem(m.proc.Cmd.Process.Pid); err == nil {
			m.hwm = max(m.hwm, hwm)
		}
	}
	elapsed := st.last.Sub(t1)
	rate := float64(want) / elapsed.Seconds()
	bound := int64(2 * o.conns * kills)
	fmt.Printf("kills: %s\n\n", strings.Join(killLog, ", "))
	fmt.Printf("| measure | value |\n|---|---|\n")
	fmt.Printf("| contacts | %s |\n", harness.Thousands(float64(want)))
	fmt.Printf("| processes × SMTP connections | %d × %d |\n", so.procs, o.conns)
	fmt.Printf("| kill -9 (one process in turn, restarted at once) | %d, every %s |\n", kills, so.killEvery)
	fmt.Printf("| time from the API call to the sink's last first-message | %.1f s |\n", elapsed.Seconds())
	fmt.Printf("| aggregate rate | %s msg/s |\n", harness.Thousands(rate))
	if so.reference {
		fmt.Printf("| one process, no kill (same run, same database) | %s msg/s |\n", harness.Thousands(refRate))
		fmt.Printf("| ratio scale-out / one process | %.2f |\n", rate/refRate)
	}
	fmt.Printf("| sink: messages / distinct addresses | %s / %s |\n", harness.Thousands(float64(end.messages-st0.messages)), harness.Thousands(float64(end.distinct)))
	fmt.Printf("| duplicates (messages beyond the first to an address) / bound 2 × conns × kills | %d / %d (most to one address: %d) |\n", end.dups, bound, end.most)
	fmt.Printf("| API: triggered / delivered / bounces / status | %d / %d / %d / %d |\n", d.Triggered, d.Delivered, d.Bounces, d.Status)
	var hwms []string
	for _, m := range fleet {
		hwms = append(hwms, fmt.Sprintf("%s %s (%d lives)", m.name, mib(m.hwm), m.lives))
	}
	if so.reference {
		hwms = append(hwms, "one process "+mib(refHWM))
	}
	fmt.Printf("| peak RSS (VmHWM, largest life) | %s |\n", strings.Join(hwms, ", "))
	fmt.Printf("| load average at start / end | %s / %s |\n\n", load0, harness.LoadAvg())
	fmt.Printf("whole run %s\n", time.Since(start).Round(time.Second))

	var problems []string
	if end.distinct != want {
		problems = append(problems, fmt.Sprintf("%d of %d addresses got a message", end.distinct, want))
	}
	if d.Delivered != end.distinct {
		problems = append(problems, fmt.Sprintf("the API says delivered %d, the sink has %d distinct addresses", d.Delivered, end.distinct))
	}
	if end.dups > bound {
		problems = append(problems, fmt.Sprintf("%d duplicates, more than 2 × %d connections × %d kills = %d", end.dups, o.conns, kills, bound))
	}
	if len(problems) > 0 {
		return errors.New("scale-out: " + strings.Join(problems, "; "))
	}
	fmt.Println("checks: every address got its message, delivered = distinct, duplicates within the in-flight bound: ok")
	return nil
}

// waitDistinct polls the sink until it has want distinct recipients,
// calling tick between polls; it fails after a minute without progress.
func (b *bench) waitDistinct(ctx context.Context, want int64, tick func() error) (sinkStats, error) {
	lastCount, lastMove := int64(-1), time.Now()
	for {
		st, err := b.sink.stats()
		if err != nil {
			return st, err
		}
		if st.distinct >= want {
			return st, nil
		}
		if st.distinct != lastCount {
			lastCount, lastMove = st.distinct, time.Now()
		} else if time.Since(lastMove) > time.Minute {
			return st, fmt.Errorf("no new address at the sink for a minute after %d of %d", st.distinct, want)
		}
		if err := tick(); err != nil {
			return st, err
		}
		if err := ctx.Err(); err != nil {
			return st, err
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// waitCompleted asks the heralds in turn for the send's details until it
// is completed (status 3), for at most two minutes.
func (b *bench) waitCompleted(ctx context.Context, hs []*heraldProc, utr string) (sendDetails, error) {
	deadline := time.Now().Add(2 * time.Minute)
	var d sendDetails
	var err error
	for i := 0; ; i++ {
		d, err = b.details(ctx, hs[i%len(hs)], utr)
		if err == nil && d.Status == 3 {
			return d, nil
		}
		if time.Now().After(deadline) {
			return d, fmt.Errorf("the send is not completed 2 minutes after the last address (status %d, delivered %d, error %v)", d.Status, d.Delivered, err)
		}
		time.Sleep(200 * time.Millisecond)
	}
}
