package send

// `load automation`: how long herald takes from a CSV
// import of -contacts contacts into the contact type an automation targets
// to the last of their step-1 emails at the sink.
//
// The database holds the account, its verified sender, the group and an
// EMPTY contact type (and the unused probe type). A fresh `herald serve`
// (mail to the sink) gets, through the API, a custom automation targeting
// contacts_<type> with the group, one email (waiting_type instantly, the
// newsletter design) and set-live. After 1 s of idling the clock starts
// and POST /api/contacts/upload-csv sends a CSV (email,first_name) of
// -contacts new addresses, built in memory beforehand. The import answers
// when every row is committed; meanwhile the scheduler (one tick a second)
// enrols the type's new rows and queues the due emails into the
// automation's carrier send, which the engine delivers like any send. The
// run ends when the sink holds -contacts messages, then checks that no
// more come and that they went to -contacts distinct addresses.

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	mrand "math/rand/v2"
	"mime/multipart"
	"net/http"
	"net/url"
	"os"
	"strconv"
	"strings"
	"syscall"
	"time"

	"herald/bench/harness"
)

// autoResult is the automation run's figures.
type autoResult struct {
	setup     time.Duration // automation create + email + set-live
	importDur time.Duration // upload start to the import's answer
	firstMsg  time.Duration // upload start to the first message at the sink
	lastMsg   time.Duration // upload start to the N-th message at the sink
	created   int64         // the import's report
	rows      int64
	skipped   int64
	messages  int64
	distinct  int64
	bytes     int64
	cpu       time.Duration // herald, upload start to the N-th message
	sinkCPU   time.Duration
	dbCPU     time.Duration
	backends  int
	peakRSS   int64
	sampleRSS int64
	samples   int
	loadAvg   string
	csvBytes  int
}

func runAutomation(ctx context.Context, o options, bo branchOptions) error {
	if bo.on {
		return runBranch(ctx, o, bo)
	}
	if _, err := os.Stat(o.herald); err != nil {
		return fmt.Errorf("%s is missing: build it first (make bench-automation builds bin/herald)", o.herald)
	}
	dir, cleanup, err := begin(o, "herald automation enrolment benchmark", "herald-automation-")
	if err != nil {
		return err
	}
	defer cleanup()
	start := time.Now()
	fmt.Printf("%s contacts imported by CSV into the automation's target, %d connections, library design %d, DKIM %v\n\n",
		harness.Thousands(float64(o.contacts)), o.conns, o.template, o.dkim)

	dsn, drop, err := database(o, dir)
	if err != nil {
		return err
	}
	defer drop()
	t0 := time.Now()
	b := &bench{o: o, dir: dir, dsn: dsn, bin: o.herald, pgPort: localPostgresPort(o.database)}
	f, err := b.prepare(ctx, 0, o.dkim) // the audience type stays empty
	if err != nil {
		return fmt.Errorf("prepare the database: %w", err)
	}
	fmt.Printf("database prepared through herald's API (untimed) in %s: account, verified sender, group, an empty contact type (id %d)\n",
		time.Since(t0).Round(10*time.Millisecond), f.audience)
	csvBody := automationCSV(o.contacts)
	sink, err := startSink()
	if err != nil {
		return err
	}
	defer sink.Stop()
	b.sink = sink
	fmt.Printf("sink: go-smtp server in its own process (pid %d) at %s\n\n", sink.Cmd.Process.Pid, sink.Addr)

	r, err := b.automationRun(ctx, csvBody)
	if err != nil {
		return err
	}
	fmt.Printf("load average at end: %s; whole run %s\n\n", harness.LoadAvg(), time.Since(start).Round(time.Second))
	printAutomation(b, r)
	return nil
}

