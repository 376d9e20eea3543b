package deliverability

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"net/netip"
	"strings"
	"time"

	"golang.org/x/net/publicsuffix"
	"gorm.io/gorm"
	"gorm.io/gorm/clause"

	"herald/delivery"
	"herald/models"
	"herald/service/core"
)

// The checks of a domain, in the order they are shown.
const (
	CheckDKIM      = "DKIM"
	CheckSPF       = "SPF"
	CheckDMARC     = "DMARC"
	CheckAlignment = "DMARC alignment"
	CheckBounce    = "Bounce domain"
)

// Statuses of one check.
const (
	StatusPass = "pass"
	StatusWarn = "warn" // works, but receivers may frown, or the DNS gave no answer
	StatusFail = "fail"
)

// DomainCheckResult is one check of a domain: what it found and, when it
// failed, how to fix it in plain words, with the record to publish.
type DomainCheckResult struct {
	Check  string     `json:"check"`
	Status string     `json:"status"`
	Detail string     `json:"detail"`
	Fix    string     `json:"fix,omitempty"`
	Found  string     `json:"found,omitempty"`  // the record read, when one was
	Record *DNSRecord `json:"record,omitempty"` // the record to publish
}

// DomainReport is what the console shows of a sending domain: the last
// checks and how its mail is signed.
type DomainReport struct {
	Domain     string
	Checked    bool
	CheckedAt  time.Time
	Results    []DomainCheckResult
	SignAnyway bool   // the console switch: the newest key signs before it is seen
	Signing    string // the selector that signs now; "" = mail goes out unsigned
	SendingIPs string // addresses the account names, checked against SPF
	// System is the key of herald's own mail (verification links,
	// invitations, alerts), checked with every Check now; nil when its
	// domain cannot have one.
	System *SystemKeyState
}

// DomainChecks reads, per sending domain of an account, the DNS records
// receivers judge its mail by: the DKIM key at <selector>._domainkey,
// one SPF record that lets the relay send in at most 10 lookups, a DMARC
// record with its policy and alignment with From, and a bounce domain
// that receives mail (pointing at herald when its inbound server runs).
// Results are stored with their time; Run checks each domain again
// daily, CheckNow on demand.
type DomainChecks struct {
	db          *core.DB
	bounces     *Bounces
	mail        *Mail // the key of herald's own mail, checked beside the domains
	now         func() time.Time
	resolver    *sharedResolver
	relayHost   string // host of HERALD_SMTP_URL; "" = the outbox
	baseHost    string // host of HERALD_BASE_URL
	inbound     bool   // HERALD_INBOUND_ADDR is set
	inboundHost string // its host, when it names one

	// Every is how often a domain is checked again (default a day);
	// Lease is how long a claimed domain stays with its checker before
	// another process may take it (a checker that died).
	Every, Lease time.Duration
	log          *slog.Logger

	lastSeed time.Time
}

// DomainCheckConfig is the configuration the checks read.
type DomainCheckConfig struct {
	DNSServer string // HERALD_DNS_SERVER; "" = /etc/resolv.conf
	RelayHost string // the host of HERALD_SMTP_URL; "" = outbox
	Inbound   bool   // HERALD_INBOUND_ADDR is set
	// InboundHost is the host HERALD_INBOUND_ADDR names ("" for ":2525"
	// or an unspecified address such as 0.0.0.0).
	InboundHost string
}

func newDomainChecks(db *core.DB, bounces *Bounces, mail *Mail, resolver *sharedResolver, baseURL string, now func() time.Time, cfg DomainCheckConfig) *DomainChecks {
	return &DomainChecks{db: db, bounces: bounces, mail: mail, now: now, resolver: resolver, relayHost: strings.ToLower(cfg.RelayHost),
		baseHost: strings.ToLower(hostOf(baseURL)), inbound: cfg.Inbound, inboundHost: strings.ToLower(cfg.InboundHost), Every: 24 * time.Hour, Lease: 10 * time.Minute, log: slog.Default()}
}

func (d *DomainChecks) dns() (*Resolver, error) { return d.resolver.get() }

// Authenticated returns what the last check of the account's domain
// found (Checked false when it was never checked).
func (d *DomainChecks) Authenticated(ctx context.Context, accountID int64, domain string) (core.DomainAuth, error) {
	domain = strings.ToLower(strings.TrimSpace(domain))
	out := core.DomainAuth{Domain: domain}
	var row models.DomainCheck
	if err := d.db.R.WithContext(ctx).Where("user_id = ? AND domain = ?", accountID, domain).Limit(1).Find(&row).Error; err != nil {
		return out, fmt.Errorf("domain checks: last check of %s: %w", domain, err)
	}
	if row.ID == 0 || row.CheckedAt == nil {
		return out, nil
	}
	out.Checked, out.CheckedAt = true, row.CheckedAt.Time
	for _, r := range decodeResults(row.Results) {
		switch r.Status {
		case StatusFail:
			out.Problems = append(out.Problems, r.Check+": "+r.Detail)
		case StatusWarn:
			out.Warnings = append(out.Warnings, r.Check+": "+r.Detail)
		}
	}
	return out, nil
}

func decodeResults(s string) []DomainCheckResult {
	var out []DomainCheckResult
	_ = json.Unmarshal([]byte(s), &out) // written by store only
	return out
}

