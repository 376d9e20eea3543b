package service_test

import (
	"context"
	"fmt"
	"net"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/emersion/go-smtp"

	"herald/dbtest"
	"herald/delivery"
	"herald/models"
	"herald/service"
	"herald/service/servicetest"
	"herald/smtptest"
)

// untiedWhy counts the untied reports by why.
func untiedWhy(t *testing.T, svc *service.Service) map[string]int {
	t.Helper()
	var rows []models.UntiedReport
	if err := svc.DB.R.Find(&rows).Error; err != nil {
		t.Fatal(err)
	}
	out := map[string]int{}
	for _, r := range rows {
		out[r.Why]++
	}
	return out
}

// untiedRows are the untied reports, oldest first.
func untiedRows(t *testing.T, svc *service.Service) []models.UntiedReport {
	t.Helper()
	var rows []models.UntiedReport
	if err := svc.DB.R.Order("id").Find(&rows).Error; err != nil {
		t.Fatal(err)
	}
	return rows
}

// startFeedbackInbound serves herald's inbound SMTP server over f's
// service on loopback, as serve wires it; it returns its address.
func startFeedbackInbound(t *testing.T, svc *service.Service) string {
	t.Helper()
	in, err := delivery.NewInbound(delivery.InboundConfig{Domain: "herald.test", VERP: svc.Bounces.VERP, Reports: svc.Feedback})
	if err != nil {
		t.Fatal(err)
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() { done <- in.Serve(ln) }()
	t.Cleanup(func() {
		if err := in.Close(); err != nil {
			t.Error(err)
		}
		if err := <-done; err != nil {
			t.Errorf("Serve: %v", err)
		}
	})
	return ln.Addr().String()
}

// mailReport hands raw (LF lines) to the inbound server from the null
// sender, as a relay returning a report does; the error of the step that
// failed.
func mailReport(t *testing.T, addr, rcpt, raw string) error {
	t.Helper()
	c, err := smtp.Dial(addr)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	if err := c.Mail("", nil); err != nil {
		return err
	}
	if err := c.Rcpt(rcpt, nil); err != nil {
		return err
	}
	w, err := c.Data()
	if err != nil {
		return err
	}
	if _, err := w.Write([]byte(strings.ReplaceAll(raw, "\n", "\r\n"))); err != nil {
		return err
	}
	return w.Close()
}

// reportDSN is a relay's DSN saying rcpt does not exist, quoting header
// (the returned message's, "" for none).
func reportDSN(to, rcpt, header string) string {
	s := fmt.Sprintf(`From: Mail Delivery System <MAILER-DAEMON@mx.example.com>
To: %s
Subject: Undelivered Mail Returned to Sender
MIME-Version: 1.0
Content-Type: multipart/report; report-type=delivery-status; boundary="B"

--B
Content-Type: text/plain

<%[2]s>: host mx.example.com said: 550 5.1.1 User unknown

--B
Content-Type: message/delivery-status

Reporting-MTA: dns; mx.example.com

Final-Recipient: rfc822; %[2]s
Action: failed
Status: 5.1.1
Diagnostic-Code: smtp; 550 5.1.1 <%[2]s>: User unknown
`, to, rcpt)
	if header != "" {
		s += "\n--B\nContent-Type: text/rfc822-headers\n\n" + header
	}
	return s + "\n--B--\n"
}

// reportARF is a feedback loop's complaint about rcpt, quoting header (""
// for none).
func reportARF(to, rcpt, header string) string {
	s := fmt.Sprintf(`From: feedback@fbl.example.net
To: %s
Subject: FW: Hello
MIME-Version: 1.0
Content-Type: multipart/report; report-type=feedback-report; boundary="F"

--F
Content-Type: text/plain

This is an email abuse report.

--F
Content-Type: message/feedback-report

Feedback-Type: abuse
User-Agent: FBL/1.0
Version: 1
Original-Rcpt-To: %s
`, to, rcpt)
	if header != "" {
		s += "\n--F\nContent-Type: text/rfc822-headers\n\n" + header
	}
	return s + "\n--F--\n"
}

// reportText is Postfix's plain-text bounce (no DSN part) about rcpt.
func reportText(to, rcpt string) string {
	return fmt.Sprintf(`From: MAILER-DAEMON@mx.example.com (Mail Delivery System)
To: %s
Subject: Undelivered Mail Returned to Sender

This is the mail system at host mx.example.com.

I'm sorry to have to inform you that your message could not
be delivered to one or more recipients.

<%s>: host mx.example.com said: 550 5.1.1 User unknown (in reply to RCPT TO command)
`, to, rcpt)
}

// headerOf is the header section of a captured message (LF lines).
func headerOf(m smtptest.Message) string {
	h, _, _ := strings.Cut(strings.ReplaceAll(string(m.Data), "\r\n", "\n"), "\n\n")
	return h + "\n"
}

// TestInboundReportsNeedATie: through the real inbound SMTP server, a DSN,
// a plain-text bounce and an ARF report sent to the plain bounce address
// (no VERP token) naming another account's contacts are taken (250) and
// change nothing; neither does a report quoting a forged Message-ID with
// the send's real X-Herald-Send, nor a forged unsubscribe token. Each is
// kept as one untied report with why, source and sender IP. Reports tied
// by a return path's token or by a Message-ID of herald's still count.
func TestInboundReportsNeedATie(t *testing.T) {
	t.Parallel()
	a := servicetest.NewSendFixture(t, true)
	b := a.SecondAccount("b@herald.test")
	typeA := a.ContactType("Customers", "ann@example.com", "shared@example.com")
	typeB := b.ContactType("Customers", "c0@b.example.com", "c1@b.example.com", "shared@example.com")
	sa := a.Create(a.Input("A news", []string{"contacts_" + strconv.FormatInt(typeA, 10)}, nil))
	a.WaitStatus(sa.Utr, models.SendCompleted, 20*time.Second)
	sb := b.Create(b.Input("B news", []string{"contacts_" + strconv.FormatInt(typeB, 10)}, nil))
	b.WaitStatus(sb.Utr, models.SendCompleted, 20*time.Second)
	addr := startFeedbackInbound(t, a.Svc)
	v, err := a.Svc.Bounces.VERP(a.Ctx)
	if err != nil {
		t.Fatal(err)
	}
	plain := v.Address()
	c0, c1 := b.SentTo(sb.Utr, "c0@b.example.com"), b.SentTo(sb.Utr, "c1@b.example.com")

	nothingChanged := func(when string) {
		t.Helper()
		for _, f := range []*servicetest.SendFixture{a, b} {
			if s := f.Suppressed(); len(s) != 0 {
				t.Fatalf("%s: suppressed %v", when, s)
			}
			for _, e := range []string{"ann@example.com", "shared@example.com", "c0@b.example.com", "c1@b.example.com"} {
				if f.Unsubscribed(e) {
					t.Fatalf("%s: %s unsubscribed", when, e)
				}
			}
		}
		if got := b.Get(sb.Utr); got.Bounces != 0 || got.SpamReports != 0 || got.Unsubscribes != 0 {
			t.Fatalf("%s: B's send counted bounces %d spam %d unsubscribes %d", when, got.Bounces, got.SpamReports, got.Unsubscribes)
		}
	}

	// Reports to the plain bounce address, naming no message of herald's.
	forgedMID := "b" + strings.Repeat("a", 24) + "@other.example.net"
	for _, c := range []struct {
		name, rcpt, raw, source, why, email string
	}{
		{"dsn", plain, reportDSN(plain, "c0@b.example.com", ""), "dsn", service.UntiedNoToken, "c0@b.example.com"},
		{"text", plain, reportText(plain, "c0@b.example.com"), "text", service.UntiedNoToken, "c0@b.example.com"},
		{"arf", plain, reportARF(plain, "c0@b.example.com", ""), "arf", service.UntiedNoToken, "c0@b.example.com"},
		// In two accounts: the old fallback made it a global unsubscriber
		// of the account that mailed it last.
		{"arf shared", plain, reportARF(plain, "shared@example.com", ""), "arf", service.UntiedNoToken, "shared@example.com"},
		// The returned header of B's real message to c1, its Message-ID
		// forged: its X-Herald-Send and address name nothing alone.
		{"forged message-id", plain, reportARF(plain, "c1@b.example.com",
			strings.Replace(headerOf(c1), c1.Header().Get("Message-Id"), "<"+forgedMID+">", 1)), "arf", service.UntiedMessageID, "c1@b.example.com"},
		{"forged message-id dsn", plain, reportDSN(plain, "c1@b.example.com", "Message-ID: <"+forgedMID+">\nX-Herald-Send: "+sb.Utr+"\nTo: c1@b.example.com\n"),
			"dsn", service.UntiedMessageID, "c1@b.example.com"},
		{"forged unsubscribe", "bounces+u" + strings.Repeat("a", 24) + "@" + v.Domain(),
			"From: c1@b.example.com\nTo: x\nSubject: unsubscribe\n\nunsubscribe\n", "mailto", service.UntiedTokenForged, "c1@b.example.com"},
	} {
		before := len(untiedRows(t, a.Svc))
		if err := mailReport(t, addr, c.rcpt, c.raw); err != nil {
			t.Fatalf("%s: %v, want 250", c.name, err)
		}
		nothingChanged(c.name)
		rows := untiedRows(t, a.Svc)
		if len(rows) != before+1 {
			t.Fatalf("%s: %d untied reports, want %d", c.name, len(rows), before+1)
		}
		r := rows[len(rows)-1]
		if r.Source != c.source || r.Why != c.why || r.Email != c.email || r.RemoteIP != "127.0.0.1" || r.CreatedAt.IsZero() {
			t.Fatalf("%s: untied report %+v", c.name, r)
		}
	}

	// Tied: a DSN to c0's return path (from its returned header too) and
	// an ARF report to the plain address quoting c1's real Message-ID. A
	// complaint is about its own message: the address it names besides
	// (c0, another recipient of the send) does not move it to c0.
	if err := mailReport(t, addr, c0.From, reportDSN(c0.From, "c0@b.example.com", headerOf(c0))); err != nil {
		t.Fatal(err)
	}
	if err := mailReport(t, addr, plain, reportARF(plain, "c0@b.example.com", headerOf(c1))); err != nil {
		t.Fatal(err)
	}
	if s := b.Suppressed(); len(s) != 1 || s["c0@b.example.com"] == nil || s["c0@b.example.com"].Source != "dsn" {
		t.Fatalf("B's suppressions: %v", s)
	}
	if !b.Unsubscribed("c1@b.example.com") || b.Unsubscribed("c0@b.example.com") || a.Unsubscribed("c1@b.example.com") || len(a.Suppressed()) != 0 {
		t.Fatal("the tied complaint did not unsubscribe c1, and c1 alone, in B alone")
	}
	if got := b.Get(sb.Utr); got.Bounces != 1 || got.SpamReports != 1 {
		t.Fatalf("B's send: bounces %d spam %d", got.Bounces, got.SpamReports)
	}
	if n := len(untiedRows(t, a.Svc)); n != 7 {
		t.Fatalf("%d untied reports after the tied ones, want 7", n)
	}
}

// TestWebhookTokensSpendOnce: a webhook signature's token is taken once,
// by any process sharing the database; one whose request could not be
// handled can come again; Prune forgets the expired ones.
func TestWebhookTokensSpendOnce(t *testing.T) {
	t.Parallel()
	clock := dbtest.NewClock(time.Now())
	procs := dbtest.Processes(t, 2, service.Config{Now: clock.Now})
	svc, other := procs[0], procs[1]
	ctx := context.Background()
	fb := svc.Feedback
	spendOn := func(p *service.Service, source, token string) bool {
		t.Helper()
		ok, err := p.Feedback.SpendToken(ctx, source, token, clock.Now().Add(10*time.Minute))
		if err != nil {
			t.Fatal(err)
		}
		return ok
	}
	spend := func(source, token string) bool { t.Helper(); return spendOn(svc, source, token) }
	if !spend("mailgun", "tok-1") || spend("mailgun", "tok-1") || spendOn(other, "mailgun", "tok-1") || !spend("mailgun", "tok-2") || !spend("other", "tok-1") {
		t.Fatal("a token must be taken once per source, by any process")
	}
	if err := fb.UnspendToken(ctx, "mailgun", "tok-2"); err != nil {
		t.Fatal(err)
	}
	if !spend("mailgun", "tok-2") {
		t.Fatal("a token given back is taken again")
	}
	var n int64
	count := func() int64 {
		t.Helper()
		if err := svc.DB.R.Table("webhook_tokens").Count(&n).Error; err != nil {
			t.Fatal(err)
		}
		return n
	}
	if err := fb.Prune(ctx); err != nil || count() != 3 {
		t.Fatalf("prune before expiry: %d tokens left (%v), want 3", n, err)
	}
	clock.Advance(11 * time.Minute)
	if err := fb.Prune(ctx); err != nil || count() != 0 {
		t.Fatalf("prune after expiry: %d tokens left (%v), want 0", n, err)
	}
}

// TestUntiedSummaryAndPrune: the setup page's counts are the last 30 days,
// server wide, by why and by source and sender; Prune, which the
// scheduler runs, drops what is older.
func TestUntiedSummaryAndPrune(t *testing.T) {
	t.Parallel()
	f := servicetest.NewSendFixture(t, false) // on the fixture's clock
	ctx := context.Background()
	r := func(source, ip, to string) service.Report {
		return service.Report{Kind: delivery.ReportHardBounce, Source: source, RemoteIP: ip, Recipient: to, Status: "5.1.1"}
	}
	f.Handle(r("dsn", "192.0.2.7", "x@example.com"))
	f.Advance(31 * 24 * time.Hour) // the first is out of the window
	f.Handle(r("dsn", "192.0.2.7", "x@example.com"), r("dsn", "192.0.2.7", "y@example.com"), r("arf", "198.51.100.1", "z@example.com"),
		service.Report{Kind: delivery.ReportComplaint, Source: "sendgrid", RemoteIP: "203.0.113.5", MessageID: "nothing@example.com"},
		service.Report{Kind: delivery.ReportDelivered, Source: "ses", Recipient: "x@example.com"})
	for _, k := range []delivery.KeptMail{
		{Mailbox: "imaps://bounce@imap.example.com:993/INBOX", ID: "7/1", Why: delivery.KeptNotAReport},
		{Mailbox: "imaps://bounce@imap.example.com:993/INBOX", ID: "7/1", Why: delivery.KeptNotAReport}, // the same mail read again
		{Mailbox: "imaps://bounce@imap.example.com:993/INBOX", ID: "7/2", Why: delivery.KeptUnreadable},
	} {
		if err := f.Svc.Feedback.KeepMail(ctx, k); err != nil {
			t.Fatal(err)
		}
	}
	s, err := f.Svc.Feedback.Untied(ctx)
	if err != nil {
		t.Fatal(err)
	}
	want := &service.UntiedSummary{
		Reports: 4,
		ByWhy:   []service.UntiedCount{{Why: service.UntiedNoToken, N: 3}, {Why: service.UntiedMessageID, N: 1}},
		BySender: []service.UntiedSender{{Source: "dsn", RemoteIP: "192.0.2.7", N: 2}, {Source: "arf", RemoteIP: "198.51.100.1", N: 1},
			{Source: "sendgrid", RemoteIP: "203.0.113.5", N: 1}},
		Kept:    2,
		KeptWhy: []service.UntiedCount{{Why: delivery.KeptNotAReport, N: 1}, {Why: delivery.KeptUnreadable, N: 1}},
	}
	if fmt.Sprintf("%+v", s) != fmt.Sprintf("%+v", want) {
		t.Fatalf("summary\n%+v\nwant\n%+v", s, want)
	}
	if n := len(untiedRows(t, f.Svc)); n != 5 {
		t.Fatalf("%d untied rows before the prune, want 5 (the delivery notice is not kept)", n)
	}
	if err := f.Svc.Feedback.Prune(ctx); err != nil {
		t.Fatal(err)
	}
	if n := len(untiedRows(t, f.Svc)); n != 4 {
		t.Fatalf("%d untied rows after the prune, want 4", n)
	}
	// The scheduler's hourly round prunes.
	f.Advance(31 * 24 * time.Hour)
	if err := f.Sending.Tick(ctx); err != nil {
		t.Fatal(err)
	}
	var kept int64
	if err := f.Svc.DB.R.Model(&models.KeptMail{}).Count(&kept).Error; err != nil || kept != 0 || len(untiedRows(t, f.Svc)) != 0 {
		t.Fatalf("after 31 more days: %d kept mails, %d untied reports (%v)", kept, len(untiedRows(t, f.Svc)), err)
	}
}
