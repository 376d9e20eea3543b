package send

// `load automation -branch`: -contacts contacts through a two-branch
// automation while herald processes are killed (SIGKILL) and restarted:
// each contact gets each step once, and the path its opens call for.
//
// The automation (custom, on the empty contact type): "Welcome" at once,
// then a branch waiting 1 hour (the least the product allows: a branch
// waits hours or days), then "Thanks" at once on path a and "Nudge" at
// once on path b. The automation and the Welcome email are made through
// the API, the branch and the two path emails through the console (a
// branch is a console step: the API has none), then the automation is set
// live through the API.
//
// Processes: -procs `herald serve` on the same database (PostgreSQL:
// default 3; SQLite: 1), each HERALD_SMTP_MAX_CONNS=-conns; every
// -kill-every the next one in turn is killed with SIGKILL and started
// again on the same address, from the CSV upload to the last email. The
// process answering the upload is spared while the upload runs (a killed
// upload would be a second import, not what is measured); the others are
// killed meanwhile (on SQLite, with one process, the first kill comes
// after the import's answer).
//
// Phases, each timed to the sink's last message of it:
//
//	main     POST /api/contacts/upload-csv of -contacts addresses; the
//	         scheduler enrols them and sends Welcome. Ends when every
//	         address has its Welcome.
//	opens    a known share (-openers, by the address's number: the same
//	         addresses in every run) opens its Welcome as a person: a GET
//	         of the message's own open pixel (read from the message at the
//	         sink) with a desktop browser's User-Agent from loopback (no
//	         proxy or scanner range); every third of them clicks the
//	         message's first tracked link instead, at least 12 s after the
//	         last Welcome reached the sink (delivery.ScannerWindow takes a
//	         click within 10 s of delivery for a scanner's). A request that
//	         meets a killed process is sent again to the next one. Ends
//	         when every opener has its Thanks: path a, taken early, while
//	         the branch still has most of its hour to wait.
//	deadline the branch's hour is made to pass: the driver moves the due
//	         time of the enrolments still waiting at the branch to now,
//	         with one UPDATE conditional on the enrolment still being at
//	         the branch (the shape of the engine's own conditional
//	         updates). This is the one row the driver writes: a herald
//	         process's clock cannot be moved from outside, and the tests
//	         move the service's clock (servicetest Advance) the same way.
//	         Ends when every other address has its Nudge.
//
// Then the kills stop, the run waits 3 s (three scheduler ticks) for a
// straggler, and checks the sink's record of every address: Welcome at
// least once, the openers Thanks and no Nudge, the others Nudge and no
// Thanks, no unknown address, and the duplicates (messages beyond the
// first of one email to one address) at most 2 × -conns per kill, the
// in-flight bound of TestSendSurvivesKill9 (cmd/herald/crash_test.go).
// It also reads the enrolments' states: every one done.

import (
	"bufio"
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"math"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"herald/bench/harness"
	"herald/models"
)

type branchOptions struct {
	on        bool
	procs     int
	killEvery time.Duration
	openers   float64
}

func (bo *branchOptions) flags() {
	flag.BoolVar(&bo.on, "branch", false, "a two-branch automation (Welcome, a branch, Thanks on path a, Nudge on path b) across kill -9 (branch.go)")
	flag.IntVar(&bo.procs, "procs", 0, "with -branch: herald processes on the database (0: 3 on PostgreSQL, 1 on SQLite)")
	flag.DurationVar(&bo.killEvery, "kill-every", 5*time.Second, "with -branch: kill -9 one process (in turn) this often, then start it again (0: never)")
	flag.Float64Var(&bo.openers, "openers", 0.3, "with -branch: share of the contacts that open (or click) Welcome as a person")
}

// Subjects of the automation's three emails (no spaces: the sink's
// "subjects" answer is space-separated).
const (
	subjMain = "Welcome"
	subjA    = "Thanks"
	subjB    = "Nudge"
)

// browserUA is the User-Agent of the driver's opens and clicks: a desktop
// browser, which the machine rules take for a person's.
const browserUA = "Mozilla/5.0 (Windows NT 10.0; Win64; x64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/131.0.0.0 Safari/537.36"

