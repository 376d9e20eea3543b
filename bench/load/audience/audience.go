// Package audience is `load audience`, the audience benchmark of `make bench-audience`: a
// large CSV import, a segment materialised over the imported contacts, and
// the streamed contact list. It builds nothing: it expects bin/herald (the
// Makefile builds it).
//
// Import and segment. The CSV of -rows contacts (email, first_name,
// last_name, country, age, company; unique addresses, a fixed random seed)
// is written to a temporary file first, untimed. Then, -import-runs times,
// each time on a fresh database (an SQLite file in a temporary folder; or,
// when HERALD_BENCH_DATABASE is a postgres:// URL, a new schema on that
// server, dropped at the end): it starts herald (HERALD_API_RATE=0,
// HERALD_LOG_LEVEL=error), creates an account with `herald account
// create`, a contact type and two custom fields (age: number, company:
// text) through the API, and uploads the file to
// POST /api/contacts/upload-csv as one streamed multipart body (computed
// Content-Length; nothing held in memory), timing the request from the
// moment it is sent until the answer, with the import's report, has been
// read. Meanwhile it samples herald's VmRSS every -sample; at the end it
// reads VmHWM (peak RSS) from /proc/<pid>/status, the high-water mark
// having been reset just before the upload (echo 5 >
// /proc/<pid>/clear_refs), and herald's CPU time (user + system, from
// /proc/<pid>/stat). Then it creates a segment with three conditions
// (country equals US, age greater_than 30, company contains "1") over the
// imported contacts, times POST /api/segment/store (the segment's
// recipients are materialised inside that request), and checks the count
// that GET /api/segment/list answers against the count the generator
// expects.
//
// List. A second herald on a second fresh database gets exactly -list-rows
// contacts the same way and is restarted, so that its memory before the
// list is that of an idle server and not the import's. Then
// GET /api/contacts/list is read -list-runs times: time to the first byte
// of the answer, time to its last byte, its size, herald's CPU time, and
// herald's RSS before, its peak (VmHWM, reset before each run, and the
// sampled maximum) and after.
// The body goes to a temporary file as it arrives; once the clock has
// stopped, the file is decoded with a streaming json.Decoder and must hold
// exactly -list-rows contacts.
//
// It prints the numbers of each step and a markdown table with the targets
// herald is held to. It asserts nothing about speed: the exit status only says
// whether the run itself worked (every step answered, the counts right).
// With -keep-going (the default) a step that fails is reported and the
// next ones still run.
//
// SQLite runs inside herald, so herald's RSS includes SQLite's page cache;
// on PostgreSQL the database's memory is in the server's own processes and
// is not counted.
//
//	go run ./bench/load audience -herald bin/herald -rows 1000000 -list-rows 100000
package audience

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	mrand "math/rand/v2"
	"mime/multipart"
	"net/http"
	"net/http/httptrace"
	"net/url"
	"os"
	"os/signal"
	"path/filepath"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"

	"herald/bench/harness"
)

// The targets herald is held to (reported, never enforced).
const (
	targetImportRate = 100_000         // rows per second, at least
	targetImportRSS  = 150 << 20       // peak RSS bytes during the import, below
	targetSegment    = 5 * time.Second // segment/store over the import, below
	targetTTFB       = 100 * time.Millisecond
	targetListTotal  = 1 * time.Second
)

type options struct {
	herald     string
	rows       int
	importRuns int
	listRows   int
	listRuns   int
	sample     time.Duration
	keepGoing  bool
	keep       bool
	timeout    time.Duration
	database   string // postgres:// URL, or "" for fresh SQLite files
}

func Main() {
	var o options
	flag.StringVar(&o.herald, "herald", "bin/herald", "herald binary")
	flag.IntVar(&o.rows, "rows", 1_000_000, "contacts in the imported CSV (0: skip the import and segment steps)")
	flag.IntVar(&o.importRuns, "import-runs", 3, "imports of the CSV, each into a fresh herald and database, followed by the segment; the table shows the median")
	flag.IntVar(&o.listRows, "list-rows", 100_000, "contacts in the database of the list step (0: skip it)")
	flag.IntVar(&o.listRuns, "list-runs", 3, "times contacts/list is read; the table shows the median")
	flag.DurationVar(&o.sample, "sample", 50*time.Millisecond, "interval of the VmRSS samples of herald")
	flag.BoolVar(&o.keepGoing, "keep-going", true, "when a step fails, report it and run the next steps")
	flag.BoolVar(&o.keep, "keep", false, "keep the temporary folder (CSV files, databases, herald logs) and print its path")
	flag.DurationVar(&o.timeout, "timeout", 30*time.Minute, "bound on the whole run")
	flag.Parse()
	o.database = os.Getenv("HERALD_BENCH_DATABASE")
	if o.database != "" && !strings.HasPrefix(o.database, "postgres://") && !strings.HasPrefix(o.database, "postgresql://") {
		fatal(fmt.Errorf("HERALD_BENCH_DATABASE must be a postgres:// URL (unset: fresh SQLite files), got %q", o.database))
	}
	if o.rows < 0 || o.importRuns < 1 || o.listRows < 0 || o.listRuns < 1 || o.sample <= 0 {
		fatal(errors.New("need -rows >= 0, -import-runs >= 1, -list-rows >= 0, -list-runs >= 1 and -sample > 0"))
	}

	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	ctx, cancel := context.WithTimeout(ctx, o.timeout)
	defer cancel()
	if err := run(ctx, o); err != nil {
		fatal(err)
	}
}

