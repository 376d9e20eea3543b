package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/mail"
	"os"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/emersion/go-msgauth/dkim"

	"herald/dbtest"
	"herald/dnstest"
	"herald/models"
	"herald/service"
)

// `herald dkim create` makes the account's key for a domain once, prints
// its record as exactly three keys, and the key is the one the sender DNS
// page shows and the one the domain's mail is signed with once a DNS
// check has seen its record (at once with --sign-now).
func TestDKIMCreate(t *testing.T) {
	t.Parallel()
	dsn := dbtest.DSN(t)
	env := envFrom(map[string]string{"HERALD_DATABASE": dsn, "HERALD_LOG_LEVEL": "error"})
	ctx := context.Background()
	var out bytes.Buffer
	if err := run(ctx, []string{"herald", "account", "create", "--email", "owner@example.com", "--password", "test-passphrase-9", "--name", "Owner"}, env, &out); err != nil {
		t.Fatal(err)
	}
	var keys keysOut
	if err := json.Unmarshal(out.Bytes(), &keys); err != nil {
		t.Fatal(err)
	}

	create := func(args ...string) (string, error) {
		var b bytes.Buffer
		err := run(ctx, append([]string{"herald", "dkim", "create"}, args...), env, &b)
		return b.String(), err
	}
	first, err := create("--email", "Owner@Example.com", "--domain", " Shop.Example.COM ")
	if err != nil {
		t.Fatal(err)
	}
	if strings.Count(first, "\n") != 1 || !strings.HasSuffix(first, "}\n") {
		t.Fatalf("not one JSON line: %q", first)
	}
	var fields map[string]any
	if err := json.Unmarshal([]byte(first), &fields); err != nil {
		t.Fatalf("not one JSON object: %q", first)
	}
	if len(fields) != 3 {
		t.Fatalf("keys: %v", fields)
	}
	var rec dkimOut
	_ = json.Unmarshal([]byte(first), &rec)
	if rec.Domain != "shop.example.com" || rec.Selector == "" || !strings.HasPrefix(rec.Record, "v=DKIM1; k=rsa; p=") || len(rec.Record) < len("v=DKIM1; k=rsa; p=")+300 {
		t.Fatalf("printed %q", first)
	}
	// A second run returns the same key.
	second, err := create("--domain", "shop.example.com", "--email", "owner@example.com")
	if err != nil || second != first {
		t.Fatalf("second run: %v %q, first %q", err, second, first)
	}

	// Errors: an unknown account, a missing or bad domain; nothing printed.
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"--email", "nobody@example.com", "--domain", "shop.example.com"}, `no account with email "nobody@example.com"`},
		{[]string{"--domain", "shop.example.com"}, "no account with email"},
		{[]string{"--email", "owner@example.com"}, "domain: The domain field is required."},
		{[]string{"--email", "owner@example.com", "--domain", "localhost"}, "domain: The domain must be a valid domain name."},
		{[]string{"--email", "owner@example.com", "--domain", "shop example.com"}, "must be a valid domain name"},
		{[]string{"--email", "owner@example.com", "--domain", "shop.example.com\r\nX-Evil: 1"}, "must be a valid domain name"},
		{[]string{"--email", "owner@example.com", "--domain", "a@shop.example.com"}, "must be a valid domain name"},
		{[]string{"--email", "owner@example.com", "--domain", ".example.com"}, "must be a valid domain name"},
		{[]string{"--email", "owner@example.com", "--domain", "shop..example.com"}, "must be a valid domain name"},
		{[]string{"--email", "owner@example.com", "--domain", strings.Repeat("a.", 126) + "com"}, "must be a valid domain name"},
		{[]string{"--email", "owner@example.com", "--domain", "shop.example.com", "extra"}, "unexpected argument"},
		{[]string{"--bogus"}, "flag provided but not defined"},
	} {
		got, err := create(c.args...)
		if err == nil || !strings.Contains(err.Error(), c.want) || got != "" {
			t.Errorf("%q: %v (printed %q), want an error with %q", c.args, err, got, c.want)
		}
	}
	if err := run(ctx, []string{"herald", "dkim", "delete"}, env, io.Discard); err == nil {
		t.Error("unknown dkim command accepted")
	}

	// The console's DNS records for a sender of the domain show that key.
	// Like the console's key, it signs only once a DNS check has seen its
	// record: before, the domain's mail goes out unsigned.
	db, err := service.OpenDB(dsn)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	srv := dnstest.Start(t)
	svc := newService(t, db, service.Config{BaseURL: "http://herald.test", SystemFrom: "no-reply@herald.test",
		DomainChecks: service.DomainCheckConfig{DNSServer: srv.Addr}})
	snd := verifiedSender(t, svc, keys.UserID, "news@shop.example.com")
	records, err := svc.Senders.DNSRecords(ctx, keys.UserID, snd.ID)
	if err != nil {
		t.Fatal(err)
	}
	recordName := rec.Selector + "._domainkey." + rec.Domain
	if len(records) == 0 || records[0].Purpose != "DKIM" || records[0].Name != recordName || records[0].Value != rec.Record {
		t.Fatalf("DNS page records %+v, printed %+v", records, rec)
	}
	var stored []models.SenderDomain
	db.R.Where("user_id = ? AND domain = ?", keys.UserID, "shop.example.com").Find(&stored)
	if len(stored) != 1 || stored[0].SignAnyway != 0 || stored[0].PublishedAt != nil {
		t.Fatalf("keys stored for the domain: %+v", stored)
	}
	var due int64
	db.R.Model(&models.DomainCheck{}).Where("user_id = ? AND domain = ?", keys.UserID, "shop.example.com").Count(&due)
	if due != 1 {
		t.Fatal("the domain did not join the DNS checks")
	}
	if h := testMail(t, svc, keys.UserID, snd, "first@example.org").Header.Get("DKIM-Signature"); h != "" {
		t.Fatalf("signed before a DNS check saw the record: %s", h)
	}
	srv.TXT(t, recordName, rec.Record)
	if _, err := svc.DomainChecks.CheckNow(ctx, keys.UserID, "shop.example.com"); err != nil {
		t.Fatal(err)
	}
	wantSigned(t, testMail(t, svc, keys.UserID, snd, "second@example.org"), rec)

	// --sign-now: for a record published where herald's DNS does not see
	// it; the key signs at once, and the printed object is the same.
	signed, err := create("--email", "owner@example.com", "--domain", "now.example.com", "--sign-now")
	if err != nil {
		t.Fatal(err)
	}
	fields = nil
	if err := json.Unmarshal([]byte(signed), &fields); err != nil || len(fields) != 3 || strings.Count(signed, "\n") != 1 {
		t.Fatalf("--sign-now printed %q", signed)
	}
	var now dkimOut
	_ = json.Unmarshal([]byte(signed), &now)
	if again, err := create("--email", "owner@example.com", "--domain", "now.example.com", "--sign-now"); err != nil || again != signed {
		t.Fatalf("second --sign-now: %v %q, first %q", err, again, signed)
	}
	wantSigned(t, testMail(t, svc, keys.UserID, verifiedSender(t, svc, keys.UserID, "news@now.example.com"), "third@example.org"), now)
}