// automationCSV is the upload: a header and n unique addresses.
func automationCSV(n int) []byte {
	var buf bytes.Buffer
	buf.Grow(n * 48)
	buf.WriteString("email,first_name\r\n")
	rng := mrand.New(mrand.NewPCG(11, 7))
	for i := 1; i <= n; i++ {
		first := firstNames[rng.IntN(len(firstNames))]
		last := lastNames[rng.IntN(len(lastNames))]
		local := strings.ToLower(strings.Map(asciiOnly, first)) + "." + strings.ToLower(strings.Map(asciiOnly, last))
		fmt.Fprintf(&buf, "a%06d.%s@%s,%s\r\n", i, local, domains[rng.IntN(len(domains))], first)
	}
	return buf.Bytes()
}

func (b *bench) automationRun(ctx context.Context, csvBody []byte) (autoResult, error) {
	r := autoResult{csvBytes: len(csvBody)}
	h, err := b.startHerald(ctx, "automation", "smtp://"+b.sink.Addr+"?tls=none")
	if err != nil {
		return r, err
	}
	defer h.proc.Stop()
	fail := func(err error) (autoResult, error) {
		return r, fmt.Errorf("%w; herald log: %s", err, h.proc.Tail())
	}
	ts := time.Now()
	utr, err := b.createAutomation(ctx, h)
	if err != nil {
		return fail(err)
	}
	r.setup = time.Since(ts)
	time.Sleep(time.Second) // let the start-up and the first ticks settle
	if err := b.sink.reset(); err != nil {
		return r, err
	}
	st0, err := b.sink.stats()
	if err != nil {
		return r, err
	}
	if st0.messages != 0 {
		return fail(fmt.Errorf("the sink got %d messages before the import", st0.messages))
	}
	pid := h.pid()
	r.loadAvg = harness.LoadAvg()
	sampler := sampleRSS(pid, b.o.sample)
	pg0 := b.backendCPU(pid)

	type answer struct {
		rep importReport
		at  time.Time
		err error
	}
	done := make(chan answer, 1)
	cpu0, t0 := harness.ProcCPU(pid), time.Now()
	go func() {
		rep, err := b.uploadCSV(ctx, h, csvBody)
		done <- answer{rep, time.Now(), err}
	}()
	want := int64(b.o.contacts)
	var st sinkStats
	imported := false
	lastCount, lastMove := int64(-1), time.Now()
	for {
		select {
		case a := <-done:
			if a.err != nil {
				sampler.end()
				return fail(fmt.Errorf("upload: %w", a.err))
			}
			imported, r.importDur = true, a.at.Sub(t0)
			r.created, r.rows, r.skipped = a.rep.Created, a.rep.Rows, a.rep.Skipped
			fmt.Printf("import answered after %.2f s: %d rows, %d created, %d skipped (status %q)\n",
				r.importDur.Seconds(), a.rep.Rows, a.rep.Created, a.rep.Skipped, a.rep.Status)
			lastMove = time.Now()
		default:
		}
		if st, err = b.sink.stats(); err != nil {
			sampler.end()
			return r, err
		}
		got := st.messages - st0.messages
		if got > 0 && r.firstMsg == 0 {
			r.firstMsg = time.Since(t0) // within one poll
			fmt.Printf("first step-1 message at the sink after %.2f s\n", r.firstMsg.Seconds())
		}
		if got >= want && imported {
			break
		}
		if got != lastCount {
			lastCount, lastMove = got, time.Now()
		} else if imported && time.Since(lastMove) > 2*time.Minute {
			sampler.end()
			return fail(fmt.Errorf("no message for two minutes after %d of %d", got, want))
		}
		if syscall.Kill(pid, 0) != nil {
			sampler.end()
			return fail(errors.New("herald exited"))
		}
		if ctx.Err() != nil {
			sampler.end()
			return r, ctx.Err()
		}
		time.Sleep(20 * time.Millisecond)
	}
	r.cpu = harness.ProcCPU(pid) - cpu0
	if b.pgPort > 0 {
		for p, d := range b.backendCPU(pid) {
			r.dbCPU += d - pg0[p]
			r.backends++
		}
	}
	r.samples, r.sampleRSS = sampler.end()
	r.lastMsg = st.last.Sub(t0)
	r.sinkCPU = st.cpu - st0.cpu
	fmt.Printf("%s-th message at the sink after %.2f s\n", harness.Thousands(float64(want)), r.lastMsg.Seconds())

	// Nothing more may come: wait two scheduler ticks and look again.
	time.Sleep(3 * time.Second)
	end, err := b.sink.stats()
	if err != nil {
		return r, err
	}
	r.messages, r.distinct, r.bytes = end.messages-st0.messages, end.distinct, end.bytes-st0.bytes
	_, r.peakRSS, _ = harness.ProcMem(pid)
	if r.created != want || r.messages != want || r.distinct != want {
		return fail(fmt.Errorf("the import created %d contacts, the sink got %d messages to %d distinct recipients; want %d each (automation %s)",
			r.created, r.messages, r.distinct, want, utr))
	}
	return r, nil
}

