package service_test

import (
	"bytes"
	"context"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/emersion/go-msgauth/dkim"
	"github.com/miekg/dns"

	"herald/dbtest"
	"herald/dnstest"
	"herald/models"
	"herald/service"
	"herald/service/servicetest"
)

// checksService is a service whose domain checks ask srv, with the relay
// relay.example.net, bounces at shop.example.com and the inbound server on.
func checksService(t *testing.T, srv *dnstest.Server) *service.Service {
	t.Helper()
	return dbtest.Service(t, service.Config{BaseURL: "https://herald.example.net", BounceAddress: "bounces@shop.example.com",
		DomainChecks: service.DomainCheckConfig{DNSServer: srv.Addr, RelayHost: "relay.example.net", Inbound: true}})
}

// publishKey publishes the account's newest key of domain and returns its name.
func publishKey(t *testing.T, svc *service.Service, srv *dnstest.Server, acct int64, domain string) string {
	t.Helper()
	key, err := svc.Mail.DomainKey(context.Background(), acct, domain)
	if err != nil {
		t.Fatal(err)
	}
	name, value := key.DNSRecord()
	srv.TXT(t, name, value)
	return name
}

func byCheck(rep *service.DomainReport) map[string][]service.DomainCheckResult {
	out := map[string][]service.DomainCheckResult{}
	for _, r := range rep.Results {
		out[r.Check] = append(out[r.Check], r)
	}
	return out
}

func wantStatus(t *testing.T, rep *service.DomainReport, check, status, detail string) service.DomainCheckResult {
	t.Helper()
	rs := byCheck(rep)[check]
	if len(rs) == 0 {
		t.Fatalf("%s: no %s result in %+v", rep.Domain, check, rep.Results)
	}
	r := rs[0]
	if r.Status != status || !strings.Contains(r.Detail, detail) {
		t.Fatalf("%s %s = %s %q (fix %q), want %s containing %q", rep.Domain, check, r.Status, r.Detail, r.Fix, status, detail)
	}
	if status != service.StatusPass && r.Fix == "" {
		t.Fatalf("%s %s: a %s without a fix", rep.Domain, check, status)
	}
	return r
}

