package send

import (
	"bytes"
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/mail"
	"net/url"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/emersion/go-smtp"

	"herald/bench/harness"
	"herald/smtptest"
)

// bench holds what the runs share.
type bench struct {
	o    options
	f    *fixture
	dir  string
	dsn  string
	bin  string
	sink *sinkProc
	// pgPort is the PostgreSQL server's port when it runs on this machine
	// (its backends' CPU time is then measured); 0 otherwise.
	pgPort int
	// pgStats reads PostgreSQL's activity counters of the schema.
	pgStats *sql.DB
	msgs    []sample   // the probe's messages: what the ceiling sends
	events  *eventSink // -webhook: the events receiver
}

// sample is one message herald wrote.
type sample struct {
	to   string
	data []byte
}

// heraldProc is one running herald.
type heraldProc struct {
	proc *harness.Proc
	addr string
	prof *profiler
}

func (h *heraldProc) pid() int { return h.proc.Cmd.Process.Pid }

// env is the environment of every herald of the run (HERALD_ADDR and
// HERALD_SMTP_URL aside).
func (b *bench) env() []string {
	return append(os.Environ(),
		"HERALD_DATABASE="+b.dsn,
		"HERALD_BASE_URL=https://mail.cafe-zoe.example.com",
		"HERALD_SMTP_MAX_CONNS="+strconv.Itoa(b.o.conns),
		"HERALD_SEND_RATE=",
		"HERALD_API_RATE=0",
		"HERALD_LOG_LEVEL=warn",
		"HERALD_EVENT_WEBHOOK_PRIVATE=1", // -webhook's receiver is on loopback
	)
}

// startHerald starts `herald serve` on the benchmark's database with its
// mail going to smtpURL.
func (b *bench) startHerald(ctx context.Context, name, smtpURL string, extraEnv ...string) (*heraldProc, error) {
	addr, err := harness.FreeAddr()
	if err != nil {
		return nil, err
	}
	env := append(b.env(), "HERALD_ADDR="+addr, "HERALD_SMTP_URL="+smtpURL)
	env = append(env, extraEnv...)
	h := &heraldProc{addr: addr}
	if b.o.cpuProfile != "" {
		pa, err := harness.FreeAddr()
		if err != nil {
			return nil, err
		}
		env = append(env, "HERALD_BENCH_PROFILE_ADDR="+pa)
		h.prof = &profiler{addr: pa}
	}
	h.proc, err = harness.Start(ctx, "herald", b.bin, []string{"serve"}, env, filepath.Join(b.dir, name+"-herald.log"), "http://"+addr+"/healthz")
	if err != nil {
		return nil, err
	}
	return h, nil
}

// probe has herald send the design to the probe contacts through an
// in-process server that keeps the messages, and keeps them.
func (b *bench) probe(ctx context.Context) error {
	srv, err := smtptest.Listen("127.0.0.1:0")
	if err != nil {
		return err
	}
	defer srv.Close()
	h, err := b.startHerald(ctx, "probe", srv.URL())
	if err != nil {
		return err
	}
	defer h.proc.Stop()
	if _, err := b.createSend(ctx, h, "Probe", b.f.probe); err != nil {
		return err
	}
	if !srv.WaitCount(b.f.probeSize, 2*time.Minute) {
		return fmt.Errorf("the probe send delivered %d of %d messages in 2 minutes: %s", srv.Count(), b.f.probeSize, h.proc.Tail())
	}
	var total int
	for _, m := range srv.Messages() {
		if !strings.EqualFold(recipientOf(m.Data), m.To) {
			return fmt.Errorf("a probe message to %s has To %q", m.To, recipientOf(m.Data))
		}
		b.msgs = append(b.msgs, sample{to: m.To, data: m.Data})
		total += len(m.Data)
	}
	m0 := srv.Messages()[0]
	hdr := m0.Header()
	var have []string
	for _, k := range []string{"List-Unsubscribe", "List-Unsubscribe-Post", "DKIM-Signature", "X-Herald-Send", "Precedence"} {
		if hdr.Get(k) != "" {
			have = append(have, k)
		}
	}
	body := string(m0.Data)
	fmt.Printf("probe (untimed): herald sent %d messages of %s bytes on average (%s to %s); headers present: %s; tracked links /t/c/: %d, open pixel /t/o/: %d (in the quoted-printable HTML part)\n",
		len(b.msgs), harness.Thousands(float64(total)/float64(len(b.msgs))), harness.Thousands(float64(minLen(b.msgs))), harness.Thousands(float64(maxLen(b.msgs))),
		strings.Join(have, ", "), strings.Count(unQP(body), "/t/c/"), strings.Count(unQP(body), "/t/o/"))
	if hdr.Get("List-Unsubscribe") == "" {
		return errors.New("the probe's message has no List-Unsubscribe header")
	}
	return nil
}

