package delivery

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"unicode/utf8"
)

// The corpus (testdata/reports) was written with this VERP: its return
// path of row 42 is bounces+bfjtibxx2fuhpudhsoy@herald.test, of row 43
// bounces+bfndn5ht3uzjrpeeqnm@herald.test, its unsubscribe address of
// row 42 bounces+uflvr77k34zdnfpb3py@herald.test.
func corpusVERP(t testing.TB) *VERP {
	v, err := NewVERP("bounces@herald.test", []byte("herald-test-key"))
	if err != nil {
		t.Fatal(err)
	}
	return v
}

const (
	tok42   = "fjtibxx2fuhpudhsoy"
	tok43   = "fndn5ht3uzjrpeeqnm"
	utok42  = "flvr77k34zdnfpb3py"
	mid42   = "bfjtibxx2fuhpudhsoy@shop.example.com"
	mid43   = "bfndn5ht3uzjrpeeqnm@shop.example.com"
	sendUtr = "7c1f0f7e-2d2b-4c55-9d0e-0a1b2c3d4e5f"
	rp42    = "bounces+b" + tok42 + "@herald.test"
	plain   = "bounces@herald.test"
)

// want is what a test expects of one report; diag is a part of its
// Diagnostic.
type want struct {
	kind              ReportKind
	source            string
	rcpt, status      string
	token, mid, utr   string
	diag              string
	notDiagStartsWith string
	reason            string // when set, the reason too
}

