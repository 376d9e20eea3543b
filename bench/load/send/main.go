// Package send holds the sending modes of the load driver (bench/load):
// `load send` (make bench-send), `load automation`, `load inbound`,
// `load events`, `load scaleout`, `load memory` and `load relays`, and the
// loopback SMTP sink they share (`load sink`, started by the driver
// itself).
//
// `load send`: how many messages per second herald's sending engine delivers,
// from the API call that creates a single send to the last message accepted
// by a loopback SMTP sink, beside the sink's ceiling measured in the same
// run by a plain SMTP client; with herald's CPU time per message and its
// peak RSS. It builds nothing: it expects bin/herald (the Makefile builds
// it).
//
// Database. An SQLite file in a temporary folder, or, when
// HERALD_BENCH_DATABASE is a postgres:// URL, a new schema on that server,
// dropped at the end. It is filled by herald itself before the runs
// (setup.go): `herald account create`, then through a set-up herald's API
// a sender (verified through the link of the mail herald sends), an
// unsubscribe group, a contact type of -contacts contacts and a small probe
// type of 200 contacts, both imported as CSV files. With -dkim,
// `herald dkim create` gives the account an RSA 2048 key for the sender's
// domain, so herald signs every message (off by default). The driver
// writes no row itself.
//
// Sink. This same binary started as `load sink`, a separate process so that
// its CPU is not counted against herald or the client: go-smtp's server on
// 127.0.0.1, accepting everything, reading and discarding the data,
// counting messages, bytes and distinct recipients, and noting the wall
// clock when each message's data has been read.
//
// Probe (untimed). herald, started on the database with HERALD_SMTP_URL
// pointing at an in-process smtptest server, sends the library design
// -template to the 200 probe contacts; the messages it wrote (tracking
// links, open pixel, List-Unsubscribe headers, and a DKIM signature with
// -dkim) are kept. They are the ceiling's messages, so the ceiling sends
// exactly herald's bytes.
//
// Rounds. Ceiling runs and herald runs alternate, C H C H … H C (-runs
// herald runs), so that each herald run has a ceiling run on each side;
// its ratio is taken to the mean of the two.
//
//	ceiling   -conns go-smtp clients, one connection each (dialled and
//	          greeted before the clock starts), sending -ceiling-messages of
//	          the probe's messages in turn, one reply awaited per command.
//	          -ceilings names the variants: plain+RSET (RSET before every
//	          message; go-smtp then says EHLO again before MAIL) and plain
//	          (MAIL, RCPT, DATA only: what herald's pool sends on a reused
//	          connection since it stopped sending RSET after a success).
//	herald    a fresh `herald serve` (HERALD_SMTP_URL at the sink,
//	          HERALD_SMTP_MAX_CONNS=-conns, no HERALD_SEND_RATE) on the same
//	          database; after it is ready and has idled 1 s, the clock starts
//	          and POST /api/single/send/create makes an immediate send of the
//	          design to the -contacts contacts. It stops when the sink holds
//	          every message; the time is the sink's last-message time minus
//	          the start. Herald's CPU time (utime + stime of /proc/<pid>/stat)
//	          is read before the call and when the sink has every message;
//	          its peak RSS is VmHWM of /proc/<pid>/status (the process's
//	          whole life: start-up and the send). The run then waits for the
//	          send to be completed and checks that the sink got exactly
//	          -contacts messages, to -contacts distinct recipients.
//
// On PostgreSQL on this machine it also sums the CPU time of the backends
// serving herald's connections (found through the loopback sockets) and
// prints which of the schema's tables and indexes gave the most rows
// (pg_stat_user_tables, pg_stat_user_indexes) and send_messages' dead rows.
//
// -cpuprofile DIR builds a herald with a small profiling hook (go build
// -overlay; the tree is not changed) and writes a CPU and a heap profile
// of each herald run into DIR, from the API call to the last message, with
// its GC and allocation counts. The profiler costs a few per cent.
// -overlay FILE builds herald with a go build -overlay file (replacement
// sources), to measure a proposed change without touching the tree.
//
// It prints every run and a markdown table. It asserts nothing about
// speed: the exit status only says whether the run itself worked.
//
//	go run ./bench/load send -herald bin/herald             # 7 to 13 minutes on 2 cores
//	go run ./bench/load send -contacts 20000 -runs 1        # a quick look
//	HERALD_BENCH_DATABASE='postgres://…' go run ./bench/load send -herald bin/herald
package send

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"net/url"
	"os"
	"os/signal"
	"path/filepath"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"time"

	"herald/bench/harness"
)

