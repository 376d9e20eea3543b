package delivery

import (
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"io"
	"net"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/emersion/go-sasl"
	"github.com/emersion/go-smtp"
)

// TLSMode is how a connection to the relay is secured (the tls= of HERALD_SMTP_URL).
type TLSMode string

const (
	TLSNone     TLSMode = "none"     // plain text (a relay on the same host or network)
	TLSStartTLS TLSMode = "starttls" // plain connect, then STARTTLS, required (port 587)
	TLSImplicit TLSMode = "tls"      // TLS from the first byte (port 465)
)

// SMTPConfig says how to reach the relay. ParseSMTPURL fills it from
// HERALD_SMTP_URL; zero timeouts take the defaults of NewSMTPPool.
type SMTPConfig struct {
	Host     string
	Port     int
	Username string // empty: no AUTH
	Password string
	TLS      TLSMode
	// Auth is "plain", "login", or empty for PLAIN when the server offers it,
	// else LOGIN.
	Auth string
	// LocalName is the name given in EHLO; empty: "localhost".
	LocalName string
	// TLSConfig overrides the TLS settings (tests: RootCAs, ServerName). nil: the
	// system roots, ServerName = Host.
	TLSConfig *tls.Config

	DialTimeout    time.Duration // the whole connection setup: TCP, TLS, greeting, EHLO, AUTH (default 30s)
	CommandTimeout time.Duration // each command's answer (default 1m)
	DataTimeout    time.Duration // the answer after the message's final dot (default 5m)
	IdleTimeout    time.Duration // an idle connection older than this is closed, not reused (default 1m)

	// Debug, when set, receives the SMTP conversation of every connection
	// (AUTH exchanges included, base64-encoded: keep it out of shared logs). It
	// must be safe for concurrent use.
	Debug io.Writer
}

// Addr is host:port.
func (c SMTPConfig) Addr() string { return net.JoinHostPort(c.Host, strconv.Itoa(c.Port)) }

// String is the configuration as a URL with the password left out, for logs.
func (c SMTPConfig) String() string {
	u := url.URL{Scheme: "smtp", Host: c.Addr(), RawQuery: "tls=" + string(c.TLS)}
	if c.Username != "" {
		u.User = url.User(c.Username)
	}
	if c.Auth != "" {
		u.RawQuery += "&auth=" + c.Auth
	}
	return u.String()
}

// ParseSMTPURL reads HERALD_SMTP_URL: smtp://user:pass@host:port?tls=none|starttls|tls,
// with optional auth=plain|login and helo=name. smtps:// means tls=tls. Without
// tls=, port 465 means tls and any other port starttls; without a port, 25 for
// none, 587 for starttls, 465 for tls. The user and password are URL-decoded
// (write "@" in a password as %40). Unknown parameters are refused, so that a typo
// does not silently send in plain text.
func ParseSMTPURL(raw string) (SMTPConfig, error) {
	var c SMTPConfig
	u, err := url.Parse(strings.TrimSpace(raw))
	if err != nil {
		return c, fmt.Errorf("delivery: HERALD_SMTP_URL: %w", err)
	}
	bad := func(format string, args ...any) (SMTPConfig, error) {
		return SMTPConfig{}, fmt.Errorf("delivery: HERALD_SMTP_URL: "+format, args...)
	}
	switch u.Scheme {
	case "smtp":
	case "smtps":
		c.TLS = TLSImplicit
	default:
		return bad("scheme %q (want smtp or smtps)", u.Scheme)
	}
	var problem string
	if c.Host, c.Port, c.Username, c.Password, problem = urlServer(u); problem != "" {
		return bad("%s", problem)
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
			case TLSNone, TLSStartTLS, TLSImplicit:
				if c.TLS == TLSImplicit && TLSMode(v) != TLSImplicit {
					return bad("smtps:// with tls=%s", v)
				}
				c.TLS = TLSMode(v)
			default:
				return bad("tls=%q (want none, starttls or tls)", v)
			}
		case "auth":
			if v != "plain" && v != "login" {
				return bad("auth=%q (want plain or login)", v)
			}
			c.Auth = v
		case "helo":
			c.LocalName = vals[len(vals)-1]
			if !ValidHeloName(c.LocalName) {
				return bad("helo=%q is not a host name or an address literal", c.LocalName)
			}
		default:
			return bad("unknown parameter %q", key)
		}
	}
	if c.TLS == "" {
		c.TLS = TLSStartTLS
		if c.Port == 465 {
			c.TLS = TLSImplicit
		}
	}
	if c.Port == 0 {
		c.Port = map[TLSMode]int{TLSNone: 25, TLSStartTLS: 587, TLSImplicit: 465}[c.TLS]
	}
	return c, nil
}

