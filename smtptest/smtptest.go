// Package smtptest runs a real SMTP server (go-smtp's) on loopback for
// tests and benchmarks: it keeps what it receives and answers chosen
// codes for chosen recipients. It is test support; herald never imports it.
package smtptest

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"log"
	"net"
	"net/mail"
	"path"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/emersion/go-smtp"
)

// Message is one received message.
type Message struct {
	From string
	To   string
	Data []byte
	At   time.Time
	Helo string // the name the client gave in EHLO (or HELO)
}

// Header parses the message's header.
func (m Message) Header() mail.Header {
	msg, err := mail.ReadMessage(bytes.NewReader(m.Data))
	if err != nil {
		return mail.Header{}
	}
	return msg.Header
}

// Server is a loopback SMTP server.
type Server struct {
	Addr string // host:port
	srv  *smtp.Server
	ln   net.Listener
	// Discard keeps only counts, not message bodies (benchmarks).
	Discard bool

	mu     sync.Mutex
	msgs   []Message
	count  int
	byRcpt map[string]int
	// firstAt is when each recipient's first message was accepted, kept
	// with Discard too (the crash tests tell duplicates apart by it).
	firstAt map[string]time.Time
	rules   map[string][]int           // recipient → codes to answer, one per attempt; then accept
	always  map[string]int             // recipient → code answered every time
	refuse  map[string]*smtp.SMTPError // stage + ":" + address → full answer, every time
	notify  chan struct{}
	gates   []*Gate
}

// Gate holds messages to some recipients before their 250 (Hold): the
// relay is slow for them, as long as a test wants.
type Gate struct {
	pattern string
	tokens  chan struct{}
	open    chan struct{}
	once    sync.Once
	mu      sync.Mutex
	waiting int
}

// AcceptedAt is when the first message to rcpt was accepted (just before
// the server's 250), kept with Discard too; false while none was.
func (s *Server) AcceptedAt(rcpt string) (time.Time, bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	at, ok := s.firstAt[strings.ToLower(rcpt)]
	return at, ok
}

// Hold makes every message to a recipient matching pattern (path.Match on
// the lower-cased address, e.g. "*@bulk.example.com") wait after its DATA,
// before the server's answer, until the gate lets it go (Release, Open).
func (s *Server) Hold(pattern string) *Gate {
	g := &Gate{pattern: strings.ToLower(pattern), tokens: make(chan struct{}, 1<<16), open: make(chan struct{})}
	s.mu.Lock()
	s.gates = append(s.gates, g)
	s.mu.Unlock()
	return g
}

// Release lets n held messages (now or later) go.
func (g *Gate) Release(n int) {
	for range n {
		g.tokens <- struct{}{}
	}
}

// Open lets every message go, now and later.
func (g *Gate) Open() { g.once.Do(func() { close(g.open) }) }

// Waiting is how many messages the gate holds now.
func (g *Gate) Waiting() int {
	g.mu.Lock()
	defer g.mu.Unlock()
	return g.waiting
}

func (g *Gate) pass() {
	g.mu.Lock()
	g.waiting++
	g.mu.Unlock()
	select {
	case <-g.tokens:
	case <-g.open:
	}
	g.mu.Lock()
	g.waiting--
	g.mu.Unlock()
}

// Stages a server can refuse at (Refuse).
const (
	AtMail = "mail" // MAIL FROM, by envelope sender
	AtRcpt = "rcpt" // RCPT TO, by recipient
	AtData = "data" // after the message, by recipient
)

// Refuse makes the server answer code, enhanced status code (like
// "5.7.1"; "" for none) and text at stage for addr (the envelope sender at
// AtMail, a recipient at AtRcpt and AtData), every time until Lift. addr
// may be a pattern with "*" (path.Match): herald's return paths carry a
// token each, "bounces+*@herald.test" stands for all of them.
func (s *Server) Refuse(stage, addr string, code int, enhanced, text string) {
	e := &smtp.SMTPError{Code: code, EnhancedCode: smtp.NoEnhancedCode, Message: text}
	if enhanced != "" {
		var ec smtp.EnhancedCode
		if n, err := fmt.Sscanf(enhanced, "%d.%d.%d", &ec[0], &ec[1], &ec[2]); err != nil || n != 3 {
			panic("smtptest: enhanced code " + enhanced)
		}
		e.EnhancedCode = ec
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	s.refuse[stage+":"+strings.ToLower(addr)] = e
}

// Lift makes the server accept at stage for addr again.
func (s *Server) Lift(stage, addr string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	delete(s.refuse, stage+":"+strings.ToLower(addr))
}

func (s *Server) refusal(stage, addr string) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	key := stage + ":" + strings.ToLower(addr)
	if e := s.refuse[key]; e != nil {
		return e
	}
	for pattern, e := range s.refuse {
		if ok, _ := path.Match(pattern, key); ok && strings.Contains(pattern, "*") {
			return e
		}
	}
	return nil
}

// Start runs a server until the test ends.
func Start(t testing.TB) *Server {
	t.Helper()
	s, err := Listen("127.0.0.1:0")
	if err != nil {
		t.Fatalf("smtptest: %v", err)
	}
	t.Cleanup(func() { s.Close() })
	return s
}

