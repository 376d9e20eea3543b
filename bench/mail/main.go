// Command mail is the mail benchmark of `make bench`: how
// many messages herald builds and DKIM-signs per second from a 20 KB HTML
// template with five placeholders, and how many messages per second its SMTP
// pool delivers into a loopback SMTP sink, beside the sink's own ceiling
// measured in the same run by a plain client.
//
// Building and signing. A ~20 KB table-layout newsletter (generated here:
// responsive CSS, article blocks, a product row, a footer) with exactly five
// distinct placeholders is compiled once (delivery.Compile); then, for -n
// messages per pipeline, -workers goroutines render it for one recipient each
// (HTML-escaped values, delivery.HTMLEscaped) and go as far as the pipeline
// says: delivery.Build, then delivery.SignMessage (herald's own signer;
// RSA by crypto/rsa, or OpenSSL with go run -tags openssl) with an RSA 2048 key, an
// Ed25519 key, or both (keys generated at start). The text part is either
// derived from each rendered HTML by Build (delivery.HTMLToText, herald's
// path today) or rendered from a text template compiled once from
// HTMLToText of the template; the program checks first that both give the
// same text for every sample recipient, and that the signatures verify with
// go-msgauth. The pipelines alternate over -build-rounds rounds of
// n/build-rounds messages each, the starting pipeline shifting every round;
// it reports the median messages per second and the CPU time per message
// (getrusage of this process, so GC included).
//
// SMTP. The sink is this same binary started with -sink, a separate process
// (go-smtp's server, accepting everything and discarding the data, counting
// messages and its own CPU time). The targets, each with -c concurrent
// senders and the same -messages pre-built RSA-signed messages:
//
//	pool         herald's delivery.NewSMTPPool with -c connections (kept for
//	             the whole run, as herald keeps it)
//	plain        -c raw go-smtp clients, one connection each: Dial, EHLO once,
//	             then MAIL, RCPT, DATA per message and nothing else: the sink's
//	             ceiling
//	plain+RSET   (-explain) the plain client with an RSET before every
//	             message; go-smtp's client then says EHLO again before MAIL,
//	             which is the command sequence of a reused pool connection
//
// After a warm-up of each target, -rounds rounds run every target for
// -duration, the starting target shifting every round. Each run checks that
// the sink's count grew by exactly the messages sent. The program prints the
// per-round numbers and markdown tables of medians and ratios to the plain
// client. It asserts nothing about speed: the exit status only says whether
// the run itself worked.
//
// -small sends short messages instead, where the per-message commands weigh
// more than the data; -targets and -cpuprofile help to profile one target.
//
//	go run ./bench/mail                       # about 2.5 minutes on 2 cores
//	go run ./bench/mail -skip-build -rounds 5 # the SMTP part only
//	go run ./bench/mail -skip-build -small    # the commands' share
package main

import (
	"bytes"
	"context"
	"crypto"
	"crypto/ed25519"
	"crypto/rand"
	"crypto/rsa"
	"crypto/sha256"
	"errors"
	"flag"
	"fmt"
	"html"
	"math"
	"net"
	"net/mail"
	"os"
	"os/exec"
	"regexp"
	"runtime"
	"runtime/debug"
	"runtime/pprof"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/emersion/go-msgauth/dkim"
	"github.com/emersion/go-smtp"

	"herald/bench/harness"
	"herald/delivery"
)

type options struct {
	n           int
	workers     int
	buildRounds int
	rounds      int
	duration    time.Duration
	warmup      time.Duration
	conns       int
	messages    int
	explain     bool
	small       bool
	only        string
	cpuProfile  string
	skipBuild   bool
	skipSMTP    bool
}