func (c SMTPConfig) withDefaults() SMTPConfig {
	set := func(d *time.Duration, v time.Duration) {
		if *d <= 0 {
			*d = v
		}
	}
	set(&c.DialTimeout, 30*time.Second)
	set(&c.CommandTimeout, time.Minute)
	set(&c.DataTimeout, 5*time.Minute)
	set(&c.IdleTimeout, time.Minute)
	if c.TLS == "" {
		c.TLS = TLSStartTLS
	}
	if c.LocalName == "" {
		c.LocalName = "localhost"
	}
	return c
}

// SMTPPool is the Transport that relays through one SMTP server over at most
// maxConns connections, reused from one message to the next.
type SMTPPool struct {
	cfg   SMTPConfig
	tls   *tls.Config
	slots chan struct{} // one per Send in progress, so connections ≤ maxConns

	mu     sync.Mutex
	idle   []*smtpConn // most recently used last
	closed bool

	open  atomic.Int64
	dials atomic.Int64
}

// NewSMTPPool returns a pool for cfg; it dials lazily, on the first Send.
// maxConns < 1 means 1 (HERALD_SMTP_MAX_CONNS defaults to 10).
func NewSMTPPool(cfg SMTPConfig, maxConns int) *SMTPPool {
	if maxConns < 1 {
		maxConns = 1
	}
	cfg = cfg.withDefaults()
	tc := &tls.Config{MinVersion: tls.VersionTLS12}
	if cfg.TLSConfig != nil {
		tc = cfg.TLSConfig.Clone()
	}
	if tc.ServerName == "" {
		tc.ServerName = cfg.Host
	}
	return &SMTPPool{cfg: cfg, tls: tc, slots: make(chan struct{}, maxConns)}
}

// PoolStats is a snapshot of an SMTPPool, for metrics and tests.
type PoolStats struct {
	Open  int   // connections open now, idle or in use
	Idle  int   // of which idle
	Dials int64 // connections made since the pool was created
}

// Stats returns the pool's current counts.
func (p *SMTPPool) Stats() PoolStats {
	p.mu.Lock()
	idle := len(p.idle)
	p.mu.Unlock()
	return PoolStats{Open: int(p.open.Load()), Idle: idle, Dials: p.dials.Load()}
}

// Send relays msg over a pooled connection: an idle one (after an RSET when
// its last transaction failed), else a new one. If a reused connection turns
// out dead at MAIL FROM, Send retries once on a newly dialed connection
// (nothing was transferred yet). All recipients must be accepted: one refused
// recipient fails the whole message. Errors are *SendError.
func (p *SMTPPool) Send(ctx context.Context, from string, to []string, msg []byte) error {
	if err := checkEnvelope(from, to); err != nil {
		return err
	}
	if fenced(ctx) {
		return staleError(StageConnect)
	}
	select {
	case p.slots <- struct{}{}:
	case <-ctx.Done():
		return ctxError(ctx, StageConnect)
	}
	defer func() { <-p.slots }()

	fresh := false
	for attempt := 0; ; attempt++ {
		sc, reused, err := p.get(ctx, fresh)
		if err != nil {
			return err
		}
		serr, broken := p.transact(ctx, sc, from, to, msg)
		if serr == nil {
			sc.dirty = false
			p.put(sc)
			return nil
		}
		if broken {
			p.discard(sc)
		} else {
			sc.dirty = true
			p.put(sc) // the RSET before its next use ends the failed transaction
		}
		if broken && reused && attempt == 0 && serr.Stage == StageMail && ctx.Err() == nil {
			// The connection died while idle (the server's idle timeout, a
			// restart, or its 421 on closing it), and it failed at MAIL FROM,
			// so no recipient and no byte of the message went through.
			// Whatever closed it likely closed the connections idle longer
			// too, and the next idle one would fail the same way and use up
			// the only retry: drop those and retry on a new connection.
			p.dropIdle(sc.lastUsed)
			fresh = true
			continue
		}
		return serr
	}
}

