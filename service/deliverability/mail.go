package deliverability

import (
	"context"
	"errors"
	"fmt"
	"html"
	"log/slog"
	"net/mail"
	"net/url"
	"strings"
	"time"

	"gorm.io/gorm/clause"

	"herald/delivery"
	"herald/models"
	"herald/service/core"
)

// Mail sends herald's own messages (sender verification, sign-up,
// invitations, notifications) through the configured transport,
// DKIM-signed once a DNS check has seen the record of their key.
type Mail struct {
	db        *core.DB
	Transport delivery.Transport
	BaseURL   string
	from      mail.Address
	bounces   *Bounces // the plain bounce address is the envelope sender
}

// DefaultSystemFrom is the address herald's own mail comes from when none
// is configured: no-reply at the host of the public address.
func DefaultSystemFrom(baseURL string) string { return "no-reply@" + hostOf(baseURL) }

// DefaultBounceAddress is HERALD_BOUNCE_ADDRESS when unset: bounces at the
// host of the public address (decisions.md 7).
func DefaultBounceAddress(baseURL string) string { return "bounces@" + hostOf(baseURL) }

// OneClickWarning says why RFC 8058 one-click unsubscribe cannot work
// with baseURL: a plain http address on a host that is not this machine
// (receivers POST to the List-Unsubscribe link only when it is https).
// "" for https, and for localhost or a loopback address (a trial run).
func OneClickWarning(baseURL string) string {
	u, err := url.Parse(baseURL)
	if err != nil || !strings.EqualFold(u.Scheme, "http") || isLocal(strings.ToLower(u.Hostname())) {
		return ""
	}
	return "HERALD_BASE_URL is plain http on " + u.Hostname() + ": RFC 8058 one-click unsubscribe needs an https link, " +
		"so Gmail, Yahoo and other mailbox providers ignore the one-click header of herald's mail (and may not show their unsubscribe button). " +
		"Serve herald over https (for example behind a TLS proxy) and set HERALD_BASE_URL to its https:// address."
}

func hostOf(baseURL string) string {
	if u, err := url.Parse(baseURL); err == nil && u.Hostname() != "" {
		return u.Hostname()
	}
	return "localhost"
}

// Envelope is the envelope sender of herald's own mail: the plain bounce
// address (decisions.md 7), so a failure of it comes back to herald too.
func (m *Mail) Envelope() string {
	if a := m.bounces.Address(); a != "" {
		return a
	}
	return m.from.Address
}

// VerifyURL is the link that verifies a sender.
func (m *Mail) VerifyURL(s *models.Sender) string {
	return m.BaseURL + "/senders/verify/" + url.PathEscape(s.VerifyToken)
}

// SendVerification mails the sender its verification link (filed under
// the sender's account in the outbox).
func (m *Mail) SendVerification(ctx context.Context, s *models.Sender) error {
	return m.sendSystem(core.WithAccount(ctx, s.UserID), mail.Address{Name: s.FromName, Address: s.FromEmail}, systemMail{
		Subject:   "Verify your sender address",
		Preheader: "Confirm " + s.FromEmail + " to send from it",
		Heading:   "Verify your sender address",
		Lines: []string{"Someone added " + s.FromEmail + " as the sender “" + s.FromName +
			"” in Herald. Confirm that this address is yours to send campaigns from it."},
		Button: "Verify this address",
		Link:   m.VerifyURL(s),
		Footer: "The link works for 7 days; opening it shows a page where you confirm. If you did not ask for this, " +
			"ignore this mail: nothing is sent from your address until it is verified.",
	})
}

// SystemKey is the DKIM key of the domain of herald's own mail
// (HERALD_MAIL_FROM), made the first time and kept in the settings table.
// Herald signs its own mail with it only once a DNS check has seen its
// record (SystemKeyState). Errors: delivery.ErrInvalidDKIM for a domain
// that cannot have a key (localhost).
func (m *Mail) SystemKey(ctx context.Context) (*delivery.DKIMKey, error) {
	return systemKey(ctx, m.db, m.from.Address)
}