// verifiedSender adds a verified sender of email to the account.
func verifiedSender(t *testing.T, svc *service.Service, acct int64, email string) *models.Sender {
	t.Helper()
	ctx := context.Background()
	snd, err := svc.Senders.Create(ctx, acct, service.SenderInput{FromName: "Shop", FromEmail: email,
		ReplyToEmail: "help@shop.example.com", CountryID: "250", CompanyAddress: "1 rue de Rivoli", Nickname: "shop"})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := svc.Senders.Verify(ctx, snd.VerifyToken); err != nil {
		t.Fatal(err)
	}
	return snd
}

// testMail sends a test of a single send from snd to rcpt through the
// outbox and returns it.
func testMail(t *testing.T, svc *service.Service, acct int64, snd *models.Sender, rcpt string) *mail.Message {
	t.Helper()
	ctx := context.Background()
	var g []models.UnsubscribeGroup
	svc.DB.R.Where("user_id = ?", acct).Limit(1).Find(&g)
	if len(g) == 0 {
		made, err := svc.Groups.Create(ctx, acct, service.GroupInput{GroupName: "Newsletter", Description: "Our news", IsDisplay: "1"})
		if err != nil {
			t.Fatal(err)
		}
		g = append(g, *made)
	}
	in := service.SingleSendInput{
		TemplateID: "1", TemplateHTML: `<html><body><p>Hello ((first_name))!</p><a href="((unsubscribe_preferences))">Preferences</a></body></html>`,
		SenderID: strconv.FormatInt(snd.ID, 10), UnsubscribeGroupID: strconv.FormatInt(g[0].ID, 10),
		SingleSendName: "Signed", Subject: "Hi ((first_name))", Preheader: "News",
	}
	if err := svc.SingleSends.SendTest(ctx, acct, in, rcpt, svc.Mail); err != nil {
		t.Fatal(err)
	}
	var sent []byte
	err := svc.Outbox.Each(ctx, acct, service.ListFilter{}, func(m *models.OutboxMessage) error {
		if m.RcptTo != rcpt {
			return nil
		}
		full, err := svc.Outbox.Get(ctx, acct, m.ID)
		if err != nil {
			return err
		}
		sent = full.Message
		return nil
	})
	if err != nil || sent == nil {
		t.Fatalf("no message to %s in the outbox: %v", rcpt, err)
	}
	m, err := mail.ReadMessage(bytes.NewReader(sent))
	if err != nil {
		t.Fatal(err)
	}
	m.Body = io.NopCloser(bytes.NewReader(sent)) // the whole message, for the verifier
	return m
}