func TestDomainChecks(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	srv := dnstest.Start(t)
	svc := checksService(t, srv)
	acct := servicetest.NewAccount(t, svc, "owner@herald.test")
	srv.Add(t,
		`relay.example.net. A 198.51.100.7`,
		`relay.example.net. TXT "v=spf1 ip4:198.51.100.0/24 -all"`,
		`shop.example.com. TXT "v=spf1 include:relay.example.net -all"`,
		`shop.example.com. MX 10 herald.example.net.`,
		`_dmarc.shop.example.com. TXT "v=DMARC1; p=reject; rua=mailto:d@shop.example.com"`,
		// news.example.com: DMARC only at the organisational domain.
		`_dmarc.example.com. TXT "v=DMARC1; p=quarantine; sp=none"`,
		`news.example.com. TXT "v=spf1 ip4:198.51.100.7 ~all"`,
		// wrong.example.org: another key, two SPF records, p=none.
		`wrong.example.org. TXT "v=spf1 include:relay.example.net -all"`,
		`wrong.example.org. TXT "v=spf1 mx -all"`,
		`_dmarc.wrong.example.org. TXT "v=DMARC1; p=none"`,
		// revoked.example.org: revoked key, SPF without the relay, DMARC without a policy.
		`revoked.example.org. TXT "v=spf1 ip4:192.0.2.1 -all"`,
		`_dmarc.revoked.example.org. TXT "v=DMARC1; rua=mailto:x@revoked.example.org"`,
	)
	// many.example.org: SPF of 11 includes.
	var inc []string
	for i := 1; i <= 11; i++ {
		srv.Add(t, fmt.Sprintf(`s%d.example.net. TXT "v=spf1 ip4:10.1.0.%d -all"`, i, i))
		inc = append(inc, fmt.Sprintf("include:s%d.example.net", i))
	}
	srv.Add(t, `many.example.org. TXT "v=spf1 `+strings.Join(inc, " ")+` include:relay.example.net -all"`, `_dmarc.many.example.org. TXT "v=DMARC1; p=reject"`)

	t.Run("good", func(t *testing.T) {
		name := publishKey(t, svc, srv, acct, "shop.example.com")
		if auth, err := svc.DomainChecks.Authenticated(ctx, acct, "shop.example.com"); err != nil || auth.Checked {
			t.Fatalf("before any check: %+v %v", auth, err)
		}
		rep, err := svc.DomainChecks.CheckNow(ctx, acct, "Shop.Example.com")
		if err != nil {
			t.Fatal(err)
		}
		wantStatus(t, rep, service.CheckDKIM, service.StatusPass, name)
		wantStatus(t, rep, service.CheckSPF, service.StatusPass, "1 of 10 DNS lookups")
		wantStatus(t, rep, service.CheckDMARC, service.StatusPass, "policy reject")
		wantStatus(t, rep, service.CheckAlignment, service.StatusPass, "Both DKIM")
		wantStatus(t, rep, service.CheckBounce, service.StatusPass, "points at herald")
		if rep.Signing == "" || !strings.HasPrefix(name, rep.Signing+"._domainkey.") {
			t.Fatalf("signing selector %q, record %s", rep.Signing, name)
		}
		auth, err := svc.DomainChecks.Authenticated(ctx, acct, "shop.example.com")
		if err != nil || !auth.Checked || len(auth.Problems) != 0 || len(auth.Warnings) != 0 || auth.CheckedAt.IsZero() {
			t.Fatalf("Authenticated = %+v, %v", auth, err)
		}
		// Another account does not see it.
		other := servicetest.NewAccount(t, svc, "other@herald.test")
		if auth, _ := svc.DomainChecks.Authenticated(ctx, other, "shop.example.com"); auth.Checked {
			t.Fatal("another account's check seen")
		}
	})

	t.Run("org domain DMARC, sp=none", func(t *testing.T) {
		publishKey(t, svc, srv, acct, "news.example.com")
		rep, err := svc.DomainChecks.CheckNow(ctx, acct, "news.example.com")
		if err != nil {
			t.Fatal(err)
		}
		wantStatus(t, rep, service.CheckDMARC, service.StatusWarn, "_dmarc.example.com has policy none")
		wantStatus(t, rep, service.CheckSPF, service.StatusPass, "0 of 10")
		// Bounces at shop.example.com, same organisational domain: SPF aligns too.
		wantStatus(t, rep, service.CheckAlignment, service.StatusPass, "Both DKIM")
		auth, _ := svc.DomainChecks.Authenticated(ctx, acct, "news.example.com")
		if len(auth.Problems) != 0 || len(auth.Warnings) != 1 || !strings.Contains(auth.Warnings[0], "policy none") {
			t.Fatalf("problems %q warnings %q", auth.Problems, auth.Warnings)
		}
	})

	t.Run("missing", func(t *testing.T) {
		if _, err := svc.Mail.DomainKey(ctx, acct, "bare.example.org"); err != nil {
			t.Fatal(err)
		}
		rep, err := svc.DomainChecks.CheckNow(ctx, acct, "bare.example.org")
		if err != nil {
			t.Fatal(err)
		}
		dk := wantStatus(t, rep, service.CheckDKIM, service.StatusFail, "no DKIM record")
		if dk.Record == nil || !strings.HasPrefix(dk.Record.Value, "v=DKIM1; k=rsa; p=") || !strings.HasPrefix(dk.Fix, "Publish this TXT record at "+dk.Record.Name) {
			t.Fatalf("DKIM fix %q record %+v", dk.Fix, dk.Record)
		}
		spf := wantStatus(t, rep, service.CheckSPF, service.StatusFail, "no SPF record")
		if spf.Record == nil || spf.Record.Value != "v=spf1 include:relay.example.net ~all" {
			t.Fatalf("SPF proposal %+v", spf.Record)
		}
		dm := wantStatus(t, rep, service.CheckDMARC, service.StatusFail, "no DMARC record at _dmarc.bare.example.org")
		if dm.Record == nil || dm.Record.Name != "_dmarc.bare.example.org" {
			t.Fatalf("DMARC proposal %+v", dm.Record)
		}
		wantStatus(t, rep, service.CheckAlignment, service.StatusFail, "Neither DKIM nor SPF")
		if rep.Signing != "" {
			t.Fatalf("an unpublished key signs: %q", rep.Signing)
		}
		auth, _ := svc.DomainChecks.Authenticated(ctx, acct, "bare.example.org")
		if len(auth.Problems) != 4 || !strings.HasPrefix(auth.Problems[0], "DKIM: There is no DKIM record") {
			t.Fatalf("problems %q", auth.Problems)
		}
		// The DNS page proposes the relay merged in.
		if got := svc.DomainChecks.SPFProposal(ctx, acct, "bare.example.org"); got != "v=spf1 include:relay.example.net ~all" {
			t.Fatalf("SPFProposal = %q", got)
		}
	})

	t.Run("wrong", func(t *testing.T) {
		key, _ := svc.Mail.DomainKey(ctx, acct, "wrong.example.org")
		name, _ := key.DNSRecord()
		other, _ := svc.Mail.DomainKey(ctx, acct, "elsewhere.example.org")
		_, otherValue := other.DNSRecord()
		srv.TXT(t, name, otherValue)
		rep, err := svc.DomainChecks.CheckNow(ctx, acct, "wrong.example.org")
		if err != nil {
			t.Fatal(err)
		}
		wantStatus(t, rep, service.CheckDKIM, service.StatusFail, "different public key")
		wantStatus(t, rep, service.CheckSPF, service.StatusFail, "2 SPF records")
		wantStatus(t, rep, service.CheckDMARC, service.StatusWarn, "policy none")
		// Doubled: the right value published beside the wrong one.
		_, right := key.DNSRecord()
		srv.TXT(t, name, right)
		rep, _ = svc.DomainChecks.CheckNow(ctx, acct, "wrong.example.org")
		wantStatus(t, rep, service.CheckDKIM, service.StatusFail, "2 TXT records")
	})

	t.Run("revoked, relay refused, no policy", func(t *testing.T) {
		key, _ := svc.Mail.DomainKey(ctx, acct, "revoked.example.org")
		name, _ := key.DNSRecord()
		srv.TXT(t, name, "v=DKIM1; k=rsa; p=")
		rep, err := svc.DomainChecks.CheckNow(ctx, acct, "revoked.example.org")
		if err != nil {
			t.Fatal(err)
		}
		wantStatus(t, rep, service.CheckDKIM, service.StatusFail, "revokes the key")
		spf := wantStatus(t, rep, service.CheckSPF, service.StatusFail, "does not let in 198.51.100.7 (the relay relay.example.net): fail")
		if spf.Record == nil || spf.Record.Value != "v=spf1 ip4:192.0.2.1 include:relay.example.net -all" {
			t.Fatalf("merged SPF proposal %+v", spf.Record)
		}
		wantStatus(t, rep, service.CheckDMARC, service.StatusFail, "no valid policy")
		// Addresses the account names are checked too.
		if err := svc.DomainChecks.SetSendingIPs(ctx, acct, "revoked.example.org", "192.0.2.1, 203.0.113.9"); err != nil {
			t.Fatal(err)
		}
		rep, _ = svc.DomainChecks.CheckNow(ctx, acct, "revoked.example.org")
		spf = wantStatus(t, rep, service.CheckSPF, service.StatusFail, "203.0.113.9 (named by this account)")
		if strings.Contains(spf.Detail, "192.0.2.1 (") || !strings.Contains(spf.Record.Value, "ip4:203.0.113.9") {
			t.Fatalf("SPF with named addresses: %q %+v", spf.Detail, spf.Record)
		}
		if err := svc.DomainChecks.SetSendingIPs(ctx, acct, "revoked.example.org", "not-an-ip"); service.ErrorCode(err) != service.CodeValidation {
			t.Fatalf("a bad address: %v", err)
		}
	})

	t.Run("+all", func(t *testing.T) {
		srv.Add(t, `open.example.org. TXT "v=spf1 mx +all"`)
		rep, err := svc.DomainChecks.CheckNow(ctx, acct, "open.example.org")
		if err != nil {
			t.Fatal(err)
		}
		spf := wantStatus(t, rep, service.CheckSPF, service.StatusWarn, "lets in every address")
		if spf.Record == nil || spf.Record.Value != "v=spf1 mx include:relay.example.net ~all" {
			t.Fatalf("proposal %+v", spf.Record)
		}
	})

	t.Run("over 10 lookups", func(t *testing.T) {
		publishKey(t, svc, srv, acct, "many.example.org")
		rep, err := svc.DomainChecks.CheckNow(ctx, acct, "many.example.org")
		if err != nil {
			t.Fatal(err)
		}
		wantStatus(t, rep, service.CheckSPF, service.StatusFail, "more than 10 DNS lookups")
	})

	t.Run("bounce domain and DNS failures", func(t *testing.T) {
		srv.Remove("shop.example.com")
		srv.Add(t, `shop.example.com. TXT "v=spf1 include:relay.example.net -all"`, `shop.example.com. MX 10 mx.mailhost.example.net.`)
		rep, err := svc.DomainChecks.CheckNow(ctx, acct, "shop.example.com")
		if err != nil {
			t.Fatal(err)
		}
		b := wantStatus(t, rep, service.CheckBounce, service.StatusFail, "not at herald (herald.example.net)")
		if b.Record == nil || b.Record.Value != "10 herald.example.net." {
			t.Fatalf("MX fix %+v", b.Record)
		}
		name := publishKey(t, svc, srv, acct, "shop.example.com")
		srv.Fail(name, dns.RcodeServerFailure)
		rep, _ = svc.DomainChecks.CheckNow(ctx, acct, "shop.example.com")
		wantStatus(t, rep, service.CheckDKIM, service.StatusWarn, "could not read")
		if rep.Signing == "" {
			t.Fatal("a key once seen stopped signing on a DNS failure")
		}
	})
}