// Report returns the last checks of the account's domain and how its
// mail is signed. Errors: validation (domain).
func (d *DomainChecks) Report(ctx context.Context, accountID int64, domain string) (*DomainReport, error) {
	domain, err := validDomain("domain", domain)
	if err != nil {
		return nil, err
	}
	rep := &DomainReport{Domain: domain}
	var row models.DomainCheck
	if err := d.db.R.WithContext(ctx).Where("user_id = ? AND domain = ?", accountID, domain).Limit(1).Find(&row).Error; err != nil {
		return nil, fmt.Errorf("domain checks: last check of a domain of account %d: %w", accountID, err)
	}
	if row.ID != 0 {
		rep.SendingIPs = row.SendingIPs
		if row.CheckedAt != nil {
			rep.Checked, rep.CheckedAt, rep.Results = true, row.CheckedAt.Time, decodeResults(row.Results)
		}
	}
	keys, err := domainKeys(ctx, d.db, accountID, domain)
	if err != nil {
		return nil, err
	}
	if len(keys) > 0 {
		rep.SignAnyway = keys[0].SignAnyway == 1
	}
	if k := signingKey(keys); k != nil {
		rep.Signing = k.Selector
	}
	if rep.System, err = d.mail.SystemKeyState(ctx); err != nil {
		return nil, fmt.Errorf("domain checks: system key: %w", err)
	}
	return rep, nil
}

// domainKeys returns the account's keys of domain, newest first.
func domainKeys(ctx context.Context, db *core.DB, accountID int64, domain string) ([]models.SenderDomain, error) {
	var keys []models.SenderDomain
	if err := db.R.WithContext(ctx).Where("user_id = ? AND domain = ?", accountID, domain).Order("generation DESC").Find(&keys).Error; err != nil {
		return keys, fmt.Errorf("domain checks: DKIM keys of %s: %w", domain, err)
	}
	return keys, nil
}

// signingKey is the key that signs among keys (newest first): the newest
// one seen published or allowed to sign anyway; nil = unsigned.
func signingKey(keys []models.SenderDomain) *models.SenderDomain {
	for i := range keys {
		if keys[i].PublishedAt != nil || keys[i].SignAnyway == 1 {
			return &keys[i]
		}
	}
	return nil
}

// ensureRow makes the domain's row (due at once) if it is missing.
func (d *DomainChecks) ensureRow(ctx context.Context, accountID int64, domain string) error {
	return d.db.W.WithContext(ctx).Clauses(clause.OnConflict{DoNothing: true}).
		Create(&models.DomainCheck{UserID: accountID, Domain: domain, Results: "[]", CreatedAt: models.NewTimestamp(d.now())}).Error
}

// CheckNow checks the account's domain at once, stores and returns the
// result. Errors: validation (domain), unavailable (no DNS resolver).
func (d *DomainChecks) CheckNow(ctx context.Context, accountID int64, domain string) (*DomainReport, error) {
	domain, err := validDomain("domain", domain)
	if err != nil {
		return nil, err
	}
	if err := d.ensureRow(ctx, accountID, domain); err != nil {
		return nil, fmt.Errorf("domain checks: add %s: %w", domain, err)
	}
	if err := d.check(ctx, accountID, domain); err != nil {
		return nil, err
	}
	// The record of herald's own mail's key is shown beside the domain's:
	// Check now looks for it too.
	d.checkSystemKey(ctx)
	return d.Report(ctx, accountID, domain)
}

// checkSystemKey looks for the record of the key of herald's own mail
// until a check sees it holding the key's public half, alone at its name;
// from then on that mail is signed (Mail.systemSigner). A failure is
// logged: it never fails the check of an account's domain.
func (d *DomainChecks) checkSystemKey(ctx context.Context) {
	st, err := d.mail.SystemKeyState(ctx)
	if err != nil || st == nil || st.SeenAt != nil {
		if err != nil {
			d.log.Warn("check of the key of herald's own mail", "err", err)
		}
		return
	}
	r, err := d.dns()
	if err != nil {
		return // check says so for the account's domain
	}
	ctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	txt, err := r.TXT(ctx, st.Record.Name)
	if err != nil {
		d.log.Warn("check of the key of herald's own mail", "record", st.Record.Name, "err", err)
		return
	}
	if want := tags(st.Record.Value)["p"]; len(txt) != 1 || tags(txt[0])["p"] != want {
		return
	}
	if err := d.mail.markSystemKeySeen(context.WithoutCancel(ctx), st.key.Domain, d.now()); err != nil {
		d.log.Warn("check of the key of herald's own mail", "err", err)
	}
}

// check runs the checks of one domain and stores them, due again after
// Every, its lease released.
func (d *DomainChecks) check(ctx context.Context, accountID int64, domain string) error {
	r, err := d.dns()
	if err != nil {
		return &core.Error{Code: core.CodeUnavailable, Message: "Herald cannot ask DNS: " + err.Error()}
	}
	var row models.DomainCheck
	if err := d.db.R.WithContext(ctx).Where("user_id = ? AND domain = ?", accountID, domain).Limit(1).Find(&row).Error; err != nil {
		return fmt.Errorf("domain checks: last check of a domain of account %d: %w", accountID, err)
	}
	ctx, cancel := context.WithTimeout(ctx, time.Minute)
	results, err := d.run(ctx, r, accountID, domain, row.SendingIPs)
	cancel()
	if err != nil {
		return fmt.Errorf("domain checks: check %s: %w", domain, err)
	}
	js, err := json.Marshal(results)
	if err != nil {
		return err
	}
	now := d.now()
	return d.db.W.WithContext(context.WithoutCancel(ctx)).Model(&models.DomainCheck{}).Where("user_id = ? AND domain = ?", accountID, domain).
		Updates(map[string]any{"checked_at": models.NewTimestamp(now), "results": string(js),
			"due_at": now.Add(d.Every).UnixMilli(), "lease_until": 0}).Error
}

// run reads the domain's records and judges them.
func (d *DomainChecks) run(ctx context.Context, r *Resolver, accountID int64, domain, sendingIPs string) ([]DomainCheckResult, error) {
	var out []DomainCheckResult
	dk, dkimOK, err := d.checkDKIM(ctx, r, accountID, domain)
	if err != nil {
		return nil, err
	}
	out = append(out, dk...)
	ips, ipWhy := d.sendingIPs(ctx, r, sendingIPs)
	spf, spfPass := d.checkSPF(ctx, r, domain, sendingIPs, ips, ipWhy)
	out = append(out, spf)
	out = append(out, d.checkDMARC(ctx, r, domain, dkimOK, spfPass, ips)...)
	out = append(out, d.checkBounce(ctx, r))
	return out, nil
}