func systemKey(ctx context.Context, db *core.DB, from string) (*delivery.DKIMKey, error) {
	domain := strings.ToLower(from[strings.LastIndexByte(from, '@')+1:])
	name := "dkim_system_" + domain
	var st models.Setting
	err := db.R.WithContext(ctx).Where("name = ?", name).First(&st).Error
	if core.IsNotFound(core.NotFound(err)) {
		key, gerr := delivery.GenerateDKIM(domain, dkimSelector, delivery.DKIMRSA)
		if gerr != nil {
			return nil, gerr
		}
		pem, gerr := key.PrivateKeyPEM()
		if gerr != nil {
			return nil, gerr
		}
		if err := db.W.WithContext(ctx).Clauses(clause.OnConflict{DoNothing: true}).Create(&models.Setting{Name: name, Value: pem}).Error; err != nil {
			return nil, fmt.Errorf("mail: save the system DKIM key: %w", err)
		}
		err = db.W.WithContext(ctx).Where("name = ?", name).First(&st).Error
	}
	if err != nil {
		return nil, fmt.Errorf("mail: system DKIM key of %s: %w", domain, err)
	}
	return delivery.ParseDKIMKey(domain, dkimSelector, st.Value)
}

// dkimSelector is the DNS selector of herald's own mail's key (each
// account key has its own, newSelector; account keys made before
// selectors were per key keep this one).
const dkimSelector = "herald"

// SystemKeyState is the key of herald's own mail as the console shows
// it: the record to publish, and whether a DNS check has seen it.
type SystemKeyState struct {
	From   string // the address herald's own mail comes from (HERALD_MAIL_FROM)
	Record DNSRecord
	// SeenAt is when a DNS check first saw the record: from then on
	// herald's own mail is signed with the key. Nil: not seen, and that
	// mail goes out unsigned.
	SeenAt *time.Time

	key *delivery.DKIMKey
}

// PurposeSystemDKIM is the Purpose of the record of herald's own mail's
// key among a sender's DNS records.
const PurposeSystemDKIM = "DKIM of herald's own mail"

// systemSeenName is the setting that holds when a DNS check first saw the
// record of the key of herald's own mail at domain.
func systemSeenName(domain string) string { return "dkim_system_seen_" + domain }

// SystemKeyState returns the key of herald's own mail, made the first
// time, with its record and whether a check has seen it; nil when the
// domain of HERALD_MAIL_FROM cannot have a key (localhost).
func (m *Mail) SystemKeyState(ctx context.Context) (*SystemKeyState, error) {
	key, err := m.SystemKey(ctx)
	if errors.Is(err, delivery.ErrInvalidDKIM) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("mail: key of herald's own mail: %w", err)
	}
	n, v := key.DNSRecord()
	st := &SystemKeyState{From: m.from.Address, Record: DNSRecord{Purpose: PurposeSystemDKIM, Name: n, Value: v}, key: key}
	var seen []models.Setting
	if err := m.db.R.WithContext(ctx).Where("name = ?", systemSeenName(key.Domain)).Limit(1).Find(&seen).Error; err != nil {
		return nil, fmt.Errorf("mail: read whether the record %s was seen: %w", n, err)
	}
	if len(seen) == 1 {
		if at, err := time.Parse(time.RFC3339Nano, seen[0].Value); err == nil {
			st.SeenAt = &at
		}
	}
	return st, nil
}

// markSystemKeySeen records that a DNS check saw the record of the key of
// herald's own mail at domain (the first time counts; later ones change
// nothing).
func (m *Mail) markSystemKeySeen(ctx context.Context, domain string, at time.Time) error {
	err := m.db.W.WithContext(ctx).Clauses(clause.OnConflict{DoNothing: true}).
		Create(&models.Setting{Name: systemSeenName(domain), Value: at.UTC().Format(time.RFC3339Nano)}).Error
	if err != nil {
		return fmt.Errorf("mail: record that the key of %s was seen: %w", domain, err)
	}
	return nil
}