// The targets herald is held to (reported, never enforced).
const (
	targetRatio = 0.80      // herald's messages per second over the ceiling's, at least
	targetRSS   = 150 << 20 // herald's peak RSS, below
)

type options struct {
	herald          string
	contacts        int
	conns           int
	runs            int
	ceilingMessages int
	ceilings        []string
	template        int
	dkim            bool
	cpuProfile      string
	overlay         string
	sample          time.Duration
	keep            bool
	timeout         time.Duration
	automation      bool   // `load automation` (automation.go)
	inbound         bool   // `load inbound` (inbound.go)
	database        string // postgres:// URL, or "" for an SQLite file
	webhook         bool   // an events endpoint on a loopback receiver (events.go)
}

// Main runs one mode of the sending benchmarks: send (the default),
// automation, inbound, events (send with -webhook), scaleout, memory,
// relays.
func Main(mode string) {
	var o options
	defConns := 10 // herald's default HERALD_SMTP_MAX_CONNS
	if n, err := strconv.Atoi(os.Getenv("HERALD_SMTP_MAX_CONNS")); err == nil && n > 0 {
		defConns = n
	}
	var ceilings string
	flag.StringVar(&o.herald, "herald", "bin/herald", "herald binary")
	defContacts := 100_000
	if mode == "relays" {
		defContacts = 50_000
	}
	flag.IntVar(&o.contacts, "contacts", defContacts, "contacts in the send's audience: messages per herald run")
	flag.IntVar(&o.conns, "conns", defConns, "SMTP connections of herald (HERALD_SMTP_MAX_CONNS) and of the ceiling's client")
	flag.IntVar(&o.runs, "runs", 3, "herald runs; a ceiling run goes before each and after the last")
	flag.IntVar(&o.ceilingMessages, "ceiling-messages", 0, "messages per ceiling run (0: -contacts)")
	flag.StringVar(&ceilings, "ceilings", "plain+RSET,plain", "ceiling variants, comma-separated: plain+RSET, plain; the first is the one the verdict uses")
	flag.IntVar(&o.template, "template", 2, "library design sent (2: the newsletter)")
	flag.BoolVar(&o.dkim, "dkim", false, "give the account an RSA 2048 DKIM key for the sender's domain, so herald signs every message")
	flag.StringVar(&o.cpuProfile, "cpuprofile", "", "folder for a CPU and heap profile of each herald run (builds a profiling herald with go build -overlay)")
	flag.StringVar(&o.overlay, "overlay", "", "build herald from the working tree with this go build -overlay file instead of using -herald: to measure a variant without changing the tree")
	flag.DurationVar(&o.sample, "sample", 100*time.Millisecond, "interval of the VmRSS samples of herald")
	flag.BoolVar(&o.keep, "keep", false, "keep the temporary folder (database, herald logs) and print its path")
	flag.DurationVar(&o.timeout, "timeout", 60*time.Minute, "bound on the whole run")
	flag.BoolVar(&o.webhook, "webhook", mode == "events", "give the account an events webhook endpoint on a loopback receiver and wait for every delivered event after each herald run (events.go)")
	var so scaleOptions
	if mode == "scaleout" {
		so.flags()
	}
	var mo memoryOptions
	if mode == "memory" {
		mo.flags()
	}
	var ro relayOptions
	if mode == "relays" {
		ro.flags()
	}
	var bo branchOptions
	if mode == "automation" {
		bo.flags()
	}
	flag.Parse()
	o.automation, o.inbound = mode == "automation", mode == "inbound"
	o.ceilings = strings.Split(ceilings, ",")
	for _, c := range o.ceilings {
		if c != "plain" && c != "plain+RSET" {
			fatal(fmt.Errorf("-ceilings: unknown variant %q (plain+RSET, plain)", c))
		}
	}
	if o.ceilingMessages == 0 {
		o.ceilingMessages = o.contacts
	}
	o.database = os.Getenv("HERALD_BENCH_DATABASE")
	if o.database != "" && !strings.HasPrefix(o.database, "postgres://") && !strings.HasPrefix(o.database, "postgresql://") {
		fatal(fmt.Errorf("HERALD_BENCH_DATABASE must be a postgres:// URL (unset: an SQLite file), got %q", o.database))
	}
	if o.contacts < 1 || o.conns < 1 || o.runs < 1 || o.ceilingMessages < 1 || o.sample <= 0 {
		fatal(errors.New("need -contacts, -conns, -runs and -ceiling-messages >= 1 and -sample > 0"))
	}

	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	ctx, cancel := context.WithTimeout(ctx, o.timeout)
	defer cancel()
	switch mode {
	case "scaleout":
		if err := runScaleOut(ctx, o, so); err != nil {
			fatal(err)
		}
		return
	case "memory":
		if err := runMemory(ctx, o, mo); err != nil {
			fatal(err)
		}
		return
	case "relays":
		if err := ro.check(o.conns); err != nil {
			fatal(err)
		}
		if err := runRelays(ctx, o, ro); err != nil {
			fatal(err)
		}
		return
	}
	if o.inbound {
		if err := runInbound(ctx, o); err != nil {
			fatal(err)
		}
		return
	}
	if o.automation {
		if err := runAutomation(ctx, o, bo); err != nil {
			fatal(err)
		}
		return
	}
	if err := run(ctx, o); err != nil {
		fatal(err)
	}
}