func main() {
	var o options
	sink := flag.Bool("sink", false, "internal: run as the loopback SMTP sink (started by the benchmark itself)")
	flag.IntVar(&o.n, "n", 20000, "messages per build pipeline, split over -build-rounds")
	flag.IntVar(&o.workers, "workers", runtime.NumCPU(), "goroutines building and signing")
	flag.IntVar(&o.buildRounds, "build-rounds", 3, "rounds of the build pipelines; each builds n/build-rounds messages per pipeline")
	flag.IntVar(&o.rounds, "rounds", 3, "SMTP rounds; each runs every target once")
	flag.DurationVar(&o.duration, "duration", 5*time.Second, "SMTP: time of one target in one round")
	flag.DurationVar(&o.warmup, "warmup", time.Second, "SMTP: warm-up per target before the rounds (0: none)")
	flag.IntVar(&o.conns, "c", delivery.DefaultMaxConns, "SMTP: connections and concurrent senders per target (HERALD_SMTP_MAX_CONNS)")
	flag.IntVar(&o.messages, "messages", 100, "SMTP: distinct pre-built signed messages, sent in turn")
	flag.BoolVar(&o.explain, "explain", true, "SMTP: also run the plain client with RSET (and so EHLO) before every message")
	flag.BoolVar(&o.small, "small", false, "SMTP: send small messages (a few lines of HTML, about 2 KB signed) instead of the 20 KB template's, so that the per-message commands weigh more than the data")
	flag.StringVar(&o.only, "targets", "", "SMTP: comma-separated targets to run (pool, plain, plain+RSET); empty: all")
	flag.StringVar(&o.cpuProfile, "cpuprofile", "", "write a CPU profile of this process (not the sink) to this file")
	flag.BoolVar(&o.skipBuild, "skip-build", false, "skip building and signing")
	flag.BoolVar(&o.skipSMTP, "skip-smtp", false, "skip the SMTP part")
	flag.Parse()

	if *sink {
		if err := runSink(); err != nil {
			fatal(err)
		}
		return
	}
	if o.n < o.buildRounds || o.workers < 1 || o.buildRounds < 1 || o.rounds < 1 ||
		o.duration < 100*time.Millisecond || o.conns < 1 || o.messages < 1 {
		fatal(errors.New("need -n >= -build-rounds >= 1, -workers >= 1, -rounds >= 1, -duration >= 100ms, -c >= 1, -messages >= 1"))
	}
	if o.cpuProfile != "" {
		f, err := os.Create(o.cpuProfile)
		if err != nil {
			fatal(err)
		}
		if err := pprof.StartCPUProfile(f); err != nil {
			fatal(err)
		}
	}
	err := run(o)
	if o.cpuProfile != "" {
		pprof.StopCPUProfile()
	}
	if err != nil {
		fatal(err)
	}
}

func fatal(err error) {
	fmt.Fprintln(os.Stderr, "bench/mail:", err)
	os.Exit(1)
}

func run(o options) error {
	start := time.Now()
	loadStart := harness.LoadAvg()
	fmt.Printf("# herald mail benchmark, %s\n\n", start.UTC().Format("2006-01-02 15:04 MST"))
	fmt.Printf("machine: %d CPUs (%s), %s/%s, %s; GOMAXPROCS %d\n", runtime.NumCPU(), cpuModel(), runtime.GOOS, runtime.GOARCH, runtime.Version(), runtime.GOMAXPROCS(0))
	fmt.Printf("DKIM RSA signatures by %s (delivery.RSAEngine; -tags openssl: OpenSSL's libcrypto)\n", delivery.RSAEngine)
	fmt.Printf("load average at start: %s\n", loadStart)

	b, err := newBench(o)
	if err != nil {
		return err
	}
	fmt.Printf("template: %d bytes of HTML, placeholders %s (%d distinct, %d in all); text template %d bytes\n",
		len(b.src), strings.Join(b.html.Names(), ", "), len(b.html.Names()), strings.Count(b.src, "(("), len(b.textSrc))
	if err := b.check(); err != nil {
		return err
	}

	if !o.skipBuild {
		if err := b.runBuild(o); err != nil {
			return err
		}
	}
	if !o.skipSMTP {
		if err := b.runSMTP(o); err != nil {
			return err
		}
	}
	fmt.Printf("\nload average at end: %s; whole run %s\n", harness.LoadAvg(), time.Since(start).Round(time.Second))
	return nil
}

// bench holds the compiled templates, the recipients and the keys.
type bench struct {
	src, textSrc string
	html, text   *delivery.Template
	subject      *delivery.Template
	recips       []recipient
	rsa, ed      *delivery.DKIMKey
	from         mail.Address
}

func newBench(o options) (*bench, error) {
	b := &bench{src: newsletterHTML(), recips: recipients(1000),
		from: mail.Address{Name: "Café Zoë", Address: "news@cafe-zoe.example.com"}}
	b.html = delivery.Compile(b.src)
	b.textSrc = delivery.HTMLToText(b.src)
	b.text = delivery.Compile(b.textSrc)
	b.subject = delivery.Compile(subjectTemplate)
	var err error
	if b.rsa, err = delivery.GenerateDKIM("cafe-zoe.example.com", "herald", delivery.DKIMRSA); err != nil {
		return nil, err
	}
	if b.ed, err = delivery.GenerateDKIM("cafe-zoe.example.com", "herald-ed", delivery.DKIMEd25519); err != nil {
		return nil, err
	}
	return b, nil
}

