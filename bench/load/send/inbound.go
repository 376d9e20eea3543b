package send

// `load inbound`: how fast herald takes bounce reports by
// mail, and what it holds in memory meanwhile.
//
// The database holds the account, its verified sender, its group and a
// contact type of -contacts contacts, all made through herald's API. A fresh `herald serve` (mail to the
// sink, HERALD_INBOUND_ADDR on a loopback port) sends one single send to
// them and completes it (untimed). Then -contacts delivery status
// notifications, one per message, shaped as Postfix writes them
// (multipart/report with message/delivery-status and the returned
// headers; about 2 KB each, built in memory beforehand), go to each
// message's VERP return path (the MAIL FROM the sink saw for its recipient) over -conns SMTP connections (go-smtp's
// client, null sender as DSNs have). Herald answers DATA only once the
// report is applied, so the clock stops at the last 250; the run then
// checks that the send counts -contacts bounces (the API's send details)
// and that every address is on the suppression list (one read-only COUNT
// on the database: the API does not list suppressions).

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/emersion/go-smtp"

	"herald/bench/harness"
)

const benchBounceAddress = "bounces@cafe-zoe.example.com"

func runInbound(ctx context.Context, o options) error {
	if _, err := os.Stat(o.herald); err != nil {
		return fmt.Errorf("%s is missing: build it first (make bench-inbound builds bin/herald)", o.herald)
	}
	dir, cleanup, err := begin(o, "herald inbound bounce report benchmark", "herald-inbound-")
	if err != nil {
		return err
	}
	defer cleanup()
	fmt.Printf("%s DSNs over %d SMTP connections, one per message of a send to %s contacts\n\n",
		harness.Thousands(float64(o.contacts)), o.conns, harness.Thousands(float64(o.contacts)))
	dsn, drop, err := database(o, dir)
	if err != nil {
		return err
	}
	defer drop()
	b := &bench{o: o, dir: dir, dsn: dsn, bin: o.herald, pgPort: localPostgresPort(o.database)}
	f, err := b.prepare(ctx, o.contacts, false)
	if err != nil {
		return fmt.Errorf("prepare the database: %w", err)
	}
	sink, err := startSink("-return-paths")
	if err != nil {
		return err
	}
	defer sink.Stop()
	b.sink = sink
	inAddr, err := harness.FreeAddr()
	if err != nil {
		return err
	}
	h, err := b.startHerald(ctx, "inbound", "smtp://"+sink.Addr+"?tls=none",
		"HERALD_INBOUND_ADDR="+inAddr, "HERALD_BOUNCE_ADDRESS="+benchBounceAddress)
	if err != nil {
		return err
	}
	defer h.proc.Stop()
	fail := func(err error) error { return fmt.Errorf("%w; herald log: %s", err, h.proc.Tail()) }

	t0 := time.Now()
	utr, err := b.createSend(ctx, h, "Inbound bench", f.audience)
	if err != nil {
		return fail(err)
	}
	for {
		d, err := b.details(ctx, h, utr)
		if err != nil {
			return fail(err)
		}
		if d.Status == 3 {
			break
		}
		if time.Since(t0) > 10*time.Minute {
			return fail(fmt.Errorf("the send did not complete in 10 minutes (delivered %d)", d.Delivered))
		}
		time.Sleep(200 * time.Millisecond)
	}
	fmt.Printf("send of %s messages completed (untimed) in %.1f s\n", harness.Thousands(float64(o.contacts)), time.Since(t0).Seconds())

	pathsFile := filepath.Join(dir, "return-paths.txt")
	if err := sink.paths(pathsFile); err != nil {
		return err
	}
	reports, err := buildDSNs(pathsFile, o.contacts)
	if err != nil {
		return err
	}
	var size int
	for _, r := range reports {
		size += len(r.body)
	}
	fmt.Printf("%s DSNs built, %.1f KB each on average\n\n", harness.Thousands(float64(len(reports))), float64(size)/float64(len(reports))/1024)

	pid := h.pid()
	_, hwm0, _ := harness.ProcMem(pid)
	load := harness.LoadAvg()
	sampler := sampleRSS(pid, o.sample)
	cpu0, start := harness.ProcCPU(pid), time.Now()
	var next atomic.Int64
	var wg sync.WaitGroup
	errs := make(chan error, o.conns)
	for range o.conns {
		wg.Add(1)
		go func() {
			defer wg.Done()
			errs <- postReports(inAddr, reports, &next)
		}()
	}
	wg.Wait()
	elapsed := time.Since(start)
	cpu := harness.ProcCPU(pid) - cpu0
	samples, sampled := sampler.end()
	_, hwm, _ := harness.ProcMem(pid)
	close(errs)
	for err := range errs {
		if err != nil {
			return fail(err)
		}
	}
	d, err := b.details(ctx, h, utr)
	if err != nil {
		return fail(err)
	}
	suppressed, err := countSuppressed(ctx, dsn, f.keys.UserID)
	if err != nil {
		return err
	}
	n := float64(len(reports))
	fmt.Printf("| reports | conns | seconds | DSNs/s | herald CPU per DSN | peak RSS during | VmHWM before / after | load |\n|---:|---:|---:|---:|---:|---:|---:|---|\n")
	fmt.Printf("| %s | %d | %.2f | %s | %.0f µs | %.1f MiB (%d samples) | %.1f / %.1f MiB | %s |\n\n",
		harness.Thousands(n), o.conns, elapsed.Seconds(), harness.Thousands(n/elapsed.Seconds()), float64(cpu.Microseconds())/n,
		float64(sampled)/(1<<20), samples, float64(hwm0)/(1<<20), float64(hwm)/(1<<20), load)
	fmt.Printf("send after the reports: delivered %d, bounces %d; suppressed addresses %d\n", d.Delivered, d.Bounces, suppressed)
	if d.Bounces != int64(len(reports)) || suppressed != int64(len(reports)) {
		return fail(fmt.Errorf("want %d bounces and %d suppressed addresses", len(reports), len(reports)))
	}
	return nil
}

