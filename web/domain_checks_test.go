package web_test

import (
	"context"
	"net/http"
	"net/url"
	"strings"
	"testing"

	"herald/dbtest"
	"herald/dnstest"
	"herald/service"
	"herald/web"
)

// TestSenderDomainChecks: the sender's page shows the DNS checks with
// their fixes; Check now, the sign-anyway switch and the sending
// addresses answer htmx with the card.
func TestSenderDomainChecks(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	srv := dnstest.Start(t)
	svc := dbtest.Service(t, service.Config{BaseURL: "https://herald.example.net", BounceAddress: "bounces@example.com",
		DomainChecks: service.DomainCheckConfig{DNSServer: srv.Addr, RelayHost: "relay.example.net"}})
	srv.Add(t, `relay.example.net. A 198.51.100.7`, `example.com. MX 10 mx.example.com.`, `_dmarc.example.com. TXT "v=DMARC1; p=none"`)
	a := newTestAppOn(t, svc, web.Options{})
	c, acct := a.account("Ada", "ada@example.com")
	s, err := svc.Senders.Create(ctx, acct, service.SenderInput{FromName: "News", FromEmail: "news@example.com", ReplyToEmail: "help@example.com",
		CountryID: "250", CompanyAddress: "1 rue de Rivoli", Nickname: "news"})
	if err != nil {
		t.Fatal(err)
	}
	id := itoa(s.ID)

	r := c.get("/senders/" + id)
	wantStatus(t, r, http.StatusOK)
	card := first(r.doc, "#sender-checks")
	if card == nil || !strings.Contains(text(first(card, "[data-checked-at]")), "Not checked yet") ||
		attr(first(card, "button[data-check-now]").Parent, "hx-post") != "/senders/"+id+"/check" {
		t.Fatalf("checks card before a check:\n%.3000s", r.body)
	}
	if !strings.Contains(text(first(card, "[data-signing]")), "goes out unsigned") {
		t.Fatalf("signing: %q", text(first(card, "[data-signing]")))
	}
	// The DKIM value (over 255 characters) is shown as quoted strings.
	dk := text(first(r.doc, "#dns-DKIM-value"))
	if !strings.HasPrefix(dk, `"v=DKIM1; k=rsa; p=`) || !strings.Contains(dk, `" "`) {
		t.Fatalf("DKIM value not split: %q", dk)
	}

	spf := text(first(r.doc, "#dns-SPF-value"))

	r = c.hxPost("/senders/"+id+"/check", nil)
	wantStatus(t, r, http.StatusOK)
	if got := attr(first(r.doc, `[data-check="DKIM"]`), "data-status"); got != "fail" {
		t.Fatalf("DKIM status %q:\n%.3000s", got, r.body)
	}
	if !strings.Contains(text(first(r.doc, `[data-check="DKIM"] [data-fix]`)), "Publish this TXT record at") {
		t.Fatal("DKIM failure without its fix")
	}
	// A failed check's record is the one of the DNS records card: the
	// check links to it instead of showing it twice.
	if got := attr(first(r.doc, `[data-check="SPF"] a[data-record-above]`), "href"); got != "#dns-SPF" || spf != "v=spf1 a:relay.example.net ~all" {
		t.Fatalf("SPF proposal: link %q to the record %q", got, spf)
	}
	if n := len(all(r.doc, ".dns-fields")); n != 0 {
		t.Fatalf("the checks card repeats %d records of the DNS records card", n)
	}
	if got := attr(first(r.doc, `[data-check="DMARC"]`), "data-status"); got != "warn" {
		t.Fatalf("DMARC status %q", got)
	}
	if !strings.Contains(text(first(r.doc, "[data-checked-at]")), "Last checked") {
		t.Fatal("no time of the check")
	}

	// Published: the check passes and the key signs.
	key, err := svc.Mail.DomainKey(ctx, acct, "example.com")
	if err != nil {
		t.Fatal(err)
	}
	name, value := key.DNSRecord()
	srv.TXT(t, name, value)
	r = c.hxPost("/senders/"+id+"/check", nil)
	if got := attr(first(r.doc, `[data-check="DKIM"]`), "data-status"); got != "pass" {
		t.Fatalf("DKIM status after publishing %q", got)
	}
	if !strings.Contains(text(first(r.doc, "[data-signing]")), key.Selector) {
		t.Fatalf("signing after publishing: %q", text(first(r.doc, "[data-signing]")))
	}

	r = c.hxPost("/senders/"+id+"/sign-anyway", url.Values{"on": {"1"}})
	if first(r.doc, `button[data-sign-anyway="on"]`) == nil {
		t.Fatalf("sign anyway not on:\n%.2000s", r.body)
	}
	r = c.hxPost("/senders/"+id+"/sending-ips", url.Values{"sending_ips": {"192.0.2.1, nope"}})
	if !strings.Contains(text(first(r.doc, "#sending-ips-errors")), "nope is not") || attr(first(r.doc, "#sending-ips"), "value") != "192.0.2.1, nope" {
		t.Fatalf("bad address:\n%.2000s", r.body)
	}
	r = c.hxPost("/senders/"+id+"/sending-ips", url.Values{"sending_ips": {"192.0.2.1"}})
	if attr(first(r.doc, "#sending-ips"), "value") != "192.0.2.1" || first(r.doc, `[data-check="SPF"] a[data-record-above]`) == nil {
		t.Fatalf("sending addresses saved:\n%.2000s", r.body)
	}
	if got := text(first(c.get("/senders/"+id).doc, "#dns-SPF-value")); got != "v=spf1 a:relay.example.net ip4:192.0.2.1 ~all" {
		t.Fatalf("SPF proposal with the named address %q", got)
	}

	// Rotation: a second record appears; the first key still signs.
	r = c.post("/senders/"+id+"/rotate-key", nil)
	wantRedirect(t, r, "/senders/"+id)
	r = c.get("/senders/" + id)
	if first(r.doc, "#dns-1") == nil || !strings.Contains(text(first(r.doc, "#dns-1")), "keep it until") {
		t.Fatalf("rotation records:\n%s", text(first(r.doc, ".dns-card")))
	}

	// Another account cannot check this sender.
	other, _ := a.account("Bob", "bob@example.com")
	other.get("/senders")
	wantStatus(t, other.hxPost("/senders/"+id+"/check", nil), http.StatusNotFound)
}