// check makes sure the benchmark measures what it says: five distinct
// placeholders in both templates, the text template giving exactly the text
// Build would derive, and signatures that verify.
func (b *bench) check() error {
	want := slices.Clone(placeholders)
	slices.Sort(want)
	for _, t := range []struct {
		name string
		tmpl *delivery.Template
	}{{"HTML", b.html}, {"text", b.text}} {
		got := t.tmpl.Names()
		slices.Sort(got)
		if !slices.Equal(got, want) {
			return fmt.Errorf("%s template placeholders %v, want %v", t.name, got, want)
		}
	}
	for i := range b.recips {
		r := &b.recips[i]
		derived := delivery.HTMLToText(b.html.Render(delivery.HTMLEscaped(r.lookup)))
		if fromTmpl := b.text.Render(r.lookup); fromTmpl != derived {
			return fmt.Errorf("recipient %d: the text template's text differs from HTMLToText of the rendered HTML", i)
		}
	}
	fmt.Printf("check: text template == HTMLToText(rendered HTML) for all %d sample recipients\n", len(b.recips))

	records := map[string]string{}
	for _, k := range []*delivery.DKIMKey{b.rsa, b.ed} {
		name, value := k.DNSRecord()
		records[name] = value
	}
	lookup := func(domain string) ([]string, error) {
		if v, ok := records[domain]; ok {
			return []string{v}, nil
		}
		return nil, fmt.Errorf("no TXT record for %s", domain)
	}
	for _, keys := range [][]*delivery.DKIMKey{{b.rsa}, {b.ed}, {b.ed, b.rsa}} {
		raw, err := b.message(pipeline{build: true, keys: keys}, 7)
		if err != nil {
			return err
		}
		vs, err := dkim.VerifyWithOptions(bytes.NewReader(raw), &dkim.VerifyOptions{LookupTXT: lookup})
		if err != nil {
			return err
		}
		if len(vs) != len(keys) {
			return fmt.Errorf("%d DKIM signatures, want %d", len(vs), len(keys))
		}
		for _, v := range vs {
			if v.Err != nil {
				return fmt.Errorf("DKIM signature does not verify: %w", v.Err)
			}
		}
	}
	fmt.Println("check: RSA, Ed25519 and Ed25519+RSA signatures verify (go-msgauth, records from DNSRecord)")
	return nil
}

// pipeline is how far one message goes.
type pipeline struct {
	name         string
	build        bool
	textTemplate bool // Text rendered from the compiled text template; else Build derives it
	keys         []*delivery.DKIMKey
}

// message renders, builds and signs the message of recipient i as p says.
func (b *bench) message(p pipeline, i int) ([]byte, error) {
	r := &b.recips[i%len(b.recips)]
	body := b.html.Render(delivery.HTMLEscaped(r.lookup))
	subject := b.subject.Render(r.lookup)
	if !p.build {
		return []byte(nil), checkRendered(body, subject)
	}
	m := &delivery.Message{
		From:               b.from,
		ReplyTo:            "hello@cafe-zoe.example.com",
		To:                 mail.Address{Name: r.first + " " + r.last, Address: r.email},
		Subject:            subject,
		HTML:               body,
		Preheader:          "Chestnut tart, Huila beans and our winter hours",
		ListUnsubscribeURL: r.unsub,
		OneClick:           true,
	}
	if p.textTemplate {
		m.Text = b.text.Render(r.lookup)
	}
	raw, err := delivery.Build(m)
	if err != nil {
		return nil, err
	}
	return delivery.SignMessage(raw, p.keys...)
}

// smallMessage is a short RSA-signed mail to recipient i (-small).
func (b *bench) smallMessage(i int) ([]byte, error) {
	r := &b.recips[i%len(b.recips)]
	raw, err := delivery.Build(&delivery.Message{
		From:               b.from,
		To:                 mail.Address{Name: r.first + " " + r.last, Address: r.email},
		Subject:            b.subject.Render(r.lookup),
		HTML:               "<p>Hello " + html.EscapeString(r.first) + ",</p><p>Your table is booked for Saturday at 8 pm.</p>",
		ListUnsubscribeURL: r.unsub,
		OneClick:           true,
	})
	if err != nil {
		return nil, err
	}
	return b.rsa.Sign(raw)
}