// systemSigner is the key herald's own mail is signed with: the system
// key once a DNS check has seen its record; nil before (and for a domain
// that cannot have a key), and the mail goes out unsigned, since a
// signature whose key receivers cannot find fails ("missing public key").
func (m *Mail) systemSigner(ctx context.Context) (*delivery.DKIMKey, error) {
	st, err := m.SystemKeyState(ctx)
	if err != nil {
		return nil, fmt.Errorf("mail: system signer: %w", err)
	}
	if st == nil || st.SeenAt == nil {
		return nil, nil
	}
	return st.key, nil
}

// DomainKey returns the account's newest DKIM key for domain, making and
// storing an RSA 2048 key with its own selector the first time (several
// processes agree on one). A key made so signs once a DNS check has seen
// its record, or when the domain's "sign anyway" switch is on.
func (m *Mail) DomainKey(ctx context.Context, accountID int64, domain string) (*delivery.DKIMKey, error) {
	return domainKey(ctx, m.db, accountID, domain)
}

func domainKey(ctx context.Context, db *core.DB, accountID int64, domain string) (*delivery.DKIMKey, error) {
	domain = strings.ToLower(strings.TrimSpace(domain))
	var row models.SenderDomain
	err := db.R.WithContext(ctx).Where("user_id = ? AND domain = ?", accountID, domain).Order("generation DESC").First(&row).Error
	if err != nil {
		if !core.IsNotFound(core.NotFound(err)) {
			return nil, fmt.Errorf("mail: DKIM key of a domain of account %d: %w", accountID, err)
		}
		made, err := makeDomainKey(ctx, db, accountID, domain, 1)
		if err != nil {
			return nil, fmt.Errorf("mail: new DKIM key of account %d: %w", accountID, err)
		}
		row = *made
	}
	return delivery.ParseDKIMKey(row.Domain, row.Selector, row.PrivateKey)
}

// DNSRecord is one TXT record a sender's domain should publish.
type DNSRecord struct {
	Purpose string // DKIM, SPF, DMARC
	Name    string
	Value   string
}

// Publishable is the record's value as a DNS host takes it: a TXT value
// longer than 255 characters split into quoted strings of at most 255
// (RFC 7208 3.3, RFC 6376 3.6.2.2), which receivers join again; a
// shorter one as it is.
func (r DNSRecord) Publishable() string { return quoteTXT(r.Value) }

// quoteTXT splits a TXT value longer than 255 characters into quoted
// strings ("…" "…"); a shorter one is returned as it is.
func quoteTXT(v string) string {
	if len(v) <= 255 {
		return v
	}
	var b strings.Builder
	for len(v) > 0 {
		n := min(255, len(v))
		if b.Len() > 0 {
			b.WriteByte(' ')
		}
		b.WriteString(`"` + v[:n] + `"`)
		v = v[n:]
	}
	return b.String()
}

// DNSRecords returns the records the sender's domain should publish: its
// DKIM public key (made now if needed), SPF and DMARC.
// Errors: ErrNotFound (sender).
func (s *Senders) DNSRecords(ctx context.Context, accountID, senderID int64) ([]DNSRecord, error) {
	snd, err := s.Get(ctx, accountID, senderID)
	if err != nil {
		return nil, err
	}
	domain := snd.FromEmail[strings.LastIndexByte(snd.FromEmail, '@')+1:]
	dk, err := dkimRecord(ctx, s.db, accountID, domain)
	if err != nil {
		return nil, err
	}
	var out []DNSRecord
	out = append(out, DNSRecord{"DKIM", dk.Selector + "._domainkey." + dk.Domain, dk.Record})
	// During a key rotation the older key still signs: its record stays
	// until a check sees the new one.
	keys, err := domainKeys(ctx, s.db, accountID, dk.Domain)
	if err != nil {
		return nil, err
	}
	for _, k := range keys[1:] {
		if key, err := delivery.ParseDKIMKey(k.Domain, k.Selector, k.PrivateKey); err == nil {
			n, v := key.DNSRecord()
			out = append(out, DNSRecord{"DKIM (current key: keep it until herald sees the new one)", n, v})
		}
	}
	n, v := delivery.SPFRecord(domain, "")
	if s.checks != nil {
		// The domain joins the daily checks now (due at once), not at the
		// next hourly look for new domains.
		if err := s.checks.ensureRow(ctx, accountID, dk.Domain); err != nil {
			return nil, fmt.Errorf("senders: add domain check of %s: %w", dk.Domain, err)
		}
		v = s.checks.SPFProposal(ctx, accountID, strings.ToLower(domain))
	}
	out = append(out, DNSRecord{"SPF", n, v})
	n, v = delivery.DMARCRecord(domain)
	out = append(out, DNSRecord{"DMARC", n, v})
	// The key of herald's own mail, whatever its domain (the sender's own
	// included): it signs that mail only once a check sees this record.
	if m, ok := s.notify.(*Mail); ok {
		sys, err := m.SystemKeyState(ctx)
		if err != nil {
			return nil, fmt.Errorf("senders: system key: %w", err)
		}
		if sys != nil {
			out = append(out, sys.Record)
		}
	}
	return out, nil
}