// TestComposeNamesUnsignedSenders: the compose page says which senders'
// mail goes out unsigned, until their key may sign.
func TestComposeNamesUnsignedSenders(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	a := newTestApp(t, web.Options{})
	c, acct := a.account("Ada", "ada@example.com")
	s, err := a.svc.Senders.Create(ctx, acct, service.SenderInput{FromName: "News", FromEmail: "news@example.com", ReplyToEmail: "help@example.com",
		CountryID: "250", CompanyAddress: "1 rue de Rivoli", Nickname: "news"})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := a.svc.Senders.Verify(ctx, s.VerifyToken); err != nil {
		t.Fatal(err)
	}
	r := c.get("/single-sends/new")
	wantStatus(t, r, http.StatusOK)
	if got := text(first(r.doc, "#send-unsigned")); !strings.Contains(got, "news@example.com") {
		t.Fatalf("unsigned note %q", got)
	}
	if err := a.svc.DomainChecks.SetSignAnyway(ctx, acct, "example.com", true); err != nil {
		t.Fatal(err)
	}
	if r = c.get("/single-sends/new"); first(r.doc, "#send-unsigned") != nil {
		t.Fatalf("note shown for a signing sender: %q", text(first(r.doc, "#send-unsigned")))
	}
}

// TestSenderPageShowsSystemKey: the record of the key of herald's own
// mail is among the sender's DNS records even when the sender's domain is
// the one that mail comes from, and the checks card says whether that
// mail is signed: not until Check now sees the record.
func TestSenderPageShowsSystemKey(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	srv := dnstest.Start(t)
	svc := dbtest.Service(t, service.Config{BaseURL: "https://herald.example.com", SystemFrom: "no-reply@example.com", BounceAddress: "bounces@example.com",
		DomainChecks: service.DomainCheckConfig{DNSServer: srv.Addr}})
	a := newTestAppOn(t, svc, web.Options{})
	c, acct := a.account("Ada", "ada@example.com")
	s, err := svc.Senders.Create(ctx, acct, service.SenderInput{FromName: "News", FromEmail: "news@example.com", ReplyToEmail: "help@example.com",
		CountryID: "250", CompanyAddress: "1 rue de Rivoli", Nickname: "news"})
	if err != nil {
		t.Fatal(err)
	}
	id := itoa(s.ID)

	r := c.get("/senders/" + id)
	wantStatus(t, r, http.StatusOK)
	var record string
	for _, rec := range all(r.doc, ".dns-card .dns-record") {
		if h := first(rec, "h3"); h != nil && text(h) == service.PurposeSystemDKIM {
			record = attr(rec, "id")
		}
	}
	if record == "" {
		t.Fatalf("no record of herald's own key on the sender's page:\n%s", text(first(r.doc, ".dns-card")))
	}
	sys, err := svc.Mail.SystemKeyState(ctx)
	if err != nil {
		t.Fatal(err)
	}
	name := text(first(r.doc, "#"+record+"-name"))
	if name != "herald._domainkey.example.com" || name != sys.Record.Name || text(first(r.doc, "#"+record+"-value")) != sys.Record.Publishable() {
		t.Fatalf("herald's own key on the page: %q = %q, want %+v", name, text(first(r.doc, "#"+record+"-value")), sys.Record)
	}
	if got := text(first(r.doc, "[data-system-signing]")); !strings.Contains(got, "no-reply@example.com") || !strings.Contains(got, "goes out unsigned") {
		t.Fatalf("herald's own mail before the record: %q", got)
	}

	srv.TXT(t, name, sys.Record.Value)
	r = c.hxPost("/senders/"+id+"/check", nil)
	wantStatus(t, r, http.StatusOK)
	if got := text(first(r.doc, "[data-system-signing]")); !strings.Contains(got, "is DKIM-signed") || !strings.Contains(got, name) {
		t.Fatalf("herald's own mail after the record was seen: %q", got)
	}
}