func temporary(check, name string, err error) DomainCheckResult {
	return DomainCheckResult{Check: check, Status: StatusWarn,
		Detail: "Herald could not read the records at " + name + " (" + err.Error() + ").",
		Fix:    "Nothing to change if the records are right: herald checks again tomorrow, or press Check now to try again."}
}

// tags reads a DKIM or DMARC record's tag=value list.
func tags(rec string) map[string]string {
	out := map[string]string{}
	for _, part := range strings.Split(rec, ";") {
		if k, v, ok := strings.Cut(part, "="); ok {
			out[strings.ToLower(strings.TrimSpace(k))] = strings.Join(strings.Fields(v), "")
		}
	}
	return out
}

// checkDKIM compares each key's TXT record with herald's public key. The
// newest key is the one to publish; an older one still signs until the
// newest is seen, and is retired (deleted) once it is. A key whose
// record matches is marked published: from then on it signs.
func (d *DomainChecks) checkDKIM(ctx context.Context, r *Resolver, accountID int64, domain string) ([]DomainCheckResult, bool, error) {
	keys, err := domainKeys(ctx, d.db, accountID, domain)
	if err != nil {
		return nil, false, err
	}
	if len(keys) == 0 {
		return []DomainCheckResult{{Check: CheckDKIM, Status: StatusFail, Detail: "Herald has no DKIM key for " + domain + " yet.",
			Fix: "Open the page of a sender at " + domain + ": herald makes the key and shows the record to publish."}}, false, nil
	}
	var out []DomainCheckResult
	ok := false
	for i, k := range keys {
		key, err := delivery.ParseDKIMKey(k.Domain, k.Selector, k.PrivateKey)
		if err != nil {
			return nil, false, err
		}
		name, want := key.DNSRecord()
		res := DomainCheckResult{Check: CheckDKIM, Record: &DNSRecord{Purpose: "DKIM", Name: name, Value: want}}
		txt, err := r.TXT(ctx, name)
		switch {
		case err != nil:
			t := temporary(CheckDKIM, name, err)
			t.Record = res.Record
			res = t
		case len(txt) == 0:
			res.Status, res.Detail = StatusFail, "There is no DKIM record at "+name+": receivers cannot check herald's signature."
			res.Fix = "Publish this TXT record at " + name + "."
		case len(txt) > 1:
			res.Status, res.Detail = StatusFail, fmt.Sprintf("There are %d TXT records at %s: receivers may read the wrong one.", len(txt), name)
			res.Fix, res.Found = "Delete all but one TXT record at "+name+", and give it the value below.", strings.Join(txt, " | ")
		default:
			res.Found = txt[0]
			got, wantP := tags(txt[0])["p"], tags(want)["p"]
			switch {
			case got == "":
				res.Status, res.Detail = StatusFail, "The record at "+name+" revokes the key (its p= is empty)."
				res.Fix = "Replace the value of the TXT record at " + name + " with the one below."
			case got != wantP:
				res.Status, res.Detail = StatusFail, "The record at "+name+" holds a different public key from herald's: signatures fail."
				res.Fix = "Replace the value of the TXT record at " + name + " with the one below (the one there may be another service's or an older key's)."
			default:
				res.Status, res.Detail = StatusPass, "The record at "+name+" holds herald's public key."
				if k.PublishedAt == nil {
					now := models.NewTimestamp(d.now())
					if err := d.db.W.WithContext(ctx).Model(&models.SenderDomain{}).Where("id = ? AND user_id = ?", k.ID, accountID).
						Update("published_at", now).Error; err != nil {
						return nil, false, fmt.Errorf("domain checks: mark key %d published: %w", k.ID, err)
					}
					keys[i].PublishedAt = &now
				}
			}
		}
		if i == 0 && res.Status == StatusPass && len(keys) > 1 {
			// The new key is seen: it signs from now on; the older ones retire.
			if err := d.db.W.WithContext(ctx).Where("user_id = ? AND domain = ? AND generation < ?", accountID, domain, k.Generation).
				Delete(&models.SenderDomain{}).Error; err != nil {
				return nil, false, fmt.Errorf("domain checks: drop old keys of %s: %w", domain, err)
			}
			for _, old := range keys[1:] {
				res.Detail += " It replaces the key of selector " + old.Selector + ": you may delete the record at " + old.Selector + "._domainkey." + domain + "."
			}
			out = append(out, res)
			return out, true, nil
		}
		if i == 0 && res.Status == StatusFail && len(keys) > 1 {
			res.Status = StatusWarn
			res.Detail = "The new key (selector " + k.Selector + ") is not published yet; herald signs with the older key until it sees it. " + res.Detail
		}
		if res.Status == StatusPass && signingKey(keys) != nil && signingKey(keys).ID == k.ID {
			ok = true
		}
		out = append(out, res)
	}
	return out, ok, nil
}

// sendingAddr is one address mail leaves from, and what it is.
type sendingAddr struct {
	ip   netip.Addr
	what string
}

// isLocal reports whether host names this machine: localhost (or a name
// under .localhost) or a loopback address.
func isLocal(host string) bool {
	if host == "localhost" || strings.HasSuffix(host, ".localhost") {
		return true
	}
	a, err := netip.ParseAddr(host)
	return err == nil && a.IsLoopback()
}

// mailHost is the host herald's mail leaves from, as receivers see it:
// the relay of HERALD_SMTP_URL, or, for a relay on herald's own machine
// (localhost, a loopback address), herald's public host: receivers never
// see 127.0.0.1, they see the machine's public address. what says which
// for people. "" for the outbox.
func (d *DomainChecks) mailHost() (host, what string) {
	switch h := d.relayHost; {
	case h == "":
		return "", ""
	case isLocal(h) && d.baseHost != "" && !isLocal(d.baseHost):
		return d.baseHost, "herald's host " + d.baseHost + " (the relay " + h + " runs on it)"
	default:
		return h, "the relay " + h
	}
}

