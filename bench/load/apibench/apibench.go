// Package apibench is `load api`, the API load benchmark of `make bench`.
// It builds nothing: it expects bin/herald (the Makefile builds it) and wrk
// on the PATH (Debian: apt-get install wrk). The bare Fiber server is this
// same program run as `load bare`.
//
// It starts herald on a fresh database (an SQLite file in a temporary
// folder; or, when HERALD_BENCH_DATABASE is a postgres:// URL, a new schema
// on that server, dropped at the end) with HERALD_API_RATE=0, creates an
// account, seeds exactly 100 global unsubscribers and 10 unsubscribe
// groups through the API, starts the bare Fiber server, and then loads,
// with wrk over loopback (the same PublicKey and SecretKey headers on
// every target):
//
//	bare                     GET /                         (load bare)
//	global-unsubscribes      GET /api/global-unsubscribes  (100 rows)
//	unsubscribes-groups      GET /api/unsubscribes-groups  (10 groups)
//	bare, N-byte answer      GET /bytes/N                  (load bare; -calibrate)
//
// The last one answers a ready-made body as large as the 100-row list: what
// the answer's bytes alone cost, the ceiling of any list endpoint.
//
// The targets alternate: after one warm-up pass, each round runs every
// target once, the starting target shifting from round to round, so that
// the noise of a shared machine falls on all of them alike. It prints the
// per-round numbers and a markdown table of medians with the ratio of each
// target's requests per second to the bare handler's. It asserts nothing
// about speed: the exit status only says whether the run itself worked.
//
//	go run ./bench/load api -rounds 3 -duration 10s
package apibench

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"os"
	"os/exec"
	"os/signal"
	"path/filepath"
	"regexp"
	"runtime"
	"strconv"
	"strings"
	"syscall"
	"time"

	"herald/bench/harness"
)

type options struct {
	herald, bare   string
	rounds         int
	duration       time.Duration
	warmup         time.Duration
	connections    int
	threads        int
	database       string // postgres:// URL, or "" for a fresh SQLite file
	targetFraction float64
	calibrate      bool
	logLevel       string
}

func Main() {
	var o options
	flag.StringVar(&o.herald, "herald", "bin/herald", "herald binary")
	flag.StringVar(&o.bare, "bare", "", "bare Fiber server binary (empty: this program as `load bare`)")
	flag.IntVar(&o.rounds, "rounds", 3, "rounds; each runs every target once")
	flag.DurationVar(&o.duration, "duration", 10*time.Second, "wrk duration of one target in one round (whole seconds)")
	flag.DurationVar(&o.warmup, "warmup", 3*time.Second, "warm-up per target before the rounds (0: none)")
	flag.IntVar(&o.connections, "c", 64, "wrk connections")
	flag.IntVar(&o.threads, "t", 2, "wrk threads")
	flag.Float64Var(&o.targetFraction, "target", 0.40, "fraction of the bare handler's req/s the endpoints should reach (reported, not enforced)")
	flag.StringVar(&o.logLevel, "log-level", "error", "herald's HERALD_LOG_LEVEL (info: one line per request, as herald runs by default)")
	flag.BoolVar(&o.calibrate, "calibrate", true, "also load the bare server serving a ready-made answer as large as the 100-row list (the cost of the bytes alone)")
	flag.Parse()
	o.database = os.Getenv("HERALD_BENCH_DATABASE")
	if o.database != "" && !strings.HasPrefix(o.database, "postgres://") && !strings.HasPrefix(o.database, "postgresql://") {
		fatal(fmt.Errorf("HERALD_BENCH_DATABASE must be a postgres:// URL (unset: a fresh SQLite file), got %q", o.database))
	}
	if o.rounds < 1 || o.duration < time.Second || o.connections < 1 || o.threads < 1 || o.threads > o.connections {
		fatal(errors.New("need -rounds >= 1, -duration >= 1s, -c >= 1 and 1 <= -t <= -c"))
	}

	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	if err := run(ctx, o); err != nil {
		fatal(err)
	}
}