// Listen runs a server on addr until Close.
func Listen(addr string) (*Server, error) {
	s := &Server{byRcpt: map[string]int{}, firstAt: map[string]time.Time{}, rules: map[string][]int{}, always: map[string]int{}, refuse: map[string]*smtp.SMTPError{}, notify: make(chan struct{}, 1)}
	srv := smtp.NewServer(s)
	srv.Domain = "sink.test"
	srv.AllowInsecureAuth = true
	srv.MaxRecipients = 100
	srv.MaxMessageBytes = 50 << 20
	srv.ReadTimeout = time.Minute
	srv.WriteTimeout = time.Minute
	srv.ErrorLog = log.New(io.Discard, "", 0)
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return nil, err
	}
	s.srv, s.ln, s.Addr = srv, ln, ln.Addr().String()
	go func() { _ = srv.Serve(ln) }()
	return s, nil
}

// URL is the HERALD_SMTP_URL of the server.
func (s *Server) URL() string { return "smtp://" + s.Addr + "?tls=none" }

// Close stops the server: its address refuses connections from then on
// (the listener is closed here too, in case Serve has not started yet).
func (s *Server) Close() error {
	err := s.srv.Close()
	s.ln.Close()
	return err
}

// Fail makes RCPT of rcpt answer codes, one per attempt, then accept.
func (s *Server) Fail(rcpt string, codes ...int) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.rules[strings.ToLower(rcpt)] = codes
}

// Always makes RCPT of rcpt answer code every time.
func (s *Server) Always(rcpt string, code int) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.always[strings.ToLower(rcpt)] = code
}

// Messages returns what was received, oldest first.
func (s *Server) Messages() []Message {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]Message(nil), s.msgs...)
}

// Count is how many messages were accepted.
func (s *Server) Count() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.count
}

// PerRecipient returns how many messages each recipient got.
func (s *Server) PerRecipient() map[string]int {
	s.mu.Lock()
	defer s.mu.Unlock()
	out := make(map[string]int, len(s.byRcpt))
	for k, v := range s.byRcpt {
		out[k] = v
	}
	return out
}

// FirstAt returns when each recipient's first message was accepted.
func (s *Server) FirstAt() map[string]time.Time {
	s.mu.Lock()
	defer s.mu.Unlock()
	out := make(map[string]time.Time, len(s.firstAt))
	for k, v := range s.firstAt {
		out[k] = v
	}
	return out
}

// WaitCount waits until at least n messages were accepted or d passed; it
// reports whether they were.
func (s *Server) WaitCount(n int, d time.Duration) bool {
	deadline := time.Now().Add(d)
	for {
		if s.Count() >= n {
			return true
		}
		left := time.Until(deadline)
		if left <= 0 {
			return false
		}
		select {
		case <-s.notify:
		case <-time.After(min(left, 50*time.Millisecond)):
		}
	}
}

// NewSession implements smtp.Backend.
func (s *Server) NewSession(c *smtp.Conn) (smtp.Session, error) {
	return &session{s: s, helo: c.Hostname()}, nil
}

type session struct {
	s    *Server
	helo string
	from string
	to   []string
}

func (ss *session) Mail(from string, _ *smtp.MailOptions) error {
	if err := ss.s.refusal(AtMail, from); err != nil {
		return err
	}
	ss.from = from
	return nil
}

func (ss *session) Rcpt(to string, _ *smtp.RcptOptions) error {
	s := ss.s
	if err := s.refusal(AtRcpt, to); err != nil {
		return err
	}
	key := strings.ToLower(to)
	s.mu.Lock()
	code := s.always[key]
	if code == 0 {
		if q := s.rules[key]; len(q) > 0 {
			code, s.rules[key] = q[0], q[1:]
		}
	}
	s.mu.Unlock()
	if code != 0 {
		return &smtp.SMTPError{Code: code, EnhancedCode: smtp.EnhancedCodeNotSet, Message: "test refusal"}
	}
	ss.to = append(ss.to, to)
	return nil
}

func (ss *session) Data(r io.Reader) error {
	s := ss.s
	var data []byte
	var err error
	if s.Discard {
		_, err = io.Copy(io.Discard, r)
	} else {
		data, err = io.ReadAll(r)
	}
	if err != nil {
		return err
	}
	if len(ss.to) == 0 {
		return errors.New("no recipient")
	}
	s.mu.Lock()
	gates := s.gates
	s.mu.Unlock()
	for _, g := range gates {
		for _, to := range ss.to {
			if ok, _ := path.Match(g.pattern, strings.ToLower(to)); ok {
				g.pass()
				break
			}
		}
	}
	for _, to := range ss.to {
		if err := s.refusal(AtData, to); err != nil {
			return err
		}
	}
	now := time.Now()
	s.mu.Lock()
	for _, to := range ss.to {
		s.count++
		rcpt := strings.ToLower(to)
		if s.byRcpt[rcpt] == 0 {
			s.firstAt[rcpt] = now
		}
		s.byRcpt[rcpt]++
		if !s.Discard {
			s.msgs = append(s.msgs, Message{From: ss.from, To: to, Data: data, At: now, Helo: ss.helo})
		}
	}
	s.mu.Unlock()
	select {
	case s.notify <- struct{}{}:
	default:
	}
	return nil
}

func (ss *session) Reset()        { ss.from, ss.to = "", nil }
func (ss *session) Logout() error { return nil }