// checkRendered keeps the render-only pipeline's output alive.
func checkRendered(html, subject string) error {
	if len(html) == 0 || len(subject) == 0 {
		return errors.New("empty render")
	}
	return nil
}

type buildSample struct {
	rate  float64       // messages per second
	cpu   time.Duration // CPU time per message
	cores float64       // CPU time / wall time
	bytes int64         // average message size
}

func (b *bench) pipelines() []pipeline {
	return []pipeline{
		{name: "render (HTML + subject)"},
		{name: "render + build, text derived per message", build: true},
		{name: "render + build, text template", build: true, textTemplate: true},
		{name: "render + build + sign RSA, text derived", build: true, keys: []*delivery.DKIMKey{b.rsa}},
		{name: "render + build + sign RSA, text template", build: true, textTemplate: true, keys: []*delivery.DKIMKey{b.rsa}},
		{name: "render + build + sign Ed25519, text template", build: true, textTemplate: true, keys: []*delivery.DKIMKey{b.ed}},
		{name: "render + build + sign Ed25519 + RSA, text template", build: true, textTemplate: true, keys: []*delivery.DKIMKey{b.ed, b.rsa}},
	}
}

// runPipeline builds messages first..first+n-1 with workers goroutines.
func (b *bench) runPipeline(p pipeline, first, n, workers int) (buildSample, error) {
	runtime.GC() // every pass starts from a collected heap
	var next, size atomic.Int64
	var firstErr error
	var errOnce sync.Once
	var wg sync.WaitGroup
	cpu0, t0 := harness.SelfCPU(), time.Now()
	for range workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			var local int64
			for {
				i := int(next.Add(1) - 1)
				if i >= n {
					break
				}
				raw, err := b.message(p, first+i)
				if err != nil {
					errOnce.Do(func() { firstErr = err })
					return
				}
				local += int64(len(raw))
			}
			size.Add(local)
		}()
	}
	wg.Wait()
	wall, cpu := time.Since(t0), harness.SelfCPU()-cpu0
	if firstErr != nil {
		return buildSample{}, fmt.Errorf("%s: %w", p.name, firstErr)
	}
	return buildSample{
		rate:  float64(n) / wall.Seconds(),
		cpu:   cpu / time.Duration(n),
		cores: cpu.Seconds() / wall.Seconds(),
		bytes: size.Load() / int64(n),
	}, nil
}

func (b *bench) runBuild(o options) error {
	ps := b.pipelines()
	per := o.n / o.buildRounds
	fmt.Printf("\n## Building and signing\n\n%d messages per pipeline in %d rounds of %d, %d workers; recipients cycle through %d sample contacts\n\n",
		per*o.buildRounds, o.buildRounds, per, o.workers, len(b.recips))
	// Warm-up: every pipeline once on a few messages.
	for _, p := range ps {
		if _, err := b.runPipeline(p, 0, min(200, per), o.workers); err != nil {
			return err
		}
	}
	samples := make([][]buildSample, len(ps))
	for r := range o.buildRounds {
		for k := range ps {
			j := (k + r) % len(ps)
			s, err := b.runPipeline(ps[j], r*per, per, o.workers)
			if err != nil {
				return err
			}
			samples[j] = append(samples[j], s)
			fmt.Printf("round %d  %-52s %8s msg/s  CPU %7.1f µs/msg  %.2f cores\n", r+1, ps[j].name, harness.Thousands(s.rate), us(s.cpu), s.cores)
		}
	}

	med := make([]buildSample, len(ps))
	fmt.Printf("\n| pipeline | median msg/s | CPU µs per message | msg/s per round | cores busy | message bytes |\n|---|---:|---:|---|---:|---:|\n")
	for j, p := range ps {
		ss := samples[j]
		med[j] = buildSample{
			rate:  harness.Median(mapf(ss, func(s buildSample) float64 { return s.rate })),
			cpu:   time.Duration(harness.Median(mapf(ss, func(s buildSample) float64 { return float64(s.cpu) }))),
			cores: harness.Median(mapf(ss, func(s buildSample) float64 { return s.cores })),
			bytes: ss[0].bytes,
		}
		rates := strings.Join(mapf(ss, func(s buildSample) string { return harness.Thousands(s.rate) }), ", ")
		bytesCol := "–"
		if p.build {
			bytesCol = harness.Thousands(float64(med[j].bytes))
		}
		fmt.Printf("| %s | %s | %.1f | %s | %.2f | %s |\n", p.name, harness.Thousands(med[j].rate), us(med[j].cpu), rates, med[j].cores, bytesCol)
	}

	// Stage costs as differences of the medians' CPU per message.
	d := func(a, b int) float64 { return us(med[a].cpu) - us(med[b].cpu) }
	fmt.Printf("\nCPU per message by stage (differences of the medians above):\n\n| stage | CPU µs per message |\n|---|---:|\n")
	fmt.Printf("| render (HTML + subject) | %.1f |\n", us(med[0].cpu))
	fmt.Printf("| build with a text template (text render, QP, headers) | %.1f |\n", d(2, 0))
	fmt.Printf("| deriving the text part per message (HTMLToText), extra | %.1f |\n", d(1, 2))
	fmt.Printf("| DKIM RSA 2048 signature | %.1f |\n", d(4, 2))
	fmt.Printf("| DKIM Ed25519 signature | %.1f |\n", d(5, 2))
	fmt.Printf("| DKIM Ed25519 + RSA signatures | %.1f |\n", d(6, 2))
	rsaOp, edOp, err := keyOps()
	if err != nil {
		return err
	}
	fmt.Printf("| of which the RSA 2048 private-key operation alone (crypto/rsa on a SHA-256 digest, one goroutine) | %.1f |\n", us(rsaOp))
	fmt.Printf("| of which the Ed25519 operation alone (crypto/ed25519 on a SHA-256 digest, one goroutine) | %.1f |\n", us(edOp))
	fmt.Printf("\nRSA-signed messages per second, text template vs text derived per message: %.2f×\n", med[4].rate/med[3].rate)
	return nil
}

