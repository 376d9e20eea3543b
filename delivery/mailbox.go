package delivery

import (
	"bufio"
	"bytes"
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/mail"
	"net/textproto"
	"net/url"
	"strconv"
	"strings"
	"sync"
	"time"
)

// MailboxConfig is what NewMailbox needs: where the bounce mailbox is, how
// to read a mail and where the findings go.
type MailboxConfig struct {
	// URL is HERALD_BOUNCE_MAILBOX (see ParseMailboxURL).
	URL string
	// Parse reads one whole mail (headers and body, CRLF lines) into the
	// reports it holds. An error means the mail could not be read; no
	// error and no reports, a mail that reports nothing (an auto-reply, a
	// person's mail, a bounce in a form herald does not know). Either way
	// it stays in the mailbox, set aside (see Mailbox).
	Parse func(ctx context.Context, raw []byte) ([]Report, error)
	// Reports applies what Parse found.
	Reports Reports
	// Kept counts the mails set aside (nil: they are not counted).
	Kept KeptMails
	// Interval between polls (default one minute).
	Interval time.Duration
	// MaxMessageSize: a larger mail is set aside unread, never downloaded
	// whole (default 10 MB, as the inbound SMTP server).
	MaxMessageSize int64
	// Batch is how many mails one poll reads at most (default 100).
	Batch int
	// Timeout bounds the connection and, on POP3, each command's answer
	// (default 1 minute); imapclient bounds each IMAP answer to 30 s itself.
	Timeout time.Duration
	// TLSConfig overrides the TLS settings (tests: RootCAs). nil: the
	// system roots, ServerName = the URL's host.
	TLSConfig *tls.Config
}

// MailboxURL is a parsed HERALD_BOUNCE_MAILBOX.
type MailboxURL struct {
	Protocol string // "imap" or "pop3"
	Host     string
	Port     int
	Username string
	Password string
	TLS      TLSMode
	Folder   string // IMAP only: the mailbox to read (default INBOX)
}

// Addr is host:port.
func (u MailboxURL) Addr() string { return net.JoinHostPort(u.Host, strconv.Itoa(u.Port)) }

// String is the URL with the password left out, for logs.
func (u MailboxURL) String() string {
	scheme := u.Protocol
	if u.TLS == TLSImplicit {
		scheme += "s"
	}
	out := url.URL{Scheme: scheme, Host: u.Addr()}
	if u.Username != "" {
		out.User = url.User(u.Username)
	}
	if u.Protocol == "imap" {
		out.Path = "/" + u.Folder
	}
	if u.TLS != TLSImplicit {
		out.RawQuery = "tls=" + string(u.TLS)
	}
	return out.String()
}

// ParseMailboxURL reads HERALD_BOUNCE_MAILBOX:
// imaps://user:pass@host[:port][/folder] (TLS from the first byte, port
// 993), imap://… (STARTTLS required, port 143), pop3s://user:pass@host[:port]
// (995) or pop3://… (STARTTLS, i.e. STLS, required, port 110). imap:// and
// pop3:// take tls=none for a server on the same host or in tests (plain
// text, password included) and tls=starttls. The IMAP folder defaults to
// INBOX; the user, password and folder are URL-decoded (write "@" in a
// password as %40). Unknown parameters are refused, so that a typo does not
// silently read in plain text.
func ParseMailboxURL(raw string) (MailboxURL, error) {
	var m MailboxURL
	bad := func(format string, args ...any) (MailboxURL, error) {
		return MailboxURL{}, fmt.Errorf("delivery: HERALD_BOUNCE_MAILBOX: "+format, args...)
	}
	u, err := url.Parse(strings.TrimSpace(raw))
	if err != nil {
		// url.Error repeats the URL, password included: say only why.
		var ue *url.Error
		if errors.As(err, &ue) {
			err = ue.Err
		}
		return bad("not a URL: %v", err)
	}
	switch u.Scheme {
	case "imap", "pop3":
		m.Protocol, m.TLS = u.Scheme, TLSStartTLS
	case "imaps", "pop3s":
		m.Protocol, m.TLS = strings.TrimSuffix(u.Scheme, "s"), TLSImplicit
	default:
		return bad("scheme %q (want imaps, imap, pop3s or pop3)", u.Scheme)
	}
	var problem string
	if m.Host, m.Port, m.Username, m.Password, problem = urlServer(u); problem != "" {
		return bad("%s", problem)
	}
	if strings.ContainsFunc(m.Username+m.Password, func(r rune) bool { return r < ' ' || r == 0x7f }) {
		return bad("control characters in the user or password")
	}
	if m.Username == "" || m.Password == "" {
		return bad("no user and password (write %s://user:password@%s)", u.Scheme, u.Host)
	}
	q, err := url.ParseQuery(u.RawQuery)
	if err != nil {
		return bad("%v", err)
	}
	for key, vals := range q {
		v := strings.ToLower(vals[len(vals)-1])
		switch key {
		case "tls":
			switch TLSMode(v) {
			case TLSNone, TLSStartTLS:
				if m.TLS == TLSImplicit {
					return bad("%s:// with tls=%s", u.Scheme, v)
				}
				m.TLS = TLSMode(v)
			case TLSImplicit:
				m.TLS = TLSImplicit
			default:
				return bad("tls=%q (want none, starttls or tls)", v)
			}
		default:
			return bad("unknown parameter %q", key)
		}
	}
	folder := strings.Trim(u.Path, "/")
	switch {
	case m.Protocol == "pop3" && folder != "":
		return bad("POP3 reads one mailbox: no folder (%q) after the host", folder)
	case folder == "":
		folder = "INBOX"
	}
	if m.Protocol == "imap" {
		m.Folder = folder
	}
	if m.Port == 0 {
		m.Port = map[string]int{"imap": 143, "imaps": 993, "pop3": 110, "pop3s": 995}[m.scheme()]
	}
	return m, nil
}

