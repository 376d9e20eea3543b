package delivery

import (
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"io"
	"log"
	"log/slog"
	"net"
	"net/netip"
	"sync"
	"time"

	"github.com/emersion/go-smtp"
	"golang.org/x/net/netutil"
)

// InboundConfig configures the inbound SMTP server (decisions.md 7).
type InboundConfig struct {
	// Addr is HERALD_INBOUND_ADDR, for ListenAndServe (":2525").
	Addr string
	// Domain is the name the server greets with.
	Domain string
	// TLS, when set, is offered with STARTTLS (HERALD_INBOUND_TLS_CERT and
	// _KEY).
	TLS *tls.Config
	// VERP returns the bounce domain's VERP (service.Bounces.VERP).
	VERP func(ctx context.Context) (*VERP, error)
	// Reports applies what the mails report (service.Feedback).
	Reports Reports
	// MaxSize is the largest message accepted; default and at most
	// MaxReportSize (10 MB).
	MaxSize int64
	// MaxConns is how many connections are served at once; default 50.
	MaxConns int
	// MaxConnsPerIP is how many of them one client address may hold at
	// once (HERALD_INBOUND_MAX_CONNS_PER_IP); default 10. An IPv6 client
	// counts by its /64, which one host or site usually holds whole. One
	// connection more from it is answered 421 4.7.0 and closed, so that a
	// client holding idle connections cannot take every place of MaxConns
	// from the other senders.
	MaxConnsPerIP int
	// MaxRecipients per message; default 100.
	MaxRecipients int
	// ReadTimeout and WriteTimeout of a connection; default 1 minute.
	ReadTimeout, WriteTimeout time.Duration
	// HandleTimeout bounds the parsing and handling of one message;
	// default 1 minute.
	HandleTimeout time.Duration
}

// Inbound is herald's inbound SMTP server: it takes delivery status
// notifications, feedback reports, bounce texts and mails to the
// List-Unsubscribe address for the bounce domain, and nothing else (it
// never relays). A recipient outside the bounce domain gets 550 5.7.1, a
// message over MaxSize 552, a failure to apply a report 451 4.3.0 (the
// sender tries again later). A report naming no message of herald's is
// accepted (250) and changes nothing. AUTH is not offered.
type Inbound struct {
	cfg InboundConfig
	srv *smtp.Server

	ctx    context.Context // cancelled by Close: handling in flight stops
	cancel context.CancelFunc

	mu       sync.Mutex
	ln       net.Listener
	closed   bool
	handling sync.WaitGroup // messages being parsed and handled
}

// NewInbound checks cfg and makes the server. Errors: no VERP or no
// Reports.
func NewInbound(cfg InboundConfig) (*Inbound, error) {
	if cfg.VERP == nil || cfg.Reports == nil {
		return nil, errors.New("delivery: inbound server needs a VERP and Reports")
	}
	if cfg.MaxSize <= 0 || cfg.MaxSize > MaxReportSize {
		cfg.MaxSize = MaxReportSize
	}
	if cfg.MaxConns <= 0 {
		cfg.MaxConns = 50
	}
	if cfg.MaxConnsPerIP <= 0 {
		cfg.MaxConnsPerIP = 10
	}
	if cfg.MaxRecipients <= 0 {
		cfg.MaxRecipients = 100
	}
	if cfg.ReadTimeout <= 0 {
		cfg.ReadTimeout = time.Minute
	}
	if cfg.WriteTimeout <= 0 {
		cfg.WriteTimeout = time.Minute
	}
	if cfg.HandleTimeout <= 0 {
		cfg.HandleTimeout = time.Minute
	}
	in := &Inbound{cfg: cfg}
	in.ctx, in.cancel = context.WithCancel(context.Background())
	s := smtp.NewServer(smtp.BackendFunc(func(c *smtp.Conn) (smtp.Session, error) {
		return &inboundSession{in: in, remote: c.Conn().RemoteAddr().String()}, nil
	}))
	s.Addr = cfg.Addr
	s.Domain = cfg.Domain
	if s.Domain == "" {
		s.Domain = "localhost"
	}
	s.TLSConfig = cfg.TLS
	s.MaxMessageBytes = cfg.MaxSize
	s.MaxRecipients = cfg.MaxRecipients
	s.MaxLineLength = 4000 // RFC 5321 says 1000; bounce texts are not always polite
	s.ReadTimeout, s.WriteTimeout = cfg.ReadTimeout, cfg.WriteTimeout
	s.ErrorLog = log.New(slogWriter{}, "", 0)
	in.srv = s
	return in, nil
}