// keyOps measures the CPU time of the bare signature operations DKIM makes
// on the header hash: PKCS #1 v1.5 with RSA 2048, and Ed25519 (RFC 8463 signs
// the SHA-256 digest). The rest of a DKIM signature's cost is canonicalizing
// and hashing the message.
func keyOps() (rsaOp, edOp time.Duration, err error) {
	rk, err := rsa.GenerateKey(rand.Reader, 2048)
	if err != nil {
		return 0, 0, err
	}
	_, ek, err := ed25519.GenerateKey(rand.Reader)
	if err != nil {
		return 0, 0, err
	}
	digest := sha256.Sum256([]byte("DKIM-Signature: v=1; a=rsa-sha256; d=cafe-zoe.example.com"))
	const nRSA, nEd = 300, 3000
	c0 := harness.SelfCPU()
	for range nRSA {
		if _, err := rsa.SignPKCS1v15(rand.Reader, rk, crypto.SHA256, digest[:]); err != nil {
			return 0, 0, err
		}
	}
	c1 := harness.SelfCPU()
	for range nEd {
		_ = ed25519.Sign(ek, digest[:])
	}
	c2 := harness.SelfCPU()
	return (c1 - c0) / nRSA, (c2 - c1) / nEd, nil
}

// --- SMTP ---

type smtpTarget struct {
	name    string
	prepare func() error // before the clock starts
	send    func(worker int, msg []byte, rcpt string) error
	finish  func()
}

type smtpSample struct {
	rate      float64
	sent      int64
	sinkGot   int64         // messages the sink counted during the run
	clientCPU time.Duration // per message
	sinkCPU   time.Duration // per message
}