// sendingIPs are the addresses SPF must allow: those mail leaves from
// (mailHost: the address, or its A and AAAA records) and those the account
// names. why says what is missing when there is none.
func (d *DomainChecks) sendingIPs(ctx context.Context, r *Resolver, named string) ([]sendingAddr, string) {
	var out []sendingAddr
	why := ""
	if h, what := d.mailHost(); h != "" {
		if a, err := netip.ParseAddr(h); err == nil {
			out = append(out, sendingAddr{a, what})
		} else if ips, err := r.IPs(ctx, h); err != nil {
			why = "the address of " + what + " could not be read (" + err.Error() + ")"
		} else {
			for _, a := range ips {
				out = append(out, sendingAddr{a, what})
			}
		}
	}
	for _, f := range strings.Fields(named) {
		if a, err := netip.ParseAddr(f); err == nil {
			out = append(out, sendingAddr{a, "named by this account"})
		} else if p, err := netip.ParsePrefix(f); err == nil {
			out = append(out, sendingAddr{p.Addr(), "named by this account"})
		}
	}
	if len(out) == 0 && why == "" {
		why = "herald keeps its mail in the outbox (no relay set in HERALD_SMTP_URL) and this account names no sending addresses"
	}
	return out, why
}

// providerIncludes are the SPF includes of relays whose sending addresses
// are not their SMTP host's: mail leaves from the provider's pools.
var providerIncludes = []struct{ suffix, include string }{
	{".amazonaws.com", "include:amazonses.com"},
	{"sendgrid.net", "include:sendgrid.net"},
	{"postmarkapp.com", "include:spf.mtasv.net"},
	{"mailgun.org", "include:mailgun.org"},
}

// spfTerms are what an SPF proposal adds, the one rule of every SPF record
// herald proposes (a sender's domain, the bounce domain): where mail
// leaves from (mailHost) as a known provider's include, ip4:/ip6: for an
// address, include:<host> when the host publishes SPF itself, a:<host>
// otherwise; then the account's addresses.
func (d *DomainChecks) spfTerms(ctx context.Context, r *Resolver, named string) []string {
	var out []string
	if h, _ := d.mailHost(); h != "" {
		term := ""
		for _, p := range providerIncludes {
			if strings.HasSuffix(h, p.suffix) {
				term = p.include
				break
			}
		}
		switch a, err := netip.ParseAddr(h); {
		case term != "":
		case err == nil:
			term = ipTerm(a.String())
		case r != nil && spfPublished(ctx, r, h):
			term = "include:" + h
		default:
			term = "a:" + h
		}
		out = append(out, term)
	}
	for _, f := range strings.Fields(named) {
		out = append(out, ipTerm(f))
	}
	return out
}

// spfPublished reports whether host publishes one SPF record (then an
// include of it names its senders).
func spfPublished(ctx context.Context, r *Resolver, host string) bool {
	txt, err := r.TXT(ctx, host)
	return err == nil && len(spfRecords(txt)) == 1
}

func ipTerm(s string) string {
	if strings.Contains(s, ":") {
		return "ip6:" + s
	}
	return "ip4:" + s
}

// SPFProposal is the SPF record herald proposes for the domain, on a
// sender's DNS page and, for the bounce domain, on the Bounces &
// complaints Setup page alike: the one published (as last checked) with
// spfTerms merged in, or a new one ending in ~all.
func (d *DomainChecks) SPFProposal(ctx context.Context, accountID int64, domain string) string {
	var row models.DomainCheck
	_ = d.db.R.WithContext(ctx).Where("user_id = ? AND domain = ?", accountID, domain).Limit(1).Find(&row).Error
	found := ""
	for _, res := range decodeResults(row.Results) {
		if res.Check == CheckSPF && res.Found != "" && !strings.Contains(res.Found, " | ") {
			found = res.Found
		}
	}
	// A page waits for this: a DNS server that does not answer costs two
	// seconds at most, and the relay is then proposed as a:host, as it is
	// without a resolver at all.
	r, _ := d.dns()
	tctx, cancel := context.WithTimeout(ctx, 2*time.Second)
	terms := d.spfTerms(tctx, r, row.SendingIPs)
	cancel()
	if len(terms) == 0 && found == "" {
		_, v := delivery.SPFRecord(domain, "")
		return v
	}
	return mergeSPF(found, terms...)
}