func fatal(err error) {
	fmt.Fprintln(os.Stderr, "bench/load:", err)
	os.Exit(1)
}

// begin makes the run's temporary folder (kept with -keep; cleanup removes
// it otherwise) and prints the report's title, the machine and its load.
func begin(o options, title, tmpPrefix string) (dir string, cleanup func(), err error) {
	dir, err = os.MkdirTemp("", tmpPrefix)
	if err != nil {
		return "", nil, err
	}
	cleanup = func() { os.RemoveAll(dir) }
	if o.keep {
		fmt.Printf("temporary folder kept: %s\n", dir)
		cleanup = func() {}
	}
	dialect := "sqlite"
	if o.database != "" {
		dialect = "postgres"
	}
	fmt.Printf("# %s, %s\n\n", title, time.Now().UTC().Format("2006-01-02 15:04 MST"))
	fmt.Printf("machine: %d CPUs (%s), %s/%s, %s, %s; database: %s\n", runtime.NumCPU(), harness.CPUModel(), runtime.GOOS, runtime.GOARCH,
		harness.MemTotal(), runtime.Version(), dialect)
	fmt.Printf("load average at start: %s\n", harness.LoadAvg())
	return dir, cleanup, nil
}

// database is the run's database: an SQLite file in dir, or a fresh
// schema of HERALD_BENCH_DATABASE, which drop removes.
func database(o options, dir string) (dsn string, drop func(), err error) {
	if o.database == "" {
		return filepath.Join(dir, "herald.db"), func() {}, nil
	}
	return harness.FreshSchema(o.database)
}