// fleet is the run's herald processes; kill and the requests' choice of a
// process share its lock.
type fleet struct {
	b       *bench
	ctx     context.Context
	smtpURL string
	mu      sync.Mutex
	members []*fleetMember
	up      []bool
	spared  int // a member not to kill (-1: none)
	next    int
	kills   int
	killLog []string
}

func (fl *fleet) start(m *fleetMember) error {
	env := append(fl.b.env(), "HERALD_ADDR="+m.addr, "HERALD_SMTP_URL="+fl.smtpURL)
	p, err := harness.Start(fl.ctx, m.name, fl.b.bin, []string{"serve"}, env, filepath.Join(fl.b.dir, m.name+"-herald.log"), "http://"+m.addr+"/healthz")
	if err != nil {
		return err
	}
	m.proc = p
	m.lives++
	return nil
}

// addr is the address of a member that is up, the i-th in turn.
func (fl *fleet) addr(i int) string {
	fl.mu.Lock()
	defer fl.mu.Unlock()
	for k := range fl.members {
		j := (i + k) % len(fl.members)
		if fl.up[j] {
			return fl.members[j].addr
		}
	}
	return fl.members[i%len(fl.members)].addr
}

// killNext kills the next member in turn (not the spared one) with
// SIGKILL and starts it again.
func (fl *fleet) killNext(label string) error {
	fl.mu.Lock()
	i := fl.next % len(fl.members)
	if i == fl.spared {
		if len(fl.members) == 1 {
			fl.mu.Unlock()
			return nil
		}
		fl.next++
		i = fl.next % len(fl.members)
	}
	fl.next++
	m := fl.members[i]
	if _, hwm, err := harness.ProcMem(m.proc.Cmd.Process.Pid); err == nil {
		m.hwm = max(m.hwm, hwm)
	}
	fl.up[i] = false
	fl.mu.Unlock()
	_ = m.proc.Cmd.Process.Signal(syscall.SIGKILL)
	m.proc.Stop() // waits for the exit
	fl.mu.Lock()
	fl.kills++
	fl.killLog = append(fl.killLog, m.name+" "+label)
	fl.mu.Unlock()
	if err := fl.start(m); err != nil {
		return err
	}
	fl.mu.Lock()
	fl.up[i] = true
	fl.mu.Unlock()
	return nil
}

func (fl *fleet) stop() {
	for _, m := range fl.members {
		if m.proc != nil {
			if _, hwm, err := harness.ProcMem(m.proc.Cmd.Process.Pid); err == nil {
				m.hwm = max(m.hwm, hwm)
			}
			m.proc.Stop()
		}
	}
}

// phase is one timed part of the run.
type phase struct {
	name     string
	start    time.Time
	last     time.Time // the sink's last message of the phase
	messages int64
	kills    int
}