func (u MailboxURL) scheme() string {
	if u.TLS == TLSImplicit {
		return u.Protocol + "s"
	}
	return u.Protocol
}

// Mailbox reads a bounce mailbox over IMAP or POP3 and hands what its mails
// report to Reports (decisions.md 7, mailbox polling). Only a handled mail
// (its reports, tied to a message or not, were stored by Reports) is
// deleted (IMAP: \Deleted and UID EXPUNGE; POP3: DELE). Every other mail
// stays, set aside, and is counted through Kept: one Parse cannot read,
// one over MaxMessageSize, and one that yields no report at all (it may be
// a bounce in a form herald does not know, or a person's answer: someone
// should read it, and deleting it would hide a relay's misconfiguration).
// On IMAP a mail set aside is flagged \Seen, \Flagged and HeraldUnparsed,
// and no poll reads it again. POP3 has no flags: the poller remembers its
// UIDL while it runs (forgotten when the mail leaves the mailbox) and
// never deletes it; after a restart it is read once more, set aside again,
// and Kept's key (the mailbox and the UIDL) counts it once. A mail whose
// reports Reports fails to apply, or whose setting aside Kept fails to
// record, stays as it was, for the next poll.
type Mailbox struct {
	cfg MailboxConfig
	url MailboxURL

	mu       sync.Mutex          // one poll at a time
	unparsed map[string]struct{} // POP3: the UIDLs set aside
}

// UnparsedKeyword flags, on IMAP, a mail the poller set aside.
const UnparsedKeyword = "HeraldUnparsed"

// NewMailbox checks cfg and fills its defaults. It returns an error for a
// bad URL or a missing Parse or Reports.
func NewMailbox(cfg MailboxConfig) (*Mailbox, error) {
	u, err := ParseMailboxURL(cfg.URL)
	if err != nil {
		return nil, err
	}
	if cfg.Parse == nil || cfg.Reports == nil {
		return nil, errors.New("delivery: a mailbox needs Parse and Reports")
	}
	if cfg.Interval <= 0 {
		cfg.Interval = time.Minute
	}
	if cfg.MaxMessageSize <= 0 {
		cfg.MaxMessageSize = 10 << 20
	}
	if cfg.Batch <= 0 {
		cfg.Batch = 100
	}
	if cfg.Timeout <= 0 {
		cfg.Timeout = time.Minute
	}
	return &Mailbox{cfg: cfg, url: u, unparsed: map[string]struct{}{}}, nil
}

// String names the mailbox for logs, without the password.
func (m *Mailbox) String() string { return m.url.String() }

// Run polls at once and then every Interval until ctx ends. Errors are
// logged (never with the password) and the next poll tries again.
func (m *Mailbox) Run(ctx context.Context) {
	t := time.NewTicker(m.cfg.Interval)
	defer t.Stop()
	for {
		n, err := m.Poll(ctx)
		if err != nil && ctx.Err() == nil {
			slog.Warn("bounce mailbox poll failed", "mailbox", m.String(), "handled", n, "err", err)
		} else if n > 0 {
			slog.Info("bounce mailbox polled", "mailbox", m.String(), "handled", n)
		}
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
	}
}