func run(ctx context.Context, o options) error {
	if _, err := os.Stat(o.herald); err != nil && o.overlay == "" && o.cpuProfile == "" {
		return fmt.Errorf("%s is missing: build it first (make bench-send builds bin/herald)", o.herald)
	}
	dir, cleanup, err := begin(o, "herald send benchmark", "herald-send-")
	if err != nil {
		return err
	}
	defer cleanup()
	start := time.Now()
	fmt.Printf("%s contacts, %d connections, %d herald runs, ceilings %s of %s messages, library design %d, DKIM %v\n\n",
		harness.Thousands(float64(o.contacts)), o.conns, o.runs, strings.Join(o.ceilings, " and "), harness.Thousands(float64(o.ceilingMessages)), o.template, o.dkim)

	heraldBin := o.herald
	if o.cpuProfile != "" || o.overlay != "" {
		if o.cpuProfile != "" {
			if err := os.MkdirAll(o.cpuProfile, 0o755); err != nil {
				return err
			}
		}
		if heraldBin, err = buildHerald(ctx, dir, o.overlay, o.cpuProfile != "", o.herald); err != nil {
			return err
		}
		fmt.Printf("herald built from the working tree (overlay %q, profiling hook %v) instead of %s\n", o.overlay, o.cpuProfile != "", o.herald)
		if o.cpuProfile != "" {
			fmt.Printf("profiles go to %s\n", o.cpuProfile)
		}
		fmt.Println()
	}

	dsn, drop, err := database(o, dir)
	if err != nil {
		return err
	}
	defer drop()
	b := &bench{o: o, dir: dir, dsn: dsn, bin: heraldBin, pgPort: localPostgresPort(o.database)}
	if o.webhook {
		if b.events, err = startEventSink(); err != nil {
			return err
		}
		defer b.events.srv.Close()
		fmt.Printf("events endpoint (all kinds) at %s\n", b.events.url)
	}
	t0 := time.Now()
	f, err := b.prepare(ctx, o.contacts, o.dkim)
	if err != nil {
		return fmt.Errorf("prepare the database: %w", err)
	}
	fmt.Printf("database prepared through herald's API (untimed) in %s: account, verified sender, group, %s + %d contacts imported as CSV\n",
		time.Since(t0).Round(10*time.Millisecond), harness.Thousands(float64(o.contacts)), f.probeSize)
	if o.database != "" {
		if b.pgStats, err = harness.OpenSQL(dsn); err != nil {
			return err
		}
		defer b.pgStats.Close()
	}
	if err := b.probe(ctx); err != nil {
		return fmt.Errorf("probe: %w", err)
	}
	sink, err := startSink()
	if err != nil {
		return err
	}
	defer sink.Stop()
	b.sink = sink
	fmt.Printf("sink: go-smtp server in its own process (pid %d) at %s\n\n", sink.Cmd.Process.Pid, sink.Addr)

	var results []result
	ceilingRound := func(round int) error {
		kinds := slices.Clone(o.ceilings)
		if round%2 == 1 { // alternate the order of the variants
			slices.Reverse(kinds)
		}
		for _, k := range kinds {
			r, err := b.ceiling(ctx, k, round)
			if err != nil {
				return fmt.Errorf("ceiling %s, round %d: %w", k, round+1, err)
			}
			results = append(results, r)
			r.print(os.Stdout)
		}
		return nil
	}
	for round := range o.runs {
		if err := ceilingRound(round); err != nil {
			return err
		}
		r, err := b.herald(ctx, round)
		if err != nil {
			return fmt.Errorf("herald run %d: %w", round+1, err)
		}
		results = append(results, r)
		r.print(os.Stdout)
	}
	if err := ceilingRound(o.runs); err != nil {
		return err
	}
	fmt.Printf("\nload average at end: %s; whole run %s\n\n", harness.LoadAvg(), time.Since(start).Round(time.Second))
	printTable(os.Stdout, o, b, results)
	return nil
}

// result is one ceiling or herald run.
type result struct {
	target   string // "herald" or a ceiling variant
	round    int    // 0-based: herald run round sits between ceiling rounds round and round+1
	messages int64
	elapsed  time.Duration // start to the sink's last message
	bytes    int64         // data bytes the sink read
	cpu      time.Duration // client (ceiling) or herald CPU time
	sinkCPU  time.Duration
	// herald only
	peakRSS   int64 // VmHWM
	sampleRSS int64 // largest VmRSS sample
	samples   int
	distinct  int64
	triggered int64
	delivered int64
	bounces   int64
	request   time.Duration // the create call
	firstMsg  time.Duration // start to the first message at the sink
	dbCPU     time.Duration // PostgreSQL backends serving herald
	backends  int
	pgTop     string // the schema's tables and indexes that gave the most rows
	pgDead    int64  // dead rows of send_messages at the end
	loadAvg   string
	gc        *gcStats
	// -webhook
	eventsDelivered, eventsAll, eventPosts int64
	eventLag                               time.Duration // the sink's last message to the last delivered event
}

func (r result) rate() float64 { return float64(r.messages) / r.elapsed.Seconds() }

func (r result) perMsg(d time.Duration) float64 {
	return float64(d) / float64(time.Microsecond) / float64(r.messages)
}