// TestDomainKeySelectorsAndRotation: each key has its own selector (two
// accounts on one domain do not clash); a rotated key takes over once its
// record is seen, and the old one is retired.
func TestDomainKeySelectorsAndRotation(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	srv := dnstest.Start(t)
	svc := checksService(t, srv)
	a, b := servicetest.NewAccount(t, svc, "a@herald.test"), servicetest.NewAccount(t, svc, "b@herald.test")
	ka, _ := svc.Mail.DomainKey(ctx, a, "shared.example.com")
	kb, _ := svc.Mail.DomainKey(ctx, b, "shared.example.com")
	if ka.Selector == kb.Selector || len(ka.Selector) != 11 || ka.Selector[0] != 'h' {
		t.Fatalf("selectors %q %q", ka.Selector, kb.Selector)
	}
	if _, err := svc.DomainChecks.RotateKey(ctx, a, "shared.example.com"); service.ErrorCode(err) != service.CodeConflict {
		t.Fatalf("rotating an unpublished key: %v", err)
	}
	publishKey(t, svc, srv, a, "shared.example.com")
	rep, _ := svc.DomainChecks.CheckNow(ctx, a, "shared.example.com")
	if rep.Signing != ka.Selector {
		t.Fatalf("signing %q, want %q", rep.Signing, ka.Selector)
	}
	rec, err := svc.DomainChecks.RotateKey(ctx, a, "shared.example.com")
	if err != nil || rec.Selector == ka.Selector {
		t.Fatalf("rotate: %+v %v", rec, err)
	}
	rep, _ = svc.DomainChecks.CheckNow(ctx, a, "shared.example.com")
	if rep.Signing != ka.Selector {
		t.Fatalf("before the new record is seen, signing %q, want the old %q", rep.Signing, ka.Selector)
	}
	wantStatus(t, rep, service.CheckDKIM, service.StatusWarn, "not published yet")
	srv.TXT(t, rec.Selector+"._domainkey.shared.example.com", rec.Record)
	rep, _ = svc.DomainChecks.CheckNow(ctx, a, "shared.example.com")
	if rep.Signing != rec.Selector {
		t.Fatalf("after the new record is seen, signing %q, want %q", rep.Signing, rec.Selector)
	}
	wantStatus(t, rep, service.CheckDKIM, service.StatusPass, "you may delete the record at "+ka.Selector+"._domainkey")
	var n int64
	svc.DB.R.Model(&models.SenderDomain{}).Where("user_id = ? AND domain = ?", a, "shared.example.com").Count(&n)
	if n != 1 {
		t.Fatalf("%d keys left after the rotation", n)
	}
}