// Poll reads up to Batch mails once and returns how many it handled and
// deleted. Its error is the first failure of the connection, of the login
// or of Reports; mails handled before it are deleted all the same, when the
// connection still allows it.
func (m *Mailbox) Poll(ctx context.Context) (handled int, err error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.url.Protocol == "pop3" {
		return m.pollPOP3(ctx)
	}
	return m.pollIMAP(ctx)
}

// verdict is what becomes of one mail.
type verdict int

const (
	keep     verdict = iota // Reports or Kept failed: read it again next poll
	remove                  // handled: delete it
	setAside                // no report, unreadable or too large: keep, never read again
)

// Why a mail stays in the bounce mailbox, set aside (KeptMail.Why).
const (
	KeptNotAReport = "not a report"
	KeptUnreadable = "unreadable"
	KeptTooLarge   = "too large"
)

// KeptMail is a mail a poller leaves in the bounce mailbox, set aside.
type KeptMail struct {
	Mailbox string // the mailbox, as Mailbox.String names it (no password)
	ID      string // IMAP: "UIDVALIDITY/UID"; POP3: the UIDL, or "sha256:…" of the mail without one
	Why     string // KeptNotAReport, KeptUnreadable or KeptTooLarge
}

// KeptMails counts the mails pollers set aside, each once however often
// it is read (the service implements it).
type KeptMails interface {
	KeepMail(ctx context.Context, k KeptMail) error
}

// judge parses one mail and applies its reports; for a mail set aside it
// says why.
func (m *Mailbox) judge(ctx context.Context, raw []byte) (verdict, string, error) {
	reports, err := m.cfg.Parse(ctx, raw)
	if err != nil {
		slog.Warn("bounce mailbox: a mail could not be read; it stays in the mailbox", "mailbox", m.String(), "bytes", len(raw), "err", err)
		return setAside, KeptUnreadable, nil
	}
	if len(reports) == 0 {
		slog.Info("bounce mailbox: a mail with no report; it stays in the mailbox", "mailbox", m.String(), "bytes", len(raw))
		return setAside, KeptNotAReport, nil
	}
	if err := m.cfg.Reports.Handle(ctx, reports); err != nil {
		return keep, "", fmt.Errorf("handle reports: %w", err)
	}
	return remove, "", nil
}

// countKept counts a mail that stays in the mailbox. An error means it
// was not counted: the caller leaves it unflagged, to be read again.
func (m *Mailbox) countKept(ctx context.Context, id, why string) error {
	if m.cfg.Kept == nil {
		return nil
	}
	if err := m.cfg.Kept.KeepMail(ctx, KeptMail{Mailbox: m.String(), ID: id, Why: why}); err != nil {
		return fmt.Errorf("count a mail set aside: %w", err)
	}
	return nil
}

// tlsConfig is the TLS configuration for the URL's host.
func (m *Mailbox) tlsConfig() *tls.Config {
	c := &tls.Config{}
	if m.cfg.TLSConfig != nil {
		c = m.cfg.TLSConfig.Clone()
	}
	if c.ServerName == "" {
		c.ServerName = m.url.Host
	}
	return c
}

// closeOnDone closes c when ctx ends before stop is called, so that a
// poll blocked on the network returns at once.
func closeOnDone(ctx context.Context, c interface{ Close() error }) (stop func()) {
	done := make(chan struct{})
	go func() {
		select {
		case <-ctx.Done():
			c.Close()
		case <-done:
		}
	}()
	return func() { close(done) }
}

// maxMailboxRecipients bounds the addresses MailboxRecipients returns.
const maxMailboxRecipients = 20

// MailboxRecipients returns the addresses a mail read from a mailbox was
// delivered to, as far as its header tells (a mailbox keeps no envelope):
// Delivered-To and X-Original-To, which the delivering server adds, then
// To. Each address once, in that order, at most 20; none for a header that
// cannot be read.
func MailboxRecipients(raw []byte) []string {
	r := textproto.NewReader(bufio.NewReader(bytes.NewReader(raw)))
	h, err := r.ReadMIMEHeader()
	if err != nil && len(h) == 0 {
		return nil
	}
	var out []string
	seen := map[string]bool{}
	for _, name := range []string{"Delivered-To", "X-Original-To", "To"} {
		for _, v := range h.Values(name) {
			list, err := mail.ParseAddressList(v)
			if err != nil {
				continue
			}
			for _, a := range list {
				key := strings.ToLower(a.Address)
				if seen[key] || len(out) == maxMailboxRecipients {
					continue
				}
				seen[key] = true
				out = append(out, a.Address)
			}
		}
	}
	return out
}