// get returns an idle connection (after an RSET if its last transaction
// failed), or a new one; with fresh, always a new one. A clean idle
// connection that the server dropped shows it at MAIL FROM, where Send
// retries once with fresh.
func (p *SMTPPool) get(ctx context.Context, fresh bool) (sc *smtpConn, reused bool, err error) {
	for {
		p.mu.Lock()
		if p.closed {
			p.mu.Unlock()
			return nil, false, &SendError{Temporary: true, Stage: StageConnect, Message: ErrClosed.Error(), Err: ErrClosed}
		}
		n := len(p.idle)
		if fresh || n == 0 {
			p.mu.Unlock()
			break
		}
		sc = p.idle[n-1]
		p.idle = p.idle[:n-1]
		p.mu.Unlock()

		if time.Since(sc.lastUsed) > p.cfg.IdleTimeout {
			p.discard(sc)
			continue
		}
		if !sc.dirty {
			return sc, true, nil
		}
		if err := guard(ctx, sc.sock, sc.reset); err != nil {
			p.discard(sc)
			if ctx.Err() != nil {
				return nil, false, ctxError(ctx, StageConnect)
			}
			// Dropped by the server (idle timeout, restart) or a 421; so,
			// likely, are the connections idle longer. Drop those too and
			// try the next (one put back since) or dial.
			p.dropIdle(sc.lastUsed)
			continue
		}
		return sc, true, nil
	}
	sc, err = p.dial(ctx)
	return sc, false, err
}

func (p *SMTPPool) put(sc *smtpConn) {
	sc.lastUsed = time.Now()
	p.mu.Lock()
	if p.closed {
		p.mu.Unlock()
		p.discard(sc)
		return
	}
	// Connections at the bottom of the stack have waited longest: drop the
	// stale ones now rather than keep their sockets until the next burst.
	var stale []*smtpConn
	for len(p.idle) > 0 && time.Since(p.idle[0].lastUsed) > p.cfg.IdleTimeout {
		stale = append(stale, p.idle[0])
		p.idle = p.idle[1:]
	}
	p.idle = append(p.idle, sc)
	p.mu.Unlock()
	for _, s := range stale {
		p.discard(s)
	}
}

// dropIdle closes the idle connections last used no later than t: those idle
// at least as long as one the server turned out to have closed.
func (p *SMTPPool) dropIdle(t time.Time) {
	var dead []*smtpConn
	p.mu.Lock()
	p.idle = slices.DeleteFunc(p.idle, func(sc *smtpConn) bool {
		if sc.lastUsed.After(t) {
			return false
		}
		dead = append(dead, sc)
		return true
	})
	p.mu.Unlock()
	for _, sc := range dead {
		p.discard(sc)
	}
}

func (p *SMTPPool) discard(sc *smtpConn) {
	sc.close()
	p.open.Add(-1)
}

// dial connects, secures, greets and authenticates a new connection, all within
// DialTimeout.
func (p *SMTPPool) dial(ctx context.Context) (*smtpConn, error) {
	ctx, cancel := context.WithTimeout(ctx, p.cfg.DialTimeout)
	defer cancel()

	d := &net.Dialer{}
	var raw net.Conn
	var err error
	if p.cfg.TLS == TLSImplicit {
		raw, err = (&tls.Dialer{NetDialer: d, Config: p.tls}).DialContext(ctx, "tcp", p.cfg.Addr())
	} else {
		raw, err = d.DialContext(ctx, "tcp", p.cfg.Addr())
	}
	if err != nil {
		return nil, connectError(ctx, err)
	}
	p.dials.Add(1)
	p.open.Add(1)
	sc := newSMTPConn(raw, &p.cfg)

	// Closing the socket is what interrupts a stuck greeting or handshake.
	stop := context.AfterFunc(ctx, func() { raw.Close() })
	serr := p.setup(sc)
	if !stop() {
		serr = ctxError(ctx, StageConnect)
	}
	if serr != nil {
		raw.Close()
		p.open.Add(-1)
		return nil, serr
	}
	return sc, nil
}

func (p *SMTPPool) setup(sc *smtpConn) *SendError {
	if err := sc.hello(p.tls, p.cfg.TLS == TLSStartTLS); err != nil {
		return classify(StageConnect, err)
	}
	if p.cfg.Username == "" {
		return nil
	}
	var mech sasl.Client
	switch {
	case p.cfg.Auth == "login", p.cfg.Auth == "" && !sc.supportsAuth(sasl.Plain) && sc.supportsAuth(sasl.Login):
		mech = sasl.NewLoginClient(p.cfg.Username, p.cfg.Password)
	case p.cfg.Auth == "plain", p.cfg.Auth == "" && sc.supportsAuth(sasl.Plain):
		mech = sasl.NewPlainClient("", p.cfg.Username, p.cfg.Password)
	default:
		return &SendError{Stage: StageAuth, Message: "the server offers neither AUTH PLAIN nor AUTH LOGIN"}
	}
	if err := sc.auth(mech); err != nil {
		return classify(StageAuth, err)
	}
	return nil
}