// Notify mails the account's notification recipients one of herald's
// short reports: a subject, a sentence, a table of rows and a link into
// the console. A recipient it cannot reach is logged, not an error.
func (m *Mail) Notify(ctx context.Context, accountID int64, subject, intro string, rows [][2]string, link string) {
	var b strings.Builder
	b.WriteString(`<!doctype html><html lang="en"><head><meta charset="utf-8"><title>` + html.EscapeString(subject) + `</title></head>
<body style="margin:0;padding:24px;background:#f4f5f7;font-family:Arial,Helvetica,sans-serif;color:#1f2933">
<table role="presentation" width="560" cellpadding="0" cellspacing="0" style="max-width:560px;width:100%;background:#ffffff;border-radius:8px"><tr><td style="padding:32px">
<h1 style="margin:0 0 16px;font-size:20px">` + html.EscapeString(subject) + `</h1><p style="margin:0 0 16px">` + html.EscapeString(intro) + `</p>
<table role="presentation" cellpadding="6" cellspacing="0" style="border-collapse:collapse">`)
	for _, r := range rows {
		b.WriteString(`<tr><td style="color:#52606d">` + html.EscapeString(r[0]) + `</td><td style="font-weight:bold">` + html.EscapeString(r[1]) + `</td></tr>`)
	}
	b.WriteString(`</table><p style="margin:16px 0 0"><a href="` + html.EscapeString(link) + `">Open in Herald</a></p></td></tr></table></body></html>`)
	body := b.String()
	err := (&Notifications{db: m.db}).Each(ctx, accountID, core.ListFilter{}, func(n *models.NotificationRecipient) error {
		msg := &delivery.Message{From: m.from, To: mail.Address{Name: n.EmailOwner, Address: n.EmailAddress}, Subject: subject, HTML: body}
		raw, err := delivery.Build(msg)
		if err != nil {
			return err
		}
		if key, kerr := m.systemSigner(ctx); kerr == nil && key != nil {
			if signed, serr := delivery.SignMessage(raw, key); serr == nil {
				raw = signed
			}
		}
		if err := m.Transport.Send(core.WithAccount(ctx, accountID), m.Envelope(), []string{n.EmailAddress}, raw); err != nil {
			slog.Warn("notification mail not sent", "account", accountID, "err", err)
		}
		return nil
	})
	if err != nil {
		slog.Warn("notification recipients", "account", accountID, "err", err)
	}
}

// ImportDone mails the account's notification recipients the report of a
// CSV import.
func (m *Mail) ImportDone(ctx context.Context, imp *models.Import) {
	rows := [][2]string{
		{"File", imp.FileName}, {"Status", imp.Status}, {"Rows read", fmt.Sprint(imp.RowsRead)},
		{"Created", fmt.Sprint(imp.Created)}, {"Updated", fmt.Sprint(imp.Updated)}, {"Skipped", fmt.Sprint(imp.Skipped)},
	}
	if imp.Message != "" {
		rows = append(rows, [2]string{"Message", imp.Message})
	}
	m.Notify(ctx, imp.UserID, "Contact import "+imp.Status+": "+imp.FileName, "A CSV import of contacts has ended.", rows, m.BaseURL+"/contacts")
}