func (r result) print(w io.Writer) {
	who := "client"
	if r.target == "herald" {
		who = "herald"
	}
	fmt.Fprintf(w, "round %d  %-10s %8s msgs in %7.2f s = %6s msg/s  %s avg bytes  %s CPU %6.1f µs/msg  sink CPU %6.1f µs/msg",
		r.round+1, r.target, harness.Thousands(float64(r.messages)), r.elapsed.Seconds(), harness.Thousands(r.rate()),
		harness.Thousands(float64(r.bytes)/float64(r.messages)), who, r.perMsg(r.cpu), r.perMsg(r.sinkCPU))
	if r.target == "herald" {
		fmt.Fprintf(w, "\n          herald: peak RSS %s (VmHWM; largest of %d samples %s); create call %s, first message after %s; send triggered %d, delivered %d, bounces %d; sink: %d distinct recipients; load average %s",
			mib(r.peakRSS), r.samples, mib(r.sampleRSS), ms(r.request), ms(r.firstMsg), r.triggered, r.delivered, r.bounces, r.distinct, r.loadAvg)
		if r.backends > 0 {
			fmt.Fprintf(w, "\n          PostgreSQL: %d backends serving herald used %.1f µs of CPU per message", r.backends, r.perMsg(r.dbCPU))
		}
		if r.pgTop != "" {
			fmt.Fprintf(w, "\n          PostgreSQL rows read during the run: %s; send_messages has %s dead rows", r.pgTop, harness.Thousands(float64(r.pgDead)))
		}
		if r.eventPosts > 0 {
			fmt.Fprintf(w, "\n          events: %d delivered events (%d events in all) in %d POSTs; the last delivered event came %s after the sink's last message",
				r.eventsDelivered, r.eventsAll, r.eventPosts, ms(r.eventLag))
		}
		if g := r.gc; g != nil {
			fmt.Fprintf(w, "\n          herald GC: %d cycles, pauses %s, %s allocated (%s per message, %d allocations per message), heap in use at the end %s, Sys %s",
				g.GC, ms(time.Duration(g.PauseNS)), mib(int64(g.AllocBytes)), harness.Thousands(float64(g.AllocBytes)/float64(r.messages))+" B",
				g.Mallocs/uint64(r.messages), mib(int64(g.HeapInuse)), mib(int64(g.Sys)))
		}
	}
	fmt.Fprintln(w)
}

