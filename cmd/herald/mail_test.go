package main

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"log"
	"net"
	"net/http"
	"net/mail"
	"net/url"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/emersion/go-smtp"

	"herald/dbtest"
	"herald/models"
	"herald/service"
)

// sink is a real SMTP server on loopback that keeps what it receives.
type sink struct {
	mu   sync.Mutex
	msgs []sunk
	got  chan struct{}
}

type sunk struct {
	from string
	to   []string
	data []byte
}

func (s *sink) NewSession(*smtp.Conn) (smtp.Session, error) { return &sinkSession{s: s}, nil }

type sinkSession struct {
	s    *sink
	from string
	to   []string
}

func (ss *sinkSession) Mail(from string, _ *smtp.MailOptions) error { ss.from = from; return nil }
func (ss *sinkSession) Rcpt(to string, _ *smtp.RcptOptions) error {
	ss.to = append(ss.to, to)
	return nil
}
func (ss *sinkSession) Data(r io.Reader) error {
	b, err := io.ReadAll(r)
	if err != nil {
		return err
	}
	ss.s.mu.Lock()
	ss.s.msgs = append(ss.s.msgs, sunk{ss.from, ss.to, b})
	ss.s.mu.Unlock()
	ss.s.got <- struct{}{}
	return nil
}
func (ss *sinkSession) Reset()        { ss.from, ss.to = "", nil }
func (ss *sinkSession) Logout() error { return nil }

func startSink(t *testing.T) (*sink, string) {
	s := &sink{got: make(chan struct{}, 16)}
	srv := smtp.NewServer(s)
	srv.Domain = "sink.test"
	srv.ErrorLog = log.New(io.Discard, "", 0)
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	go srv.Serve(ln)
	t.Cleanup(func() { srv.Close() })
	return s, "smtp://" + ln.Addr().String() + "?tls=none"
}

var verifyLink = regexp.MustCompile(`http://[^"\s<>]+/senders/verify/[0-9a-f]+`)