// ListenAndServe listens on cfg.Addr and serves until Close.
func (in *Inbound) ListenAndServe() error {
	ln, err := net.Listen("tcp", in.cfg.Addr)
	if err != nil {
		return err
	}
	return in.Serve(ln)
}

// Serve serves ln, at most MaxConns connections at once and
// MaxConnsPerIP of one client, until Close. It returns nil after
// Close.
func (in *Inbound) Serve(ln net.Listener) error {
	in.mu.Lock()
	in.ln = ln
	in.mu.Unlock()
	// The client cap inside the global one: a refused connection is
	// answered and closed while LimitListener holds the place it would
	// have taken, so refusals never count against MaxConns.
	perClient := &clientLimitListener{Listener: ln, max: in.cfg.MaxConnsPerIP, open: map[netip.Addr]int{}}
	err := in.srv.Serve(netutil.LimitListener(perClient, in.cfg.MaxConns))
	if errors.Is(err, smtp.ErrServerClosed) || in.ctx.Err() != nil {
		return nil
	}
	return err
}

// Addr is the address served ("" before Serve).
func (in *Inbound) Addr() string {
	in.mu.Lock()
	defer in.mu.Unlock()
	if in.ln == nil {
		return ""
	}
	return in.ln.Addr().String()
}

// Close stops listening, closes every connection and waits for the
// messages being handled, whose handling it cancels (their senders get no
// 250 and send again).
func (in *Inbound) Close() error {
	in.cancel()
	in.mu.Lock()
	in.closed = true
	in.mu.Unlock()
	err := in.srv.Close()
	in.handling.Wait()
	if errors.Is(err, smtp.ErrServerClosed) {
		return nil
	}
	return err
}

// Answers of the server.
var (
	errRelay = &smtp.SMTPError{Code: 550, EnhancedCode: smtp.EnhancedCode{5, 7, 1},
		Message: "Relaying denied: this server takes only reports for its own messages"}
	errRetry = &smtp.SMTPError{Code: 451, EnhancedCode: smtp.EnhancedCode{4, 3, 0},
		Message: "Temporary failure, please try again later"}
	errNoRcpt = &smtp.SMTPError{Code: 554, EnhancedCode: smtp.EnhancedCode{5, 5, 1}, Message: "No valid recipients"}
)

type inboundSession struct {
	in     *Inbound
	remote string
	rcpts  []string
}

func (s *inboundSession) Reset()        { s.rcpts = nil }
func (s *inboundSession) Logout() error { return nil }

// Mail takes any sender: reports come from the null sender <>.
func (s *inboundSession) Mail(string, *smtp.MailOptions) error { return nil }

// Rcpt takes the bounce domain's addresses only.
func (s *inboundSession) Rcpt(to string, _ *smtp.RcptOptions) error {
	ctx, cancel := context.WithTimeout(s.in.ctx, s.in.cfg.HandleTimeout)
	defer cancel()
	v, err := s.in.cfg.VERP(ctx)
	if err != nil {
		slog.Error("inbound: the bounce address", "err", err)
		return errRetry
	}
	if _, ok := v.Parse(to); !ok {
		return errRelay
	}
	s.rcpts = append(s.rcpts, to)
	return nil
}