func fatal(err error) {
	fmt.Fprintln(os.Stderr, "bench:", err)
	os.Exit(1)
}

// report gathers what the steps measured; an empty part did not run or failed.
type report struct {
	dialect  string
	imp      []importResult
	seg      []segmentResult
	exp      []exportResult
	list     []listRun
	listRows int
	errs     []string
}

func run(ctx context.Context, o options) error {
	if _, err := os.Stat(o.herald); err != nil {
		return fmt.Errorf("%s is missing: build it first (make bench-audience builds bin/herald)", o.herald)
	}
	dir, err := os.MkdirTemp("", "herald-audience-")
	if err != nil {
		return err
	}
	if o.keep {
		fmt.Printf("temporary folder kept: %s\n", dir)
	} else {
		defer os.RemoveAll(dir)
	}

	r := &report{dialect: "sqlite", listRows: o.listRows}
	if o.database != "" {
		r.dialect = "postgres"
	}
	fmt.Printf("# herald audience benchmark, %s\n\n", time.Now().UTC().Format("2006-01-02 15:04 MST"))
	fmt.Printf("machine: %d CPUs (%s), %s/%s, %s; database: %s; load average at start: %s\n\n",
		runtime.NumCPU(), harness.CPUModel(), runtime.GOOS, runtime.GOARCH, harness.MemTotal(), r.dialect, harness.LoadAvg())

	failed := func(step string, err error) error {
		msg := fmt.Sprintf("%s: %v", step, err)
		r.errs = append(r.errs, msg)
		fmt.Printf("FAILED %s\n\n", msg)
		if !o.keepGoing || ctx.Err() != nil {
			return errors.New(msg)
		}
		return nil
	}

	if o.rows > 0 {
		if err := importAndSegment(ctx, o, dir, r); err != nil {
			if err := failed("import and segment", err); err != nil {
				return err
			}
		}
	}
	if o.listRows > 0 {
		if err := listStep(ctx, o, dir, r); err != nil {
			if err := failed("contact list", err); err != nil {
				return err
			}
		}
	}
	fmt.Printf("load average at end: %s\n\n", harness.LoadAvg())
	printTable(os.Stdout, r)
	if len(r.errs) > 0 {
		return fmt.Errorf("%d step(s) failed: %s", len(r.errs), strings.Join(r.errs, "; "))
	}
	return nil
}

// --- step 1: import and segment ---

type importResult struct {
	rows       int
	csvBytes   int64
	elapsed    time.Duration
	created    int64
	updated    int64
	skipped    int64
	rowsRead   int64
	rssBefore  int64
	mem        memResult
	dbBytes    int64 // SQLite files after the import (0 on PostgreSQL)
	loadBefore string
	loadAfter  string
}

type segmentResult struct {
	elapsed  time.Duration
	count    int64
	expected int64
	mem      memResult
}

func importAndSegment(ctx context.Context, o options, dir string, r *report) error {
	fmt.Printf("## import of %s rows, then a segment (%d runs, each on a fresh database)\n\n", harness.Thousands(float64(o.rows)), o.importRuns)
	csvPath := filepath.Join(dir, "import.csv")
	t0 := time.Now()
	gen, err := generateCSV(csvPath, o.rows)
	if err != nil {
		return fmt.Errorf("generate the CSV: %w", err)
	}
	if !o.keep {
		defer os.Remove(csvPath)
	}
	fmt.Printf("CSV generated (untimed): %s rows, %s, in %s\n\n", harness.Thousands(float64(o.rows)), mib(gen.bytes), t0Since(t0))
	for i := range o.importRuns {
		if err := importOnce(ctx, o, dir, r, gen, csvPath, i+1); err != nil {
			return fmt.Errorf("run %d: %w", i+1, err)
		}
	}
	return nil
}