// unQP undoes quoted-printable soft line breaks, enough to count links.
func unQP(s string) string { return strings.ReplaceAll(s, "=\r\n", "") }

func minLen(ms []sample) int {
	n := len(ms[0].data)
	for _, m := range ms {
		n = min(n, len(m.data))
	}
	return n
}

func maxLen(ms []sample) int {
	n := 0
	for _, m := range ms {
		n = max(n, len(m.data))
	}
	return n
}

// --- the ceiling ---

// ceiling sends -ceiling-messages of the probe's messages over -conns
// go-smtp clients; variant plain+RSET says RSET before every message.
func (b *bench) ceiling(ctx context.Context, variant string, round int) (result, error) {
	r := result{target: variant, round: round}
	rset := variant == "plain+RSET"
	clients := make([]*smtp.Client, b.o.conns)
	defer func() {
		for _, c := range clients {
			if c != nil {
				_ = c.Quit()
			}
		}
	}()
	for i := range clients {
		c, err := smtp.Dial(b.sink.Addr)
		if err != nil {
			return r, err
		}
		clients[i] = c
		if err := c.Hello("localhost"); err != nil {
			return r, err
		}
	}
	st0, err := b.sink.stats()
	if err != nil {
		return r, err
	}
	n := int64(b.o.ceilingMessages)
	from := b.f.fromEmail
	var next, sent atomic.Int64
	var firstErr error
	var errOnce sync.Once
	var stop atomic.Bool
	var wg sync.WaitGroup
	cpu0, t0 := harness.SelfCPU(), time.Now()
	for _, c := range clients {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for !stop.Load() && ctx.Err() == nil {
				i := next.Add(1) - 1
				if i >= n {
					return
				}
				m := b.msgs[int(i)%len(b.msgs)]
				if err := plainSend(c, from, m.to, m.data, rset); err != nil {
					errOnce.Do(func() { firstErr = err })
					stop.Store(true)
					return
				}
				sent.Add(1)
			}
		}()
	}
	wg.Wait()
	r.cpu = harness.SelfCPU() - cpu0
	if firstErr != nil {
		return r, firstErr
	}
	if err := ctx.Err(); err != nil {
		return r, err
	}
	st1, err := b.sink.stats()
	if err != nil {
		return r, err
	}
	r.messages, r.bytes, r.sinkCPU = st1.messages-st0.messages, st1.bytes-st0.bytes, st1.cpu-st0.cpu
	if r.messages != sent.Load() || r.messages != n {
		return r, fmt.Errorf("the sink got %d messages, %d were sent, want %d", r.messages, sent.Load(), n)
	}
	r.elapsed = st1.last.Sub(t0)
	return r, nil
}

// plainSend is one message, each command waiting for its reply.
func plainSend(c *smtp.Client, from, rcpt string, msg []byte, rset bool) error {
	if rset {
		if err := c.Reset(); err != nil {
			return err
		}
	}
	if err := c.Mail(from, nil); err != nil {
		return err
	}
	if err := c.Rcpt(rcpt, nil); err != nil {
		return err
	}
	w, err := c.Data()
	if err != nil {
		return err
	}
	if _, err := w.Write(msg); err != nil {
		return err
	}
	return w.Close()
}

// --- herald ---