func runBranch(ctx context.Context, o options, bo branchOptions) error {
	if _, err := os.Stat(o.herald); err != nil {
		return fmt.Errorf("%s is missing: build it first (make bench-automation builds bin/herald)", o.herald)
	}
	if bo.procs == 0 {
		bo.procs = 1
		if o.database != "" {
			bo.procs = 3
		}
	}
	if bo.procs < 1 || bo.openers <= 0 || bo.openers >= 1 {
		return errors.New("-procs must be at least 1 and -openers between 0 and 1")
	}
	if o.database == "" && bo.procs > 1 {
		return errors.New("several processes share a PostgreSQL database only (decisions.md 9): set HERALD_BENCH_DATABASE or -procs 1")
	}
	dir, cleanup, err := begin(o, "herald two-branch automation benchmark", "herald-branch-")
	if err != nil {
		return err
	}
	defer cleanup()
	start := time.Now()
	fmt.Printf("%s contacts through Welcome -> branch (1 hour, made to pass) -> Thanks (path a) / Nudge (path b); %.0f %% open as people; %d processes of %d SMTP connections, kill -9 every %s\n\n",
		harness.Thousands(float64(o.contacts)), 100*bo.openers, bo.procs, o.conns, bo.killEvery)

	dsn, drop, err := database(o, dir)
	if err != nil {
		return err
	}
	defer drop()
	t0 := time.Now()
	b := &bench{o: o, dir: dir, dsn: dsn, bin: o.herald, pgPort: localPostgresPort(o.database)}
	f, err := b.prepare(ctx, 0, o.dkim)
	if err != nil {
		return fmt.Errorf("prepare the database: %w", err)
	}
	fmt.Printf("database prepared through herald's API (untimed) in %s: account, verified sender, group, an empty contact type (id %d)\n",
		time.Since(t0).Round(10*time.Millisecond), f.audience)
	csvBody := automationCSV(o.contacts)
	sink, err := startSink("-capture")
	if err != nil {
		return err
	}
	defer sink.Stop()
	b.sink = sink
	fmt.Printf("sink: go-smtp server in its own process (pid %d) at %s, reading each message's subject and tracking links\n\n", sink.Cmd.Process.Pid, sink.Addr)

	fl := &fleet{b: b, ctx: ctx, smtpURL: "smtp://" + sink.Addr + "?tls=none", spared: -1}
	defer fl.stop()
	for i := 0; i < bo.procs; i++ {
		addr, err := harness.FreeAddr()
		if err != nil {
			return err
		}
		m := &fleetMember{name: fmt.Sprintf("p%d", i+1), addr: addr}
		fl.members, fl.up = append(fl.members, m), append(fl.up, true)
		if err := fl.start(m); err != nil {
			return err
		}
	}
	h0 := &heraldProc{proc: fl.members[0].proc, addr: fl.members[0].addr}
	ts := time.Now()
	utr, err := b.createBranchAutomation(ctx, h0)
	if err != nil {
		return fmt.Errorf("%w; herald log: %s", err, h0.proc.Tail())
	}
	fmt.Printf("automation %s made and set live in %s (API and console)\n", utr, time.Since(ts).Round(time.Millisecond))
	time.Sleep(time.Second)
	if err := sink.reset(); err != nil {
		return err
	}
	db, err := harness.OpenSQL(dsn)
	if err != nil {
		return err
	}
	defer db.Close()
	var autoID int64
	if err := db.QueryRowContext(ctx, "SELECT id FROM automations WHERE utr = $1", utr).Scan(&autoID); err != nil {
		return fmt.Errorf("the automation's id: %w", err)
	}

	// The kills, from the upload to the last email.
	load0 := harness.LoadAvg()
	killCtx, stopKills := context.WithCancel(ctx)
	killErr := make(chan error, 1)
	t1 := time.Now()
	go func() {
		defer close(killErr)
		if bo.killEvery <= 0 {
			return
		}
		tick := time.NewTicker(bo.killEvery)
		defer tick.Stop()
		for {
			select {
			case <-killCtx.Done():
				return
			case <-tick.C:
			}
			st, _ := sink.stats()
			if err := fl.killNext(fmt.Sprintf("at %.1f s (sink %s)", time.Since(t1).Seconds(), harness.Thousands(float64(st.messages)))); err != nil {
				killErr <- err
				return
			}
		}
	}()
	defer stopKills()
	alive := func() error {
		select {
		case err := <-killErr:
			if err != nil {
				return fmt.Errorf("restart after a kill: %w", err)
			}
		default:
		}
		return nil
	}
	kills := func() int {
		fl.mu.Lock()
		defer fl.mu.Unlock()
		return fl.kills
	}

	// Phase 1: the upload and every Welcome.
	want := int64(o.contacts)
	openers := int64(0)
	for n := 1; n <= o.contacts; n++ {
		if isOpener(n, bo.openers) {
			openers++
		}
	}
	p1 := phase{name: "import + Welcome to every contact", start: t1}
	fl.mu.Lock()
	fl.spared = 0
	fl.mu.Unlock()
	type answer struct {
		rep importReport
		at  time.Time
		err error
	}
	done := make(chan answer, 1)
	go func() {
		rep, err := b.uploadCSV(ctx, h0, csvBody)
		done <- answer{rep, time.Now(), err}
	}()
	var rep importReport
	var importDur time.Duration
	imported := false
	st, err := b.waitSubject(ctx, subjMain, want, func() error {
		select {
		case a := <-done:
			if a.err != nil {
				return fmt.Errorf("upload: %w", a.err)
			}
			rep, importDur, imported = a.rep, a.at.Sub(t1), true
			fl.mu.Lock()
			fl.spared = -1
			fl.mu.Unlock()
			fmt.Printf("import answered after %.2f s: %d rows, %d created, %d skipped\n", importDur.Seconds(), rep.Rows, rep.Created, rep.Skipped)
		default:
		}
		return alive()
	})
	if err != nil {
		return err
	}
	if !imported {
		a := <-done
		if a.err != nil {
			return fmt.Errorf("upload: %w", a.err)
		}
		rep, importDur = a.rep, a.at.Sub(t1)
		fl.mu.Lock()
		fl.spared = -1
		fl.mu.Unlock()
	}
	p1.last, p1.kills = st.last, kills()
	fmt.Printf("every Welcome at the sink after %.1f s (%d kills so far)\n", p1.last.Sub(t1).Seconds(), p1.kills)

	// Phase 2: the openers, then path a.
	capFile := filepath.Join(dir, "captured-1.tsv")
	if err := sink.captured(capFile); err != nil {
		return err
	}
	recs, err := readCapture(capFile)
	if err != nil {
		return err
	}
	p2 := phase{name: "opens, and Thanks (path a, early) to every opener", start: time.Now()}
	k0 := kills()
	hits, retries, clickWait, err := b.openAll(ctx, fl, recs, bo.openers, p1.last.Add(12*time.Second), alive)
	if err != nil {
		return err
	}
	openDone := time.Now()
	fmt.Printf("%d opens and clicks as people in %.1f s (%d requests sent again after a kill)\n", hits, openDone.Sub(p2.start).Seconds(), retries)
	st, err = b.waitSubject(ctx, subjA, openers, alive)
	if err != nil {
		return err
	}
	p2.last, p2.kills = st.last, kills()-k0
	subs, err := sink.subjectCounts()
	if err != nil {
		return err
	}
	if n := subs[subjB][1]; n != 0 {
		return fmt.Errorf("%d Nudge messages before the branch's wait ran out", n)
	}
	fmt.Printf("every Thanks at the sink %.1f s after the first open; no Nudge yet\n", p2.last.Sub(p2.start).Seconds())

	// Phase 3: the branch's wait runs out.
	p3 := phase{name: "the wait runs out: Nudge (path b) to every other contact", start: time.Now()}
	k0 = kills()
	res, err := db.ExecContext(ctx, `UPDATE automation_contacts SET due_at = $1 WHERE automation_id = $2 AND state = $3 AND path = $4 AND step = 1 AND due_at > $1`,
		p3.start.UnixMilli(), autoID, models.EnrolActive, models.PathMain)
	if err != nil {
		return fmt.Errorf("the branch's deadline: %w", err)
	}
	moved, _ := res.RowsAffected()
	fmt.Printf("the branch's wait made to run out for %d enrolments\n", moved)
	st, err = b.waitSubject(ctx, subjB, want-openers, alive)
	if err != nil {
		return err
	}
	p3.last, p3.kills = st.last, kills()-k0
	stopKills()
	if err := <-killErr; err != nil {
		return fmt.Errorf("restart after a kill: %w", err)
	}
	time.Sleep(3 * time.Second) // a straggler would show here
	end, err := sink.stats()
	if err != nil {
		return err
	}
	subs, err = sink.subjectCounts()
	if err != nil {
		return err
	}
	if err := sink.captured(capFile); err != nil {
		return err
	}
	if recs, err = readCapture(capFile); err != nil {
		return err
	}
	states := map[int]int64{}
	rows, err := db.QueryContext(ctx, "SELECT state, COUNT(*) FROM automation_contacts WHERE automation_id = $1 GROUP BY state", autoID)
	if err != nil {
		return err
	}
	for rows.Next() {
		var s int
		var n int64
		if err := rows.Scan(&s, &n); err != nil {
			rows.Close()
			return err
		}
		states[s] = n
	}
	rows.Close()
	fl.stop()
	load1 := harness.LoadAvg()

	// The checks, address by address.
	var problems []string
	var dups [3]int64
	var most int32
	var missingMain, wrongA, wrongB, unknown, both int
	seen := 0
	for rcpt, r := range recs {
		n := addressNumber(rcpt)
		if n < 1 || n > o.contacts {
			unknown++
			continue
		}
		seen++
		for i, s := range []string{subjMain, subjA, subjB} {
			if c := r.counts[s]; c > 1 {
				dups[i] += int64(c - 1)
				most = max(most, c)
			}
		}
		if r.counts[subjMain] == 0 {
			missingMain++
		}
		if r.counts[subjA] > 0 && r.counts[subjB] > 0 {
			both++
		}
		if isOpener(n, bo.openers) {
			if r.counts[subjA] == 0 || r.counts[subjB] > 0 {
				wrongA++
			}
		} else if r.counts[subjB] == 0 || r.counts[subjA] > 0 {
			wrongB++
		}
	}
	nkills := kills()
	bound := int64(2 * o.conns * nkills)
	totalDups := dups[0] + dups[1] + dups[2]
	if seen != o.contacts {
		problems = append(problems, fmt.Sprintf("%d of %d addresses got mail", seen, o.contacts))
	}
	if unknown > 0 {
		problems = append(problems, fmt.Sprintf("%d unknown addresses got mail", unknown))
	}
	if missingMain > 0 {
		problems = append(problems, fmt.Sprintf("%d addresses without Welcome", missingMain))
	}
	if wrongA > 0 || wrongB > 0 {
		problems = append(problems, fmt.Sprintf("%d openers without Thanks or with Nudge, %d others without Nudge or with Thanks", wrongA, wrongB))
	}
	if both > 0 {
		problems = append(problems, fmt.Sprintf("%d addresses got both paths", both))
	}
	if totalDups > bound {
		problems = append(problems, fmt.Sprintf("%d duplicates, more than 2 × %d connections × %d kills = %d", totalDups, o.conns, nkills, bound))
	}
	if states[models.EnrolDone] != want || len(states) != 1 {
		problems = append(problems, fmt.Sprintf("enrolments by state %v, want %d done", states, want))
	}

	fl.mu.Lock()
	killLog := strings.Join(fl.killLog, ", ")
	fl.mu.Unlock()
	fmt.Printf("\nkills: %s\n", killLog)
	fmt.Printf("load average at end: %s; whole run %s\n\n", load1, time.Since(start).Round(time.Second))
	sec := func(d time.Duration) string { return fmt.Sprintf("%.1f s", d.Seconds()) }
	fmt.Printf("| measure | value |\n|---|---|\n")
	fmt.Printf("| contacts / openers (%.0f %%, a third of them by a click) | %s / %s |\n", 100*bo.openers, harness.Thousands(float64(want)), harness.Thousands(float64(openers)))
	fmt.Printf("| processes × SMTP connections, database | %d × %d, %s |\n", bo.procs, o.conns, dialectName(o))
	fmt.Printf("| kill -9 (one process in turn, restarted at once) | %d, every %s |\n", nkills, bo.killEvery)
	fmt.Printf("| import: upload start to the answer | %s (%s rows/s; %d created) |\n", sec(importDur), harness.Thousands(float64(want)/importDur.Seconds()), rep.Created)
	for _, p := range []struct {
		p phase
		n int64
	}{{p1, want}, {p2, openers}, {p3, want - openers}} {
		d := p.p.last.Sub(p.p.start)
		fmt.Printf("| %s | %s, %s msg/s, %d kills |\n", p.p.name, sec(d), harness.Thousands(float64(p.n)/d.Seconds()), p.p.kills)
	}
	fmt.Printf("| opens and clicks sent (requests sent again after a kill; of the time, waiting for clicks to be 12 s after delivery) | %d in %s (%d; %s) |\n",
		hits, sec(openDone.Sub(p2.start)), retries, sec(clickWait))
	fmt.Printf("| enrolments made to pass the branch's deadline | %d |\n", moved)
	fmt.Printf("| sink: messages / distinct addresses | %s / %s |\n", harness.Thousands(float64(end.messages)), harness.Thousands(float64(end.distinct)))
	fmt.Printf("| sink: Welcome / Thanks / Nudge (distinct addresses, messages) | %d, %d / %d, %d / %d, %d |\n",
		subs[subjMain][0], subs[subjMain][1], subs[subjA][0], subs[subjA][1], subs[subjB][0], subs[subjB][1])
	fmt.Printf("| duplicates Welcome + Thanks + Nudge / bound 2 × conns × kills | %d + %d + %d = %d / %d (most of one email to one address: %d) |\n",
		dups[0], dups[1], dups[2], totalDups, bound, most)
	fmt.Printf("| enrolments by state (1 done) | %v |\n", states)
	var hwms []string
	for _, m := range fl.members {
		hwms = append(hwms, fmt.Sprintf("%s %s (%d lives)", m.name, mib(m.hwm), m.lives))
	}
	fmt.Printf("| peak RSS (VmHWM, largest life) | %s |\n", strings.Join(hwms, ", "))
	fmt.Printf("| load average at start / end | %s / %s |\n\n", load0, load1)
	if len(problems) > 0 {
		return errors.New("branch: " + strings.Join(problems, "; "))
	}
	fmt.Println("checks: every address got Welcome, the openers Thanks and no Nudge, the others Nudge and no Thanks, every enrolment done, duplicates within the in-flight bound: ok")
	return nil
}

