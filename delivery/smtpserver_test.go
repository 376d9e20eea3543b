package delivery

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"errors"
	"io"
	"log"
	"math/big"
	"net"
	"strconv"
	"sync"
	"testing"
	"time"

	"github.com/emersion/go-sasl"
	"github.com/emersion/go-smtp"
)

// testServer is a real SMTP server (go-smtp's) on loopback that records what it
// receives and answers chosen codes for chosen recipients.
type testServer struct {
	srv  *smtp.Server
	host string
	port int
	// roots trusts the server's self-signed certificate.
	roots *x509.CertPool

	mu       sync.Mutex
	accepted int        // TCP connections accepted
	conns    []net.Conn // open connections, to drop them
	msgs     []received
	rules    map[string]*rule           // by recipient
	mailRule map[string]*rule           // by envelope sender
	refusals map[string]*smtp.SMTPError // "mail:"+sender, "rcpt:"+recipient, "data:"+recipient
	user     string
	pass     string
}

type received struct {
	From     string
	To       []string
	Data     []byte
	TLS      bool
	AuthUser string
}

// rule answers RCPT for one address: the queued codes first, one per attempt,
// then always (0: accept).
type rule struct {
	queue  []int
	always int
}

type serverOpts struct {
	tls        TLSMode // none, starttls (offered) or tls (implicit)
	user, pass string  // non-empty: AUTH required
	login      bool    // offer LOGIN only instead of PLAIN
}

func startServer(t testing.TB, o serverOpts) *testServer {
	t.Helper()
	s := &testServer{rules: map[string]*rule{}, mailRule: map[string]*rule{}, refusals: map[string]*smtp.SMTPError{}, user: o.user, pass: o.pass, host: "127.0.0.1"}
	srv := smtp.NewServer(&backend{s: s, login: o.login})
	srv.Domain = "sink.test"
	srv.ErrorLog = log.New(io.Discard, "", 0)
	srv.ReadTimeout = 30 * time.Second
	srv.WriteTimeout = 30 * time.Second
	srv.MaxMessageBytes = 10 << 20

	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	var l net.Listener = &countingListener{Listener: ln, s: s}
	if o.tls != TLSNone && o.tls != "" {
		cert, roots := selfSigned(t)
		s.roots = roots
		cfg := &tls.Config{Certificates: []tls.Certificate{cert}}
		if o.tls == TLSImplicit {
			l = tls.NewListener(l, cfg)
		} else {
			srv.TLSConfig = cfg
		}
	}
	s.srv = srv
	s.port = ln.Addr().(*net.TCPAddr).Port
	go srv.Serve(l)
	t.Cleanup(func() { srv.Close() })
	return s
}

// config returns a client configuration for this server.
func (s *testServer) config(mode TLSMode) SMTPConfig {
	c := SMTPConfig{Host: s.host, Port: s.port, TLS: mode, Username: s.user, Password: s.pass}
	if s.roots != nil {
		c.TLSConfig = &tls.Config{RootCAs: s.roots}
	}
	return c
}

func (s *testServer) addr() string { return net.JoinHostPort(s.host, strconv.Itoa(s.port)) }

// reply makes RCPT TO:<rcpt> answer codes once each, in order, then accept.
func (s *testServer) reply(rcpt string, codes ...int) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.rules[rcpt] = &rule{queue: codes}
}

// mailReply makes MAIL FROM:<from> answer codes once each, then accept.
func (s *testServer) mailReply(from string, codes ...int) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.mailRule[from] = &rule{queue: codes}
}

// always makes RCPT TO:<rcpt> answer code every time.
func (s *testServer) always(rcpt string, code int) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.rules[rcpt] = &rule{always: code}
}

// refuse makes the server answer e every time at stage ("mail" for the
// envelope sender addr, "rcpt" for the recipient addr, "data" after the
// message of a transaction to the recipient addr); nil accepts again.
func (s *testServer) refuse(stage, addr string, e *smtp.SMTPError) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if e == nil {
		delete(s.refusals, stage+":"+addr)
		return
	}
	s.refusals[stage+":"+addr] = e
}

func (s *testServer) refusal(stage, addr string) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if e := s.refusals[stage+":"+addr]; e != nil {
		return e
	}
	return nil
}

func (s *testServer) messages() []received {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]received(nil), s.msgs...)
}

func (s *testServer) connections() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.accepted
}

// dropAll closes every open connection from the server side, as a server does
// with connections idle too long.
func (s *testServer) dropAll() {
	s.mu.Lock()
	conns := s.conns
	s.conns = nil
	s.mu.Unlock()
	for _, c := range conns {
		c.Close()
	}
}

type countingListener struct {
	net.Listener
	s *testServer
}

func (l *countingListener) Accept() (net.Conn, error) {
	c, err := l.Listener.Accept()
	if err == nil {
		l.s.mu.Lock()
		l.s.accepted++
		l.s.conns = append(l.s.conns, c)
		l.s.mu.Unlock()
	}
	return c, err
}