// importOnce imports the CSV into a fresh herald and database, then
// creates the segment.
func importOnce(ctx context.Context, o options, dir string, r *report, gen generated, csvPath string, n int) (err error) {
	h, err := newHerald(ctx, o, dir, fmt.Sprintf("import%d", n))
	if err != nil {
		return err
	}
	defer func() {
		h.close()
		if h.sqlitePath != "" && !o.keep {
			for _, suffix := range []string{"", "-wal", "-shm"} {
				os.Remove(h.sqlitePath + suffix)
			}
		}
	}()
	typeID, err := h.client.setup(ctx)
	if err != nil {
		return fmt.Errorf("setup: %w", err)
	}
	time.Sleep(time.Second) // let the start-up settle before the baseline

	res := importResult{rows: o.rows, csvBytes: gen.bytes, loadBefore: harness.LoadAvg()}
	res.rssBefore, _, _ = harness.ProcMem(h.pid())
	fmt.Printf("run %d: herald pid %d, RSS before the import %s, load average %s; uploading…\n", n, h.pid(), mib(res.rssBefore), res.loadBefore)
	w := watchMem(h.pid(), o.sample)
	up, err := h.client.upload(ctx, typeID, csvPath, gen.bytes)
	res.mem = w.end()
	if err != nil {
		return fmt.Errorf("upload: %w", err)
	}
	res.loadAfter = harness.LoadAvg()
	res.elapsed = up.elapsed
	res.created, res.updated, res.skipped, res.rowsRead = up.Created, up.Updated, up.Skipped, up.RowsRead
	if h.sqlitePath != "" {
		res.dbBytes = filesSize(h.sqlitePath + "*")
	}
	r.imp = append(r.imp, res)
	fmt.Printf("run %d: import of %s rows in %s = %s rows/s; report: rows %s, created %s, updated %s, skipped %s\n",
		n, harness.Thousands(float64(o.rows)), secs(res.elapsed), harness.Thousands(res.rate()),
		harness.Thousands(float64(up.RowsRead)), harness.Thousands(float64(up.Created)), harness.Thousands(float64(up.Updated)), harness.Thousands(float64(up.Skipped)))
	fmt.Printf("run %d: herald memory during the import: %s; load average after %s\n", n, res.mem, res.loadAfter)
	if res.dbBytes > 0 {
		fmt.Printf("run %d: SQLite files after the import: %s\n", n, mib(res.dbBytes))
	}
	if up.Created != int64(o.rows) || up.Skipped != 0 || up.Status != "done" {
		return fmt.Errorf("the import report says status %q, created %d, skipped %d (first rejected: %.300s); want done, %d, 0",
			up.Status, up.Created, up.Skipped, string(up.Rejected), o.rows)
	}

	// The segment over the imported contacts.
	time.Sleep(time.Second)
	seg := segmentResult{expected: gen.segmentMatches}
	w = watchMem(h.pid(), o.sample)
	seg.elapsed, err = h.client.storeSegment(ctx, typeID)
	seg.mem = w.end()
	if err != nil {
		return fmt.Errorf("segment/store: %w", err)
	}
	if seg.count, err = h.client.segmentCount(ctx, segmentName); err != nil {
		return fmt.Errorf("segment/list: %w", err)
	}
	r.seg = append(r.seg, seg)
	defer func() {
		if err == nil {
			err = exportStep(ctx, o, h, r, typeID, n)
		}
	}()
	fmt.Printf("run %d: segment/store (3 conditions over %s contacts): %s; segment_emails_count %s (expected %s); herald memory %s\n\n",
		n, harness.Thousands(float64(o.rows)), secs(seg.elapsed), harness.Thousands(float64(seg.count)), harness.Thousands(float64(seg.expected)), seg.mem)
	if seg.count != seg.expected {
		return fmt.Errorf("the segment holds %d contacts, the generator expects %d", seg.count, seg.expected)
	}
	return nil
}

func (i importResult) rate() float64 { return float64(i.rows) / i.elapsed.Seconds() }

// exportResult is one GET api/contacts/export of the imported contacts.
type exportResult struct {
	rows      int64 // data lines of the CSV
	bytes     int64
	elapsed   time.Duration
	rssBefore int64
	mem       memResult
}

func (e exportResult) rate() float64 { return float64(e.rows) / e.elapsed.Seconds() }

// exportStep downloads the imported contact type as CSV (decisions.md 9)
// and counts its lines while herald's memory is sampled: the export
// streams, so its peak RSS should stay near the idle one.
func exportStep(ctx context.Context, o options, h *herald, r *report, typeID int64, n int) error {
	time.Sleep(time.Second)
	res := exportResult{}
	res.rssBefore, _, _ = harness.ProcMem(h.pid())
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, h.client.base+"/contacts/export?contact_type_id="+strconv.FormatInt(typeID, 10), nil)
	if err != nil {
		return err
	}
	h.client.auth(req)
	w := watchMem(h.pid(), o.sample)
	t0 := time.Now()
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		w.end()
		return fmt.Errorf("contacts/export: %w", err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		w.end()
		b, _ := io.ReadAll(resp.Body)
		return fmt.Errorf("contacts/export: %d %.300s", resp.StatusCode, b)
	}
	br := bufio.NewReaderSize(resp.Body, 1<<16)
	for {
		line, err := br.ReadSlice('\n')
		res.bytes += int64(len(line))
		if len(line) > 0 && line[len(line)-1] == '\n' {
			res.rows++
		}
		if err == io.EOF {
			break
		}
		if err != nil && err != bufio.ErrBufferFull {
			w.end()
			return fmt.Errorf("contacts/export: %w", err)
		}
	}
	res.elapsed = time.Since(t0)
	res.mem = w.end()
	res.rows-- // the header
	r.exp = append(r.exp, res)
	fmt.Printf("run %d: contacts/export of the type: %s rows, %s in %s = %s rows/s; herald RSS before %s, during %s\n\n",
		n, harness.Thousands(float64(res.rows)), mib(res.bytes), secs(res.elapsed), harness.Thousands(res.rate()), mib(res.rssBefore), res.mem)
	if res.rows != int64(o.rows) {
		return fmt.Errorf("contacts/export gave %d rows, want %d", res.rows, o.rows)
	}
	return nil
}

// --- step 2: the contact list ---

type listRun struct {
	ttfb, total time.Duration
	bytes       int64
	contacts    int
	rssBefore   int64
	mem         memResult
	rssAfter    int64
}

