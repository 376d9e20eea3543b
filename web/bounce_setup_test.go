package web_test

import (
	"context"
	"net/http"
	"strings"
	"testing"

	"herald/dbtest"
	"herald/delivery"
	"herald/dnstest"
	"herald/service"
	"herald/web"
)

// The setup page shows the exact DNS and relay settings for the bounce
// domain, which ways of hearing back are on, and which of the account's
// From domains align with the return path.
func TestBounceSetupPage(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	srv := dnstest.Start(t)
	srv.Add(t, `mail.shop.example.com. MX 10 mx.shop.example.com.`)
	svc := dbtest.Service(t, service.Config{BaseURL: "https://herald.example.com",
		DomainChecks: service.DomainCheckConfig{DNSServer: srv.Addr, RelayHost: "email-smtp.eu-west-1.amazonaws.com", Inbound: true}})
	a := newTestAppOn(t, svc, web.Options{BaseURL: "https://herald.example.com", Hearing: web.Hearing{
		InboundAddr: ":2525", Postmark: true, Mailbox: "imaps://bounces@imap.example.com/INBOX",
	}})
	if err := a.svc.Bounces.SetAddress("bounces@mail.shop.example.com"); err != nil {
		t.Fatal(err)
	}
	c, acct := a.account("Ada", "ada@example.com")
	in := service.SenderInput{FromName: "Shop", FromEmail: "news@shop.example.com", ReplyToEmail: "help@shop.example.com",
		CountryID: "250", CompanyAddress: "1 rue de Rivoli", Nickname: "shop"}
	if _, err := a.svc.Senders.Create(ctx, acct, in); err != nil {
		t.Fatal(err)
	}
	in.FromEmail, in.Nickname = "hello@other.example.net", "other"
	if _, err := a.svc.Senders.Create(ctx, acct, in); err != nil {
		t.Fatal(err)
	}
	// Another account's sender is not shown.
	_, eve := a.account("Eve", "eve@example.com")
	in.FromEmail, in.Nickname = "x@eve-secret.example.org", "eve"
	if _, err := a.svc.Senders.Create(ctx, eve, in); err != nil {
		t.Fatal(err)
	}

	r := c.get("/suppressions/setup")
	wantStatus(t, r, http.StatusOK)
	if strings.Contains(r.body, "eve-secret") {
		t.Fatal("another account's sender is shown")
	}
	if got := attr(first(r.doc, "nav.tabs a.is-active"), "href"); got != "/suppressions/setup" {
		t.Fatalf("active tab %q", got)
	}
	values := texts(r.doc, "#setup-dns pre code")
	want := []string{"mail.shop.example.com", "10 herald.example.com.", "mail.shop.example.com", "v=spf1 include:amazonses.com ~all"}
	if strings.Join(values, "|") != strings.Join(want, "|") {
		t.Fatalf("DNS records %q, want %q", values, want)
	}
	if got := text(first(r.doc, "#setup-mx")); got != "mx.shop.example.com" || !strings.Contains(text(first(r.doc, "#setup-dns")), "forward port 25 to it") {
		t.Fatalf("the MX record does not say port 2525 needs a forward:\n%s", r.body)
	}
	for id, on := range map[string]bool{"inbound": true, "mailbox": true, "ses": true, "sendgrid": false, "postmark": true, "mailgun": false} {
		badge := text(first(r.doc, "#channel-"+id+" .badge"))
		if (badge == "On") != on {
			t.Errorf("channel %s: %q, want on=%v", id, badge, on)
		}
	}
	if got := text(first(r.doc, "#channel-postmark code")); got != "https://herald.example.com/webhooks/postmark" {
		t.Errorf("Postmark URL %q", got)
	}
	if got := text(first(r.doc, "#channel-inbound")); !strings.Contains(got, "listening on :2525") || !strings.Contains(got, "HERALD_INBOUND_TLS_CERT") {
		t.Errorf("inbound channel: %q", got)
	}
	rows := all(r.doc, "#setup-alignment tbody tr")
	if len(rows) != 2 || !strings.Contains(text(rows[0]), "shop.example.com") || !strings.Contains(text(rows[0]), "Aligned") ||
		!strings.Contains(text(rows[1]), "other.example.net") || !strings.Contains(text(rows[1]), "Not aligned") ||
		!strings.Contains(text(rows[1]), "HERALD_BOUNCE_ADDRESS=bounces@other.example.net") {
		t.Fatalf("alignment rows:\n%s", r.body)
	}
	if got := text(first(r.doc, "#relay-postfix pre")); !strings.Contains(got, "relay_domains = mail.shop.example.com") ||
		!strings.Contains(got, "mail.shop.example.com smtp:[127.0.0.1]:2525") {
		t.Fatalf("postfix snippet: %q", got)
	}
	if !strings.Contains(text(first(r.doc, "#setup-channels")), "No report has arrived") {
		t.Fatal("no word about the last report")
	}
}