// TestDomainChecksDailyClaim: two processes on one database check the due
// domains; each domain is checked once, and again only when due.
func TestDomainChecksDailyClaim(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	srv := dnstest.Start(t)
	clock := dbtest.NewClock(time.Date(2026, 11, 27, 12, 0, 0, 0, time.UTC))
	procs := dbtest.Processes(t, 2, service.Config{BaseURL: "https://herald.example.net", BounceAddress: "bounces@herald.example.net", Now: clock.Now,
		DomainChecks: service.DomainCheckConfig{DNSServer: srv.Addr, RelayHost: "relay.example.net"}})
	acct := servicetest.NewAccount(t, procs[0], "owner@herald.test")
	const n = 30
	for i := range n {
		if _, err := procs[0].Mail.DomainKey(ctx, acct, fmt.Sprintf("d%02d.example.org", i)); err != nil {
			t.Fatal(err)
		}
	}
	round := func() int {
		var wg sync.WaitGroup
		counts := make([]int, len(procs))
		for i, p := range procs {
			wg.Go(func() {
				c, err := p.DomainChecks.CheckDue(ctx)
				if err != nil {
					t.Error(err)
				}
				counts[i] = c
			})
		}
		wg.Wait()
		return counts[0] + counts[1]
	}
	if got := round(); got != n {
		t.Fatalf("first round checked %d domains, want %d", got, n)
	}
	for i := range n {
		if q := srv.Asked(fmt.Sprintf("_dmarc.d%02d.example.org", i)); q != 1 {
			t.Fatalf("d%02d checked %d times", i, q)
		}
	}
	clock.Advance(23 * time.Hour)
	if got := round(); got != 0 {
		t.Fatalf("%d domains checked again before a day passed", got)
	}
	clock.Advance(2 * time.Hour)
	if got := round(); got != n {
		t.Fatalf("second day checked %d domains, want %d", got, n)
	}
	for i := range n {
		auth, err := procs[1].DomainChecks.Authenticated(ctx, acct, fmt.Sprintf("d%02d.example.org", i))
		if err != nil || !auth.Checked || !auth.CheckedAt.Equal(clock.Now().Truncate(time.Microsecond)) || len(auth.Problems) == 0 {
			t.Fatalf("d%02d: %+v %v", i, auth, err)
		}
	}
}