func listStep(ctx context.Context, o options, dir string, r *report) error {
	fmt.Printf("## contacts/list of %s contacts\n\n", harness.Thousands(float64(o.listRows)))
	csvPath := filepath.Join(dir, "list.csv")
	gen, err := generateCSV(csvPath, o.listRows)
	if err != nil {
		return fmt.Errorf("generate the CSV: %w", err)
	}
	if !o.keep {
		defer os.Remove(csvPath)
	}
	h, err := newHerald(ctx, o, dir, "list")
	if err != nil {
		return err
	}
	defer h.close()
	typeID, err := h.client.setup(ctx)
	if err != nil {
		return fmt.Errorf("setup: %w", err)
	}
	up, err := h.client.upload(ctx, typeID, csvPath, gen.bytes)
	if err != nil {
		return fmt.Errorf("upload: %w", err)
	}
	if up.Created != int64(o.listRows) {
		return fmt.Errorf("the import created %d contacts, want %d", up.Created, o.listRows)
	}
	fmt.Printf("seeded %s contacts through the import (%s); restarting herald so the list starts from an idle server\n",
		harness.Thousands(float64(up.Created)), secs(up.elapsed))
	if err := h.restart(ctx); err != nil {
		return err
	}
	time.Sleep(time.Second)

	body := filepath.Join(dir, "list.json")
	defer os.Remove(body)
	for i := range o.listRuns {
		var lr listRun
		lr.rssBefore, _, _ = harness.ProcMem(h.pid())
		w := watchMem(h.pid(), o.sample)
		err := h.client.readList(ctx, body, &lr)
		lr.mem = w.end()
		if err != nil {
			return fmt.Errorf("run %d: %w", i+1, err)
		}
		time.Sleep(200 * time.Millisecond)
		lr.rssAfter, _, _ = harness.ProcMem(h.pid())
		if lr.contacts, err = countContacts(body); err != nil {
			return fmt.Errorf("run %d: the answer is not the expected JSON: %w", i+1, err)
		}
		r.list = append(r.list, lr)
		fmt.Printf("run %d: first byte %s, whole answer %s, %s (%s contacts); herald RSS before %s, %s, after %s\n",
			i+1, ms(lr.ttfb), ms(lr.total), mib(lr.bytes), harness.Thousands(float64(lr.contacts)),
			mib(lr.rssBefore), lr.mem, mib(lr.rssAfter))
		if lr.contacts != o.listRows {
			return fmt.Errorf("run %d: %d contacts in the answer, want %d", i+1, lr.contacts, o.listRows)
		}
		time.Sleep(time.Second)
	}
	fmt.Println()
	return nil
}

// --- the table ---