// transact sends one message on sc. broken reports a connection that cannot
// carry another message.
func (p *SMTPPool) transact(ctx context.Context, sc *smtpConn, from string, to []string, msg []byte) (serr *SendError, broken bool) {
	utf8 := false
	if !isASCII(from) || !allASCII(to) {
		if !sc.has("SMTPUTF8") {
			return &SendError{Stage: StageMail, Message: "non-ASCII address and the server lacks SMTPUTF8"}, false
		}
		utf8 = true
	}
	stage := StageMail
	err := guard(ctx, sc.sock, func() error {
		var err error
		stage, broken, err = sc.transact(from, to, msg, utf8, fenceOf(ctx))
		return err
	})
	if err == nil {
		return nil, false
	}
	if errors.Is(err, ErrStale) {
		return staleError(stage), true
	}
	if ctx.Err() != nil {
		serr = ctxError(ctx, stage)
		serr.InFlight = sc.dotSent
		return serr, true
	}
	var se *smtp.SMTPError
	if errors.As(err, &se) && se.Code == 421 {
		broken = true // the server is closing the connection
	}
	serr = classify(stage, err)
	serr.InFlight = sc.dotSent && !isReply(err)
	return serr, broken
}

// guard runs f, closing the connection if ctx ends first (the connection only knows
// deadlines) and reporting ctx's error then.
func guard(ctx context.Context, raw net.Conn, f func() error) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	stop := context.AfterFunc(ctx, func() { raw.Close() })
	err := f()
	if !stop() {
		return ctx.Err()
	}
	return err
}

// Close says QUIT on the idle connections and closes them; connections in use are
// closed when their Send ends. Send after Close fails with ErrClosed.
func (p *SMTPPool) Close() error {
	p.mu.Lock()
	idle := p.idle
	p.idle, p.closed = nil, true
	p.mu.Unlock()
	var wg sync.WaitGroup
	for _, sc := range idle {
		wg.Add(1)
		go func() {
			defer wg.Done()
			sc.quit(2 * time.Second) // a polite QUIT, not a wait
			p.discard(sc)
		}()
	}
	wg.Wait()
	return nil
}

// classify turns a connection's error into a SendError: an SMTP answer by its
// code (5xx permanent, anything else temporary), any other failure (network,
// TLS, a dropped connection) temporary.
func classify(stage string, err error) *SendError {
	var se *smtp.SMTPError
	if errors.As(err, &se) {
		return &SendError{Temporary: se.Code < 500, Code: se.Code, Enhanced: EnhancedCode(se.EnhancedCode), Message: se.Message, Stage: stage, Err: err}
	}
	return &SendError{Temporary: true, Message: err.Error(), Stage: stage, Err: err}
}

func connectError(ctx context.Context, err error) *SendError {
	if ctx.Err() != nil {
		return ctxError(ctx, StageConnect)
	}
	return classify(StageConnect, err)
}

// ctxError reports a cancelled or timed-out context: temporary, since the
// message may be sent again.
func ctxError(ctx context.Context, stage string) *SendError {
	err := context.Cause(ctx)
	if err == nil {
		err = context.Canceled
	}
	return &SendError{Temporary: true, Stage: stage, Message: err.Error(), Err: err}
}

func isASCII(s string) bool {
	for i := 0; i < len(s); i++ {
		if s[i] >= 0x80 {
			return false
		}
	}
	return true
}

func allASCII(ss []string) bool {
	for _, s := range ss {
		if !isASCII(s) {
			return false
		}
	}
	return true
}

// urlServer reads the host, port (0 when absent) and credentials of a
// server's URL (HERALD_SMTP_URL, HERALD_BOUNCE_MAILBOX); problem says what
// is wrong with them, "" when nothing.
func urlServer(u *url.URL) (host string, port int, user, password, problem string) {
	host = u.Hostname()
	if host == "" {
		return "", 0, "", "", "no host"
	}
	if p := u.Port(); p != "" {
		n, err := strconv.Atoi(p)
		if err != nil || n <= 0 || n > 65535 {
			return "", 0, "", "", fmt.Sprintf("port %q", p)
		}
		port = n
	}
	if u.User != nil {
		user = u.User.Username()
		password, _ = u.User.Password()
	}
	return host, port, user, password, ""
}