type backend struct {
	s     *testServer
	login bool
}

func (b *backend) NewSession(c *smtp.Conn) (smtp.Session, error) {
	return &session{s: b.s, conn: c, login: b.login}, nil
}

type session struct {
	s        *testServer
	conn     *smtp.Conn
	login    bool
	authUser string
	from     string
	to       []string
}

func (ss *session) AuthMechanisms() []string {
	if ss.s.user == "" {
		return nil
	}
	if ss.login {
		return []string{sasl.Login}
	}
	return []string{sasl.Plain}
}

func (ss *session) Auth(mech string) (sasl.Server, error) {
	check := func(user, pass string) error {
		if user != ss.s.user || pass != ss.s.pass {
			return smtp.ErrAuthFailed
		}
		ss.authUser = user
		return nil
	}
	switch mech {
	case sasl.Plain:
		return sasl.NewPlainServer(func(identity, user, pass string) error { return check(user, pass) }), nil
	case sasl.Login:
		return &loginServer{check: check}, nil
	}
	return nil, smtp.ErrAuthUnknownMechanism
}

func (ss *session) Mail(from string, _ *smtp.MailOptions) error {
	if ss.s.user != "" && ss.authUser == "" {
		return smtp.ErrAuthRequired
	}
	if err := ss.s.refusal("mail", from); err != nil {
		return err
	}
	ss.s.mu.Lock()
	r := ss.s.mailRule[from]
	ss.s.mu.Unlock()
	if err := ss.s.answer(r, from); err != nil {
		return err
	}
	ss.from = from
	return nil
}

// answer consumes one answer of r: nil to accept.
func (s *testServer) answer(r *rule, addr string) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	code := 0
	if r != nil {
		if len(r.queue) > 0 {
			code, r.queue = r.queue[0], r.queue[1:]
		} else {
			code = r.always
		}
	}
	if code == 0 {
		return nil
	}
	return &smtp.SMTPError{Code: code, EnhancedCode: smtp.EnhancedCode{code / 100, 0, 0}, Message: "rule for " + addr}
}

func (ss *session) Rcpt(to string, _ *smtp.RcptOptions) error {
	if err := ss.s.refusal("rcpt", to); err != nil {
		return err
	}
	ss.s.mu.Lock()
	r := ss.s.rules[to]
	ss.s.mu.Unlock()
	if err := ss.s.answer(r, to); err != nil {
		return err
	}
	ss.to = append(ss.to, to)
	return nil
}

func (ss *session) Data(r io.Reader) error {
	data, err := io.ReadAll(r)
	if err != nil {
		return err
	}
	for _, to := range ss.to {
		if err := ss.s.refusal("data", to); err != nil {
			return err
		}
	}
	_, isTLS := ss.conn.TLSConnectionState()
	ss.s.mu.Lock()
	ss.s.msgs = append(ss.s.msgs, received{From: ss.from, To: ss.to, Data: data, TLS: isTLS, AuthUser: ss.authUser})
	ss.s.mu.Unlock()
	return nil
}

func (ss *session) Reset() { ss.from, ss.to = "", nil }

func (ss *session) Logout() error { return nil }

// loginServer is the server side of AUTH LOGIN, which go-sasl leaves out.
type loginServer struct {
	step  int
	user  string
	check func(user, pass string) error
}

func (l *loginServer) Next(resp []byte) ([]byte, bool, error) {
	switch l.step {
	case 0:
		l.step = 1
		if resp == nil {
			return []byte("Username:"), false, nil
		}
		l.user, l.step = string(resp), 2
		return []byte("Password:"), false, nil
	case 1:
		l.user, l.step = string(resp), 2
		return []byte("Password:"), false, nil
	case 2:
		l.step = 3
		return nil, true, l.check(l.user, string(resp))
	}
	return nil, false, errors.New("unexpected LOGIN step")
}

// selfSigned makes a certificate for 127.0.0.1 and localhost and a pool that
// trusts it.
func selfSigned(t testing.TB) (tls.Certificate, *x509.CertPool) {
	t.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	tmpl := &x509.Certificate{
		SerialNumber:          big.NewInt(1),
		Subject:               pkix.Name{CommonName: "herald test sink"},
		NotBefore:             time.Now().Add(-time.Hour),
		NotAfter:              time.Now().Add(time.Hour),
		KeyUsage:              x509.KeyUsageDigitalSignature | x509.KeyUsageCertSign,
		ExtKeyUsage:           []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth},
		BasicConstraintsValid: true,
		IsCA:                  true,
		IPAddresses:           []net.IP{net.IPv4(127, 0, 0, 1)},
		DNSNames:              []string{"localhost"},
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		t.Fatal(err)
	}
	cert, err := x509.ParseCertificate(der)
	if err != nil {
		t.Fatal(err)
	}
	roots := x509.NewCertPool()
	roots.AddCert(cert)
	return tls.Certificate{Certificate: [][]byte{der}, PrivateKey: key, Leaf: cert}, roots
}