// Data reads the message whole (at most MaxSize: go-smtp answers 552
// beyond), reads its reports and hands them over.
func (s *inboundSession) Data(r io.Reader) error {
	if len(s.rcpts) == 0 {
		return errNoRcpt
	}
	s.in.mu.Lock()
	if s.in.closed {
		s.in.mu.Unlock()
		return errRetry
	}
	s.in.handling.Add(1)
	s.in.mu.Unlock()
	defer s.in.handling.Done()
	raw, err := io.ReadAll(r)
	if err != nil {
		return err // smtp.ErrDataTooLarge: 552
	}
	ctx, cancel := context.WithTimeout(s.in.ctx, s.in.cfg.HandleTimeout)
	defer cancel()
	v, err := s.in.cfg.VERP(ctx)
	if err != nil {
		slog.Error("inbound: the bounce address", "err", err)
		return errRetry
	}
	reports, err := ParseReports(raw, s.rcpts, v)
	if errors.Is(err, ErrReportTooLarge) {
		return smtp.ErrDataTooLarge
	}
	if err != nil || len(reports) == 0 {
		// Not a report (an auto-reply, a person's mail, garbage): taken
		// and dropped, so that it does not come back.
		slog.Debug("inbound: a mail with no report", "remote", s.remote, "bytes", len(raw), "err", err)
		return nil
	}
	// Who handed the reports over: an untied report is counted by sender
	// IP, so an operator can see a relay that strips the return path.
	ip := s.remote
	if host, _, err := net.SplitHostPort(s.remote); err == nil {
		ip = host
	}
	for i := range reports {
		reports[i].RemoteIP = ip
	}
	if err := s.in.cfg.Reports.Handle(ctx, reports); err != nil {
		slog.Error("inbound: handling reports", "remote", s.remote, "reports", len(reports), "err", err)
		return errRetry
	}
	slog.Info("inbound: reports", "remote", s.remote, "reports", len(reports), "kind", reports[0].Kind.String(), "source", reports[0].Source)
	return nil
}

// slogWriter carries go-smtp's own log lines (connection errors) to slog.
type slogWriter struct{}

func (slogWriter) Write(p []byte) (int, error) {
	slog.Debug("inbound smtp", "msg", fmt.Sprintf("%.500s", p))
	return len(p), nil
}

// tooManyFromClient is the answer to a connection past MaxConnsPerIP, in
// place of the greeting: 421 is a temporary refusal, so the sender tries
// again later (RFC 5321 sections 3.1 and 4.2.3).
const tooManyFromClient = "421 4.7.0 Too many connections from your address\r\n"

// clientLimitListener hands over at most max connections at once from one
// client (clientOf); one more is answered tooManyFromClient and closed
// inside Accept, never reaching the SMTP server.
type clientLimitListener struct {
	net.Listener
	max  int
	mu   sync.Mutex
	open map[netip.Addr]int
}

func (l *clientLimitListener) Accept() (net.Conn, error) {
	for {
		c, err := l.Listener.Accept()
		if err != nil {
			return nil, err
		}
		client := clientOf(c.RemoteAddr())
		l.mu.Lock()
		full := l.open[client] >= l.max
		if !full {
			l.open[client]++
		}
		l.mu.Unlock()
		if !full {
			return &clientConn{Conn: c, release: func() { l.release(client) }}, nil
		}
		// A fresh socket's send buffer takes the line at once; the
		// deadline only bounds a peer that is somehow not reading.
		_ = c.SetWriteDeadline(time.Now().Add(time.Second))
		_, _ = io.WriteString(c, tooManyFromClient)
		_ = c.Close()
		slog.Debug("inbound SMTP: too many connections from one client", "client", client)
	}
}

func (l *clientLimitListener) release(client netip.Addr) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.open[client]--; l.open[client] <= 0 {
		delete(l.open, client)
	}
}

// clientOf is the client a connection counts toward: its IPv4 address
// (IPv4-mapped ones unmapped), or the /64 of its IPv6 address; the zero
// Addr for an address that is neither (all such count as one client).
func clientOf(a net.Addr) netip.Addr {
	tcp, ok := a.(*net.TCPAddr)
	if !ok {
		return netip.Addr{}
	}
	ip := tcp.AddrPort().Addr().Unmap().WithZone("")
	if ip.Is6() {
		ip = netip.PrefixFrom(ip, 64).Masked().Addr()
	}
	return ip
}

// clientConn gives its client's place back once, when closed.
type clientConn struct {
	net.Conn
	once    sync.Once
	release func()
}

func (c *clientConn) Close() error {
	err := c.Conn.Close()
	c.once.Do(c.release)
	return err
}