// wantSigned checks that m carries one DKIM signature of rec's key that
// verifies against rec's record.
func wantSigned(t *testing.T, m *mail.Message, rec dkimOut) {
	t.Helper()
	raw, _ := io.ReadAll(m.Body)
	name := rec.Selector + "._domainkey." + rec.Domain
	verifications, err := dkim.VerifyWithOptions(bytes.NewReader(raw), &dkim.VerifyOptions{LookupTXT: func(domain string) ([]string, error) {
		if domain != name {
			return nil, fmt.Errorf("no record %s", domain)
		}
		return []string{rec.Record}, nil
	}})
	if err != nil || len(verifications) != 1 || verifications[0].Err != nil || verifications[0].Domain != rec.Domain {
		t.Fatalf("DKIM: %v %+v\n%s", err, verifications, raw)
	}
}

// The README's example of `herald dkim create` prints what the command
// prints: the three keys, and a selector of the form every key gets
// (each key has its own), with the record's name built from it.
func TestREADMEDKIMExample(t *testing.T) {
	t.Parallel()
	readme, err := os.ReadFile("../../README.md")
	if err != nil {
		t.Fatal(err)
	}
	ex := regexp.MustCompile("(?m)^bin/herald dkim create [^\n]*\n# (\\{[^\n]*\\})$").FindSubmatch(readme)
	if ex == nil {
		t.Fatal("no example of herald dkim create with its output in README.md")
	}
	var shown map[string]string
	if err := json.Unmarshal(ex[1], &shown); err != nil || len(shown) != 3 || shown["domain"] == "" || shown["record"] == "" {
		t.Fatalf("README example %s: %v", ex[1], err)
	}

	env := envFrom(map[string]string{"HERALD_DATABASE": dbtest.DSN(t), "HERALD_LOG_LEVEL": "error"})
	ctx := context.Background()
	if err := run(ctx, []string{"herald", "account", "create", "--email", "owner@example.com", "--password", "test-passphrase-9", "--name", "Owner"}, env, io.Discard); err != nil {
		t.Fatal(err)
	}
	var out bytes.Buffer
	if err := run(ctx, []string{"herald", "dkim", "create", "--email", "owner@example.com", "--domain", shown["domain"]}, env, &out); err != nil {
		t.Fatal(err)
	}
	var printed dkimOut
	if err := json.Unmarshal(out.Bytes(), &printed); err != nil {
		t.Fatal(err)
	}
	selector := regexp.MustCompile(`^h[0-9a-f]{10}$`)
	if !selector.MatchString(printed.Selector) {
		t.Fatalf("printed selector %q: the README's rule is out of date", printed.Selector)
	}
	if !selector.MatchString(shown["selector"]) {
		t.Fatalf("README shows selector %q; herald prints selectors such as %q", shown["selector"], printed.Selector)
	}
	if name := shown["selector"] + "._domainkey." + shown["domain"]; !bytes.Contains(readme, []byte("`"+name+"`")) {
		t.Fatalf("README does not name the record %s", name)
	}
}
