package deliverability

import (
	"context"
	"fmt"
	"herald/service/core"
	"strings"
)

// DKIMRecord is the DNS TXT record of an account's DKIM key for one
// sending domain: published at Selector._domainkey.Domain.
type DKIMRecord struct {
	Domain   string
	Selector string
	Record   string // "v=DKIM1; k=rsa; p=…"
}

// DKIM returns the account's DKIM key for a sending domain as its DNS
// record, making and storing the key the first time: the same key the
// sender DNS page shows, and like it, it signs the domain's mail once a
// DNS check has seen its record (decisions.md 9). The domain joins the
// checks at once (due now), not at the next hourly look for new domains.
// DomainChecks.SetSignAnyway (the console's switch, `--sign-now`) makes
// it sign before that.
// Errors: validation (domain).
func (s *Senders) DKIM(ctx context.Context, accountID int64, domain string) (DKIMRecord, error) {
	domain, err := validDomain("domain", domain)
	if err != nil {
		return DKIMRecord{}, err
	}
	rec, err := dkimRecord(ctx, s.db, accountID, domain)
	if err != nil {
		return rec, err
	}
	if s.checks != nil {
		if err := s.checks.ensureRow(ctx, accountID, domain); err != nil {
			return rec, fmt.Errorf("dkim: schedule the check of %s: %w", domain, err)
		}
	}
	return rec, nil
}

// dkimRecord finds or makes the account's key for an already valid domain.
func dkimRecord(ctx context.Context, db *core.DB, accountID int64, domain string) (DKIMRecord, error) {
	key, err := domainKey(ctx, db, accountID, domain)
	if err != nil {
		return DKIMRecord{}, err
	}
	_, v := key.DNSRecord()
	return DKIMRecord{Domain: key.Domain, Selector: key.Selector, Record: v}, nil
}

// validDomain trims and lower-cases a mail domain and checks it as the
// domain of a sender's address is checked (NormalizeEmail): no spaces or
// control characters, at least one dot, no empty label, at most 253
// characters.
func validDomain(field, v string) (string, error) {
	d := strings.ToLower(strings.TrimSpace(v))
	if d == "" {
		return d, core.InvalidBecause(field, core.ReasonRequired, core.MsgRequired(field))
	}
	msg := "The " + core.Label(field) + " must be a valid domain name."
	if len(d) > 253 || core.HasControl(d) || strings.ContainsAny(d, "@") {
		return d, core.Invalid(field, msg)
	}
	if _, ok := core.NormalizeEmail("postmaster@" + d); !ok {
		return d, core.Invalid(field, msg)
	}
	return d, nil
}