func TestAligned(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		bounce, from string
		want         bool
	}{
		{"mail.shop.example.com", "shop.example.com", true},
		{"bounces.example.co.uk", "news.example.co.uk", true},
		{"example.co.uk", "other.co.uk", false},
		{"herald.example.com", "shop.example.net", false},
		{"localhost", "localhost", true},
	} {
		if got := service.Aligned(c.bounce, c.from); got != c.want {
			t.Errorf("Aligned(%q, %q) = %v, want %v", c.bounce, c.from, got, c.want)
		}
	}
}

// The setup page counts, server wide, the reports herald could not tie to
// a message (by why, and by source and sender IP) and the bounce
// mailbox's mails it could not read; it says the counts are server-wide
// and shows no address, not even the account's own.
func TestBounceSetupUntiedCounts(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	a := newTestApp(t, web.Options{BaseURL: "https://herald.example.com", Hearing: web.Hearing{InboundAddr: ":2525"}})
	c, _ := a.account("Ada", "ada@example.com")
	r := c.get("/suppressions/setup")
	wantStatus(t, r, http.StatusOK)
	if got := text(first(r.doc, "#untied-reports")); !strings.HasPrefix(got, "0 reports") {
		t.Fatalf("no untied report yet: %q", got)
	}
	if first(r.doc, "#untied-why") != nil || !strings.Contains(text(first(r.doc, "#setup-untied")), "No bounce mailbox is read") {
		t.Fatalf("an empty untied card:\n%s", r.body)
	}

	// Reports naming other accounts' addresses (and Ada's own contact),
	// tied to nothing: from a relay, a feedback loop, a webhook caller and
	// the bounce mailbox.
	addresses := []string{"c0-of-eve@eve-secret.example.org", "ann-of-ada@ada-contacts.example.com", "bob-hidden@hidden.example.net"}
	if err := a.svc.Feedback.Handle(ctx, []service.Report{
		{Kind: delivery.ReportHardBounce, Source: delivery.SourceDSN, RemoteIP: "192.0.2.7", Recipient: addresses[0], Status: "5.1.1"},
		{Kind: delivery.ReportHardBounce, Source: delivery.SourceDSN, RemoteIP: "192.0.2.7", Recipient: addresses[1], Token: "aaaaaaaaaaaaaaaaaaaaaaaaaa"},
		{Kind: delivery.ReportComplaint, Source: delivery.SourceARF, RemoteIP: "198.51.100.1", Recipient: addresses[2]},
		{Kind: delivery.ReportSoftBounce, Source: delivery.SourceText, Recipient: addresses[0], MessageID: "123@mx.example.com"},
	}); err != nil {
		t.Fatal(err)
	}
	for _, k := range []delivery.KeptMail{
		{Mailbox: "imaps://bounce@imap.example.com:993/INBOX", ID: "1/1", Why: delivery.KeptNotAReport},
		{Mailbox: "imaps://bounce@imap.example.com:993/INBOX", ID: "1/2", Why: delivery.KeptNotAReport},
		{Mailbox: "imaps://bounce@imap.example.com:993/INBOX", ID: "1/3", Why: delivery.KeptTooLarge},
	} {
		if err := a.svc.Feedback.KeepMail(ctx, k); err != nil {
			t.Fatal(err)
		}
	}

	r = c.get("/suppressions/setup")
	wantStatus(t, r, http.StatusOK)
	card := text(first(r.doc, "#setup-untied"))
	if !strings.Contains(card, "server-wide") || !strings.Contains(card, "every account") {
		t.Fatalf("the card does not say its counts are server-wide: %q", card)
	}
	if got := text(first(r.doc, "#untied-reports")); !strings.HasPrefix(got, "4 reports") {
		t.Fatalf("untied reports: %q", got)
	}
	rows := func(sel string) string {
		var out []string
		for _, tr := range all(r.doc, sel+" tbody tr") {
			out = append(out, strings.Join(texts(tr, "td"), " "))
		}
		return strings.Join(out, " | ")
	}
	if got, want := rows("#untied-why"), "no token 2 | message-id does not verify 1 | token does not verify 1"; got != want {
		t.Errorf("by why: %q, want %q", got, want)
	}
	if got, want := rows("#untied-senders"), "Bounce report (DSN) 192.0.2.7 2 | Feedback loop (ARF) 198.51.100.1 1 | Bounce mail bounce mailbox 1"; got != want {
		t.Errorf("by sender: %q, want %q", got, want)
	}
	if got := text(first(r.doc, "#untied-kept")); !strings.HasPrefix(got, "3 mails") {
		t.Errorf("kept mails: %q", got)
	}
	if got, want := rows("#kept-why"), "not a report 2 | too large 1"; got != want {
		t.Errorf("kept by why: %q, want %q", got, want)
	}
	for _, addr := range addresses {
		for _, part := range []string{addr, addr[:strings.IndexByte(addr, '@')], addr[strings.IndexByte(addr, '@')+1:]} {
			if strings.Contains(r.body, part) {
				t.Fatalf("the page shows %q of an untied report's address", part)
			}
		}
	}
}