// printTable writes the markdown table: medians, every run, the targets.
func printTable(out io.Writer, r *report) {
	verdict := func(ok bool) string {
		if ok {
			return "met"
		}
		return "**NOT met**"
	}
	per := func(xs []float64, f func(float64) string) string {
		s := make([]string, len(xs))
		for i, x := range xs {
			s[i] = f(x)
		}
		return strings.Join(s, ", ")
	}
	dur := func(x float64) string { return ms(time.Duration(x)) }
	sec := func(x float64) string { return secs(time.Duration(x)) }
	mb := func(x float64) string { return mib(int64(x)) }
	rps := func(x float64) string { return harness.Thousands(x) }
	fmt.Fprintln(out, "| measure | median | per run | target | verdict |")
	fmt.Fprintln(out, "|---|---:|---|---|---|")
	if len(r.imp) > 0 {
		var rate, wall, peak, cpu, cores []float64
		for _, i := range r.imp {
			rate = append(rate, i.rate())
			wall = append(wall, float64(i.elapsed))
			peak = append(peak, float64(i.mem.peak()))
			cpu = append(cpu, float64(i.mem.cpu))
			cores = append(cores, float64(i.mem.cpu)/float64(i.elapsed))
		}
		i := r.imp[0]
		fmt.Fprintf(out, "| import of %s rows (%s CSV): upload wall time | %s | %s | | |\n",
			harness.Thousands(float64(i.rows)), mib(i.csvBytes), sec(harness.Median(wall)), per(wall, sec))
		fmt.Fprintf(out, "| import rate, rows/s | %s | %s | ≥ %s | %s |\n",
			rps(harness.Median(rate)), per(rate, rps), harness.Thousands(targetImportRate), verdict(harness.Median(rate) >= targetImportRate))
		fmt.Fprintf(out, "| herald CPU time during the import (cores busy) | %s (%.2f) | %s | | |\n",
			sec(harness.Median(cpu)), harness.Median(cores), per(cpu, sec))
		fmt.Fprintf(out, "| herald peak RSS during the import (VmHWM) | %s | %s | < %s | %s |\n",
			mb(harness.Median(peak)), per(peak, mb), mib(targetImportRSS), verdict(slices.Max(peak) < targetImportRSS))
		fmt.Fprintf(out, "| import report (run 1) | created %s, updated %s, skipped %s | | all %s created | %s |\n",
			harness.Thousands(float64(i.created)), harness.Thousands(float64(i.updated)), harness.Thousands(float64(i.skipped)), harness.Thousands(float64(i.rows)),
			verdict(i.created == int64(i.rows) && i.skipped == 0))
	}
	if len(r.seg) > 0 {
		var t []float64
		ok := true
		for _, s := range r.seg {
			t = append(t, float64(s.elapsed))
			ok = ok && s.count == s.expected
		}
		fmt.Fprintf(out, "| segment/store, 3 conditions over %s contacts (%s recipients%s) | %s | %s | < %s | %s |\n",
			harness.Thousands(float64(r.imp[0].rows)), harness.Thousands(float64(r.seg[0].count)), map[bool]string{true: ", as expected", false: ", WRONG COUNT"}[ok],
			sec(harness.Median(t)), per(t, sec), secs(targetSegment), verdict(ok && time.Duration(harness.Median(t)) < targetSegment))
	}
	if len(r.exp) > 0 {
		var rate, wall, peak []float64
		for _, e := range r.exp {
			rate = append(rate, e.rate())
			wall = append(wall, float64(e.elapsed))
			peak = append(peak, float64(e.mem.peak()))
		}
		fmt.Fprintf(out, "| contacts/export of %s contacts (%s CSV): wall time | %s | %s | | |\n",
			harness.Thousands(float64(r.exp[0].rows)), mib(r.exp[0].bytes), sec(harness.Median(wall)), per(wall, sec))
		fmt.Fprintf(out, "| contacts/export rate, rows/s | %s | %s | | |\n", rps(harness.Median(rate)), per(rate, rps))
		fmt.Fprintf(out, "| herald peak RSS during the export (VmHWM; idle before run 1: %s) | %s | %s | flat | see the reading |\n",
			mib(r.exp[0].rssBefore), mb(harness.Median(peak)), per(peak, mb))
	}
	if len(r.list) > 0 {
		var ttfb, total, peak, cpu []float64
		for _, l := range r.list {
			ttfb = append(ttfb, float64(l.ttfb))
			total = append(total, float64(l.total))
			peak = append(peak, float64(l.mem.peak()))
			cpu = append(cpu, float64(l.mem.cpu))
		}
		n := harness.Thousands(float64(r.listRows))
		fmt.Fprintf(out, "| contacts/list of %s: first byte | %s | %s | < %s | %s |\n",
			n, dur(harness.Median(ttfb)), per(ttfb, dur), ms(targetTTFB), verdict(time.Duration(harness.Median(ttfb)) < targetTTFB))
		fmt.Fprintf(out, "| contacts/list of %s: whole answer (%s) | %s | %s | < %s | %s |\n",
			n, mib(r.list[0].bytes), dur(harness.Median(total)), per(total, dur), secs(targetListTotal), verdict(time.Duration(harness.Median(total)) < targetListTotal))
		fmt.Fprintf(out, "| contacts/list of %s: herald CPU time per answer | %s | %s | | |\n",
			n, sec(harness.Median(cpu)), per(cpu, sec))
		fmt.Fprintf(out, "| contacts/list of %s: herald peak RSS (idle before run 1: %s) | %s | %s | flat | see the reading |\n",
			n, mib(r.list[0].rssBefore), mb(harness.Median(peak)), per(peak, mb))
	}
	fmt.Fprintln(out)
}

// --- herald ---

// herald is one herald server on its own fresh database.
type herald struct {
	o          options
	env        []string
	addr       string
	log        string
	proc       *harness.Proc
	client     *client
	sqlitePath string
	drop       func()
}

func newHerald(ctx context.Context, o options, dir, name string) (*herald, error) {
	h := &herald{o: o, log: filepath.Join(dir, name+"-herald.log")}
	dbAddr := filepath.Join(dir, name+".db")
	if o.database != "" {
		var err error
		if dbAddr, h.drop, err = harness.FreshSchema(o.database); err != nil {
			return nil, err
		}
	} else {
		h.sqlitePath = dbAddr
	}
	var err error
	if h.addr, err = harness.FreeAddr(); err != nil {
		h.close()
		return nil, err
	}
	h.env = append(os.Environ(),
		"HERALD_ADDR="+h.addr,
		"HERALD_DATABASE="+dbAddr,
		"HERALD_API_RATE=0",
		"HERALD_LOG_LEVEL=error",
	)
	keys, err := harness.CreateAccount(ctx, o.herald, h.env, fmt.Sprintf("bench-%s-%d@example.com", name, time.Now().UnixNano()))
	if err != nil {
		h.close()
		return nil, err
	}
	if err := h.restart(ctx); err != nil {
		h.close()
		return nil, err
	}
	h.client = &client{base: "http://" + h.addr + "/api", keys: keys}
	return h, nil
}

// restart stops herald if it runs and starts it again on the same database.
func (h *herald) restart(ctx context.Context) error {
	if h.proc != nil {
		h.proc.Stop()
	}
	p, err := harness.Start(ctx, "herald", h.o.herald, []string{"serve"}, h.env, h.log, "http://"+h.addr+"/healthz")
	if err != nil {
		return err
	}
	h.proc = p
	return nil
}

func (h *herald) pid() int { return h.proc.Cmd.Process.Pid }

func (h *herald) close() {
	if h.proc != nil {
		h.proc.Stop()
	}
	if h.drop != nil {
		h.drop()
	}
}

// --- the CSV ---

type generated struct {
	bytes          int64
	segmentMatches int64 // rows matching the benchmark's segment
}