// printTable writes the markdown tables: every run, then the medians and
// the verdicts.
func printTable(w io.Writer, o options, b *bench, rs []result) {
	byTarget := map[string][]result{}
	for _, r := range rs {
		byTarget[r.target] = append(byTarget[r.target], r)
	}
	// ceilingAround is the mean rate of variant k's runs on each side of
	// herald run round.
	ceilingAround := func(k string, round int) float64 {
		var sum float64
		var n int
		for _, c := range byTarget[k] {
			if c.round == round || c.round == round+1 {
				sum += c.rate()
				n++
			}
		}
		return sum / float64(n)
	}
	fmt.Fprintf(w, "| run | target | msg/s | ratio to %s | CPU µs/msg (client or herald) | sink CPU µs/msg | avg message bytes | herald peak RSS |\n",
		strings.Join(o.ceilings, " | ratio to "))
	fmt.Fprintf(w, "|---|---|---:|%s---:|---:|---:|---:|\n", strings.Repeat("---:|", len(o.ceilings)))
	for _, r := range rs {
		ratios := make([]string, len(o.ceilings))
		peak := ""
		if r.target == "herald" {
			for i, k := range o.ceilings {
				ratios[i] = pct(r.rate() / ceilingAround(k, r.round))
			}
			peak = mib(r.peakRSS)
		}
		fmt.Fprintf(w, "| %d | %s | %s | %s | %.1f | %.1f | %s | %s |\n", r.round+1, r.target, harness.Thousands(r.rate()), strings.Join(ratios, " | "),
			r.perMsg(r.cpu), r.perMsg(r.sinkCPU), harness.Thousands(float64(r.bytes)/float64(r.messages)), peak)
	}
	fmt.Fprintln(w)

	hs := byTarget["herald"]
	med := func(rs []result, f func(result) float64) float64 {
		xs := make([]float64, len(rs))
		for i, r := range rs {
			xs[i] = f(r)
		}
		return harness.Median(xs)
	}
	per := func(rs []result, f func(result) string) string {
		s := make([]string, len(rs))
		for i, r := range rs {
			s[i] = f(r)
		}
		return strings.Join(s, ", ")
	}
	rate := func(r result) float64 { return r.rate() }
	verdict := func(ok bool) string {
		if ok {
			return "met"
		}
		return "**NOT met**"
	}
	fmt.Fprintln(w, "| measure | median | per run | target | verdict |")
	fmt.Fprintln(w, "|---|---:|---|---|---|")
	fmt.Fprintf(w, "| herald, %s messages from the create call to the last accepted, msg/s | %s | %s | | |\n",
		harness.Thousands(float64(o.contacts)), harness.Thousands(med(hs, rate)), per(hs, func(r result) string { return harness.Thousands(r.rate()) }))
	for i, k := range o.ceilings {
		cs := byTarget[k]
		fmt.Fprintf(w, "| ceiling %s (%d connections, %s messages), msg/s | %s | %s | | |\n",
			k, o.conns, harness.Thousands(float64(o.ceilingMessages)), harness.Thousands(med(cs, rate)), per(cs, func(r result) string { return harness.Thousands(r.rate()) }))
		ratio := func(r result) float64 { return r.rate() / ceilingAround(k, r.round) }
		target, v := "", ""
		if i == 0 {
			target, v = fmt.Sprintf("≥ %.0f %%", 100*targetRatio), verdict(med(hs, ratio) >= targetRatio)
		}
		fmt.Fprintf(w, "| herald / %s (ceiling runs on each side) | %s | %s | %s | %s |\n", k, pct(med(hs, ratio)), per(hs, func(r result) string { return pct(ratio(r)) }), target, v)
	}
	cpu := func(r result) float64 { return r.perMsg(r.cpu) }
	fmt.Fprintf(w, "| herald CPU per message (cores busy) | %.1f µs (%.2f) | %s | | |\n", med(hs, cpu),
		med(hs, func(r result) float64 { return r.cpu.Seconds() / r.elapsed.Seconds() }), per(hs, func(r result) string { return fmt.Sprintf("%.1f µs", cpu(r)) }))
	if b.pgPort > 0 {
		db := func(r result) float64 { return r.perMsg(r.dbCPU) }
		fmt.Fprintf(w, "| PostgreSQL backends' CPU per message (cores busy) | %.1f µs (%.2f) | %s | | |\n", med(hs, db),
			med(hs, func(r result) float64 { return r.dbCPU.Seconds() / r.elapsed.Seconds() }), per(hs, func(r result) string { return fmt.Sprintf("%.1f µs", db(r)) }))
	}
	peak := func(r result) float64 { return float64(r.peakRSS) }
	maxPeak := slices.MaxFunc(hs, func(a, b result) int { return int(a.peakRSS - b.peakRSS) }).peakRSS
	fmt.Fprintf(w, "| herald peak RSS (VmHWM) | %s | %s | < %s | %s |\n", mib(int64(med(hs, peak))), per(hs, func(r result) string { return mib(r.peakRSS) }),
		mib(targetRSS), verdict(maxPeak < targetRSS))
	exact := true
	for _, r := range hs {
		exact = exact && r.messages == int64(o.contacts) && r.distinct == int64(o.contacts) && r.delivered == int64(o.contacts)
	}
	fmt.Fprintf(w, "| sink got exactly %s messages to distinct recipients, send delivered = %s | | %s | exact | %s |\n",
		harness.Thousands(float64(o.contacts)), harness.Thousands(float64(o.contacts)),
		per(hs, func(r result) string { return fmt.Sprintf("%d/%d/%d", r.messages, r.distinct, r.delivered) }), verdict(exact))
	fmt.Fprintf(w, "| herald message size (sink bytes / messages); the ceiling sends the probe's %d messages | %s B | | | |\n",
		len(b.msgs), harness.Thousands(med(hs, func(r result) float64 { return float64(r.bytes) / float64(r.messages) })))
	fmt.Fprintln(w)
}

// localPostgresPort is the port of a postgres:// URL whose server is on
// this machine (127.0.0.1, ::1, localhost), 0 otherwise.
func localPostgresPort(dsn string) int {
	if dsn == "" {
		return 0
	}
	u, err := url.Parse(dsn)
	if err != nil {
		return 0
	}
	switch u.Hostname() {
	case "127.0.0.1", "::1", "localhost":
	default:
		return 0
	}
	if p, err := strconv.Atoi(u.Port()); err == nil {
		return p
	}
	return 5432
}

func pct(x float64) string { return fmt.Sprintf("%.0f %%", 100*x) }

func ms(d time.Duration) string { return fmt.Sprintf("%.1f ms", float64(d)/float64(time.Millisecond)) }

func mib(b int64) string { return fmt.Sprintf("%.1f MiB", float64(b)/(1<<20)) }