// checkSPF judges the domain's SPF record: exactly one, at most 10
// lookups, and a pass for every sending address.
func (d *DomainChecks) checkSPF(ctx context.Context, r *Resolver, domain, named string, ips []sendingAddr, ipWhy string) (DomainCheckResult, bool) {
	res := DomainCheckResult{Check: CheckSPF}
	txt, err := r.TXT(ctx, domain)
	if err != nil {
		return temporary(CheckSPF, domain, err), false
	}
	recs := spfRecords(txt)
	propose := func(existing string) *DNSRecord {
		terms := d.spfTerms(ctx, r, named)
		v := mergeSPF(existing, terms...)
		if len(terms) == 0 && existing == "" {
			_, v = delivery.SPFRecord(domain, "")
		}
		return &DNSRecord{Purpose: "SPF", Name: domain, Value: v}
	}
	switch len(recs) {
	case 0:
		res.Status, res.Detail = StatusFail, "There is no SPF record at "+domain+"."
		res.Fix, res.Record = "Publish this TXT record at "+domain+".", propose("")
		return res, false
	case 1:
		res.Found = recs[0]
	default:
		res.Status, res.Detail = StatusFail, fmt.Sprintf("There are %d SPF records at %s: receivers count that as an error and SPF fails.", len(recs), domain)
		res.Found = strings.Join(recs, " | ")
		res.Fix, res.Record = "Merge them into one TXT record at "+domain+" (the terms of the others added to this one), and delete the rest.", propose(recs[0])
		return res, false
	}
	// Walk the whole record once with an address nothing names, to count
	// its lookups as a receiver that finds no match does.
	worst, n, werr := SPFCheck(ctx, r, domain, netip.IPv4Unspecified())
	switch {
	case worst == SPFTempError:
		return temporary(CheckSPF, domain, werr), false
	case errors.Is(werr, errSPFLimit):
		res.Status, res.Detail = StatusFail, "The SPF record of "+domain+" needs more than 10 DNS lookups (include, a, mx, exists, redirect count): receivers stop and SPF fails."
		res.Fix = "Remove includes of services you no longer use, or name their addresses with ip4:/ip6: instead of include, a or mx."
		return res, false
	case worst == SPFPermError:
		res.Status, res.Detail = StatusFail, "The SPF record of "+domain+" has an error receivers fail it for: "+werr.Error()+"."
		res.Fix, res.Record = "Replace it with the record below.", propose("")
		return res, false
	}
	if worst == SPFPass {
		res.Status = StatusWarn
		res.Detail = "The SPF record of " + domain + " lets in every address on the internet (+all or an all-covering range): anyone may send as " + domain + ", and receivers distrust it."
		res.Fix, res.Record = "Replace it with the record below, which names your relay and ends in ~all.", propose(strings.Replace(strings.Replace(recs[0], "+all", "~all", 1), " all", " ~all", 1))
		return res, false
	}
	if len(ips) == 0 {
		res.Status = StatusWarn
		res.Detail = fmt.Sprintf("%s has one SPF record (%d of 10 DNS lookups), but herald cannot tell whether it lets your mail in: %s.", domain, n, ipWhy)
		res.Fix = "Name the addresses your mail leaves from below, or set HERALD_SMTP_URL."
		return res, false
	}
	var refused []string
	for _, a := range ips {
		got, _, err := SPFCheck(ctx, r, domain, a.ip)
		if got == SPFTempError {
			return temporary(CheckSPF, domain, err), false
		}
		if got != SPFPass {
			refused = append(refused, a.ip.String()+" ("+a.what+"): "+got)
		}
	}
	if len(refused) > 0 {
		res.Status = StatusFail
		res.Detail = "The SPF record of " + domain + " does not let in " + strings.Join(refused, ", ") + "."
		res.Fix, res.Record = "Replace it with the record below, which adds your relay.", propose(recs[0])
		return res, false
	}
	res.Status = StatusPass
	res.Detail = fmt.Sprintf("The SPF record of %s lets in every address your mail leaves from (%d of 10 DNS lookups).", domain, n)
	return res, true
}

// orgDomain is the organisational domain of RFC 7489 3.2: one label
// under the public suffix.
func orgDomain(domain string) string {
	if o, err := publicsuffix.EffectiveTLDPlusOne(domain); err == nil {
		return o
	}
	return domain
}

// dmarcRecords returns the v=DMARC1 records among TXT records.
func dmarcRecords(txt []string) []string {
	var out []string
	for _, t := range txt {
		if strings.HasPrefix(strings.ToLower(strings.TrimSpace(t)), "v=dmarc1") {
			out = append(out, strings.TrimSpace(t))
		}
	}
	return out
}

// checkDMARC judges the DMARC record (at the domain, else at its
// organisational domain), its policy and whether DKIM or SPF align with
// the From domain.
func (d *DomainChecks) checkDMARC(ctx context.Context, r *Resolver, domain string, dkimOK, spfPass bool, ips []sendingAddr) []DomainCheckResult {
	name := "_dmarc." + domain
	n, v := delivery.DMARCRecord(domain)
	publish := &DNSRecord{Purpose: "DMARC", Name: n, Value: v}
	txt, err := r.TXT(ctx, name)
	if err != nil {
		return []DomainCheckResult{temporary(CheckDMARC, name, err)}
	}
	recs, at, sub := dmarcRecords(txt), name, false
	if org := orgDomain(domain); len(recs) == 0 && org != domain {
		txt, err := r.TXT(ctx, "_dmarc."+org)
		if err != nil {
			return []DomainCheckResult{temporary(CheckDMARC, "_dmarc."+org, err)}
		}
		recs, at, sub = dmarcRecords(txt), "_dmarc."+org, true
	}
	res := DomainCheckResult{Check: CheckDMARC}
	tg := map[string]string{}
	switch len(recs) {
	case 0:
		res.Status, res.Detail = StatusFail, "There is no DMARC record at "+name+": Gmail, Yahoo and Microsoft refuse bulk mail without one."
		res.Fix, res.Record = "Publish this TXT record at "+name+" (policy none: it asks for reports and rejects nothing).", publish
	case 1:
		res.Found, tg = recs[0], tags(recs[0])
		p := strings.ToLower(tg["p"])
		if sub && tg["sp"] != "" {
			p = strings.ToLower(tg["sp"])
		}
		switch p {
		case "none":
			res.Status = StatusWarn
			res.Detail = "The DMARC record at " + at + " has policy none: receivers deliver mail that fails DMARC anyway, and Gmail and Yahoo accept it for now."
			res.Fix = "When the aggregate reports show your mail passing, change p=none to p=quarantine (then p=reject) at " + at + "."
		case "quarantine", "reject":
			res.Status, res.Detail = StatusPass, "The DMARC record at "+at+" has policy "+p+"."
		default:
			res.Status, res.Detail = StatusFail, "The DMARC record at "+at+" has no valid policy (p= must be none, quarantine or reject): receivers ignore it."
			res.Fix, res.Record = "Replace it with the record below.", publish
		}
	default:
		res.Status, res.Detail = StatusFail, fmt.Sprintf("There are %d DMARC records at %s: receivers ignore them all.", len(recs), at)
		res.Fix, res.Found, res.Record = "Keep one TXT record at "+at+".", strings.Join(recs, " | "), publish
	}
	return []DomainCheckResult{res, d.alignment(ctx, r, domain, tg, dkimOK, spfPass, ips)}
}