// importReport is the part of the upload's answer the benchmark reads.
type importReport struct {
	Status  string `json:"status"`
	Created int64  `json:"created"`
	Skipped int64  `json:"skipped"`
	Rows    int64  `json:"rows"`
}

// createAutomation makes the custom automation on the empty type, its one
// instant email, and sets it live; it returns the automation's utr.
func (b *bench) createAutomation(ctx context.Context, h *heraldProc) (string, error) {
	utr, err := b.createAutomationSteps(ctx, h, "Welcome, ((first_name))")
	if err != nil {
		return "", err
	}
	if _, err := b.call(ctx, h, http.MethodGet, "/automations/set-live?utr="+url.QueryEscape(utr), nil); err != nil {
		return "", err
	}
	return utr, nil
}

// createAutomationSteps makes the custom automation on the empty type and
// its first email (at once, the library design -template, subject), not
// live yet; it returns the automation's utr.
func (b *bench) createAutomationSteps(ctx context.Context, h *heraldProc, subject string) (string, error) {
	utrOf := func(path string, body []byte) (string, error) {
		var env struct {
			Message struct {
				Utr string `json:"utr"`
			} `json:"message"`
		}
		if err := json.Unmarshal(body, &env); err != nil || env.Message.Utr == "" {
			return "", fmt.Errorf("%s answered %.300s", path, body)
		}
		return env.Message.Utr, nil
	}
	body, err := b.call(ctx, h, http.MethodPost, "/automations/create", url.Values{
		"type":                 {"custom"},
		"automation_for":       {"contacts_" + strconv.FormatInt(b.f.audience, 10)},
		"automation_name":      {"Welcome series"},
		"unsubscribe_group_id": {strconv.FormatInt(b.f.group, 10)},
	})
	if err != nil {
		return "", err
	}
	utr, err := utrOf("automations/create", body)
	if err != nil {
		return "", err
	}
	body, err = b.call(ctx, h, http.MethodPost, "/automations/schedule/create", url.Values{
		"utr":            {utr},
		"sender_id":      {strconv.FormatInt(b.f.sender, 10)},
		"subject":        {subject},
		"waiting_period": {"1"},
		"waiting_type":   {"instantly"},
		"template_id":    {strconv.Itoa(b.o.template)},
		"preview_img":    {"02-newsletter.png"},
	})
	if err != nil {
		return "", err
	}
	if _, err := utrOf("automations/schedule/create", body); err != nil {
		return "", err
	}
	return utr, nil
}