func TestParseReportsCorpus(t *testing.T) {
	t.Parallel()
	v := corpusVERP(t)
	cases := []struct {
		file  string
		rcpts []string
		want  []want
	}{
		{"dsn-postfix.eml", []string{rp42}, []want{{kind: ReportHardBounce, source: SourceDSN, rcpt: "bob@example.com", status: "5.1.1",
			token: tok42, mid: mid42, utr: sendUtr, diag: "550 5.1.1 <bob@example.com>: Recipient address rejected: User unknown in virtual mailbox table",
			notDiagStartsWith: "smtp"}}},
		// Token from the returned message's Return-Path; four blocks, one relayed.
		{"dsn-multi.eml", []string{plain}, []want{
			{kind: ReportHardBounce, source: SourceDSN, rcpt: "cy@example.org", status: "5.1.1", token: tok43, mid: mid43, utr: sendUtr, diag: "does not exist."},
			// "Action: delayed": the relay is still trying.
			{kind: ReportDeferral, source: SourceDSN, rcpt: "dee@example.org", status: "4.4.1", token: tok43, mid: mid43, utr: sendUtr, diag: "Connection timed out", reason: ReasonNetworkError},
			// A disabled account is not a gone one.
			{kind: ReportSoftBounce, source: SourceDSN, rcpt: "fay@example.org", status: "5.2.1", token: tok43, mid: mid43, utr: sendUtr, diag: "is disabled", reason: ReasonSuspend},
		}},
		{"dsn-exchange.eml", []string{rp42}, []want{{kind: ReportHardBounce, source: SourceDSN, rcpt: "gus@contoso.example", status: "5.1.10",
			token: tok42, mid: mid42, diag: "RESOLVER.ADR.RecipientNotFound", notDiagStartsWith: "smtp"}}},
		{"dsn-quota.eml", []string{rp42}, []want{{kind: ReportSoftBounce, source: SourceDSN, rcpt: "hal@example.com", status: "5.2.2", token: tok42, diag: "Mailbox full"}}},
		{"dsn-policy.eml", []string{rp42}, []want{{kind: ReportBlock, source: SourceDSN, rcpt: "ivy@example.com", status: "5.7.1", token: tok42,
			diag: "Message rejected as spam by content filter"}}},
		{"dsn-base64.eml", []string{rp42}, []want{{kind: ReportHardBounce, source: SourceDSN, rcpt: "jo@example.de", status: "5.1.1", token: tok42, diag: "550 5.1.1 User unknown"}}},
		{"arf-yahoo.eml", []string{plain}, []want{{kind: ReportComplaint, source: SourceARF, rcpt: "kim@yahoo.example", token: tok42, mid: mid42, utr: sendUtr}}},
		{"arf-headers-only.eml", []string{rp42}, []want{{kind: ReportComplaint, source: SourceARF, rcpt: "lee@hotmail.example", token: tok42, mid: mid42}}},
		{"arf-not-spam.eml", []string{plain}, nil},
		{"postfix-text.eml", []string{plain}, []want{{kind: ReportHardBounce, source: SourceText, rcpt: "nia@example.com", status: "5.1.1",
			token: tok42, mid: mid42, utr: sendUtr, diag: "said: 550 5.1.1"}}},
		{"exim.eml", []string{rp42}, []want{{kind: ReportHardBounce, source: SourceText, rcpt: "oli@example.net", status: "5.1.1",
			token: tok42, mid: mid42, utr: sendUtr, diag: "550 5.1.1 <oli@example.net>: Recipient address rejected: User unknown"}}},
		{"exchange-text.eml", []string{rp42}, []want{{kind: ReportHardBounce, source: SourceText, rcpt: "pat@outlook.example", status: "5.1.10",
			token: tok42, mid: mid42, utr: sendUtr, diag: "RESOLVER.ADR.RecipientNotFound"}}},
		{"gmail-text.eml", []string{rp42}, []want{{kind: ReportHardBounce, source: SourceText, rcpt: "quinn@gmail.example", status: "5.1.1",
			token: tok42, diag: "The email account that you tried to reach does not exist"}}},
		// No enhanced code in the mail: none is made up.
		{"yahoo.eml", []string{plain}, []want{{kind: ReportHardBounce, source: SourceText, rcpt: "ray@yahoo.example", status: "", reason: ReasonUserUnknown,
			token: tok42, mid: mid42, diag: "554: delivery error: dd This user doesn't have a yahoo.com account"}}},
		{"qmail.eml", []string{rp42}, []want{{kind: ReportHardBounce, source: SourceText, rcpt: "sam@qmail.example", status: "5.1.1",
			token: tok42, diag: "Remote host said: 550 5.1.1"}}},
		{"quota-text.eml", []string{rp42}, []want{{kind: ReportSoftBounce, source: SourceText, rcpt: "tia@example.org", status: "5.2.2", token: tok42, diag: "over quota"}}},
		// "Gmail will retry": still being tried, a deferral.
		{"delay-text.eml", []string{rp42}, []want{{kind: ReportDeferral, source: SourceText, rcpt: "uma@example.com", status: "4.3.0", token: tok42, diag: "temporarily rejected",
			reason: ReasonSystemError}}},
		{"autoreply.eml", []string{rp42}, nil},
		{"out-of-office.eml", []string{plain}, nil},
		{"unknown.eml", []string{plain}, nil},
		{"unsubscribe.eml", []string{"bounces+u" + utok42 + "@herald.test"}, []want{{kind: ReportUnsubscribe, source: SourceMailto, rcpt: "bob@example.com", token: utok42}}},
	}
	seen := map[string]bool{}
	for _, c := range cases {
		seen[c.file] = true
		t.Run(c.file, func(t *testing.T) {
			raw, err := os.ReadFile(filepath.Join("testdata", "reports", c.file))
			if err != nil {
				t.Fatal(err)
			}
			got, err := ParseReports(raw, c.rcpts, v)
			if err != nil {
				t.Fatal(err)
			}
			if len(got) != len(c.want) {
				t.Fatalf("%d reports, want %d: %+v", len(got), len(c.want), got)
			}
			for i, w := range c.want {
				r := got[i]
				if r.Kind != w.kind || r.Source != w.source || r.Recipient != w.rcpt || r.Status != w.status || r.Token != w.token ||
					r.MessageID != w.mid || r.SendUtr != w.utr || !strings.Contains(r.Diagnostic, w.diag) {
					t.Errorf("report %d:\n got  %+v\n want %+v", i, r, w)
				}
				if w.reason != "" && r.Reason != w.reason {
					t.Errorf("report %d: reason %q, want %q", i, r.Reason, w.reason)
				}
				if w.notDiagStartsWith != "" && strings.HasPrefix(strings.ToLower(r.Diagnostic), w.notDiagStartsWith) {
					t.Errorf("diagnostic kept its type: %q", r.Diagnostic)
				}
				if r.Token != "" {
					if _, ok := v.BounceToken(r.Token); r.Kind != ReportUnsubscribe && !ok {
						t.Errorf("token %q does not verify", r.Token)
					}
				}
			}
		})
	}
	// Every file of the corpus has its case.
	files, _ := filepath.Glob(filepath.Join("testdata", "reports", "*.eml"))
	for _, f := range files {
		if !seen[filepath.Base(f)] {
			t.Errorf("%s has no case", f)
		}
	}
}