// herald starts a fresh herald, creates the send through the API and
// waits for the sink to hold every message.
func (b *bench) herald(ctx context.Context, round int) (result, error) {
	r := result{target: "herald", round: round}
	h, err := b.startHerald(ctx, fmt.Sprintf("run%d", round+1), "smtp://"+b.sink.Addr+"?tls=none")
	if err != nil {
		return r, err
	}
	defer h.proc.Stop()
	fail := func(err error) (result, error) {
		return r, fmt.Errorf("%w; herald log: %s", err, h.proc.Tail())
	}
	time.Sleep(time.Second) // let the start-up settle
	if err := b.sink.reset(); err != nil {
		return r, err
	}
	st0, err := b.sink.stats()
	if err != nil {
		return r, err
	}
	pid := h.pid()
	r.loadAvg = harness.LoadAvg()
	sampler := sampleRSS(pid, b.o.sample)
	if h.prof != nil {
		if err := h.prof.start(filepath.Join(b.o.cpuProfile, fmt.Sprintf("herald-run%d.pprof", round+1))); err != nil {
			return fail(err)
		}
	}
	pg0 := b.backendCPU(pid)
	var counters0 pgCounters
	if b.pgStats != nil {
		if counters0, _, err = readPGCounters(ctx, b.pgStats); err != nil {
			sampler.end()
			return r, err
		}
	}
	var ev0, all0, posts0 int64
	if b.events != nil {
		ev0, all0, posts0, _ = b.events.stats()
	}
	cpu0, t0 := harness.ProcCPU(pid), time.Now()
	utr, err := b.createSend(ctx, h, fmt.Sprintf("Bench run %d", round+1), b.f.audience)
	r.request = time.Since(t0)
	if err != nil {
		sampler.end()
		return fail(err)
	}
	want := int64(b.o.contacts)
	var st sinkStats
	lastCount, lastMove := int64(-1), time.Now()
	for {
		if st, err = b.sink.stats(); err != nil {
			sampler.end()
			return r, err
		}
		got := st.messages - st0.messages
		if got >= want {
			break
		}
		if got > 0 && r.firstMsg == 0 {
			r.firstMsg = time.Since(t0) // within one poll
		}
		if got != lastCount {
			lastCount, lastMove = got, time.Now()
		} else if time.Since(lastMove) > time.Minute {
			sampler.end()
			return fail(fmt.Errorf("no message for a minute after %d of %d", got, want))
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
	if h.prof != nil {
		g, err := h.prof.stop()
		if err != nil {
			sampler.end()
			return fail(err)
		}
		r.gc = &g
	}
	r.samples, r.sampleRSS = sampler.end()
	r.elapsed = st.last.Sub(t0)
	r.messages, r.bytes, r.sinkCPU = st.messages-st0.messages, st.bytes-st0.bytes, st.cpu-st0.cpu

	// The send completes within a scheduler tick; then nothing more may come.
	deadline := time.Now().Add(30 * time.Second)
	for {
		d, err := b.details(ctx, h, utr)
		if err != nil {
			return fail(err)
		}
		r.triggered, r.delivered, r.bounces = d.Triggered, d.Delivered, d.Bounces
		if d.Status == 3 {
			break
		}
		if time.Now().After(deadline) {
			return fail(fmt.Errorf("the send is in status %d 30 s after the last message (triggered %d, delivered %d)", d.Status, d.Triggered, d.Delivered))
		}
		time.Sleep(100 * time.Millisecond)
	}
	if b.events != nil {
		// Every delivered event of the run, then the lag of the last one.
		deadline := time.Now().Add(2 * time.Minute)
		for {
			d, all, posts, last := b.events.stats()
			if d-ev0 >= int64(b.o.contacts) {
				r.eventsDelivered, r.eventsAll, r.eventPosts, r.eventLag = d-ev0, all-all0, posts-posts0, last.Sub(st.last)
				break
			}
			if time.Now().After(deadline) {
				return fail(fmt.Errorf("%d of %d delivered events 2 minutes after the send", d-ev0, b.o.contacts))
			}
			time.Sleep(20 * time.Millisecond)
		}
	}
	time.Sleep(300 * time.Millisecond)
	end, err := b.sink.stats()
	if err != nil {
		return r, err
	}
	r.messages, r.distinct = end.messages-st0.messages, end.distinct
	_, r.peakRSS, _ = harness.ProcMem(pid)
	if b.pgStats != nil {
		time.Sleep(time.Second) // backends flush their counters at most once a second
		c, dead, err := readPGCounters(ctx, b.pgStats)
		if err != nil {
			return r, err
		}
		r.pgTop, r.pgDead = c.top(counters0, 4), dead["send_messages"]
	}
	if r.messages != want || r.distinct != want || r.delivered != want {
		return fail(fmt.Errorf("the sink got %d messages to %d distinct recipients and the send says delivered %d; want %d each",
			r.messages, r.distinct, r.delivered, want))
	}
	return r, nil
}

// backendCPU is the CPU time of each PostgreSQL backend serving herald
// (none on SQLite).
func (b *bench) backendCPU(pid int) map[int]time.Duration {
	out := map[int]time.Duration{}
	if b.pgPort == 0 {
		return out
	}
	pids, err := backendsOf(pid, b.pgPort)
	if err != nil {
		return out
	}
	for _, p := range pids {
		out[p] = harness.ProcCPU(p)
	}
	return out
}

// rssSampler keeps the largest VmRSS of a process.
type rssSampler struct {
	stop    chan struct{}
	done    chan struct{}
	samples int
	max     int64
}

func sampleRSS(pid int, every time.Duration) *rssSampler {
	s := &rssSampler{stop: make(chan struct{}), done: make(chan struct{})}
	go func() {
		defer close(s.done)
		t := time.NewTicker(every)
		defer t.Stop()
		for {
			if rss, _, err := harness.ProcMem(pid); err == nil {
				s.samples++
				s.max = max(s.max, rss)
			}
			select {
			case <-s.stop:
				return
			case <-t.C:
			}
		}
	}()
	return s
}

func (s *rssSampler) end() (samples int, largest int64) {
	close(s.stop)
	<-s.done
	return s.samples, s.max
}

// --- the API ---

// createSend makes an immediate single send of the design to the contact
// type through POST /api/single/send/create and returns its utr.
func (b *bench) createSend(ctx context.Context, h *heraldProc, name string, typeID int64) (string, error) {
	form := url.Values{
		"template_id":          {strconv.Itoa(b.o.template)},
		"sender_id":            {strconv.FormatInt(b.f.sender, 10)},
		"unsubscribe_group_id": {strconv.FormatInt(b.f.group, 10)},
		"single_send_name":     {name},
		"subject":              {"((first_name)), our November news"},
		"preheader":            {"Chestnut tart, new beans and our winter hours, ((first_name))"},
		"recipient_id[0]":      {"contacts_" + strconv.FormatInt(typeID, 10)},
		"schedule_type":        {"0"},
	}
	body, err := b.call(ctx, h, http.MethodPost, "/single/send/create", form)
	if err != nil {
		return "", err
	}
	var env struct {
		Message struct {
			Utr string `json:"utr"`
		} `json:"message"`
	}
	if err := json.Unmarshal(body, &env); err != nil || env.Message.Utr == "" {
		return "", fmt.Errorf("single/send/create answered %.300s", body)
	}
	return env.Message.Utr, nil
}

type sendDetails struct {
	Status    int   `json:"status"`
	Triggered int64 `json:"triggered"`
	Delivered int64 `json:"delivered"`
	Bounces   int64 `json:"bounces"`
}

func (b *bench) details(ctx context.Context, h *heraldProc, utr string) (sendDetails, error) {
	body, err := b.call(ctx, h, http.MethodGet, "/single-send/details?utr="+url.QueryEscape(utr), nil)
	if err != nil {
		return sendDetails{}, err
	}
	var env struct {
		Message struct {
			SingleSend []sendDetails `json:"singleSend"`
		} `json:"message"`
	}
	if err := json.Unmarshal(body, &env); err != nil || len(env.Message.SingleSend) != 1 {
		return sendDetails{}, fmt.Errorf("single-send/details answered %.300s", body)
	}
	return env.Message.SingleSend[0], nil
}

// call sends a form (or nothing) with the account's keys and returns the
// body of a success envelope.
func (b *bench) call(ctx context.Context, h *heraldProc, method, path string, form url.Values) ([]byte, error) {
	var body io.Reader
	if form != nil {
		body = strings.NewReader(form.Encode())
	}
	req, err := http.NewRequestWithContext(ctx, method, "http://"+h.addr+"/api"+path, body)
	if err != nil {
		return nil, err
	}
	if form != nil {
		req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	}
	req.Header.Set("PublicKey", b.f.keys.PublicKey)
	req.Header.Set("SecretKey", b.f.keys.SecretKey)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return nil, err
	}
	defer resp.Body.Close()
	out, err := io.ReadAll(resp.Body)
	if err != nil {
		return nil, err
	}
	var env struct {
		Status string `json:"status"`
	}
	if resp.StatusCode != http.StatusOK || json.Unmarshal(out, &env) != nil || env.Status != "success" {
		return out, fmt.Errorf("%s %s: %d %.500s", method, path, resp.StatusCode, out)
	}
	return out, nil
}

// recipientOf is the address of a message's To header (for a check).
func recipientOf(data []byte) string {
	m, err := mail.ReadMessage(bytes.NewReader(data))
	if err != nil {
		return ""
	}
	a, err := mail.ParseAddress(m.Header.Get("To"))
	if err != nil {
		return ""
	}
	return a.Address
}