func (b *bench) runSMTP(o options) error {
	// The messages: RSA-signed, text derived, as herald builds them today.
	msgs := make([][]byte, o.messages)
	rcpts := make([]string, o.messages)
	var total int
	for i := range msgs {
		var raw []byte
		var err error
		if o.small {
			raw, err = b.smallMessage(i)
		} else {
			raw, err = b.message(pipeline{build: true, keys: []*delivery.DKIMKey{b.rsa}}, i)
		}
		if err != nil {
			return err
		}
		msgs[i], rcpts[i] = raw, b.recips[i%len(b.recips)].email
		total += len(raw)
	}
	avg := total / len(msgs)

	sink, err := startSink()
	if err != nil {
		return err
	}
	defer sink.Stop()
	host, portText, _ := net.SplitHostPort(sink.Addr)
	port, _ := strconv.Atoi(portText)
	cfg := delivery.SMTPConfig{Host: host, Port: port, TLS: delivery.TLSNone}
	from := b.from.Address

	fmt.Printf("\n## SMTP into a loopback sink\n\nsink: go-smtp %s server in its own process (pid %d) at %s, accepting everything, discarding the data\n",
		goSMTPVersion(), sink.Cmd.Process.Pid, sink.Addr)
	kind := "20 KB template"
	if o.small {
		kind = "small (-small)"
	}
	fmt.Printf("%d senders and %d connections per target; %d distinct RSA-signed messages (%s) of %s bytes on average, one recipient each; warm-up %s per target, %d rounds of %s\n",
		o.conns, o.conns, len(msgs), kind, harness.Thousands(float64(avg)), o.warmup, o.rounds, o.duration)

	// The commands each target sends for a message on a connection already
	// used once, read from the client's protocol trace.
	if err := b.showCommands(cfg, sink.Addr, from, msgs[0], rcpts[0]); err != nil {
		return err
	}

	ctx := context.Background()
	pool := delivery.NewSMTPPool(cfg, o.conns)
	defer pool.Close()
	targets := []*smtpTarget{
		{name: "pool", prepare: func() error { return nil }, finish: func() {},
			send: func(_ int, msg []byte, rcpt string) error { return pool.Send(ctx, from, []string{rcpt}, msg) }},
		plainTarget("plain", sink.Addr, from, o.conns, false),
	}
	if o.explain {
		targets = append(targets, plainTarget("plain+RSET", sink.Addr, from, o.conns, true))
	}
	if o.only != "" {
		want := strings.Split(o.only, ",")
		targets = slices.DeleteFunc(targets, func(t *smtpTarget) bool { return !slices.Contains(want, t.name) })
		if len(targets) == 0 {
			return fmt.Errorf("-targets %q names no target", o.only)
		}
	}
	plainIdx := slices.IndexFunc(targets, func(t *smtpTarget) bool { return t.name == "plain" })

	if o.warmup > 0 {
		for _, t := range targets {
			if _, err := runSMTPTarget(t, sink, o.conns, o.warmup, msgs, rcpts); err != nil {
				return fmt.Errorf("warm-up %s: %w", t.name, err)
			}
		}
	}
	samples := make([][]smtpSample, len(targets))
	for r := range o.rounds {
		for k := range targets {
			j := (k + r) % len(targets)
			s, err := runSMTPTarget(targets[j], sink, o.conns, o.duration, msgs, rcpts)
			if err != nil {
				return fmt.Errorf("round %d, %s: %w", r+1, targets[j].name, err)
			}
			samples[j] = append(samples[j], s)
			fmt.Printf("round %d  %-11s %8s msg/s  %6.1f MB/s  client CPU %5.1f µs/msg  sink CPU %5.1f µs/msg  sink +%d = sent %d\n",
				r+1, targets[j].name, harness.Thousands(s.rate), s.rate*float64(avg)/1e6, us(s.clientCPU), us(s.sinkCPU), s.sinkGot, s.sent)
		}
	}
	if st := pool.Stats(); slices.ContainsFunc(targets, func(t *smtpTarget) bool { return t.name == "pool" }) {
		fmt.Printf("pool: %d connections dialled in the whole run (%d open at the end)\n", st.Dials, st.Open)
	}

	bothCPU := func(s smtpSample) float64 { return us(s.clientCPU + s.sinkCPU) }
	plainMed, plainCPU := math.NaN(), math.NaN() // without the plain target the ratios print as NaN
	if plainIdx >= 0 {
		plainMed = harness.Median(mapf(samples[plainIdx], func(s smtpSample) float64 { return s.rate }))
		plainCPU = harness.Median(mapf(samples[plainIdx], bothCPU))
	}
	fmt.Printf("\n| target | median msg/s | ratio to plain | msg/s per round | MB/s | client CPU µs/msg | sink CPU µs/msg | client+sink CPU µs/msg (ratio to plain) | sink count = sent |\n|---|---:|---:|---|---:|---:|---:|---:|---|\n")
	for j, t := range targets {
		ss := samples[j]
		m := harness.Median(mapf(ss, func(s smtpSample) float64 { return s.rate }))
		var sent int64
		for _, s := range ss {
			sent += s.sent
		}
		both := harness.Median(mapf(ss, bothCPU))
		fmt.Printf("| %s | %s | %.0f %% | %s | %.1f | %.1f | %.1f | %.1f (%.0f %%) | yes (%s messages) |\n", t.name, harness.Thousands(m), 100*m/plainMed,
			strings.Join(mapf(ss, func(s smtpSample) string { return harness.Thousands(s.rate) }), ", "), m*float64(avg)/1e6,
			harness.Median(mapf(ss, func(s smtpSample) float64 { return us(s.clientCPU) })),
			harness.Median(mapf(ss, func(s smtpSample) float64 { return us(s.sinkCPU) })),
			both, 100*both/plainCPU, harness.Thousands(float64(sent)))
	}
	fmt.Println()
	for j := range targets {
		if j == plainIdx || plainIdx < 0 {
			continue
		}
		var rs []string
		for r := range samples[j] {
			rs = append(rs, fmt.Sprintf("%.0f %%", 100*samples[j][r].rate/samples[plainIdx][r].rate))
		}
		fmt.Printf("%s / plain, per round: %s\n", targets[j].name, strings.Join(rs, ", "))
	}
	return nil
}