var (
	firstNames = []string{"James", "Mary", "John", "Patricia", "Robert", "Jennifer", "Michael", "Linda", "William", "Elizabeth",
		"David", "Barbara", "Richard", "Susan", "Joseph", "Jessica", "Thomas", "Sarah", "Charles", "Karen", "Amélie", "Jürgen", "Søren", "Zoë"}
	lastNames = []string{"Smith", "Johnson", "Williams", "Brown", "Jones", "Garcia", "Miller", "Davis", "Rodriguez", "Martinez",
		"Hernandez", "Lopez", "Gonzalez", "Wilson", "Anderson", "Thomas", "Taylor", "Moore", "Jackson", "Martin", "Müller", "O'Brien"}
	// US is one country in four.
	countries    = []string{"US", "US", "US", "GB", "DE", "FR", "CA", "IN", "BR", "JP", "AU", "ES"}
	companyWords = []string{"Northwind", "Contoso", "Fabrikam", "Globex", "Initech", "Umbrella", "Acme", "Hooli", "Vandelay", "Stark"}
)

// The segment of the benchmark, and the generator's view of it.
const segmentName = "Bench: US, over 30, company has 1"

func segmentForm(typeID int64) url.Values {
	return url.Values{
		"contact_type_id": {strconv.FormatInt(typeID, 10)}, "segment_name": {segmentName},
		"select_field[0]": {"country"}, "select_operator[0]": {"equals"}, "value[0]": {"US"},
		"select_field[1]": {"age"}, "select_operator[1]": {"greater_than"}, "value[1]": {"30"},
		"select_field[2]": {"company"}, "select_operator[2]": {"contains"}, "value[2]": {"1"},
	}
}

func matchesSegment(country string, age int, company string) bool {
	return country == "US" && age > 30 && strings.Contains(strings.ToLower(company), "1")
}

// generateCSV writes n contacts with unique addresses (fixed seed) to path.
func generateCSV(path string, n int) (generated, error) {
	var g generated
	f, err := os.Create(path)
	if err != nil {
		return g, err
	}
	w := bufio.NewWriterSize(f, 1<<20)
	rng := mrand.New(mrand.NewPCG(1, 2))
	w.WriteString("email,first_name,last_name,country,age,company\n")
	var line []byte
	for i := 1; i <= n; i++ {
		first := firstNames[rng.IntN(len(firstNames))]
		last := lastNames[rng.IntN(len(lastNames))]
		country := countries[rng.IntN(len(countries))]
		age := 18 + rng.IntN(63) // 18-80
		company := companyWords[rng.IntN(len(companyWords))] + " " + strconv.Itoa(rng.IntN(10000))
		if matchesSegment(country, age, company) {
			g.segmentMatches++
		}
		line = line[:0]
		line = append(line, "contact"...)
		line = strconv.AppendInt(line, int64(i), 10)
		line = append(line, "@example.com,"...)
		line = append(line, first...) // no value needs CSV quoting
		line = append(line, ',')
		line = append(line, last...)
		line = append(line, ',')
		line = append(line, country...)
		line = append(line, ',')
		line = strconv.AppendInt(line, int64(age), 10)
		line = append(line, ',')
		line = append(line, company...)
		line = append(line, '\n')
		if _, err := w.Write(line); err != nil {
			f.Close()
			return g, err
		}
	}
	if err := w.Flush(); err != nil {
		f.Close()
		return g, err
	}
	st, err := f.Stat()
	if err != nil {
		f.Close()
		return g, err
	}
	g.bytes = st.Size()
	return g, f.Close()
}

// --- the API ---

type client struct {
	base string
	keys harness.AccountKeys
}

func (c *client) auth(req *http.Request) {
	req.Header.Set("PublicKey", c.keys.PublicKey)
	req.Header.Set("SecretKey", c.keys.SecretKey)
}

// do sends a form (or nothing) and returns the body of a success envelope.
func (c *client) do(ctx context.Context, method, path string, form url.Values) ([]byte, error) {
	var body io.Reader
	if form != nil {
		body = strings.NewReader(form.Encode())
	}
	req, err := http.NewRequestWithContext(ctx, method, c.base+path, body)
	if err != nil {
		return nil, err
	}
	if form != nil {
		req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	}
	c.auth(req)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return nil, err
	}
	defer resp.Body.Close()
	return successBody(method, path, resp)
}

func successBody(method, path string, resp *http.Response) ([]byte, error) {
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		return nil, err
	}
	if resp.StatusCode != http.StatusOK {
		return b, fmt.Errorf("%s %s: %d %.500s", method, path, resp.StatusCode, b)
	}
	var env struct {
		Status string `json:"status"`
	}
	if err := json.Unmarshal(b, &env); err != nil || env.Status != "success" {
		return b, fmt.Errorf("%s %s: not a success envelope: %.500s", method, path, b)
	}
	return b, nil
}