// TestDKIMSigningGate: a key signs only once a check has seen its record,
// or with "sign anyway" on.
func TestDKIMSigningGate(t *testing.T) {
	t.Parallel()
	srv := dnstest.Start(t)
	f := servicetest.NewSendFixtureWith(t, true, 0, func(c *service.Config) { c.DomainChecks.DNSServer = srv.Addr })
	key, err := f.Svc.Mail.DomainKey(f.Ctx, f.Acct, "shop.example.com")
	if err != nil {
		t.Fatal(err)
	}
	name, value := key.DNSRecord()
	if _, err := f.Svc.Fields.Create(f.Ctx, f.Acct, service.FieldInput{FieldName: "code", FieldType: "text"}); err != nil {
		t.Fatal(err)
	}
	to := []string{fmt.Sprint("contacts_", f.ContactType("Customers", "ann@example.com"))}
	sig := func(label string) string {
		t.Helper()
		ss := f.Create(f.Input(label, to, nil))
		f.WaitStatus(ss.Utr, models.SendCompleted, 20*time.Second)
		ms := f.Sent(ss.Utr)
		if len(ms) != 1 {
			t.Fatalf("%s: %d messages", label, len(ms))
		}
		h := ms[0].Header().Get("DKIM-Signature")
		if h != "" {
			vs, err := dkim.VerifyWithOptions(bytes.NewReader(ms[0].Data), &dkim.VerifyOptions{LookupTXT: func(d string) ([]string, error) {
				if d != name {
					return nil, fmt.Errorf("no record %s", d)
				}
				return []string{value}, nil
			}})
			if err != nil || len(vs) != 1 || vs[0].Err != nil {
				t.Fatalf("%s: signature does not verify: %v %+v", label, err, vs)
			}
		}
		return h
	}
	if h := sig("Before"); h != "" {
		t.Fatalf("signed before the record was seen: %s", h)
	}
	if err := f.Svc.DomainChecks.SetSignAnyway(f.Ctx, f.Acct, "shop.example.com", true); err != nil {
		t.Fatal(err)
	}
	if h := sig("Anyway"); !strings.Contains(h, "s="+key.Selector+";") {
		t.Fatalf("sign anyway: DKIM-Signature %q", h)
	}
	if err := f.Svc.DomainChecks.SetSignAnyway(f.Ctx, f.Acct, "shop.example.com", false); err != nil {
		t.Fatal(err)
	}
	if h := sig("Off again"); h != "" {
		t.Fatalf("signed with sign anyway off: %s", h)
	}
	srv.TXT(t, name, value)
	if _, err := f.Svc.DomainChecks.CheckNow(f.Ctx, f.Acct, "shop.example.com"); err != nil {
		t.Fatal(err)
	}
	if h := sig("Published"); !strings.Contains(h, "d=shop.example.com;") {
		t.Fatalf("after the record was seen: DKIM-Signature %q", h)
	}
}