// A saved sender is mailed a verification link through the relay; opening
// the link verifies it.
func TestSenderVerificationMail(t *testing.T) {
	t.Parallel()
	relay, smtpURL := startSink(t)
	dsn := dbtest.DSN(t)
	var out bytes.Buffer
	if err := run(context.Background(), []string{"herald", "account", "create", "--email", "owner@example.com", "--password", "test-passphrase-9", "--name", "O"},
		envFrom(map[string]string{"HERALD_DATABASE": dsn, "HERALD_LOG_LEVEL": "error"}), &out); err != nil {
		t.Fatal(err)
	}
	var keys keysOut
	_ = json.Unmarshal(out.Bytes(), &keys)
	addr := freeAddr(t)
	base := "http://" + addr
	_, _ = startServer(t, map[string]string{"HERALD_DATABASE": dsn, "HERALD_SMTP_URL": smtpURL, "HERALD_BASE_URL": base, "HERALD_ADDR": addr})

	call := func(method, path string, body url.Values) (int, string) {
		req, _ := http.NewRequest(method, base+path, strings.NewReader(body.Encode()))
		req.Header.Set("PublicKey", keys.PublicKey)
		req.Header.Set("SecretKey", keys.SecretKey)
		req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		return resp.StatusCode, string(b)
	}
	form := url.Values{"from_name": {"Ann"}, "from_email": {"ann@shop.example.com"}, "reply_to_email": {"help@shop.example.com"},
		"country_id": {"840"}, "company_address": {"1 Main St"}, "nickname": {"shop"}}
	if code, body := call("POST", "/api/sender/save", form); code != 200 {
		t.Fatalf("save: %d %s", code, body)
	}
	select {
	case <-relay.got:
	case <-time.After(10 * time.Second):
		t.Fatal("no verification mail reached the relay")
	}
	relay.mu.Lock()
	m := relay.msgs[0]
	relay.mu.Unlock()
	if len(m.to) != 1 || m.to[0] != "ann@shop.example.com" || m.from != "bounces@127.0.0.1" { // herald's own mail: the plain bounce address
		t.Fatalf("envelope: from %q to %v", m.from, m.to)
	}
	parsed, err := mail.ReadMessage(bytes.NewReader(m.data))
	if err != nil {
		t.Fatal(err)
	}
	// Unsigned: no DNS check has seen the record of the key of herald's
	// own mail, and a signature receivers cannot check fails.
	if h := parsed.Header.Get("DKIM-Signature"); h != "" {
		t.Fatalf("signed before the key's record was seen: %s", h)
	}
	if parsed.Header.Get("Subject") != "Verify your sender address" || parsed.Header.Get("Message-Id") == "" {
		t.Fatalf("headers: %v", parsed.Header)
	}
	body, _ := io.ReadAll(parsed.Body)
	decoded := strings.NewReplacer("=\r\n", "", "=3D", "=").Replace(string(body))
	link := verifyLink.FindString(decoded)
	if link == "" {
		t.Fatalf("no verification link in:\n%s", decoded)
	}

	_, details := call("GET", "/api/senders", nil)
	if !strings.Contains(details, `"is_verified":0`) {
		t.Fatalf("verified before the link: %s", details)
	}
	// A browser's GET shows the confirm button and verifies nothing.
	req, _ := http.NewRequest("GET", link, nil)
	req.Header.Set("Accept", "text/html,application/xhtml+xml,application/xml;q=0.9,*/*;q=0.8")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	page, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != 200 || !strings.Contains(string(page), "Verify this address") {
		t.Fatalf("confirm page: %d %s", resp.StatusCode, page)
	}
	if _, details = call("GET", "/api/senders", nil); !strings.Contains(details, `"is_verified":0`) {
		t.Fatalf("verified by a browser's GET: %s", details)
	}
	// A program's GET (no Accept) verifies (decisions.md 5).
	resp, err = http.Get(link)
	if err != nil {
		t.Fatal(err)
	}
	page, _ = io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != 200 || string(page) != `{"status":"success","message":"Sender Verified"}` {
		t.Fatalf("verify: %d %s", resp.StatusCode, page)
	}
	if _, details = call("GET", "/api/senders", nil); !strings.Contains(details, `"is_verified":1`) {
		t.Fatalf("not verified after the link: %s", details)
	}
	resp, _ = http.Get(base + "/senders/verify/0123456789abcdef0123456789abcdef")
	resp.Body.Close()
	if resp.StatusCode != 404 {
		t.Fatalf("unknown link: %d", resp.StatusCode)
	}

	// resend-mail sends it again.
	_, list := call("GET", "/api/senders", nil)
	id := regexp.MustCompile(`"id":(\d+)`).FindStringSubmatch(list)[1]
	if code, body := call("GET", "/api/sender/resend-mail?sender_id="+id, nil); code != 200 || !strings.Contains(body, "Verification Mail Send") {
		t.Fatalf("resend: %d %s", code, body)
	}
	select {
	case <-relay.got:
	case <-time.After(10 * time.Second):
		t.Fatal("resend-mail sent nothing")
	}
}

// Without HERALD_SMTP_URL the mail lands in the account's outbox.
func TestVerificationMailInOutbox(t *testing.T) {
	t.Parallel()
	svc := dbtest.Service(t)
	ctx := context.Background()
	u, _, err := svc.Accounts.Create(ctx, service.AccountInput{Name: "O", Email: "o@example.com", Password: "test-passphrase-9"})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := svc.Senders.Create(ctx, u.ID, service.SenderInput{FromName: "A", FromEmail: "a@shop.example.com", ReplyToEmail: "a@shop.example.com",
		CountryID: "250", CompanyAddress: "x", Nickname: "n"}); err != nil {
		t.Fatal(err)
	}
	var msgs []*models.OutboxMessage
	_ = svc.Outbox.Each(ctx, u.ID, service.ListFilter{}, func(m *models.OutboxMessage) error { msgs = append(msgs, m); return nil })
	if len(msgs) != 1 || msgs[0].RcptTo != "a@shop.example.com" || msgs[0].Subject != "Verify your sender address" {
		t.Fatalf("outbox: %+v", msgs)
	}
}
