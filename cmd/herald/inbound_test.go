package main

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"errors"
	"fmt"
	"math/big"
	"net/url"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/emersion/go-smtp"

	"herald/eventually"
	"herald/models"
	"herald/smtptest"
)

// mailInbound hands raw to herald's inbound SMTP server from the null
// sender, as a relay returning a report does; the error of the step that
// failed.
func mailInbound(t *testing.T, addr, rcpt, raw string) error {
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

// headersOf is the header section of a captured message.
func headersOf(m smtptest.Message) string {
	h, _, _ := strings.Cut(strings.ReplaceAll(string(m.Data), "\r\n", "\n"), "\n\n")
	return h + "\n"
}

// TestInboundReports: a real herald with its inbound SMTP server; a send
// to two contacts, then what relays and mailbox providers send back.
func TestInboundReports(t *testing.T) {
	t.Parallel()
	inAddr := freeAddr(t)
	h := startLiveHerald(t, map[string]string{"HERALD_INBOUND_ADDR": inAddr, "HERALD_BOUNCE_ADDRESS": "bounces@herald.test"})
	h.call("POST", "/api/contacts-type/add", url.Values{"name": {"Two"}})
	for _, e := range []string{"dan@example.com", "eve@example.com"} {
		h.call("POST", "/api/contacts/add", url.Values{"contact_type_id": {"2"}, "email": {e}, "first_name": {"F"}, "last_name": {"L"}, "country": {"840"}})
	}
	form := url.Values{"template_id": {"1"}, "template_html": {"<p>Hi</p>"}, "sender_id": {"1"}, "unsubscribe_group_id": {"1"},
		"single_send_name": {"Two"}, "subject": {"Hello"}, "preheader": {"News"}, "recipient_id[]": {"contacts_2"}, "schedule_type": {"0"}}
	utr := h.call("POST", "/api/single/send/create", form)["message"].(map[string]any)["utr"].(string)
	eventually.NoError(t, 30*time.Second, func() error {
		if h.details(utr)["status"].(float64) != 3 {
			return fmt.Errorf("send not completed: %v", h.details(utr))
		}
		return nil
	})
	if d := h.details(utr); d["delivered"].(float64) != 2 {
		t.Fatalf("send: %v", d)
	}
	dan, _ := h.message("dan@example.com")
	eve, _ := h.message("eve@example.com")
	if !regexp.MustCompile(`^bounces\+b[a-z2-7]+@herald\.test$`).MatchString(dan.From) || dan.From == eve.From {
		t.Fatalf("return paths %q %q", dan.From, eve.From)
	}
	counts := func() (bounces, spam, unsubs float64) {
		d := h.details(utr)
		return d["bounces"].(float64), d["spam_reports"].(float64), d["unsubscribes"].(float64)
	}

	// Not the bounce domain: refused, never relayed.
	var se *smtp.SMTPError
	if err := mailInbound(t, inAddr, "someone@example.org", "Subject: x\n\nx\n"); !errors.As(err, &se) || se.Code != 550 || se.EnhancedCode != (smtp.EnhancedCode{5, 7, 1}) {
		t.Fatalf("foreign recipient: %v", err)
	}

	// A DSN for dan to the return path the relay saw.
	dsn := fmt.Sprintf(`From: Mail Delivery System <MAILER-DAEMON@mx.example.com>
To: %s
Subject: Undelivered Mail Returned to Sender
MIME-Version: 1.0
Content-Type: multipart/report; report-type=delivery-status; boundary="B"

--B
Content-Type: text/plain

<dan@example.com>: host mx.example.com said: 550 5.1.1 User unknown

--B
Content-Type: message/delivery-status

Reporting-MTA: dns; mx.example.com

Final-Recipient: rfc822; dan@example.com
Action: failed
Status: 5.1.1
Diagnostic-Code: smtp; 550 5.1.1 <dan@example.com>: User unknown in virtual mailbox table

--B
Content-Type: text/rfc822-headers

%s
--B--
`, dan.From, headersOf(dan))
	if err := mailInbound(t, inAddr, dan.From, dsn); err != nil {
		t.Fatal(err)
	}
	if b, s, u := counts(); b != 1 || s != 0 || u != 0 {
		t.Fatalf("after the DSN: bounces %v spam %v unsubscribes %v", b, s, u)
	}
	var sup models.Suppression
	if err := h.db.R.Where("email = ?", "dan@example.com").First(&sup).Error; err != nil {
		t.Fatalf("dan not suppressed: %v", err)
	}
	if sup.StatusCode != "5.1.1" || sup.Diagnostic != "550 5.1.1 <dan@example.com>: User unknown in virtual mailbox table" || sup.Source != "dsn" {
		t.Fatalf("suppression: %+v", sup)
	}
	// The same DSN again counts once.
	if err := mailInbound(t, inAddr, dan.From, dsn); err != nil {
		t.Fatal(err)
	}
	if b, _, _ := counts(); b != 1 {
		t.Fatalf("a repeated DSN counted: %v", b)
	}

	// A DSN about both recipients, to dan's return path: dan's block
	// counts no more; eve's block is "Action: delayed", a deferral (the
	// relay is still trying), which counts nothing, and dan's token names
	// dan's message alone, never eve's.
	multi := strings.Replace(dsn, "\n--B\nContent-Type: text/rfc822-headers", `
Final-Recipient: rfc822; eve@example.com
Action: delayed
Status: 4.2.0
Diagnostic-Code: smtp; 451 4.2.0 Try again later
`+"\n--B\nContent-Type: text/rfc822-headers", 1)
	if err := mailInbound(t, inAddr, dan.From, multi); err != nil {
		t.Fatal(err)
	}
	if d := h.details(utr); d["bounces"].(float64) != 1 || d["soft_bounces"].(float64) != 0 {
		t.Fatalf("after the DSN about both: %v", d)
	}

	// An ARF complaint about eve's message, to the plain bounce address:
	// the message is found by its Message-ID.
	arf := fmt.Sprintf(`From: feedback@fbl.example.net
To: bounces@herald.test
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
Original-Rcpt-To: eve@example.com

--F
Content-Type: message/rfc822

%s
--F--
`, strings.ReplaceAll(string(eve.Data), "\r\n", "\n"))
	if err := mailInbound(t, inAddr, "bounces@herald.test", arf); err != nil {
		t.Fatal(err)
	}
	if b, s, u := counts(); b != 1 || s != 1 || u != 1 {
		t.Fatalf("after the complaint: bounces %v spam %v unsubscribes %v", b, s, u)
	}
	var n int64
	h.db.R.Model(&models.Unsubscriber{}).Where("email_address = ? AND unsubscribe_groups_id IS NULL", "eve@example.com").Count(&n)
	if n != 1 {
		t.Fatal("eve is not a global unsubscriber")
	}

	// A forged token: taken (250), nothing changes.
	var before int64
	h.db.R.Model(&models.Suppression{}).Count(&before)
	forged := "bounces+b" + strings.Repeat("a", len(dan.From)-len("bounces+b@herald.test")) + "@herald.test"
	forgedDSN := strings.ReplaceAll(strings.ReplaceAll(dsn, dan.From, forged), "dan@example.com", "eve@example.com")
	if err := mailInbound(t, inAddr, forged, forgedDSN); err != nil {
		t.Fatalf("forged token: %v", err)
	}
	var after int64
	h.db.R.Model(&models.Suppression{}).Count(&after)
	if b, s, u := counts(); b != 1 || s != 1 || u != 1 || after != before {
		t.Fatalf("a forged token changed something: bounces %v spam %v unsubscribes %v suppressions %d -> %d", b, s, u, before, after)
	}

	// A mail to dan's List-Unsubscribe mailto: address: dan leaves the
	// send's group.
	mailto := regexp.MustCompile(`<mailto:([^>?]+)`).FindStringSubmatch(dan.Header().Get("List-Unsubscribe"))
	if mailto == nil {
		t.Fatalf("no mailto: in %q", dan.Header().Get("List-Unsubscribe"))
	}
	if err := mailInbound(t, inAddr, mailto[1], "From: Dan <dan@example.com>\nTo: "+mailto[1]+"\nSubject: unsubscribe\n\nunsubscribe\n"); err != nil {
		t.Fatal(err)
	}
	h.db.R.Model(&models.Unsubscriber{}).Where("email_address = ? AND unsubscribe_groups_id = ?", "dan@example.com", 1).Count(&n)
	if n != 1 {
		t.Fatal("dan did not leave the group")
	}
	if _, _, u := counts(); u != 2 {
		t.Fatalf("unsubscribes after the mailto: %v", u)
	}
}

// writeCert writes a self-signed certificate and its key as PEM files.
func writeCert(t *testing.T) (certFile, keyFile string) {
	t.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	tmpl := &x509.Certificate{SerialNumber: big.NewInt(1), Subject: pkix.Name{CommonName: "herald.test"},
		NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(time.Hour), DNSNames: []string{"herald.test"}}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		t.Fatal(err)
	}
	kder, err := x509.MarshalECPrivateKey(key)
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	certFile, keyFile = filepath.Join(dir, "cert.pem"), filepath.Join(dir, "key.pem")
	if err := os.WriteFile(certFile, pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der}), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(keyFile, pem.EncodeToMemory(&pem.Block{Type: "EC PRIVATE KEY", Bytes: kder}), 0o600); err != nil {
		t.Fatal(err)
	}
	return certFile, keyFile
}

