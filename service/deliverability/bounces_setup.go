package deliverability

import (
	"context"
	"fmt"
	"strings"
	"time"

	"golang.org/x/net/publicsuffix"

	"herald/models"
	"herald/service/core"
)

// BounceSetup is what an account needs to see to make reports come back to
// herald (the console's setup page): the bounce address and its domain's
// DNS, whether the return path aligns with each sender's From domain for
// DMARC, and when herald last heard anything for the account.
type BounceSetup struct {
	Address string // the plain bounce address
	Domain  string // its domain: the one whose MX must reach herald
	// MX is what DNS answers for Domain now (sorted by preference), or
	// MXError why there is no answer.
	MX      []string
	MXError string
	// Senders are the account's From domains (verified senders first),
	// each with whether the bounce domain aligns with it.
	Senders []SenderAlignment
	// Last is the newest report handled for the account (nil: none yet).
	Last *models.Feedback
}

// SenderAlignment is one From domain beside the bounce domain. DMARC's SPF
// check passes only when the return path's organizational domain is the
// From address's (relaxed alignment, RFC 7489 3.1.2).
type SenderAlignment struct {
	Domain   string
	Verified bool
	Aligned  bool
}

// mxTimeout bounds the DNS lookup of the setup page.
const mxTimeout = 3 * time.Second

// Setup reads the bounce setup of the account: its senders' domains beside
// the bounce domain, its newest report, and the bounce domain's MX records
// (a live lookup, bounded by mxTimeout, asking the DNS server the domain
// checks ask: HERALD_DNS_SERVER, else the system's).
func (b *Bounces) Setup(ctx context.Context, accountID int64) (*BounceSetup, error) {
	address := b.Address()
	if address == "" {
		address = DefaultBounceAddress("")
	}
	s := &BounceSetup{Address: address, Domain: address[strings.LastIndexByte(address, '@')+1:]}
	var senders []models.Sender
	if err := b.db.R.WithContext(ctx).Select("from_email", "is_verified").Where("user_id = ?", accountID).
		Order("is_verified DESC, id").Limit(core.MaxPerPage).Find(&senders).Error; err != nil {
		return nil, fmt.Errorf("bounces: senders of account %d: %w", accountID, err)
	}
	seen := map[string]bool{}
	for _, snd := range senders {
		at := strings.LastIndexByte(snd.FromEmail, '@')
		d := strings.ToLower(snd.FromEmail[at+1:])
		if at < 0 || seen[d] {
			continue
		}
		seen[d] = true
		s.Senders = append(s.Senders, SenderAlignment{Domain: d, Verified: snd.IsVerified == 1, Aligned: Aligned(s.Domain, d)})
	}
	var last []models.Feedback
	if err := b.db.R.WithContext(ctx).Where("user_id = ?", accountID).Order("id DESC").Limit(1).Find(&last).Error; err != nil {
		return nil, fmt.Errorf("bounces: last bounce report of account %d: %w", accountID, err)
	}
	if len(last) == 1 {
		s.Last = &last[0]
	}
	r, err := b.resolver.get()
	if err != nil {
		s.MXError = err.Error()
		return s, nil
	}
	lctx, cancel := context.WithTimeout(ctx, mxTimeout)
	defer cancel()
	switch s.MX, err = r.MX(lctx, s.Domain); {
	case err != nil:
		s.MXError = err.Error()
	case len(s.MX) == 0:
		s.MXError = "no MX record"
	}
	return s, nil
}

// Aligned reports whether a return path on bounceDomain passes DMARC's
// relaxed SPF alignment with a From address on fromDomain: the same
// organizational domain (the public suffix plus one label).
func Aligned(bounceDomain, fromDomain string) bool {
	a, err1 := publicsuffix.EffectiveTLDPlusOne(strings.ToLower(bounceDomain))
	f, err2 := publicsuffix.EffectiveTLDPlusOne(strings.ToLower(fromDomain))
	if err1 != nil || err2 != nil {
		return strings.EqualFold(bounceDomain, fromDomain)
	}
	return a == f
}