// TestMigrationKeepsExistingKeysSigning: keys made before migration 19
// (selector herald) keep signing, as generation 1.
func TestMigrationKeepsExistingKeysSigning(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	db, err := service.OpenDB(dbtest.DSN(t))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	if err := service.MigrateTo(ctx, db, 18); err != nil {
		t.Fatal(err)
	}
	// The account as version 18 has it (the service of today writes
	// columns later migrations add).
	now := models.NewTimestamp(models.Now())
	if err := db.W.Exec(`INSERT INTO users (name, email, public_key, secret_hash, created_at, updated_at) VALUES (?, ?, ?, ?, ?, ?)`,
		"T", "owner@herald.test", "pk_old", []byte{1}, now, now).Error; err != nil {
		t.Fatal(err)
	}
	var acct int64
	if err := db.W.Raw(`SELECT id FROM users WHERE email = ?`, "owner@herald.test").Scan(&acct).Error; err != nil {
		t.Fatal(err)
	}
	if err := db.W.Exec(`INSERT INTO sender_domains (user_id, domain, selector, algorithm, private_key, created_at) VALUES (?, ?, 'herald', 'rsa', 'x', ?)`,
		acct, "old.example.com", models.NewTimestamp(models.Now())).Error; err != nil {
		t.Fatal(err)
	}
	if err := db.Migrate(ctx); err != nil {
		t.Fatal(err)
	}
	svc, err := service.New(db, service.Config{})
	if err != nil {
		t.Fatal(err)
	}
	var row models.SenderDomain
	if err := db.R.Where("user_id = ? AND domain = ?", acct, "old.example.com").First(&row).Error; err != nil {
		t.Fatal(err)
	}
	if row.Selector != "herald" || row.Generation != 1 || row.SignAnyway != 1 || row.PublishedAt != nil {
		t.Fatalf("migrated key %+v", row)
	}
	if un, err := svc.DomainChecks.Unsigned(ctx, acct); err != nil || len(un) != 0 {
		t.Fatalf("unsigned after the migration: %q %v", un, err)
	}
}

// BenchmarkDomainCheck is one domain's full check (DKIM, SPF with an
// include, DMARC, alignment, bounce MX) against a DNS server on loopback
// and its stored result: the cost herald pays per domain per day.
func BenchmarkDomainCheck(b *testing.B) {
	ctx := context.Background()
	srv := dnstest.Start(b)
	svc := dbtest.Service(b, service.Config{BaseURL: "https://herald.example.net", BounceAddress: "bounces@shop.example.com",
		DomainChecks: service.DomainCheckConfig{DNSServer: srv.Addr, RelayHost: "relay.example.net", Inbound: true}})
	u, _, err := svc.Accounts.Create(ctx, service.AccountInput{Name: "T", Email: "owner@herald.test", Password: "test-passphrase-9"})
	if err != nil {
		b.Fatal(err)
	}
	srv.Add(b, `relay.example.net. A 198.51.100.7`, `relay.example.net. TXT "v=spf1 ip4:198.51.100.0/24 -all"`,
		`shop.example.com. TXT "v=spf1 include:relay.example.net -all"`, `shop.example.com. MX 10 herald.example.net.`,
		`_dmarc.shop.example.com. TXT "v=DMARC1; p=reject"`)
	key, err := svc.Mail.DomainKey(ctx, u.ID, "shop.example.com")
	if err != nil {
		b.Fatal(err)
	}
	name, value := key.DNSRecord()
	srv.TXT(b, name, value)
	b.ResetTimer()
	for b.Loop() {
		if _, err := svc.DomainChecks.CheckNow(ctx, u.ID, "shop.example.com"); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64(srv.Queries())/float64(b.N), "dns-queries/op")
}

// The service's checklist reads the DNS checks' last stored result for a
// From domain: failing before the key is published, passing after a
// check has seen it (the wiring of service.New).
func TestChecklistReadsDomainChecks(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	srv := dnstest.Start(t)
	svc := checksService(t, srv)
	acct := servicetest.NewAccount(t, svc, "owner@herald.test")
	srv.Add(t,
		`relay.example.net. A 198.51.100.7`,
		`shop.example.com. TXT "v=spf1 ip4:198.51.100.7 -all"`,
		`shop.example.com. MX 10 herald.example.net.`,
		`_dmarc.shop.example.com. TXT "v=DMARC1; p=reject"`,
	)
	subject := []service.ChecklistSubject{{From: "news@shop.example.com", HasSender: true, HTML: `<p>Hello ((unsubscribe_preferences))</p>`, PostalAddr: "1 rue de Rivoli"}}
	rule := func() service.CheckItem {
		t.Helper()
		items, err := svc.Checklist.Evaluate(ctx, acct, subject)
		if err != nil {
			t.Fatal(err)
		}
		for _, it := range items {
			if it.Rule == service.RuleFromDomain {
				return it
			}
		}
		t.Fatal("no From-domain item")
		return service.CheckItem{}
	}
	if it := rule(); it.Severity != service.SeverityWarning || !strings.Contains(it.Message, "not been checked") {
		t.Fatalf("before any check: %+v", it)
	}
	if _, err := svc.Mail.DomainKey(ctx, acct, "shop.example.com"); err != nil {
		t.Fatal(err)
	}
	if _, err := svc.DomainChecks.CheckNow(ctx, acct, "shop.example.com"); err != nil {
		t.Fatal(err)
	}
	if it := rule(); it.Severity != service.SeverityFailure || !strings.Contains(it.Text(), "DKIM") {
		t.Fatalf("key not published: %+v", it)
	}
	publishKey(t, svc, srv, acct, "shop.example.com")
	if _, err := svc.DomainChecks.CheckNow(ctx, acct, "shop.example.com"); err != nil {
		t.Fatal(err)
	}
	if it := rule(); it.Severity != service.SeverityOK {
		t.Fatalf("published: %+v", it)
	}
}