// A DSN addressed to the plain bounce address whose returned message was
// cut off still names its recipient; the envelope's token wins over the
// returned message's, and a forged one is passed on as it is (Feedback
// finds no message for it).
func TestParseReportsTokens(t *testing.T) {
	t.Parallel()
	v := corpusVERP(t)
	dsn := "From: MAILER-DAEMON@relay.example\r\nTo: x\r\nContent-Type: multipart/report; report-type=delivery-status; boundary=B\r\n\r\n" +
		"--B\r\nContent-Type: message/delivery-status\r\n\r\nReporting-MTA: dns; relay.example\r\n\r\n" +
		"Final-Recipient: rfc822; Zed@Example.com\r\nAction: failed\r\nStatus: 5.1.1\r\n\r\n--B--\r\n"
	got, err := ParseReports([]byte(dsn), []string{plain}, v)
	if err != nil || len(got) != 1 || got[0].Token != "" || got[0].Recipient != "zed@example.com" || got[0].Kind != ReportHardBounce {
		t.Fatalf("no token: %+v %v", got, err)
	}
	forged := "bounces+b" + tok42[:len(tok42)-2] + "zz@herald.test"
	got, _ = ParseReports([]byte(dsn), []string{"someone@else.example", forged}, v)
	if len(got) != 1 || got[0].Token != tok42[:len(tok42)-2]+"zz" {
		t.Fatalf("forged: %+v", got)
	}
	if _, ok := v.BounceToken(got[0].Token); ok {
		t.Fatal("a forged token verifies")
	}
	// Forwarded: the address herald sent to (Original-Recipient) is the
	// one its ledger knows.
	fwd := strings.Replace(dsn, "Final-Recipient: rfc822; Zed@Example.com\r\n",
		"Final-Recipient: rfc822; zed@forward.example\r\nOriginal-Recipient: rfc822;zed@example.com\r\n", 1)
	got, _ = ParseReports([]byte(fwd), []string{rp42}, v)
	if len(got) != 1 || got[0].Recipient != "zed@example.com" || got[0].Token != tok42 {
		t.Fatalf("forwarded: %+v", got)
	}
	pf, err := os.ReadFile(filepath.Join("testdata", "reports", "postfix-text.eml"))
	if err != nil {
		t.Fatal(err)
	}
	pf = bytes.Replace(pf, []byte("<nia@example.com>: host"), []byte("<nia@forward.example> (expanded from <nia@example.com>): host"), 1)
	got, _ = ParseReports(pf, []string{plain}, v)
	if len(got) != 1 || got[0].Recipient != "nia@example.com" || got[0].Status != "5.1.1" {
		t.Fatalf("postfix expanded: %+v", got)
	}
	// No VERP at all: nothing panics, no tokens.
	got, _ = ParseReports([]byte(dsn), []string{rp42}, nil)
	if len(got) != 1 || got[0].Token != "" {
		t.Fatalf("nil VERP: %+v", got)
	}
	// A mail to the unsubscribe address without a From: nothing.
	got, err = ParseReports([]byte("To: x\r\nSubject: unsubscribe\r\n\r\nunsubscribe\r\n"), []string{"bounces+u" + utok42 + "@herald.test"}, v)
	if err != nil || len(got) != 0 {
		t.Fatalf("unsubscribe without From: %+v %v", got, err)
	}
}

func TestParseReportsLimits(t *testing.T) {
	t.Parallel()
	v := corpusVERP(t)
	if _, err := ParseReports(make([]byte, MaxReportSize+1), nil, v); !errors.Is(err, ErrReportTooLarge) {
		t.Fatalf("over 10 MB: %v", err)
	}
	if _, err := ParseReports([]byte("\x00\x01 not a header"), nil, v); !errors.Is(err, ErrNotMail) {
		t.Fatalf("garbage: %v", err)
	}
	// 500 recipient blocks: at most maxReportsPerMail reports.
	var b strings.Builder
	b.WriteString("From: MAILER-DAEMON@relay.example\r\nContent-Type: multipart/report; report-type=delivery-status; boundary=B\r\n\r\n--B\r\nContent-Type: message/delivery-status\r\n\r\nReporting-MTA: dns; x\r\n\r\n")
	for i := range 500 {
		fmt.Fprintf(&b, "Final-Recipient: rfc822; r%d@example.com\r\nAction: failed\r\nStatus: 5.1.1\r\nDiagnostic-Code: smtp; 550 %s\r\n\r\n", i, strings.Repeat("x", 5000))
	}
	b.WriteString("--B--\r\n")
	got, err := ParseReports([]byte(b.String()), []string{rp42}, v)
	if err != nil || len(got) != maxReportsPerMail {
		t.Fatalf("500 blocks: %d reports, %v", len(got), err)
	}
	for _, r := range got {
		if len(r.Diagnostic) > maxDiagnostic {
			t.Fatalf("diagnostic of %d bytes", len(r.Diagnostic))
		}
	}
	// Multiparts nested 1,000 deep, and 10,000 parts: bounded, no report.
	b.Reset()
	b.WriteString("From: a@b.example\r\nContent-Type: multipart/mixed; boundary=b0\r\n\r\n")
	for i := range 1000 {
		fmt.Fprintf(&b, "--b%d\r\nContent-Type: multipart/mixed; boundary=b%d\r\n\r\n", i, i+1)
	}
	if _, err := ParseReports([]byte(b.String()), []string{rp42}, v); err != nil {
		t.Fatal(err)
	}
	b.Reset()
	b.WriteString("From: a@b.example\r\nContent-Type: multipart/mixed; boundary=B\r\n\r\n")
	for range 10000 {
		b.WriteString("--B\r\nContent-Type: text/plain\r\n\r\nUndeliverable\r\n")
	}
	b.WriteString("--B--\r\n")
	w := &walker{}
	w.walk(map[string][]string{"Content-Type": {"multipart/mixed; boundary=B"}}, []byte(b.String()[strings.Index(b.String(), "--B"):]), 0)
	if w.parts > maxReportParts+1 {
		t.Fatalf("%d parts visited", w.parts)
	}
}

