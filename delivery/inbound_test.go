package delivery

import (
	"bufio"
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/emersion/go-smtp"
)

// recorder is a delivery.Reports that keeps what it is handed, or fails.
type recorder struct {
	mu      sync.Mutex
	reports []Report
	fail    error
}

func (r *recorder) Handle(_ context.Context, reports []Report) error {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.fail != nil {
		return r.fail
	}
	r.reports = append(r.reports, reports...)
	return nil
}

func (r *recorder) failWith(err error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.fail = err
}

func (r *recorder) got() []Report {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]Report(nil), r.reports...)
}

// startInbound serves an Inbound on loopback and returns its address.
func startInbound(t *testing.T, rec *recorder, tlsConfig *tls.Config, maxSize int64) string {
	t.Helper()
	v := corpusVERP(t)
	in, err := NewInbound(InboundConfig{Domain: "herald.test", TLS: tlsConfig, Reports: rec, MaxSize: maxSize,
		VERP: func(context.Context) (*VERP, error) { return v, nil }})
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

// smtpCode is the reply code and enhanced code of an SMTP error (0 when
// not one).
func smtpCode(err error) (int, string) {
	var se *smtp.SMTPError
	if !errors.As(err, &se) {
		return 0, ""
	}
	e := se.EnhancedCode
	return se.Code, fmt.Sprintf("%d.%d.%d", e[0], e[1], e[2])
}

func corpus(t *testing.T, name string) []byte {
	t.Helper()
	raw, err := os.ReadFile(filepath.Join("testdata", "reports", name))
	if err != nil {
		t.Fatal(err)
	}
	return raw
}

// postReport delivers raw from <> to rcpts and returns the error of the first
// step that failed.
func postReport(t *testing.T, addr string, rcpts []string, raw []byte) error {
	t.Helper()
	c, err := smtp.Dial(addr)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	if err := c.Mail("", nil); err != nil {
		return err
	}
	for _, r := range rcpts {
		if err := c.Rcpt(r, nil); err != nil {
			return err
		}
	}
	w, err := c.Data()
	if err != nil {
		return err
	}
	if _, err := w.Write(raw); err != nil {
		return err
	}
	return w.Close()
}

func TestInboundRefusesForeignRecipients(t *testing.T) {
	t.Parallel()
	rec := &recorder{}
	addr := startInbound(t, rec, nil, 0)
	for _, rcpt := range []string{"bob@example.com", "bounces@herald.test.evil.example", "bounces+x@other.example", "postmaster@herald.test", "bounces+zzz@herald.test"} {
		err := postReport(t, addr, []string{rcpt}, corpus(t, "dsn-postfix.eml"))
		if code, enh := smtpCode(err); code != 550 || enh != "5.7.1" {
			t.Errorf("RCPT %s: %v", rcpt, err)
		}
	}
	if len(rec.got()) != 0 {
		t.Fatal("a refused mail was handled")
	}
	// No AUTH offered; STARTTLS not offered without a certificate.
	c, err := smtp.Dial(addr)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	if err := c.Hello("client.example"); err != nil {
		t.Fatal(err)
	}
	if ok, _ := c.Extension("AUTH"); ok {
		t.Error("AUTH offered")
	}
	if ok, _ := c.Extension("STARTTLS"); ok {
		t.Error("STARTTLS offered without a certificate")
	}
	// At most 100 recipients.
	if err := c.Mail("", nil); err != nil {
		t.Fatal(err)
	}
	for i := range 101 {
		err := c.Rcpt("bounces@herald.test", nil)
		if i < 100 && err != nil {
			t.Fatalf("recipient %d: %v", i, err)
		}
		if code, _ := smtpCode(err); i == 100 && code != 452 {
			t.Fatalf("recipient 101: %v", err)
		}
	}
}

func TestInboundHandsOverReports(t *testing.T) {
	t.Parallel()
	rec := &recorder{}
	addr := startInbound(t, rec, nil, 0)
	if err := postReport(t, addr, []string{"Bounces+B" + strings.ToUpper(tok42) + "@HERALD.test"}, corpus(t, "dsn-multi.eml")); err != nil {
		t.Fatal(err)
	}
	got := rec.got()
	if len(got) != 3 || got[0].Recipient != "cy@example.org" || got[0].Kind != ReportHardBounce || got[0].Status != "5.1.1" ||
		got[1].Kind != ReportDeferral || got[2].Recipient != "fay@example.org" || got[0].Source != SourceDSN {
		t.Fatalf("%+v", got)
	}
	// Each report says who handed it over: untied ones are counted by
	// sender IP.
	for _, r := range got {
		if r.RemoteIP != "127.0.0.1" {
			t.Fatalf("remote IP %q, want the client's 127.0.0.1", r.RemoteIP)
		}
	}
	// The envelope's token (upper-cased by some relay) names the message.
	if _, ok := corpusVERP(t).BounceToken(got[0].Token); !ok || !strings.EqualFold(got[0].Token, tok42) {
		t.Fatalf("token %q", got[0].Token)
	}
	// An unsubscribe mail, a complaint; an auto-reply and a forged token
	// are taken (250): the reports of the forged one carry a token that
	// does not verify, and the auto-reply makes none.
	if err := postReport(t, addr, []string{"bounces+u" + utok42 + "@herald.test"}, corpus(t, "unsubscribe.eml")); err != nil {
		t.Fatal(err)
	}
	if err := postReport(t, addr, []string{plain}, corpus(t, "arf-yahoo.eml")); err != nil {
		t.Fatal(err)
	}
	if err := postReport(t, addr, []string{rp42}, corpus(t, "autoreply.eml")); err != nil {
		t.Fatal(err)
	}
	forged := "bounces+b" + strings.Repeat("a", len(tok42)) + "@herald.test"
	if err := postReport(t, addr, []string{forged}, corpus(t, "dsn-postfix.eml")); err != nil {
		t.Fatal(err)
	}
	got = rec.got()[3:]
	if len(got) != 3 || got[0].Kind != ReportUnsubscribe || got[0].Recipient != "bob@example.com" || got[1].Kind != ReportComplaint ||
		got[2].Token != strings.Repeat("a", len(tok42)) {
		t.Fatalf("%+v", got)
	}
}

func TestInboundOversizeAndRetry(t *testing.T) {
	t.Parallel()
	rec := &recorder{}
	addr := startInbound(t, rec, nil, 64<<10)
	big := append(append([]byte{}, corpus(t, "dsn-postfix.eml")...), []byte(strings.Repeat("x", 100)+"\r\n")...)
	for len(big) < 70<<10 {
		big = append(big, []byte(strings.Repeat("x", 100)+"\r\n")...)
	}
	err := postReport(t, addr, []string{rp42}, big)
	if code, _ := smtpCode(err); code != 552 {
		t.Fatalf("oversize: %v", err)
	}
	if len(rec.got()) != 0 {
		t.Fatal("an oversize mail was handled")
	}
	// The handler's failure: 451 4.3.0, the relay sends again.
	rec.failWith(errors.New("database is locked"))
	err = postReport(t, addr, []string{rp42}, corpus(t, "dsn-postfix.eml"))
	if code, enh := smtpCode(err); code != 451 || enh != "4.3.0" {
		t.Fatalf("handler failure: %v", err)
	}
	rec.failWith(nil)
	if err := postReport(t, addr, []string{rp42}, corpus(t, "dsn-postfix.eml")); err != nil || len(rec.got()) != 1 {
		t.Fatalf("retry: %v %+v", err, rec.got())
	}
	// The default limit is 10 MB.
	in, _ := NewInbound(InboundConfig{VERP: func(context.Context) (*VERP, error) { return nil, nil }, Reports: rec})
	if in.srv.MaxMessageBytes != 10<<20 || in.srv.MaxRecipients != 100 {
		t.Fatalf("defaults: %d %d", in.srv.MaxMessageBytes, in.srv.MaxRecipients)
	}
}

func TestInboundSTARTTLS(t *testing.T) {
	t.Parallel()
	cert, roots := selfSigned(t)
	rec := &recorder{}
	addr := startInbound(t, rec, &tls.Config{Certificates: []tls.Certificate{cert}, MinVersion: tls.VersionTLS12}, 0)
	c, err := smtp.DialStartTLS(addr, &tls.Config{RootCAs: roots, ServerName: "127.0.0.1"})
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	if ok, _ := c.Extension("AUTH"); ok {
		t.Error("AUTH offered over TLS")
	}
	raw := corpus(t, "dsn-postfix.eml")
	if err := c.SendMail("", []string{rp42}, strings.NewReader(string(raw))); err != nil {
		t.Fatal(err)
	}
	if state, ok := c.TLSConnectionState(); !ok || !state.HandshakeComplete || !state.PeerCertificates[0].Equal(cert.Leaf) {
		t.Fatal("not over TLS")
	}
	if got := rec.got(); len(got) != 1 || got[0].Recipient != "bob@example.com" || got[0].Token != tok42 {
		t.Fatalf("%+v", got)
	}
}

// One client holding idle connections takes no more than its share of
// the server: past MaxConnsPerIP (default 10) its connections are answered
// 421 4.7.0 and closed, while another client (127.0.0.2, over loopback as
// well) is still greeted, and a place given back is taken again. Before,
// 50 idle connections from one address took every place of MaxConns and
// the next sender, from anywhere, waited unanswered.
func TestInboundCapsConnectionsPerClient(t *testing.T) {
	t.Parallel()
	v := corpusVERP(t)
	in, err := NewInbound(InboundConfig{Domain: "herald.test", Reports: &recorder{},
		VERP: func(context.Context) (*VERP, error) { return v, nil }})
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
	// greet connects from the address from and returns the connection
	// and the server's first line.
	greet := func(from string) (net.Conn, *bufio.Reader, string) {
		t.Helper()
		d := net.Dialer{LocalAddr: &net.TCPAddr{IP: net.ParseIP(from)}, Timeout: 10 * time.Second}
		c, err := d.Dial("tcp", ln.Addr().String())
		if err != nil {
			t.Fatalf("connect from %s: %v", from, err)
		}
		t.Cleanup(func() { _ = c.Close() })
		_ = c.SetReadDeadline(time.Now().Add(10 * time.Second))
		r := bufio.NewReader(c)
		line, err := r.ReadString('\n')
		if err != nil {
			t.Fatalf("from %s: no first line: %v", from, err)
		}
		return c, r, line
	}
	const refusal = "421 4.7.0 Too many connections from your address\r\n"
	var held []net.Conn
	for i := range 50 {
		c, r, line := greet("127.0.0.1")
		switch {
		case i < 10 && !strings.HasPrefix(line, "220 "):
			t.Fatalf("connection %d: %q, want the greeting", i+1, line)
		case i >= 10 && line != refusal:
			t.Fatalf("connection %d from the same address: %q, want %q", i+1, line, refusal)
		case i >= 10:
			if rest, err := r.ReadString('\n'); err != io.EOF {
				t.Fatalf("connection %d: not closed after the refusal: %q %v", i+1, rest, err)
			}
		}
		held = append(held, c)
	}
	other, r, line := greet("127.0.0.2")
	if !strings.HasPrefix(line, "220 ") {
		t.Fatalf("another client: %q, want the greeting", line)
	}
	if _, err := io.WriteString(other, "EHLO other.example\r\n"); err != nil {
		t.Fatal(err)
	}
	if line, err := r.ReadString('\n'); err != nil || !strings.HasPrefix(line, "250") {
		t.Fatalf("another client's EHLO: %q %v", line, err)
	}

	// The first client gives a place back: its next connection is served
	// once the server has seen the close.
	_ = held[0].Close()
	deadline := time.Now().Add(10 * time.Second)
	for {
		c, _, line := greet("127.0.0.1")
		if strings.HasPrefix(line, "220 ") {
			break
		}
		_ = c.Close()
		if line != refusal || time.Now().After(deadline) {
			t.Fatalf("after a close: %q", line)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// A client is an IPv4 address, or an IPv6 /64.
func TestClientOf(t *testing.T) {
	t.Parallel()
	at := func(s string) net.Addr { return &net.TCPAddr{IP: net.ParseIP(s), Port: 25} }
	for _, c := range []struct {
		a, b string
		same bool
	}{
		{"192.0.2.1", "192.0.2.1", true},
		{"192.0.2.1", "192.0.2.2", false},
		{"::ffff:192.0.2.1", "192.0.2.1", true},
		{"2001:db8:1:2::1", "2001:db8:1:2:ffff:ffff:ffff:ffff", true},
		{"2001:db8:1:2::1", "2001:db8:1:3::1", false},
	} {
		if got := clientOf(at(c.a)) == clientOf(at(c.b)); got != c.same {
			t.Errorf("%s and %s one client: %v, want %v", c.a, c.b, got, c.same)
		}
	}
}