// setup adds the contact type and the two custom fields; it returns the
// type's id.
func (c *client) setup(ctx context.Context) (int64, error) {
	const typeName = "Bench audience"
	if _, err := c.do(ctx, http.MethodPost, "/contacts-type/add", url.Values{"name": {typeName}}); err != nil {
		return 0, err
	}
	for _, f := range [][2]string{{"age", "number"}, {"company", "text"}} {
		if _, err := c.do(ctx, http.MethodPost, "/custom-fields/save", url.Values{"field_name": {f[0]}, "field_type": {f[1]}}); err != nil {
			return 0, err
		}
	}
	b, err := c.do(ctx, http.MethodGet, "/contacts-type", nil)
	if err != nil {
		return 0, err
	}
	var env struct {
		Message struct {
			ContactTypes []struct {
				ID   int64  `json:"id"`
				Name string `json:"name"`
			} `json:"contactTypes"`
		} `json:"message"`
	}
	if err := json.Unmarshal(b, &env); err != nil {
		return 0, fmt.Errorf("contacts-type: %w", err)
	}
	for _, t := range env.Message.ContactTypes {
		if t.Name == typeName {
			return t.ID, nil
		}
	}
	return 0, fmt.Errorf("contacts-type: no type %q in %.300s", typeName, b)
}

type uploadResult struct {
	elapsed  time.Duration
	Status   string          `json:"status"`
	RowsRead int64           `json:"rows"`
	Created  int64           `json:"created"`
	Updated  int64           `json:"updated"`
	Skipped  int64           `json:"skipped"`
	Rejected json.RawMessage `json:"rejected"`
}

// upload sends the CSV file as a multipart body streamed from disk: the
// part headers and the closing boundary are computed beforehand, so the
// request carries an exact Content-Length and nothing is buffered. The
// clock runs from the request being sent until the answer was read.
func (c *client) upload(ctx context.Context, typeID int64, path string, size int64) (*uploadResult, error) {
	var head, tail bytes.Buffer
	mw := multipart.NewWriter(&head)
	if err := mw.WriteField("contact_type_id", strconv.FormatInt(typeID, 10)); err != nil {
		return nil, err
	}
	if _, err := mw.CreateFormFile("file", "contacts.csv"); err != nil {
		return nil, err
	}
	headLen := head.Len()
	if err := mw.Close(); err != nil { // writes only the closing boundary
		return nil, err
	}
	tail.Write(head.Bytes()[headLen:])
	head.Truncate(headLen)

	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	body := io.MultiReader(&head, f, &tail)
	const route = "/contacts/upload-csv"
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, c.base+route, body)
	if err != nil {
		return nil, err
	}
	req.ContentLength = int64(head.Len()) + size + int64(tail.Len())
	req.Header.Set("Content-Type", mw.FormDataContentType())
	c.auth(req)
	start := time.Now()
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return nil, err
	}
	defer resp.Body.Close()
	b, err := successBody(http.MethodPost, route, resp)
	elapsed := time.Since(start)
	if err != nil {
		return nil, err
	}
	var env struct {
		Message string        `json:"message"`
		Import  *uploadResult `json:"import"`
	}
	if err := json.Unmarshal(b, &env); err != nil || env.Import == nil {
		return nil, fmt.Errorf("upload-csv: no import report in %.500s", b)
	}
	env.Import.elapsed = elapsed
	return env.Import, nil
}

// storeSegment creates the benchmark's segment and times the request.
func (c *client) storeSegment(ctx context.Context, typeID int64) (time.Duration, error) {
	start := time.Now()
	_, err := c.do(ctx, http.MethodPost, "/segment/store", segmentForm(typeID))
	return time.Since(start), err
}

// segmentCount reads segment_emails_count of the named segment.
func (c *client) segmentCount(ctx context.Context, name string) (int64, error) {
	b, err := c.do(ctx, http.MethodGet, "/segment/list", nil)
	if err != nil {
		return 0, err
	}
	var env struct {
		Message struct {
			Segments []struct {
				Name  string `json:"segment_name"`
				Count int64  `json:"segment_emails_count"`
			} `json:"segments"`
		} `json:"message"`
	}
	if err := json.Unmarshal(b, &env); err != nil {
		return 0, err
	}
	for _, s := range env.Message.Segments {
		if s.Name == name {
			return s.Count, nil
		}
	}
	return 0, fmt.Errorf("no segment %q in %.300s", name, b)
}

// readList reads GET /api/contacts/list into the file at path, timing the
// first byte of the answer and its end.
func (c *client) readList(ctx context.Context, path string, lr *listRun) error {
	f, err := os.Create(path)
	if err != nil {
		return err
	}
	defer f.Close()
	var first time.Time
	trace := &httptrace.ClientTrace{GotFirstResponseByte: func() { first = time.Now() }}
	const route = "/contacts/list"
	req, err := http.NewRequestWithContext(httptrace.WithClientTrace(ctx, trace), http.MethodGet, c.base+route, nil)
	if err != nil {
		return err
	}
	c.auth(req)
	start := time.Now()
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		b, _ := io.ReadAll(io.LimitReader(resp.Body, 500))
		return fmt.Errorf("GET %s: %d %s", route, resp.StatusCode, b)
	}
	n, err := io.CopyBuffer(f, resp.Body, make([]byte, 256<<10))
	lr.total = time.Since(start)
	lr.ttfb = first.Sub(start)
	lr.bytes = n
	return err
}