// plainTarget is -c raw go-smtp clients, one connection each, dialled and
// greeted before the clock starts. With rset, every message starts with
// RSET, after which go-smtp's client says EHLO again before MAIL.
func plainTarget(name, addr, from string, conns int, rset bool) *smtpTarget {
	clients := make([]*smtp.Client, conns)
	t := &smtpTarget{name: name}
	t.prepare = func() error {
		for i := range clients {
			c, err := smtp.Dial(addr)
			if err != nil {
				return err
			}
			if err := c.Hello("localhost"); err != nil {
				return err
			}
			clients[i] = c
		}
		return nil
	}
	t.send = func(w int, msg []byte, rcpt string) error {
		return plainSend(clients[w], from, rcpt, msg, rset)
	}
	t.finish = func() {
		for i, c := range clients {
			if c != nil {
				_ = c.Quit()
				clients[i] = nil
			}
		}
	}
	return t
}

func plainSend(c *smtp.Client, from, rcpt string, msg []byte, rset bool) error {
	if rset {
		if err := c.Reset(); err != nil {
			return err
		}
	}
	if err := c.Mail(from, &smtp.MailOptions{Size: int64(len(msg))}); err != nil {
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

// runSMTPTarget runs t with conns senders for d and checks the sink's count.
func runSMTPTarget(t *smtpTarget, sink *sinkProc, conns int, d time.Duration, msgs [][]byte, rcpts []string) (smtpSample, error) {
	if err := t.prepare(); err != nil {
		t.finish()
		return smtpSample{}, err
	}
	defer t.finish()
	runtime.GC()
	n0, sinkCPU0, err := sink.stats()
	if err != nil {
		return smtpSample{}, err
	}
	var next, sent atomic.Int64
	var firstErr error
	var errOnce sync.Once
	var stop atomic.Bool
	var wg sync.WaitGroup
	cpu0, t0 := harness.SelfCPU(), time.Now()
	deadline := t0.Add(d)
	for w := range conns {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for !stop.Load() && time.Now().Before(deadline) {
				i := int(next.Add(1) - 1)
				if err := t.send(w, msgs[i%len(msgs)], rcpts[i%len(rcpts)]); err != nil {
					errOnce.Do(func() { firstErr = err })
					stop.Store(true)
					return
				}
				sent.Add(1)
			}
		}()
	}
	wg.Wait()
	wall, cpu := time.Since(t0), harness.SelfCPU()-cpu0
	n1, sinkCPU1, err := sink.stats()
	if err != nil {
		return smtpSample{}, err
	}
	if firstErr != nil {
		return smtpSample{}, firstErr
	}
	s := smtpSample{sent: sent.Load(), sinkGot: n1 - n0}
	if n1-n0 != s.sent {
		return smtpSample{}, fmt.Errorf("%w: sink +%d, sent %d", errSinkCount, n1-n0, s.sent)
	}
	if s.sent == 0 {
		return smtpSample{}, errors.New("no message sent")
	}
	s.rate = float64(s.sent) / wall.Seconds()
	s.clientCPU = cpu / time.Duration(s.sent)
	s.sinkCPU = (sinkCPU1 - sinkCPU0) / time.Duration(s.sent)
	return s, nil
}

// commandRE matches the client's command lines in a go-smtp protocol trace
// (the trace holds both directions and the message; replies start with a
// digit, and a message line starting with "." is dot-stuffed).
var commandRE = regexp.MustCompile(`^(EHLO|HELO|MAIL|RCPT|DATA|RSET|NOOP|QUIT)\b|^\.$`)

// showCommands sends two messages over one connection per target and prints
// the commands of the second.
func (b *bench) showCommands(cfg delivery.SMTPConfig, addr, from string, msg []byte, rcpt string) error {
	var trace lockedBuffer
	cfg.Debug = &trace
	p := delivery.NewSMTPPool(cfg, 1)
	var poolCmds []string
	var poolTrips int
	for i := range 2 {
		mark := trace.Len()
		if err := p.Send(context.Background(), from, []string{rcpt}, msg); err != nil {
			p.Close()
			return err
		}
		if i == 1 {
			poolCmds, poolTrips = commands(trace.From(mark)), roundTrips(trace.From(mark))
		}
	}
	p.Close()
	if st := p.Stats(); st.Dials != 1 {
		return fmt.Errorf("the pool dialled %d times for two messages, want 1", st.Dials)
	}

	plain := func(rset bool) ([]string, int, error) {
		var trace lockedBuffer
		c, err := smtp.Dial(addr)
		if err != nil {
			return nil, 0, err
		}
		defer c.Close()
		c.DebugWriter = &trace
		if err := c.Hello("localhost"); err != nil {
			return nil, 0, err
		}
		var cmds []string
		var trips int
		for i := range 2 {
			mark := trace.Len()
			if err := plainSend(c, from, rcpt, msg, rset); err != nil {
				return nil, 0, err
			}
			if i == 1 {
				cmds, trips = commands(trace.From(mark)), roundTrips(trace.From(mark))
			}
		}
		return cmds, trips, c.Quit()
	}
	plainCmds, plainTrips, err := plain(false)
	if err != nil {
		return err
	}
	rsetCmds, rsetTrips, err := plain(true)
	if err != nil {
		return err
	}
	fmt.Printf("commands per message on a reused connection (\".\" ends the data; a round trip is what the client writes before it waits for replies):\n")
	fmt.Printf("  pool:       %s (%d round trips; PIPELINING when the server offers it)\n", strings.Join(poolCmds, " "), poolTrips)
	fmt.Printf("  plain:      %s (%d round trips)\n", strings.Join(plainCmds, " "), plainTrips)
	fmt.Printf("  plain+RSET: %s (%d round trips)\n\n", strings.Join(rsetCmds, " "), rsetTrips)
	return nil
}

// replyRE matches a server reply line in a trace.
var replyRE = regexp.MustCompile(`^[2-5][0-9][0-9]([ -]|$)`)

// roundTrips counts the turns of a trace: each run of client lines
// followed by the server's replies is one round trip.
func roundTrips(trace []byte) int {
	n, client := 0, false
	for _, line := range strings.Split(string(trace), "\r\n") {
		if line == "" {
			continue
		}
		if replyRE.MatchString(line) {
			if client {
				n++
			}
			client = false
		} else {
			client = true
		}
	}
	return n
}

func commands(trace []byte) []string {
	var out []string
	for _, line := range strings.Split(string(trace), "\r\n") {
		if m := commandRE.FindString(line); m != "" {
			out = append(out, m)
		}
	}
	return out
}

type lockedBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (l *lockedBuffer) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Write(p)
}

func (l *lockedBuffer) Len() int {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Len()
}

func (l *lockedBuffer) From(off int) []byte {
	l.mu.Lock()
	defer l.mu.Unlock()
	return slices.Clone(l.b.Bytes()[off:])
}

// --- helpers ---

func mapf[T, U any](xs []T, f func(T) U) []U {
	out := make([]U, len(xs))
	for i, x := range xs {
		out[i] = f(x)
	}
	return out
}

func us(d time.Duration) float64 { return float64(d) / float64(time.Microsecond) }

func cpuModel() string {
	out, err := exec.Command("lscpu").Output()
	if err == nil {
		for _, line := range strings.Split(string(out), "\n") {
			if k, v, ok := strings.Cut(line, ":"); ok && strings.TrimSpace(k) == "Model name" {
				return strings.TrimSpace(v)
			}
		}
	}
	return "unknown model"
}

// goSMTPVersion is the go-smtp module version built into this binary.
func goSMTPVersion() string {
	if bi, ok := debug.ReadBuildInfo(); ok {
		for _, d := range bi.Deps {
			if d.Path == "github.com/emersion/go-smtp" {
				return d.Version
			}
		}
	}
	return ""
}