func TestClean(t *testing.T) {
	t.Parallel()
	s := clean("550\r\n 5.1.1\x00 bad \xff"+strings.Repeat("é", 2000), maxDiagnostic)
	if len(s) > maxDiagnostic || !utf8.ValidString(s) || strings.ContainsAny(s, "\r\n\x00") || !strings.HasPrefix(s, "550 5.1.1 bad \uFFFD") {
		t.Fatalf("%q", s[:40])
	}
}

// FuzzParseReports: any mail is read without a panic, within the caps.
// Seeds: both corpora (herald's and the real bounces).
func FuzzParseReports(f *testing.F) {
	files, _ := filepath.Glob(filepath.Join("testdata", "reports", "*.eml"))
	real, _ := filepath.Glob(filepath.Join("testdata", "bounces", "samples", "*.eml"))
	files = append(files, real...)
	for _, file := range files {
		raw, err := os.ReadFile(file)
		if err != nil {
			f.Fatal(err)
		}
		f.Add(raw, rp42)
	}
	v := corpusVERP(f)
	f.Fuzz(func(t *testing.T, raw []byte, rcpt string) {
		got, err := ParseReports(raw, []string{rcpt, plain}, v)
		if err != nil && !errors.Is(err, ErrNotMail) && !errors.Is(err, ErrReportTooLarge) {
			t.Fatal(err)
		}
		if len(got) > maxReportsPerMail {
			t.Fatalf("%d reports", len(got))
		}
		for _, r := range got {
			if len(r.Diagnostic) > maxDiagnostic || len(r.Recipient) > maxAddress || len(r.MessageID) > maxMessageID ||
				len(r.SendUtr) > maxSendUtr || len(r.Token) > maxToken || r.Kind == 0 {
				t.Fatalf("over the caps: %+v", r)
			}
			if bytes.ContainsAny([]byte(r.Diagnostic+r.Recipient+r.MessageID+r.SendUtr), "\r\n\x00") {
				t.Fatalf("control characters: %+v", r)
			}
		}
	})
}

// FuzzJudge: any words, code and status are judged without a panic, into
// one of the four kinds and a reason.
func FuzzJudge(f *testing.F) {
	f.Add("rcpt", 550, "5.1.1", "550 5.1.1 <a@b.example>: Recipient address rejected: User unknown", false)
	f.Add("", 0, "", "Unknown user: \u00e9\u00e9 a@b.example (in reply to end of DATA command)", true)
	f.Add("data", 554, "5.7.1", ">>> DATA <<< 554 5.7.1 blocked using zen.spamhaus.org https://x.example/?#", false)
	f.Fuzz(func(t *testing.T, stage string, code int, status, diag string, delayed bool) {
		j := Judge(Failure{Stage: stage, Code: code, Status: status, Diagnostic: diag, Delayed: delayed})
		switch j.Kind {
		case ReportHardBounce, ReportSoftBounce, ReportBlock, ReportDeferral:
		default:
			t.Fatalf("kind %v", j.Kind)
		}
		if j.Reason == "" {
			t.Fatal("no reason")
		}
		if j.Kind == ReportHardBounce && !IsHardReason(j.Reason) {
			t.Fatalf("hard bounce for %q", j.Reason)
		}
		if delayed && j.Kind != ReportDeferral {
			t.Fatalf("delayed read as %v", j.Kind)
		}
	})
}
