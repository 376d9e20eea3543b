package delivery

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net/netip"
	"net/url"
	"strings"
	"time"
)

// Transport hands built messages to whatever carries them: the SMTP pool or the
// outbox. Implementations are safe for concurrent use.
type Transport interface {
	// Send delivers msg to the envelope recipients to with envelope sender from.
	// Every failure is a *SendError. A nil error means the relay (or the outbox)
	// took responsibility for the message for every recipient.
	Send(ctx context.Context, from string, to []string, msg []byte) error
	// Close releases connections; Send after Close fails.
	Close() error
}

// Stages of a send, reported in SendError.Stage. A permanent failure in
// StageConnect or StageAuth is the relay's or the configuration's fault, not the
// recipient's: callers should not count it as a bounce.
const (
	StageEnvelope = "envelope" // the addresses given to Send are unusable
	StageConnect  = "connect"  // dial, TLS, greeting, EHLO
	StageAuth     = "auth"
	StageMail     = "mail"  // MAIL FROM
	StageRcpt     = "rcpt"  // RCPT TO
	StageData     = "data"  // DATA, the message, and the final answer
	StageStore    = "store" // the outbox store
)

// SendError is the one error type Transport.Send returns.
type SendError struct {
	// Temporary is true for 4xx answers and for connection failures: sending the
	// same message later may succeed. False for 5xx answers: it never will.
	Temporary bool
	Code      int          // SMTP reply code; 0 when there was no answer
	Enhanced  EnhancedCode // RFC 3463 status code of the reply, zero when it had none
	Message   string       // the server's text (without the enhanced code), or what went wrong
	Stage     string       // Stage… constant: where it failed
	// InFlight is true when the whole message went to the relay and no
	// answer came back (a timeout or a dropped connection after the dot
	// that ends DATA): the relay may have taken it, so it must not be
	// handed to another relay now (the ledger's retry may send it twice,
	// the in-flight bound).
	InFlight bool
	Err      error // the underlying error, for errors.Is/As
}

// Error is the whole reply with where it came, as it is stored in the
// ledger: "delivery: permanent failure at mail: 553 5.7.1 Sender address
// rejected".
func (e *SendError) Error() string {
	kind := "permanent"
	if e.Temporary {
		kind = "temporary"
	}
	if e.Code != 0 {
		if e.Enhanced.Valid() {
			return fmt.Sprintf("delivery: %s failure at %s: %d %s %s", kind, e.Stage, e.Code, e.Enhanced, e.Message)
		}
		return fmt.Sprintf("delivery: %s failure at %s: %d %s", kind, e.Stage, e.Code, e.Message)
	}
	return fmt.Sprintf("delivery: %s failure at %s: %s", kind, e.Stage, e.Message)
}

// Reply is the server's answer as it came: "553 5.7.1 Sender address
// rejected", or what went wrong when there was no answer.
func (e *SendError) Reply() string {
	switch {
	case e.Code == 0:
		return e.Message
	case e.Enhanced.Valid():
		return fmt.Sprintf("%d %s %s", e.Code, e.Enhanced, e.Message)
	}
	return fmt.Sprintf("%d %s", e.Code, e.Message)
}

// EnhancedCode is an RFC 3463 status code, class.subject.detail, as in
// "5.7.1". The zero value is "none".
type EnhancedCode [3]int

// Valid reports whether the code is a real one: class 2, 4 or 5.
func (c EnhancedCode) Valid() bool {
	return (c[0] == 2 || c[0] == 4 || c[0] == 5) && c[1] >= 0 && c[2] >= 0
}

// String is "5.7.1", or "" for none.
func (c EnhancedCode) String() string {
	if !c.Valid() {
		return ""
	}
	return fmt.Sprintf("%d.%d.%d", c[0], c[1], c[2])
}

func (e *SendError) Unwrap() error { return e.Err }

// ErrClosed is wrapped by the SendError of a Send on a closed transport.
var ErrClosed = errors.New("delivery: transport closed")

// checkEnvelope refuses addresses that would break the SMTP command line.
func checkEnvelope(from string, to []string) error {
	bad := func(msg string) error {
		return &SendError{Stage: StageEnvelope, Message: msg}
	}
	if len(to) == 0 {
		return bad("no recipient")
	}
	if strings.ContainsAny(from, "\r\n<> ") {
		return bad(fmt.Sprintf("envelope sender %q", from))
	}
	for _, r := range to {
		if r == "" || strings.ContainsAny(r, "\r\n<> ") {
			return bad(fmt.Sprintf("recipient %q", r))
		}
	}
	return nil
}