// alignment judges DMARC alignment (RFC 7489 3.1) with the record's
// adkim/aspf (relaxed when there is no record): herald signs with
// d=<From domain>, aligned in either mode; SPF aligns when the return
// path's domain matches From and passes for the sending addresses.
func (d *DomainChecks) alignment(ctx context.Context, r *Resolver, domain string, tg map[string]string, dkimOK, spfPass bool, ips []sendingAddr) DomainCheckResult {
	al := DomainCheckResult{Check: CheckAlignment}
	bounce := d.bounceDomain()
	spfAligned := false
	if bounce == domain || (strings.ToLower(tg["aspf"]) != "s" && orgDomain(bounce) == orgDomain(domain)) {
		spfAligned = spfPass
		if bounce != domain && len(ips) > 0 {
			spfAligned = true
			for _, a := range ips {
				if got, _, _ := SPFCheck(ctx, r, bounce, a.ip); got != SPFPass {
					spfAligned = false
				}
			}
		}
	}
	switch {
	case dkimOK && spfAligned:
		al.Status, al.Detail = StatusPass, "Both DKIM (d="+domain+") and SPF (return path @"+bounce+") align with From @"+domain+"."
	case dkimOK:
		al.Status, al.Detail = StatusPass, "DKIM (d="+domain+") aligns with From @"+domain+"; that is enough for DMARC (SPF checks the return path @"+bounce+", which does not align)."
	case spfAligned:
		al.Status, al.Detail = StatusWarn, "Only SPF aligns with From @"+domain+": a forwarded mail loses SPF and fails DMARC."
		al.Fix = "Publish the DKIM record above so that mail is signed."
	default:
		al.Status, al.Detail = StatusFail, "Neither DKIM nor SPF aligns with From @"+domain+": receivers fail DMARC for this mail."
		al.Fix = "Publish the DKIM record above (herald signs with d=" + domain + " once it sees it)."
	}
	return al
}

// bounceDomain is the domain of the return path (decisions.md 7).
func (d *DomainChecks) bounceDomain() string {
	a := d.bounces.Address()
	return strings.ToLower(a[strings.LastIndexByte(a, '@')+1:])
}

// heraldHost is a host that takes mail for herald: herald itself or the
// relay in front of it.
type heraldHost struct {
	name string
	what string // for people: "herald", "herald's inbound server", "the relay herald sends through"
}

// heraldHosts are the hosts an MX of the bounce domain may name for
// reports to reach herald's inbound server: herald's public host, the
// host its inbound server listens on, and the relay herald sends through,
// which the Setup page shows how to have hand the bounce domain's mail to
// herald.
func (d *DomainChecks) heraldHosts() []heraldHost {
	var out []heraldHost
	seen := map[string]bool{}
	for _, h := range []heraldHost{{d.baseHost, "herald"}, {d.inboundHost, "herald's inbound server"}, {d.relayHost, "the relay herald sends through"}} {
		if h.name != "" && !seen[h.name] {
			seen[h.name] = true
			out = append(out, h)
		}
	}
	return out
}

// addrs are a host's addresses: itself when it is one, else its A and
// AAAA records.
func addrs(ctx context.Context, r *Resolver, host string) ([]netip.Addr, error) {
	if a, err := netip.ParseAddr(host); err == nil {
		return []netip.Addr{a.Unmap()}, nil
	}
	return r.IPs(ctx, host)
}

// mxReachesHerald says which of herald's hosts an MX host is: by name,
// else by address (an MX named for the bounce domain, such as
// mx.shop.example.com, on the relay's or herald's machine). ok false with
// an error when a lookup got no answer and nothing matched.
func (d *DomainChecks) mxReachesHerald(ctx context.Context, r *Resolver, mx []string) (match heraldHost, via string, ok bool, err error) {
	hosts := d.heraldHosts()
	for _, m := range mx {
		for _, h := range hosts {
			if m == h.name {
				return h, m, true, nil
			}
		}
	}
	var lookupErr error
	own := map[netip.Addr]heraldHost{}
	for _, h := range hosts {
		as, err := addrs(ctx, r, h.name)
		if err != nil {
			lookupErr = err
			continue
		}
		for _, a := range as {
			if _, dup := own[a]; !dup {
				own[a] = h
			}
		}
	}
	for _, m := range mx {
		as, err := addrs(ctx, r, m)
		if err != nil {
			lookupErr = err
			continue
		}
		for _, a := range as {
			if h, hit := own[a]; hit {
				return h, m + " (" + a.String() + ")", true, nil
			}
		}
	}
	return heraldHost{}, "", false, lookupErr
}