// inboundReport is one DSN and the return path it goes to.
type inboundReport struct {
	rcpt string
	body []byte
}

// buildDSNs reads the return path of each recipient the sink kept and
// writes, for each message, the DSN Postfix would write about it.
func buildDSNs(pathsFile string, n int) ([]inboundReport, error) {
	data, err := os.ReadFile(pathsFile)
	if err != nil {
		return nil, err
	}
	type sent struct{ Email, rp string }
	var rows []sent
	for _, line := range strings.Split(strings.TrimSpace(string(data)), "\n") {
		rcpt, rp, ok := strings.Cut(line, " ")
		if !ok || !strings.Contains(rp, "@") {
			return nil, fmt.Errorf("%s: no return path in %q", pathsFile, line)
		}
		rows = append(rows, sent{rcpt, rp})
	}
	if len(rows) != n {
		return nil, fmt.Errorf("the sink kept %d return paths, want %d", len(rows), n)
	}
	out := make([]inboundReport, 0, len(rows))
	for i, m := range rows {
		rp := m.rp
		var b bytes.Buffer
		fmt.Fprintf(&b, "Return-Path: <>\r\nFrom: MAILER-DAEMON@relay.cafe-zoe.example.com (Mail Delivery System)\r\n"+
			"Subject: Undelivered Mail Returned to Sender\r\nTo: %s\r\nAuto-Submitted: auto-replied\r\nMIME-Version: 1.0\r\n"+
			"Content-Type: multipart/report; report-type=delivery-status; boundary=\"B%d\"\r\n"+
			"Message-Id: <dsn%d@relay.cafe-zoe.example.com>\r\n\r\n"+
			"This is a MIME-encapsulated message.\r\n\r\n--B%d\r\nContent-Description: Notification\r\nContent-Type: text/plain; charset=us-ascii\r\n\r\n"+
			"This is the mail system at host relay.cafe-zoe.example.com.\r\n\r\nI'm sorry to have to inform you that your message could not\r\n"+
			"be delivered to one or more recipients. It's attached below.\r\n\r\n<%s>: host mx.example.com[192.0.2.1] said: 550 5.1.1\r\n"+
			"    <%s>: Recipient address rejected: User unknown in virtual mailbox table\r\n    (in reply to RCPT TO command)\r\n\r\n"+
			"--B%d\r\nContent-Description: Delivery report\r\nContent-Type: message/delivery-status\r\n\r\n"+
			"Reporting-MTA: dns; relay.cafe-zoe.example.com\r\nX-Postfix-Queue-ID: 4Q%dX\r\nX-Postfix-Sender: rfc822; %s\r\n"+
			"Arrival-Date: Tue, 24 Nov 2026 10:00:00 +0000 (UTC)\r\n\r\nFinal-Recipient: rfc822; %s\r\nOriginal-Recipient: rfc822;%s\r\n"+
			"Action: failed\r\nStatus: 5.1.1\r\nRemote-MTA: dns; mx.example.com\r\n"+
			"Diagnostic-Code: smtp; 550 5.1.1 <%s>: Recipient address rejected: User unknown in virtual mailbox table\r\n\r\n"+
			"--B%d\r\nContent-Description: Undelivered Message Headers\r\nContent-Type: text/rfc822-headers\r\n\r\n"+
			"Return-Path: <%s>\r\nFrom: =?utf-8?q?Caf=C3=A9_Zo=C3=AB?= <hello@news.cafe-zoe.example.com>\r\nTo: %s\r\n"+
			"Subject: Our November news\r\nDate: Tue, 24 Nov 2026 09:59:58 +0000\r\nMIME-Version: 1.0\r\n"+
			"Content-Type: multipart/alternative; boundary=\"alt\"\r\n\r\n--B%d--\r\n",
			rp, i, i, i, m.Email, m.Email, i, i, rp, m.Email, m.Email, m.Email, i, rp, m.Email, i)
		out = append(out, inboundReport{rcpt: rp, body: b.Bytes()})
	}
	return out, nil
}