// HeloName is the EHLO name for a server whose public address is baseURL:
// its host, or an address literal ("[192.0.2.1]", "[IPv6:2001:db8::1]",
// RFC 5321 section 4.1.3) when the host is an IP address; "" when baseURL
// has no host.
func HeloName(baseURL string) string {
	u, err := url.Parse(baseURL)
	if err != nil {
		return ""
	}
	host := strings.ToLower(u.Hostname())
	if ip, err := netip.ParseAddr(host); err == nil {
		if ip.Is4() || ip.Is4In6() {
			return "[" + ip.Unmap().String() + "]"
		}
		return "[IPv6:" + ip.WithZone("").String() + "]"
	}
	if !ValidHeloName(host) {
		return ""
	}
	return host
}

// ValidHeloName reports whether name can follow EHLO: a domain of
// letters, digits, hyphens and dots, or an address literal in brackets.
func ValidHeloName(name string) bool {
	if name == "" || len(name) > 255 {
		return false
	}
	if strings.HasPrefix(name, "[") && strings.HasSuffix(name, "]") {
		lit := name[1 : len(name)-1]
		if v6, ok := strings.CutPrefix(lit, "IPv6:"); ok {
			ip, err := netip.ParseAddr(v6)
			return err == nil && ip.Is6() && ip.Zone() == ""
		}
		ip, err := netip.ParseAddr(lit)
		return err == nil && ip.Is4()
	}
	for _, label := range strings.Split(name, ".") {
		if label == "" || len(label) > 63 || label[0] == '-' || label[len(label)-1] == '-' {
			return false
		}
		for i := 0; i < len(label); i++ {
			c := label[i]
			if !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '-') {
				return false
			}
		}
	}
	return true
}

// DefaultMaxConns is HERALD_SMTP_MAX_CONNS when unset.
const DefaultMaxConns = 10

// OpenTransport picks the transport HERALD_SMTP_URL asks for: the outbox over
// store when smtpURL is empty, else an SMTP pool of maxConns connections
// (DefaultMaxConns when maxConns < 1), or Relays for several relays. It
// fails only on a malformed URL.
func OpenTransport(smtpURL string, maxConns int, store OutboxStore) (Transport, error) {
	return Open(smtpURL, OpenOptions{MaxConns: maxConns, Outbox: store})
}

// OpenTransportAs is OpenTransport whose SMTP pool greets the relay with
// EHLO localName (HERALD_HELO_NAME, or the host of HERALD_BASE_URL), unless
// the URL names one itself with helo=; "" keeps "localhost".
func OpenTransportAs(smtpURL, localName string, maxConns int, store OutboxStore) (Transport, error) {
	return Open(smtpURL, OpenOptions{LocalName: localName, MaxConns: maxConns, Outbox: store})
}

// OpenOptions are what Open needs besides HERALD_SMTP_URL.
type OpenOptions struct {
	LocalName string      // EHLO name of a relay whose URL names none
	MaxConns  int         // HERALD_SMTP_MAX_CONNS
	Outbox    OutboxStore // the outbox's store, when HERALD_SMTP_URL is empty
	// Rates counts relays' messages for their limits and the console;
	// nil: this process's own (MemoryRates).
	Rates  RateStore
	Logger *slog.Logger
}

// Open picks the transport HERALD_SMTP_URL asks for: the outbox when it is
// empty; the SMTP pool, as it always was, for one URL without the
// parameters of several relays; else Relays.
func Open(smtpURL string, o OpenOptions) (Transport, error) {
	if strings.TrimSpace(smtpURL) == "" {
		return NewOutbox(o.Outbox), nil
	}
	relays, err := ParseRelays(smtpURL)
	if err != nil {
		return nil, err
	}
	maxConns := o.MaxConns
	if maxConns < 1 {
		maxConns = DefaultMaxConns
	}
	if len(relays) == 1 && relays[0].plain() {
		cfg := relays[0].SMTP
		if cfg.LocalName == "" {
			cfg.LocalName = o.LocalName
		}
		return NewSMTPPool(cfg, maxConns), nil
	}
	return NewRelays(RelaysConfig{Relays: relays, LocalName: o.LocalName, MaxConns: maxConns, Rates: o.Rates, Logger: o.Logger,
		ProbeEvery: time.Second}), nil
}