// TestBounceDomainMXReachesHerald: with herald's inbound server on, the
// bounce domain's MX passes when it is herald itself (HERALD_BASE_URL's
// host, HERALD_INBOUND_ADDR's host) or the relay herald sends through
// (the relay in front of herald the Setup page describes), by name or by
// address; any other mail server fails, with the fix.
func TestBounceDomainMXReachesHerald(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	srv := dnstest.Start(t)
	svc := dbtest.Service(t, service.Config{BaseURL: "https://herald.example.net", BounceAddress: "bounces@shop.example.com",
		DomainChecks: service.DomainCheckConfig{DNSServer: srv.Addr, RelayHost: "relay.example.net", Inbound: true, InboundHost: "192.0.2.25"}})
	acct := servicetest.NewAccount(t, svc, "owner@herald.test")
	srv.Add(t,
		`relay.example.net. A 198.51.100.7`,
		`herald.example.net. A 203.0.113.80`,
		`mx.shop.example.com. A 198.51.100.7`,    // on the relay's machine
		`in.shop.example.com. A 192.0.2.25`,      // herald's inbound listener
		`www.shop.example.com. A 203.0.113.80`,   // herald's public host
		`mx.mailhost.example.net. A 192.0.2.200`, // someone else's
	)
	for _, c := range []struct {
		mx, status, detail string
	}{
		{"relay.example.net", service.StatusPass, "points at the relay herald sends through (relay.example.net)"},
		{"mx.shop.example.com", service.StatusPass, "the relay herald sends through (mx.shop.example.com (198.51.100.7))"},
		{"herald.example.net", service.StatusPass, "points at herald (herald.example.net)"},
		{"www.shop.example.com", service.StatusPass, "points at herald (www.shop.example.com (203.0.113.80))"},
		{"in.shop.example.com", service.StatusPass, "herald's inbound server (in.shop.example.com (192.0.2.25))"},
		{"mx.mailhost.example.net", service.StatusFail, "not at herald (herald.example.net) nor herald's inbound server (192.0.2.25) nor the relay herald sends through (relay.example.net)"},
	} {
		t.Run(c.mx, func(t *testing.T) {
			srv.Remove("shop.example.com")
			srv.Add(t, `shop.example.com. MX 10 `+c.mx+`.`)
			rep, err := svc.DomainChecks.CheckNow(ctx, acct, "shop.example.com")
			if err != nil {
				t.Fatal(err)
			}
			b := wantStatus(t, rep, service.CheckBounce, c.status, c.detail)
			if c.status == service.StatusFail && (b.Record == nil || b.Record.Value != "10 herald.example.net." || !strings.Contains(b.Fix, "relay")) {
				t.Fatalf("fix %q record %+v", b.Fix, b.Record)
			}
		})
	}
	// A relay whose address DNS cannot give now: try again, not "wrong".
	srv.Remove("shop.example.com")
	srv.Add(t, `shop.example.com. MX 10 mx.mailhost.example.net.`)
	srv.Fail("relay.example.net", dns.RcodeServerFailure)
	rep, err := svc.DomainChecks.CheckNow(ctx, acct, "shop.example.com")
	if err != nil {
		t.Fatal(err)
	}
	wantStatus(t, rep, service.CheckBounce, service.StatusWarn, "could not read")
}