// countContacts decodes a contacts/list answer from the file as a stream
// and returns how many contacts it holds; each must have an email.
func countContacts(path string) (int, error) {
	f, err := os.Open(path)
	if err != nil {
		return 0, err
	}
	defer f.Close()
	dec := json.NewDecoder(bufio.NewReaderSize(f, 256<<10))
	expect := func(want json.Delim) error {
		t, err := dec.Token()
		if err != nil {
			return err
		}
		if d, ok := t.(json.Delim); !ok || d != want {
			return fmt.Errorf("got %v, want %v", t, want)
		}
		return nil
	}
	if err := expect('{'); err != nil {
		return 0, err
	}
	n := -1
	for dec.More() {
		t, err := dec.Token()
		if err != nil {
			return 0, err
		}
		switch t {
		case "status":
			var s string
			if err := dec.Decode(&s); err != nil || s != "success" {
				return 0, fmt.Errorf("status %q (%v)", s, err)
			}
		case "message":
			if err := expect('{'); err != nil {
				return 0, err
			}
			for dec.More() {
				k, err := dec.Token()
				if err != nil {
					return 0, err
				}
				if k != "contacts" {
					var skip json.RawMessage
					if err := dec.Decode(&skip); err != nil {
						return 0, err
					}
					continue
				}
				if err := expect('['); err != nil {
					return 0, err
				}
				n = 0
				for dec.More() {
					var c struct {
						Email string `json:"email"`
					}
					if err := dec.Decode(&c); err != nil {
						return 0, fmt.Errorf("contact %d: %w", n+1, err)
					}
					if c.Email == "" {
						return 0, fmt.Errorf("contact %d has no email", n+1)
					}
					n++
				}
				if err := expect(']'); err != nil {
					return 0, err
				}
			}
			if err := expect('}'); err != nil {
				return 0, err
			}
		default:
			var skip json.RawMessage
			if err := dec.Decode(&skip); err != nil {
				return 0, err
			}
		}
	}
	if err := expect('}'); err != nil {
		return 0, err
	}
	if _, err := dec.Token(); err != io.EOF {
		return 0, errors.New("data after the answer")
	}
	if n < 0 {
		return 0, errors.New("no message.contacts array")
	}
	return n, nil
}

// --- memory of the herald process ---

// memResult is herald's memory over one step.
type memResult struct {
	sampledMax int64 // largest VmRSS sample
	samples    int
	hwm        int64         // VmHWM at the end
	hwmReset   bool          // VmHWM was reset at the start, so it is this step's peak
	cpu        time.Duration // CPU time (user + system) herald used meanwhile
}

// peak is the step's peak RSS: VmHWM when it was reset at the start (it
// sees peaks between samples), else the largest sample.
func (m memResult) peak() int64 {
	if m.hwmReset {
		return max(m.hwm, m.sampledMax)
	}
	return m.sampledMax
}

func (m memResult) String() string {
	if m.hwmReset {
		return fmt.Sprintf("peak RSS %s (VmHWM; largest of %d VmRSS samples %s), CPU time %s", mib(m.peak()), m.samples, mib(m.sampledMax), secs(m.cpu))
	}
	return fmt.Sprintf("peak RSS %s (largest of %d VmRSS samples; VmHWM could not be reset, lifetime %s), CPU time %s", mib(m.sampledMax), m.samples, mib(m.hwm), secs(m.cpu))
}

type memWatch struct {
	pid   int
	cpu0  time.Duration
	stop  chan struct{}
	done  chan struct{}
	mu    sync.Mutex
	res   memResult
	every time.Duration
}

// watchMem resets the process's VmHWM and samples its VmRSS until end.
func watchMem(pid int, every time.Duration) *memWatch {
	w := &memWatch{pid: pid, stop: make(chan struct{}), done: make(chan struct{}), every: every}
	w.res.hwmReset = os.WriteFile(fmt.Sprintf("/proc/%d/clear_refs", pid), []byte("5"), 0) == nil
	w.cpu0 = harness.ProcCPU(pid)
	w.sample()
	go func() {
		defer close(w.done)
		t := time.NewTicker(every)
		defer t.Stop()
		for {
			select {
			case <-w.stop:
				return
			case <-t.C:
				w.sample()
			}
		}
	}()
	return w
}

func (w *memWatch) sample() {
	rss, _, err := harness.ProcMem(w.pid)
	if err != nil {
		return
	}
	w.mu.Lock()
	w.res.samples++
	w.res.sampledMax = max(w.res.sampledMax, rss)
	w.mu.Unlock()
}

func (w *memWatch) end() memResult {
	close(w.stop)
	<-w.done
	w.sample()
	_, hwm, _ := harness.ProcMem(w.pid)
	cpu := harness.ProcCPU(w.pid) - w.cpu0
	w.mu.Lock()
	defer w.mu.Unlock()
	w.res.hwm, w.res.cpu = hwm, cpu
	return w.res
}

// --- formatting and the machine ---

func ms(d time.Duration) string { return fmt.Sprintf("%.1f ms", float64(d)/float64(time.Millisecond)) }

func secs(d time.Duration) string { return fmt.Sprintf("%.2f s", d.Seconds()) }

func t0Since(t time.Time) string { return secs(time.Since(t)) }

func mib(b int64) string { return fmt.Sprintf("%.1f MiB", float64(b)/(1<<20)) }

// filesSize sums the sizes of the files matching pattern.
func filesSize(pattern string) int64 {
	names, _ := filepath.Glob(pattern)
	var n int64
	for _, name := range names {
		if st, err := os.Stat(name); err == nil {
			n += st.Size()
		}
	}
	return n
}