func TestInboundConfig(t *testing.T) {
	t.Parallel()
	cfg, err := loadConfig(envFrom(map[string]string{}))
	if err != nil || cfg.Inbound.Addr != "" || cfg.Inbound.TLS != nil || cfg.Inbound.MaxConnsPerIP != 10 {
		t.Fatalf("default: %+v %v", cfg.Inbound, err)
	}
	cfg, err = loadConfig(envFrom(map[string]string{"HERALD_INBOUND_ADDR": ":2525", "HERALD_INBOUND_MAX_CONNS_PER_IP": "3"}))
	if err != nil || cfg.Inbound.MaxConnsPerIP != 3 {
		t.Fatalf("per IP: %+v %v", cfg.Inbound, err)
	}
	cert, key := writeCert(t)
	cfg, err = loadConfig(envFrom(map[string]string{"HERALD_INBOUND_ADDR": ":2525", "HERALD_INBOUND_TLS_CERT": cert, "HERALD_INBOUND_TLS_KEY": key}))
	if err != nil || cfg.Inbound.Addr != ":2525" || cfg.Inbound.TLS == nil || len(cfg.Inbound.TLS.Certificates) != 1 {
		t.Fatalf("with TLS: %+v %v", cfg.Inbound, err)
	}
	for _, c := range []struct {
		env  map[string]string
		want string
	}{
		{map[string]string{"HERALD_INBOUND_ADDR": ":2525", "HERALD_INBOUND_TLS_CERT": cert}, "set both or neither"},
		{map[string]string{"HERALD_INBOUND_ADDR": ":2525", "HERALD_INBOUND_TLS_KEY": key}, "set both or neither"},
		{map[string]string{"HERALD_INBOUND_TLS_CERT": cert, "HERALD_INBOUND_TLS_KEY": key}, "HERALD_INBOUND_ADDR is not"},
		{map[string]string{"HERALD_INBOUND_ADDR": "2525"}, "HERALD_INBOUND_ADDR"},
		{map[string]string{"HERALD_INBOUND_ADDR": ":2525", "HERALD_INBOUND_MAX_CONNS_PER_IP": "0"}, "HERALD_INBOUND_MAX_CONNS_PER_IP"},
		{map[string]string{"HERALD_INBOUND_ADDR": ":2525", "HERALD_INBOUND_MAX_CONNS_PER_IP": "ten"}, "HERALD_INBOUND_MAX_CONNS_PER_IP"},
		{map[string]string{"HERALD_INBOUND_ADDR": ":2525", "HERALD_INBOUND_TLS_CERT": key, "HERALD_INBOUND_TLS_KEY": cert}, "HERALD_INBOUND_TLS_CERT"},
		{map[string]string{"HERALD_INBOUND_ADDR": ":2525", "HERALD_INBOUND_TLS_CERT": "/nonexistent.pem", "HERALD_INBOUND_TLS_KEY": key}, "HERALD_INBOUND_TLS_CERT"},
	} {
		if _, err := loadConfig(envFrom(c.env)); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%v: %v", c.env, err)
		}
	}
}