// postReports sends reports over one SMTP connection, taking the next one
// from next until none is left.
func postReports(addr string, reports []inboundReport, next *atomic.Int64) error {
	c, err := smtp.Dial(addr)
	if err != nil {
		return err
	}
	defer c.Close()
	if err := c.Hello("relay.cafe-zoe.example.com"); err != nil {
		return err
	}
	for {
		i := int(next.Add(1)) - 1
		if i >= len(reports) {
			return c.Quit()
		}
		r := reports[i]
		if err := c.Mail("", nil); err != nil {
			return err
		}
		if err := c.Rcpt(r.rcpt, nil); err != nil {
			return err
		}
		w, err := c.Data()
		if err != nil {
			return err
		}
		if _, err := w.Write(r.body); err != nil {
			return err
		}
		if err := w.Close(); err != nil {
			return fmt.Errorf("report %d: %w", i, err)
		}
	}
}

// countSuppressed is the account's suppressed addresses: a read-only
// check of what herald did (no API lists them).
func countSuppressed(ctx context.Context, dsn string, account int64) (int64, error) {
	db, err := harness.OpenSQL(dsn)
	if err != nil {
		return 0, err
	}
	defer db.Close()
	var n int64
	q := "SELECT COUNT(*) FROM suppressions WHERE user_id = $1"
	if !strings.HasPrefix(dsn, "postgres") {
		q = "SELECT COUNT(*) FROM suppressions WHERE user_id = ?"
	}
	err = db.QueryRowContext(ctx, q, account).Scan(&n)
	return n, err
}