func fatal(err error) {
	fmt.Fprintln(os.Stderr, "bench:", err)
	os.Exit(1)
}

// target is one URL under load.
type target struct {
	name      string
	url       string
	bodyBytes int // size of one answer, for the table
	pid       int // the serving process, whose CPU time each run reads
}

// sample is one wrk run.
type sample struct {
	rps      float64
	p99      time.Duration
	requests int64
	// cpu is the serving process's CPU time (user + system) per request
	// during the run. On a shared machine req/s moves with the other
	// work on the cores; the CPU a request costs the server moves much
	// less, so the ratio of these is the steadier reading.
	cpu time.Duration
}

func run(ctx context.Context, o options) error {
	wrk, err := exec.LookPath("wrk")
	if err != nil {
		return errors.New("wrk is not installed: install it (Debian, Ubuntu: sudo apt-get install wrk; macOS: brew install wrk), then run again")
	}
	var bareArgs []string
	if o.bare == "" {
		if o.bare, err = os.Executable(); err != nil {
			return err
		}
		bareArgs = []string{"bare"}
	}
	for _, bin := range []string{o.herald, o.bare} {
		if _, err := os.Stat(bin); err != nil {
			return fmt.Errorf("%s is missing: build it first (make bench builds bin/herald)", bin)
		}
	}

	dir, err := os.MkdirTemp("", "herald-bench-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(dir)

	// Herald: a fresh database, one account, the seed rows.
	dialect, dbAddr := "sqlite", filepath.Join(dir, "herald.db")
	if o.database != "" {
		dialect = "postgres"
		var drop func()
		if dbAddr, drop, err = harness.FreshSchema(o.database); err != nil {
			return err
		}
		defer drop()
	}
	heraldAddr, err := harness.FreeAddr()
	if err != nil {
		return err
	}
	env := append(os.Environ(),
		"HERALD_ADDR="+heraldAddr,
		"HERALD_DATABASE="+dbAddr,
		"HERALD_API_RATE=0",
		"HERALD_LOG_LEVEL="+o.logLevel,
	)
	email := fmt.Sprintf("bench-%d@example.com", time.Now().UnixNano())
	keys, err := harness.CreateAccount(ctx, o.herald, env, email)
	if err != nil {
		return err
	}
	herald, err := harness.Start(ctx, "herald", o.herald, []string{"serve"}, env, filepath.Join(dir, "herald.log"), "http://"+heraldAddr+"/healthz")
	if err != nil {
		return err
	}
	defer herald.Stop()

	bareAddr, err := harness.FreeAddr()
	if err != nil {
		return err
	}
	bare, err := harness.Start(ctx, "bare", o.bare, bareArgs, append(os.Environ(), "BARE_ADDR="+bareAddr), filepath.Join(dir, "bare.log"), "http://"+bareAddr+"/")
	if err != nil {
		return err
	}
	defer bare.Stop()

	c := &client{base: "http://" + heraldAddr + "/api", keys: keys}
	if err := c.seed(ctx); err != nil {
		return fmt.Errorf("seed: %w", err)
	}
	targets := []*target{
		{name: "bare", url: "http://" + bareAddr + "/", pid: bare.Cmd.Process.Pid},
		{name: "global-unsubscribes", url: c.base + "/global-unsubscribes", pid: herald.Cmd.Process.Pid},
		{name: "unsubscribes-groups", url: c.base + "/unsubscribes-groups", pid: herald.Cmd.Process.Pid},
	}
	// Check every answer once, and note its size.
	for _, t := range targets {
		n, err := c.check(ctx, t)
		if err != nil {
			return err
		}
		t.bodyBytes = n
	}
	if o.calibrate {
		n := targets[1].bodyBytes
		t := &target{name: fmt.Sprintf("bare, %d-byte answer", n), url: fmt.Sprintf("http://%s/bytes/%d", bareAddr, n), pid: bare.Cmd.Process.Pid}
		if t.bodyBytes, err = c.check(ctx, t); err != nil {
			return err
		}
		targets = append(targets, t)
	}

	w := wrkRunner{path: wrk, threads: o.threads, connections: o.connections, headers: []string{
		"PublicKey: " + keys.PublicKey, "SecretKey: " + keys.SecretKey,
	}}
	fmt.Printf("# herald API benchmark, %s\n\n", time.Now().UTC().Format("2006-01-02 15:04 MST"))
	fmt.Printf("machine: %d CPUs (%s), %s/%s; database: %s; wrk -t%d -c%d -d%s --latency; %d rounds, warm-up %s per target\n\n",
		runtime.NumCPU(), harness.CPUModel(), runtime.GOOS, runtime.GOARCH, dialect, o.threads, o.connections, wholeSeconds(o.duration), o.rounds, o.warmup)

	if o.warmup >= time.Second {
		for _, t := range targets {
			if _, err := w.run(ctx, t.url, o.warmup); err != nil {
				return fmt.Errorf("warm-up %s: %w", t.name, err)
			}
		}
	}
	samples := map[string][]sample{}
	for r := range o.rounds {
		for i := range targets {
			t := targets[(r+i)%len(targets)] // shift the start every round
			cpu0 := harness.ProcCPU(t.pid)
			s, err := w.run(ctx, t.url, o.duration)
			if err != nil {
				return fmt.Errorf("round %d, %s: %w", r+1, t.name, err)
			}
			if s.requests > 0 {
				s.cpu = (harness.ProcCPU(t.pid) - cpu0) / time.Duration(s.requests)
			}
			samples[t.name] = append(samples[t.name], s)
			fmt.Printf("round %d  %-24s %10s req/s   p99 %s   server CPU %s/request\n", r+1, t.name, harness.Thousands(s.rps), ms(s.p99), us(s.cpu))
		}
	}
	fmt.Println()
	printTable(os.Stdout, targets, samples, o.targetFraction)
	return nil
}

// printTable writes the markdown table and the reading of the target.
func printTable(out io.Writer, targets []*target, samples map[string][]sample, frac float64) {
	bareRPS := harness.Median(rpsOf(samples["bare"]))
	bareCPU := harness.Median(cpuOf(samples["bare"]))
	fmt.Fprintln(out, "| target | median req/s | median p99 | ratio to bare | req/s per round | server CPU per request | CPU ratio (bare ÷ target) | answer bytes |")
	fmt.Fprintln(out, "|---|---:|---:|---:|---|---:|---:|---:|")
	for _, t := range targets {
		ss := samples[t.name]
		rps := harness.Median(rpsOf(ss))
		p99s := make([]float64, len(ss))
		rounds := make([]string, len(ss))
		for i, s := range ss {
			p99s[i] = float64(s.p99)
			rounds[i] = harness.Thousands(s.rps)
		}
		cpu := harness.Median(cpuOf(ss))
		cpuRatio := "–"
		if cpu > 0 {
			cpuRatio = fmt.Sprintf("%.0f %%", 100*bareCPU/cpu)
		}
		fmt.Fprintf(out, "| %s | %s | %s | %.0f %% | %s | %s | %s | %d |\n",
			t.name, harness.Thousands(rps), ms(time.Duration(harness.Median(p99s))), 100*rps/bareRPS, strings.Join(rounds, ", "),
			us(time.Duration(cpu)), cpuRatio, t.bodyBytes)
	}
	fmt.Fprintln(out)
	// Ratios per round too: the targets of one round ran minutes apart at
	// most, so these are the least disturbed by drift on a shared machine.
	for _, t := range targets[1:] {
		if strings.HasPrefix(t.name, "bare") {
			continue // the calibration target is not under the target
		}
		var per []string
		ok := harness.Median(rpsOf(samples[t.name]))/bareRPS >= frac
		for i, s := range samples[t.name] {
			per = append(per, fmt.Sprintf("%.0f %%", 100*s.rps/samples["bare"][i].rps))
		}
		verdict := "met"
		if !ok {
			verdict = "NOT met"
		}
		cpuNote := ""
		if cpu := harness.Median(cpuOf(samples[t.name])); cpu > 0 && bareCPU > 0 {
			cpuNote = fmt.Sprintf("; server CPU per request %s against bare's %s (%.0f %%)", us(time.Duration(cpu)), us(time.Duration(bareCPU)), 100*bareCPU/cpu)
		}
		fmt.Fprintf(out, "%s: %.0f %% of bare (per round: %s); target >= %.0f %%: %s%s\n",
			t.name, 100*harness.Median(rpsOf(samples[t.name]))/bareRPS, strings.Join(per, ", "), 100*frac, verdict, cpuNote)
	}
}

// --- wrk ---

type wrkRunner struct {
	path                 string
	threads, connections int
	headers              []string
}

var (
	reRPS    = regexp.MustCompile(`(?m)^Requests/sec:\s+([0-9.]+)`)
	reP99    = regexp.MustCompile(`(?m)^\s*99(?:\.000)?%\s+([0-9.]+)(us|ms|s|m|h)\s*$`)
	reNon2xx = regexp.MustCompile(`Non-2xx or 3xx responses:\s+(\d+)`)
	reCount  = regexp.MustCompile(`(?m)^\s*(\d+) requests in `)
	reSocket = regexp.MustCompile(`Socket errors: connect (\d+), read (\d+), write (\d+), timeout (\d+)`)
)

func (w wrkRunner) run(ctx context.Context, u string, d time.Duration) (sample, error) {
	args := []string{"-t", strconv.Itoa(w.threads), "-c", strconv.Itoa(w.connections), "-d", wholeSeconds(d), "--timeout", "5s", "--latency"}
	for _, h := range w.headers {
		args = append(args, "-H", h)
	}
	args = append(args, u)
	var out, stderr bytes.Buffer
	cmd := exec.CommandContext(ctx, w.path, args...)
	cmd.Stdout, cmd.Stderr = &out, &stderr
	if err := cmd.Run(); err != nil {
		return sample{}, fmt.Errorf("wrk: %v: %s%s", err, stderr.String(), out.String())
	}
	return parseWrk(out.String())
}

// parseWrk reads Requests/sec and the 99th percentile latency from wrk's
// --latency output; any non-2xx answer or socket error fails the run (a
// 401 or 429 is fast and would flatter the numbers).
func parseWrk(s string) (sample, error) {
	var smp sample
	m := reRPS.FindStringSubmatch(s)
	if m == nil {
		return smp, fmt.Errorf("no Requests/sec in wrk output:\n%s", s)
	}
	smp.rps, _ = strconv.ParseFloat(m[1], 64)
	if m := reCount.FindStringSubmatch(s); m != nil {
		smp.requests, _ = strconv.ParseInt(m[1], 10, 64)
	}
	m = reP99.FindStringSubmatch(s)
	if m == nil {
		return smp, fmt.Errorf("no 99%% latency in wrk output (was --latency given?):\n%s", s)
	}
	v, _ := strconv.ParseFloat(m[1], 64)
	unit := map[string]time.Duration{"us": time.Microsecond, "ms": time.Millisecond, "s": time.Second, "m": time.Minute, "h": time.Hour}[m[2]]
	smp.p99 = time.Duration(v * float64(unit))
	if m := reNon2xx.FindStringSubmatch(s); m != nil && m[1] != "0" {
		return smp, fmt.Errorf("%s answers were not 2xx:\n%s", m[1], s)
	}
	if m := reSocket.FindStringSubmatch(s); m != nil {
		for _, n := range m[1:] {
			if n != "0" {
				return smp, fmt.Errorf("socket errors:\n%s", s)
			}
		}
	}
	return smp, nil
}

// --- seeding through the API ---

type client struct {
	base string
	keys harness.AccountKeys
}

func (c *client) do(ctx context.Context, method, u string, form url.Values) ([]byte, error) {
	var body io.Reader
	if form != nil {
		body = strings.NewReader(form.Encode())
	}
	req, err := http.NewRequestWithContext(ctx, method, u, body)
	if err != nil {
		return nil, err
	}
	if form != nil {
		req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	}
	req.Header.Set("PublicKey", c.keys.PublicKey)
	req.Header.Set("SecretKey", c.keys.SecretKey)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return nil, err
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		return nil, err
	}
	if resp.StatusCode != http.StatusOK {
		return b, fmt.Errorf("%s %s: %d %s", method, u, resp.StatusCode, b)
	}
	var env struct {
		Status string `json:"status"`
	}
	if err := json.Unmarshal(b, &env); err != nil || env.Status != "success" {
		return b, fmt.Errorf("%s %s: not a success envelope: %.300s", method, u, b)
	}
	return b, nil
}