func dialectName(o options) string {
	if o.database == "" {
		return "SQLite"
	}
	return "PostgreSQL"
}

// isOpener reports whether the n-th address (1-based) of the CSV is one
// of the share that opens: exactly ⌊share × N⌋ of the first N, spread
// evenly.
func isOpener(n int, share float64) bool {
	return math.Floor(float64(n)*share) > math.Floor(float64(n-1)*share)
}

var addressNumberRE = regexp.MustCompile(`^a([0-9]{6})\.`)

// addressNumber is an address's number in automationCSV (0: not one).
func addressNumber(rcpt string) int {
	m := addressNumberRE.FindStringSubmatch(rcpt)
	if m == nil {
		return 0
	}
	n, _ := strconv.Atoi(m[1])
	return n
}

// capRecord is one line of the sink's capture file.
type capRecord struct {
	counts map[string]int32
	open   string
	click  string
}

func readCapture(file string) (map[string]*capRecord, error) {
	f, err := os.Open(file)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	out := map[string]*capRecord{}
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 64<<10), 1<<20)
	for sc.Scan() {
		fs := strings.Split(sc.Text(), "\t")
		if len(fs) != 4 {
			return nil, fmt.Errorf("capture line %q", sc.Text())
		}
		r := &capRecord{counts: map[string]int32{}, open: fs[2], click: fs[3]}
		for _, kv := range strings.Split(fs[1], ",") {
			k, v, _ := strings.Cut(kv, "=")
			n, _ := strconv.Atoi(v)
			r.counts[k] = int32(n)
		}
		out[fs[0]] = r
	}
	return out, sc.Err()
}