// checkBounce checks that the return path's domain receives mail (MX or
// A), and, when herald's inbound SMTP server takes the reports, that its
// MX reaches herald: herald's host, the inbound server's host, or the
// relay herald sends through (the relay in front of herald that the Setup
// page describes), by name or by address.
func (d *DomainChecks) checkBounce(ctx context.Context, r *Resolver) DomainCheckResult {
	bd := d.bounceDomain()
	res := DomainCheckResult{Check: CheckBounce}
	mx, err := r.MX(ctx, bd)
	if err != nil {
		return temporary(CheckBounce, bd, err)
	}
	res.Found = strings.Join(mx, ", ")
	if d.inbound {
		h, via, ok, lerr := d.mxReachesHerald(ctx, r, mx)
		if ok {
			res.Status = StatusPass
			if h.what == "herald" || h.what == "herald's inbound server" {
				res.Detail = "The MX of the bounce domain " + bd + " points at " + h.what + " (" + via + "): bounces and complaints come back to it."
			} else {
				res.Detail = "The MX of the bounce domain " + bd + " points at " + h.what + " (" + via + "): bounces and complaints reach herald when the relay hands the bounce domain's mail to herald's inbound server (Bounces & complaints → Setup)."
			}
			return res
		}
		if lerr != nil {
			return temporary(CheckBounce, bd, lerr)
		}
		var names []string
		for _, h := range d.heraldHosts() {
			names = append(names, h.what+" ("+h.name+")")
		}
		res.Status = StatusFail
		if len(mx) == 0 {
			res.Detail = "The bounce domain " + bd + " has no MX record: bounces and complaints cannot reach herald's inbound server."
		} else {
			res.Detail = "The MX of the bounce domain " + bd + " points at " + res.Found + ", not at " + strings.Join(names, " nor ") + ": bounces and complaints do not reach herald's inbound server."
		}
		res.Fix = "Publish this MX record at " + bd + " (and let port 25 of " + d.baseHost + " reach herald's inbound server), or point it at a relay that hands the bounce domain's mail to herald (Bounces & complaints → Setup)."
		res.Record = &DNSRecord{Purpose: "MX", Name: bd, Value: "10 " + d.baseHost + "."}
		return res
	}
	if len(mx) > 0 {
		res.Status, res.Detail = StatusPass, "The bounce domain "+bd+" receives mail (MX "+res.Found+")."
		return res
	}
	ips, err := r.IPs(ctx, bd)
	if err != nil {
		return temporary(CheckBounce, bd, err)
	}
	if len(ips) > 0 {
		res.Status, res.Detail = StatusPass, "The bounce domain "+bd+" has no MX record but an address, where mail servers deliver bounces."
		return res
	}
	res.Status = StatusFail
	res.Detail = "The bounce domain " + bd + " has neither an MX nor an A record: bounces are lost, and some receivers refuse mail whose return path cannot receive."
	res.Fix = "Publish an MX record at " + bd + " naming the server that receives your bounces (see Bounces & complaints → Setup)."
	return res
}

// SetSignAnyway turns the console switch of the domain: on, its newest
// key signs before its record is seen published. Errors: validation.
func (d *DomainChecks) SetSignAnyway(ctx context.Context, accountID int64, domain string, on bool) error {
	domain, err := validDomain("domain", domain)
	if err != nil {
		return err
	}
	if _, err := domainKey(ctx, d.db, accountID, domain); err != nil {
		return err
	}
	v := 0
	if on {
		v = 1
	}
	if err := d.db.W.WithContext(ctx).Model(&models.SenderDomain{}).Where("user_id = ? AND domain = ?", accountID, domain).Update("sign_anyway", v).Error; err != nil {
		return fmt.Errorf("domain checks: sign anyway %s: %w", domain, err)
	}
	return nil
}

// SetSendingIPs stores the addresses (or ranges) the account's mail of
// the domain leaves from, besides the relay, checked against SPF.
// Errors: validation (sending_ips).
func (d *DomainChecks) SetSendingIPs(ctx context.Context, accountID int64, domain, ips string) error {
	domain, err := validDomain("domain", domain)
	if err != nil {
		return err
	}
	var clean []string
	for _, f := range strings.FieldsFunc(ips, func(r rune) bool { return r == ',' || r == ' ' || r == '\n' || r == '\r' || r == '\t' }) {
		if a, err := netip.ParseAddr(f); err == nil {
			clean = append(clean, a.String())
		} else if p, err := netip.ParsePrefix(f); err == nil {
			clean = append(clean, p.Masked().String())
		} else {
			return core.Invalid("sending_ips", "The sending ips must be IP addresses or ranges such as 192.0.2.10 or 2001:db8::/48 ("+f+" is not).")
		}
	}
	if len(clean) > 20 {
		return core.Invalid("sending_ips", "The sending ips may not have more than 20 items.")
	}
	if err := d.ensureRow(ctx, accountID, domain); err != nil {
		return fmt.Errorf("domain checks: add %s: %w", domain, err)
	}
	return d.db.W.WithContext(ctx).Model(&models.DomainCheck{}).Where("user_id = ? AND domain = ?", accountID, domain).
		Update("sending_ips", strings.Join(clean, " ")).Error
}

// RotateKey makes a new key for the domain with its own selector. The
// old key keeps signing until a check sees the new one's record; then
// the new one signs and the old one is deleted. Errors: validation,
// conflict (a new key is already waiting to be published).
func (d *DomainChecks) RotateKey(ctx context.Context, accountID int64, domain string) (DKIMRecord, error) {
	domain, err := validDomain("domain", domain)
	if err != nil {
		return DKIMRecord{}, err
	}
	if _, err := domainKey(ctx, d.db, accountID, domain); err != nil {
		return DKIMRecord{}, err
	}
	keys, err := domainKeys(ctx, d.db, accountID, domain)
	if err != nil {
		return DKIMRecord{}, err
	}
	if len(keys) > 1 || keys[0].PublishedAt == nil && keys[0].SignAnyway == 0 {
		return DKIMRecord{}, &core.Error{Code: core.CodeConflict, Message: "The newest key of " + domain + " is not published yet: publish its record (or turn on sign anyway) before rotating again."}
	}
	if _, err := makeDomainKey(ctx, d.db, accountID, domain, keys[0].Generation+1); err != nil {
		return DKIMRecord{}, fmt.Errorf("domain checks: rotate key of %s: %w", domain, err)
	}
	return dkimRecord(ctx, d.db, accountID, domain)
}

// newSelector is the selector of a new key: "h" and 10 hex digits, so
// that two accounts (or two keys) on one domain never clash.
func newSelector() string {
	var b [5]byte
	_, _ = rand.Read(b[:])
	return "h" + hex.EncodeToString(b[:])
}

// makeDomainKey stores a new RSA key of the given generation for the
// domain; several processes making the same generation agree on one.
func makeDomainKey(ctx context.Context, db *core.DB, accountID int64, domain string, generation int) (*models.SenderDomain, error) {
	key, err := delivery.GenerateDKIM(domain, newSelector(), delivery.DKIMRSA)
	if err != nil {
		return nil, err
	}
	pem, err := key.PrivateKeyPEM()
	if err != nil {
		return nil, err
	}
	row := models.SenderDomain{UserID: accountID, Domain: domain, Selector: key.Selector, Algorithm: delivery.DKIMRSA,
		PrivateKey: pem, Generation: generation, CreatedAt: models.NewTimestamp(db.Now())}
	if err := db.W.WithContext(ctx).Clauses(clause.OnConflict{DoNothing: true}).Create(&row).Error; err != nil {
		return nil, fmt.Errorf("domain checks: save a DKIM key of account %d: %w", accountID, err)
	}
	if err := db.W.WithContext(ctx).Where("user_id = ? AND domain = ? AND generation = ?", accountID, domain, generation).First(&row).Error; err != nil {
		return &row, fmt.Errorf("domain checks: read back a DKIM key of account %d: %w", accountID, err)
	}
	return &row, nil
}