// TestSPFOneRuleOnBothPages: for one domain, the sender's DNS page and the
// Setup page propose the same SPF record; with the relay on herald's own
// machine it names herald's public host (a:), never 127.0.0.1.
func TestSPFOneRuleOnBothPages(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	srv := dnstest.Start(t)
	svc := dbtest.Service(t, service.Config{BaseURL: "https://herald.example.com", BounceAddress: "bounces@shop.example.com",
		DomainChecks: service.DomainCheckConfig{DNSServer: srv.Addr, RelayHost: "127.0.0.1", Inbound: true}})
	a := newTestAppOn(t, svc, web.Options{BaseURL: "https://herald.example.com", Hearing: web.Hearing{InboundAddr: ":2525"}})
	c, acct := a.account("Ada", "ada@example.com")
	s, err := svc.Senders.Create(ctx, acct, service.SenderInput{FromName: "Shop", FromEmail: "news@shop.example.com", ReplyToEmail: "help@shop.example.com",
		CountryID: "250", CompanyAddress: "1 rue de Rivoli", Nickname: "shop"})
	if err != nil {
		t.Fatal(err)
	}
	const want = "v=spf1 a:herald.example.com ~all"
	r := c.get("/senders/" + itoa(s.ID))
	wantStatus(t, r, http.StatusOK)
	if got := text(first(r.doc, "#dns-SPF-value")); got != want {
		t.Fatalf("sender page SPF %q, want %q", got, want)
	}
	r = c.get("/suppressions/setup")
	wantStatus(t, r, http.StatusOK)
	if got := text(first(r.doc, "#setup-spf-value")); got != want {
		t.Fatalf("Setup page SPF %q, want %q", got, want)
	}
}

// TestSetupPageWarnsPlainHTTP: the Setup page says that RFC 8058
// one-click unsubscribe needs https when the public address is plain
// http on a host that is not this machine.
func TestSetupPageWarnsPlainHTTP(t *testing.T) {
	t.Parallel()
	for base, warn := range map[string]bool{
		"http://herald.example.com":  true,
		"http://192.0.2.10:8080":     true,
		"https://herald.example.com": false,
		"http://localhost:8080":      false,
		"http://127.0.0.1:8080":      false,
	} {
		t.Run(base, func(t *testing.T) {
			a := newTestApp(t, web.Options{BaseURL: base})
			c, _ := a.account("Ada", "ada@example.com")
			r := c.get("/suppressions/setup")
			wantStatus(t, r, http.StatusOK)
			note := first(r.doc, "#setup-https")
			if (note != nil) != warn {
				t.Fatalf("%s: https note shown %v, want %v", base, note != nil, warn)
			}
			if warn && (!strings.Contains(text(note), "RFC 8058") || !strings.Contains(text(note), "https")) {
				t.Fatalf("note %q", text(note))
			}
		})
	}
}