// openAll opens (GET of the pixel) or, for every third opener, clicks
// (GET of the first tracked link, not followed) each opener's Welcome
// with a browser's User-Agent, 8 at a time, each request at the next
// process that is up and sent again to the next one when it fails (a
// killed process). Clicks go after clickAfter. It returns the requests
// that were answered and how many were sent again.
func (b *bench) openAll(ctx context.Context, fl *fleet, recs map[string]*capRecord, share float64, clickAfter time.Time, alive func() error) (answeredN, againN int64, clickWait time.Duration, err error) {
	type job struct {
		path  string
		click bool
	}
	var opens, clicks []job
	var nums []int
	byNum := map[int]*capRecord{}
	for rcpt, r := range recs {
		if n := addressNumber(rcpt); n > 0 && isOpener(n, share) {
			nums = append(nums, n)
			byNum[n] = r
		}
	}
	sort.Ints(nums)
	for i, n := range nums {
		r := byNum[n]
		if i%3 == 2 {
			if r.click == "" {
				return 0, 0, 0, fmt.Errorf("address %d: no tracked link in its Welcome", n)
			}
			clicks = append(clicks, job{r.click, true})
		} else {
			if r.open == "" {
				return 0, 0, 0, fmt.Errorf("address %d: no open pixel in its Welcome", n)
			}
			opens = append(opens, job{r.open, false})
		}
	}
	client := &http.Client{Timeout: 30 * time.Second, CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	var answered, again atomic.Int64
	var failed atomic.Bool
	var firstErr error
	var errOnce sync.Once
	run := func(jobs []job) {
		ch := make(chan job)
		var wg sync.WaitGroup
		for w := 0; w < 8; w++ {
			wg.Add(1)
			go func(w int) {
				defer wg.Done()
				for j := range ch {
					if failed.Load() {
						continue // drain: the producer must not block
					}
					for try := 0; ; try++ {
						if ctx.Err() != nil {
							failed.Store(true)
							break
						}
						req, _ := http.NewRequestWithContext(ctx, http.MethodGet, "http://"+fl.addr(w+try)+j.path, nil)
						req.Header.Set("User-Agent", browserUA)
						req.Header.Set("Accept", "text/html,image/avif,image/webp,*/*")
						resp, err := client.Do(req)
						if err == nil {
							_, _ = io.Copy(io.Discard, resp.Body)
							resp.Body.Close()
							ok := resp.StatusCode == http.StatusOK || (j.click && resp.StatusCode >= 300 && resp.StatusCode < 400)
							if ok {
								answered.Add(1)
								break
							}
							if resp.StatusCode < 500 {
								errOnce.Do(func() { firstErr = fmt.Errorf("GET %s answered %d", j.path, resp.StatusCode) })
								failed.Store(true)
								break
							}
						}
						if try > 200 {
							errOnce.Do(func() { firstErr = fmt.Errorf("GET %s: no process answered after 200 tries: %v", j.path, err) })
							failed.Store(true)
							break
						}
						again.Add(1)
						time.Sleep(50 * time.Millisecond)
					}
				}
			}(w)
		}
		for _, j := range jobs {
			ch <- j
		}
		close(ch)
		wg.Wait()
	}
	run(opens)
	if firstErr != nil {
		return answered.Load(), again.Load(), 0, firstErr
	}
	if err := alive(); err != nil {
		return answered.Load(), again.Load(), 0, err
	}
	if d := time.Until(clickAfter); d > 0 {
		clickWait = d
		fmt.Printf("clicks wait %.1f s: at least 12 s after the last Welcome (a click sooner is a scanner's)\n", d.Seconds())
		time.Sleep(d)
	}
	run(clicks)
	return answered.Load(), again.Load(), clickWait, firstErr
}

// waitSubject polls the sink until want distinct addresses got subject,
// calling tick between polls; it fails after two minutes without
// progress.
func (b *bench) waitSubject(ctx context.Context, subject string, want int64, tick func() error) (sinkStats, error) {
	lastCount, lastMove := int64(-1), time.Now()
	for {
		subs, err := b.sink.subjectCounts()
		if err != nil {
			return sinkStats{}, err
		}
		got := subs[subject][0]
		if got >= want {
			return b.sink.stats()
		}
		if got != lastCount {
			lastCount, lastMove = got, time.Now()
		} else if time.Since(lastMove) > 2*time.Minute {
			return sinkStats{}, fmt.Errorf("no new %s at the sink for two minutes after %d of %d (sink: %v)", subject, got, want, subs)
		}
		if err := tick(); err != nil {
			return sinkStats{}, err
		}
		if err := ctx.Err(); err != nil {
			return sinkStats{}, err
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// createBranchAutomation makes the automation: through the API the
// automation on the empty type and its Welcome email; through the console
// (logged in as the owner) the branch (1 hour) and an email on each path;
// then the API sets it live. It returns the automation's utr.
func (b *bench) createBranchAutomation(ctx context.Context, h *heraldProc) (string, error) {
	utr, err := b.createAutomationSteps(ctx, h, subjMain)
	if err != nil {
		return "", err
	}
	c, err := consoleLogin(ctx, h.addr, b.f.ownerEmail)
	if err != nil {
		return "", err
	}
	base := "/automations/" + utr
	if err := c.post(ctx, base+"/branch", url.Values{"waiting_period": {"1"}, "waiting_type": {"hours"}}); err != nil {
		return "", err
	}
	for _, e := range []struct{ path, subject string }{{"a", subjA}, {"b", subjB}} {
		if err := c.post(ctx, base+"/emails", url.Values{"waiting_type": {"instantly"}, "sender_id": {strconv.FormatInt(b.f.sender, 10)},
			"subject": {e.subject}, "design": {"library-" + strconv.Itoa(b.o.template)}, "path": {e.path}}); err != nil {
			return "", err
		}
	}
	if _, err := b.call(ctx, h, http.MethodGet, "/automations/set-live?utr="+url.QueryEscape(utr), nil); err != nil {
		return "", err
	}
	var steps int
	var branches int
	for _, check := range []struct {
		q   string
		dst *int
	}{{"SELECT COUNT(*) FROM automation_schedules WHERE automation_id = (SELECT id FROM automations WHERE utr = $1)", &steps},
		{"SELECT COUNT(*) FROM automation_schedules WHERE kind = '" + models.StepBranch + "' AND automation_id = (SELECT id FROM automations WHERE utr = $1)", &branches}} {
		db, err := harness.OpenSQL(b.dsn)
		if err != nil {
			return "", err
		}
		err = db.QueryRowContext(ctx, check.q, utr).Scan(check.dst)
		db.Close()
		if err != nil {
			return "", err
		}
	}
	if steps != 4 || branches != 1 {
		return "", fmt.Errorf("the automation has %d steps and %d branches, want 4 and 1", steps, branches)
	}
	return utr, nil
}

// console is a logged-in console session: its cookies (kept by hand: the
// session cookie is Secure, for an https base URL) and CSRF token.
type console struct {
	addr    string
	cookies map[string]string
	csrf    string
	client  *http.Client
}

var csrfRE = regexp.MustCompile(`name="_csrf" value="([^"]+)"`)

func consoleLogin(ctx context.Context, addr, email string) (*console, error) {
	c := &console{addr: addr, cookies: map[string]string{},
		client: &http.Client{Timeout: 30 * time.Second, CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}}
	if _, err := c.do(ctx, http.MethodGet, "/login", nil); err != nil {
		return nil, err
	}
	if err := c.post(ctx, "/login", url.Values{"email": {email}, "password": {"bench-password-1"}}); err != nil {
		return nil, fmt.Errorf("console login: %w", err)
	}
	if _, err := c.do(ctx, http.MethodGet, "/automations", nil); err != nil {
		return nil, err
	}
	return c, nil
}

// do sends one request with the session's cookies, keeps the answer's
// cookies and CSRF token, and returns its status.
func (c *console) do(ctx context.Context, method, path string, form url.Values) (int, error) {
	var body io.Reader
	if form != nil {
		form.Set("_csrf", c.csrf)
		body = strings.NewReader(form.Encode())
	}
	req, err := http.NewRequestWithContext(ctx, method, "http://"+c.addr+path, body)
	if err != nil {
		return 0, err
	}
	if form != nil {
		req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	}
	for k, v := range c.cookies {
		req.AddCookie(&http.Cookie{Name: k, Value: v})
	}
	resp, err := c.client.Do(req)
	if err != nil {
		return 0, err
	}
	defer resp.Body.Close()
	page, err := io.ReadAll(resp.Body)
	if err != nil {
		return 0, err
	}
	for _, ck := range resp.Cookies() {
		c.cookies[ck.Name] = ck.Value
	}
	if m := csrfRE.FindSubmatch(page); m != nil {
		c.csrf = string(m[1])
	}
	if resp.StatusCode >= 400 {
		return resp.StatusCode, fmt.Errorf("%s %s: %d %.300s", method, path, resp.StatusCode, page)
	}
	return resp.StatusCode, nil
}

// post sends a form and wants a redirect (the console's answer to a saved
// form; a refused one answers the page again with 422).
func (c *console) post(ctx context.Context, path string, form url.Values) error {
	st, err := c.do(ctx, http.MethodPost, path, form)
	if err != nil {
		return err
	}
	if st != http.StatusFound && st != http.StatusSeeOther {
		return fmt.Errorf("POST %s answered %d, not a redirect", path, st)
	}
	return nil
}