// Run checks the domains that are due until ctx ends: every tick, and
// each domain again Every after its last check.
func (d *DomainChecks) Run(ctx context.Context, tick time.Duration) {
	// The first round waits a little: a process that starts and stops at
	// once (a test, a crash loop) does not flood DNS.
	select {
	case <-ctx.Done():
		return
	case <-time.After(min(tick, time.Minute)):
	}
	t := time.NewTicker(tick)
	defer t.Stop()
	for {
		if _, err := d.CheckDue(ctx); err != nil && ctx.Err() == nil {
			d.log.Error("domain checks", "err", err)
		}
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
	}
}

// CheckDue adds the rows of new sending domains and looks for the record
// of the key of herald's own mail until it is seen (at most hourly), then
// claims due domains in batches and checks them; it returns how many it
// checked. Processes on one PostgreSQL database pass each other's claims
// (SKIP LOCKED) and a claim is a lease, so each domain is checked once
// per round, and again by another process if its checker died.
func (d *DomainChecks) CheckDue(ctx context.Context) (int, error) {
	if now := d.now(); now.Sub(d.lastSeed) >= time.Hour {
		if err := d.seed(ctx); err != nil {
			return 0, fmt.Errorf("domain checks: seed: %w", err)
		}
		d.checkSystemKey(ctx)
		d.lastSeed = now
	}
	checked := 0
	for {
		batch, err := d.claim(ctx, 10)
		if err != nil || len(batch) == 0 {
			return checked, err
		}
		for _, row := range batch {
			if err := d.check(ctx, row.UserID, row.Domain); err != nil {
				if ctx.Err() != nil {
					return checked, ctx.Err()
				}
				d.log.Warn("domain check", "account", row.UserID, "domain", row.Domain, "err", err)
				continue // its lease runs out and it is tried again
			}
			checked++
		}
	}
}

// claim takes up to n due domains for this process for Lease.
func (d *DomainChecks) claim(ctx context.Context, n int) ([]models.DomainCheck, error) {
	var rows []models.DomainCheck
	now := d.now()
	err := d.db.W.WithContext(ctx).Transaction(func(tx *gorm.DB) error {
		if err := tx.Raw(`SELECT id, user_id, domain FROM domain_checks WHERE due_at <= ? AND lease_until <= ?
			ORDER BY due_at LIMIT ?`+d.db.SQL().SkipLocked(), now.UnixMilli(), now.UnixMilli(), n).Scan(&rows).Error; err != nil {
			return fmt.Errorf("domain checks: claim due checks: %w", err)
		}
		if len(rows) == 0 {
			return nil
		}
		ids := make([]int64, len(rows))
		for i, r := range rows {
			ids[i] = r.ID
		}
		return tx.Model(&models.DomainCheck{}).Where("id IN ?", ids).Update("lease_until", now.Add(d.Lease).UnixMilli()).Error
	})
	if err != nil {
		return rows, fmt.Errorf("domain checks: claim: %w", err)
	}
	return rows, nil
}

// seed makes the rows of the domains of every account's senders and
// keys, so that the daily round checks them.
func (d *DomainChecks) seed(ctx context.Context) error {
	type pair struct {
		UserID int64
		Email  string
	}
	var pairs []pair
	if err := d.db.R.WithContext(ctx).Raw(`SELECT DISTINCT user_id, from_email AS email FROM senders WHERE deleted_at IS NULL
		UNION SELECT DISTINCT user_id, '@' || domain FROM sender_domains`).Scan(&pairs).Error; err != nil {
		return fmt.Errorf("domain checks: domains to check: %w", err)
	}
	seen := map[pair]bool{}
	for _, p := range pairs {
		dom := strings.ToLower(p.Email[strings.LastIndexByte(p.Email, '@')+1:])
		k := pair{p.UserID, dom}
		if dom == "" || seen[k] {
			continue
		}
		seen[k] = true
		if err := d.ensureRow(ctx, p.UserID, dom); err != nil {
			return fmt.Errorf("domain checks: add %s: %w", dom, err)
		}
	}
	return nil
}

// Unsigned returns the addresses of the account's verified senders whose
// mail goes out without a DKIM signature: their domain has no key seen
// published and none allowed to sign anyway (the compose page says so).
func (d *DomainChecks) Unsigned(ctx context.Context, accountID int64) ([]string, error) {
	var emails, signed []string
	if err := d.db.R.WithContext(ctx).Model(&models.Sender{}).Where("user_id = ? AND deleted_at IS NULL AND is_verified = 1", accountID).
		Order("from_email").Pluck("from_email", &emails).Error; err != nil {
		return nil, fmt.Errorf("domain checks: verified senders of account %d: %w", accountID, err)
	}
	if err := d.db.R.WithContext(ctx).Model(&models.SenderDomain{}).Where("user_id = ? AND (published_at IS NOT NULL OR sign_anyway = 1)", accountID).
		Distinct("domain").Pluck("domain", &signed).Error; err != nil {
		return nil, fmt.Errorf("domain checks: signed domains of account %d: %w", accountID, err)
	}
	ok := map[string]bool{}
	for _, dm := range signed {
		ok[dm] = true
	}
	var out []string
	for _, e := range emails {
		if !ok[strings.ToLower(e[strings.LastIndexByte(e, '@')+1:])] {
			out = append(out, e)
		}
	}
	return out, nil
}