// TestBounceSetupAsksTheChecksDNSServer: the setup page's live MX lookup
// asks HERALD_DNS_SERVER, as the domain checks do, and sorts by
// preference; a name without MX says so.
func TestBounceSetupAsksTheChecksDNSServer(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	srv := dnstest.Start(t)
	svc := dbtest.Service(t, service.Config{BaseURL: "https://herald.example.net", BounceAddress: "bounces@shop.example.com",
		DomainChecks: service.DomainCheckConfig{DNSServer: srv.Addr}})
	acct := servicetest.NewAccount(t, svc, "owner@herald.test")
	srv.Add(t, `shop.example.com. MX 20 B.Relay.example.net.`, `shop.example.com. MX 10 a.relay.example.net.`)
	st, err := svc.Bounces.Setup(ctx, acct)
	if err != nil {
		t.Fatal(err)
	}
	if strings.Join(st.MX, " ") != "a.relay.example.net b.relay.example.net" || st.MXError != "" {
		t.Fatalf("MX %q (error %q), want what %s answers", st.MX, st.MXError, srv.Addr)
	}
	if srv.Asked("shop.example.com") == 0 {
		t.Fatal("the DNS server of the checks was not asked")
	}
	if err := svc.Bounces.SetAddress("bounces@bare.example.com"); err != nil {
		t.Fatal(err)
	}
	srv.Add(t, `bare.example.com. A 192.0.2.1`)
	if st, err = svc.Bounces.Setup(ctx, acct); err != nil || len(st.MX) != 0 || st.MXError != "no MX record" {
		t.Fatalf("no MX: %q %q %v", st.MX, st.MXError, err)
	}
}

// TestSPFProposalRule: the one rule of the SPF records herald proposes
// (a sender's page, the bounce domain's Setup page): a relay on herald's
// own machine is named by herald's public host, never 127.0.0.1, and the
// check tests that host's addresses; a known provider by its include; an
// address as ip4:; a host with its own SPF by include:, else a:.
func TestSPFProposalRule(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	srv := dnstest.Start(t)
	srv.Add(t,
		`herald.example.net. A 203.0.113.80`,
		`relay.example.net. TXT "v=spf1 ip4:198.51.100.0/24 -all"`,
		`plain.example.net. A 198.51.100.9`,
		`local.example.com. TXT "v=spf1 a:herald.example.net -all"`,
		`_dmarc.local.example.com. TXT "v=DMARC1; p=reject"`,
	)
	for _, c := range []struct{ name, relay, want string }{
		{"loopback", "127.0.0.1", "v=spf1 a:herald.example.net ~all"},
		{"localhost", "localhost", "v=spf1 a:herald.example.net ~all"},
		{"ipv6 loopback", "::1", "v=spf1 a:herald.example.net ~all"},
		{"SES", "email-smtp.eu-west-1.amazonaws.com", "v=spf1 include:amazonses.com ~all"},
		{"SendGrid", "smtp.sendgrid.net", "v=spf1 include:sendgrid.net ~all"},
		{"address", "198.51.100.7", "v=spf1 ip4:198.51.100.7 ~all"},
		{"relay with SPF", "relay.example.net", "v=spf1 include:relay.example.net ~all"},
		{"relay without SPF", "plain.example.net", "v=spf1 a:plain.example.net ~all"},
		// The subtest's name becomes a path in the SQLite DSN: no "#".
		{"outbox", "", "v=spf1 a mx ~all"},
	} {
		t.Run(c.name, func(t *testing.T) {
			svc := dbtest.Service(t, service.Config{BaseURL: "https://herald.example.net", BounceAddress: "bounces@local.example.com",
				DomainChecks: service.DomainCheckConfig{DNSServer: srv.Addr, RelayHost: c.relay}})
			acct := servicetest.NewAccount(t, svc, "owner@herald.test")
			if got := svc.DomainChecks.SPFProposal(ctx, acct, "new.example.org"); got != c.want {
				t.Fatalf("SPFProposal with relay %q = %q, want %q", c.relay, got, c.want)
			}
			if c.relay != "127.0.0.1" {
				return
			}
			// The relay on herald's machine: the check tests herald's
			// public address against the domain's SPF.
			rep, err := svc.DomainChecks.CheckNow(ctx, acct, "local.example.com")
			if err != nil {
				t.Fatal(err)
			}
			wantStatus(t, rep, service.CheckSPF, service.StatusPass, "lets in every address")
			srv.Remove("local.example.com")
			srv.Add(t, `local.example.com. TXT "v=spf1 ip4:127.0.0.1 -all"`)
			rep, _ = svc.DomainChecks.CheckNow(ctx, acct, "local.example.com")
			spf := wantStatus(t, rep, service.CheckSPF, service.StatusFail, "203.0.113.80 (herald's host herald.example.net (the relay 127.0.0.1 runs on it))")
			if spf.Record == nil || spf.Record.Value != "v=spf1 ip4:127.0.0.1 a:herald.example.net -all" {
				t.Fatalf("proposal %+v", spf.Record)
			}
		})
	}
}