// uploadCSV posts the CSV to the audience type (contact_type_id first, so
// herald imports the file part as it arrives) and returns the report.
func (b *bench) uploadCSV(ctx context.Context, h *heraldProc, csvBody []byte) (importReport, error) {
	var rep importReport
	var buf bytes.Buffer
	mw := multipart.NewWriter(&buf)
	if err := mw.WriteField("contact_type_id", strconv.FormatInt(b.f.audience, 10)); err != nil {
		return rep, err
	}
	w, err := mw.CreateFormFile("file", "contacts.csv")
	if err != nil {
		return rep, err
	}
	if _, err := w.Write(csvBody); err != nil {
		return rep, err
	}
	if err := mw.Close(); err != nil {
		return rep, err
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, "http://"+h.addr+"/api/contacts/upload-csv", &buf)
	if err != nil {
		return rep, err
	}
	req.Header.Set("Content-Type", mw.FormDataContentType())
	req.Header.Set("PublicKey", b.f.keys.PublicKey)
	req.Header.Set("SecretKey", b.f.keys.SecretKey)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return rep, err
	}
	defer resp.Body.Close()
	var env struct {
		Status string       `json:"status"`
		Import importReport `json:"import"`
	}
	var raw bytes.Buffer
	if _, err := raw.ReadFrom(resp.Body); err != nil {
		return rep, err
	}
	if resp.StatusCode != http.StatusOK || json.Unmarshal(raw.Bytes(), &env) != nil || env.Status != "success" {
		return rep, fmt.Errorf("upload-csv: %d %.500s", resp.StatusCode, raw.Bytes())
	}
	return env.Import, nil
}

func printAutomation(b *bench, r autoResult) {
	n := float64(b.o.contacts)
	sec := func(d time.Duration) string { return fmt.Sprintf("%.2f s", d.Seconds()) }
	us := func(d time.Duration) string { return fmt.Sprintf("%.1f µs", float64(d)/float64(time.Microsecond)/n) }
	fmt.Println("| measure | value |")
	fmt.Println("|---|---:|")
	fmt.Printf("| automation create + email + set-live (API, untimed) | %s |\n", ms(r.setup))
	fmt.Printf("| CSV uploaded | %s rows, %s bytes |\n", harness.Thousands(n), harness.Thousands(float64(r.csvBytes)))
	fmt.Printf("| import: upload start to the answer | %s (%s rows/s) |\n", sec(r.importDur), harness.Thousands(n/r.importDur.Seconds()))
	fmt.Printf("| upload start to the first step-1 message at the sink | %s |\n", sec(r.firstMsg))
	fmt.Printf("| upload start to the %s-th step-1 message at the sink | %s (%s msg/s overall) |\n", harness.Thousands(n), sec(r.lastMsg),
		harness.Thousands(n/r.lastMsg.Seconds()))
	fmt.Printf("| first to last message | %s (%s msg/s) |\n", sec(r.lastMsg-r.firstMsg), harness.Thousands(n/(r.lastMsg-r.firstMsg).Seconds()))
	fmt.Printf("| import created / sink messages / distinct recipients | %d / %d / %d |\n", r.created, r.messages, r.distinct)
	fmt.Printf("| herald message size (sink bytes / messages) | %s B |\n", harness.Thousands(float64(r.bytes)/float64(r.messages)))
	fmt.Printf("| herald CPU, upload start to the last message (cores busy) | %.1f s, %s per contact (%.2f) |\n", r.cpu.Seconds(), us(r.cpu),
		r.cpu.Seconds()/r.lastMsg.Seconds())
	if r.backends > 0 {
		fmt.Printf("| PostgreSQL backends serving herald (%d), CPU (cores busy) | %.1f s, %s per contact (%.2f) |\n", r.backends, r.dbCPU.Seconds(),
			us(r.dbCPU), r.dbCPU.Seconds()/r.lastMsg.Seconds())
	}
	fmt.Printf("| sink CPU | %s per message |\n", us(r.sinkCPU))
	fmt.Printf("| herald peak RSS (VmHWM; largest of %d samples) | %s (%s) |\n", r.samples, mib(r.peakRSS), mib(r.sampleRSS))
	fmt.Printf("| load average when the clock started | %s |\n", r.loadAvg)
	fmt.Println()
}