const (
	seedUnsubscribers = 100
	seedGroups        = 10
)

// seed adds exactly 100 global unsubscribers (one save) and 10 groups.
func (c *client) seed(ctx context.Context) error {
	emails := make([]string, seedUnsubscribers)
	for i := range emails {
		emails[i] = fmt.Sprintf("unsubscribed%03d@example.com", i+1)
	}
	if _, err := c.do(ctx, http.MethodPost, c.base+"/global-unsubscribes/save", url.Values{"email_address": {strings.Join(emails, ",")}}); err != nil {
		return err
	}
	for i := range seedGroups {
		form := url.Values{
			"group_name":  {fmt.Sprintf("Group %02d", i+1)},
			"description": {fmt.Sprintf("Benchmark group number %d", i+1)},
			"is_display":  {"1"},
		}
		if _, err := c.do(ctx, http.MethodPost, c.base+"/unsubscribes-groups/save", form); err != nil {
			return err
		}
	}
	return nil
}

// check fetches a target once, verifies the seeded counts, and returns the
// size of the answer.
func (c *client) check(ctx context.Context, t *target) (int, error) {
	b, err := c.do(ctx, http.MethodGet, t.url, nil)
	if err != nil {
		return 0, fmt.Errorf("check %s: %w", t.name, err)
	}
	want, key := 0, ""
	switch t.name {
	case "global-unsubscribes":
		want, key = seedUnsubscribers, "unSubscribers"
	case "unsubscribes-groups":
		want, key = seedGroups, "unsubscribesGroups"
	default:
		return len(b), nil
	}
	var env struct {
		Message map[string][]json.RawMessage `json:"message"`
	}
	if err := json.Unmarshal(b, &env); err != nil {
		return 0, fmt.Errorf("check %s: %w", t.name, err)
	}
	if got := len(env.Message[key]); got != want {
		return 0, fmt.Errorf("check %s: %d rows in message.%s, want %d", t.name, got, key, want)
	}
	return len(b), nil
}

// --- formatting ---

func wholeSeconds(d time.Duration) string {
	return strconv.Itoa(max(1, int(d.Round(time.Second)/time.Second))) + "s"
}

func rpsOf(ss []sample) []float64 {
	out := make([]float64, len(ss))
	for i, s := range ss {
		out[i] = s.rps
	}
	return out
}

func ms(d time.Duration) string { return fmt.Sprintf("%.2f ms", float64(d)/float64(time.Millisecond)) }

func cpuOf(ss []sample) []float64 {
	out := make([]float64, len(ss))
	for i, s := range ss {
		out[i] = float64(s.cpu)
	}
	return out
}

func us(d time.Duration) string { return fmt.Sprintf("%.1f µs", float64(d)/float64(time.Microsecond)) }
