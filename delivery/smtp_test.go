package delivery

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"net"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/emersion/go-smtp"
)

func testMsg(i int) []byte {
	return []byte(fmt.Sprintf("From: news@herald.test\r\nTo: r%d@example.test\r\nSubject: n%d\r\n\r\nbody %d\r\n.leading dot\r\n", i, i, i))
}

func send(t *testing.T, tr Transport, to string, msg []byte) error {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	return tr.Send(ctx, "bounce@herald.test", []string{to}, msg)
}

func asSendError(t *testing.T, err error) *SendError {
	t.Helper()
	var se *SendError
	if !errors.As(err, &se) {
		t.Fatalf("error %v (%T) is not a *SendError", err, err)
	}
	return se
}

func TestParseSMTPURL(t *testing.T) {
	t.Parallel()
	tests := []struct {
		raw  string
		want SMTPConfig
		err  bool
	}{
		{raw: "smtp://user:pass@mail.example.com:587?tls=starttls",
			want: SMTPConfig{Host: "mail.example.com", Port: 587, Username: "user", Password: "pass", TLS: TLSStartTLS}},
		{raw: "smtp://mail.example.com?tls=none", want: SMTPConfig{Host: "mail.example.com", Port: 25, TLS: TLSNone}},
		{raw: "smtp://mail.example.com", want: SMTPConfig{Host: "mail.example.com", Port: 587, TLS: TLSStartTLS}},
		{raw: "smtp://mail.example.com:465", want: SMTPConfig{Host: "mail.example.com", Port: 465, TLS: TLSImplicit}},
		{raw: "smtp://a:b@mail.example.com?tls=tls", want: SMTPConfig{Host: "mail.example.com", Port: 465, Username: "a", Password: "b", TLS: TLSImplicit}},
		{raw: "smtps://mail.example.com", want: SMTPConfig{Host: "mail.example.com", Port: 465, TLS: TLSImplicit}},
		{raw: "smtp://me%40example.com:p%40ss%3Aw@[::1]:2525?tls=none&auth=login&helo=herald.example.com",
			want: SMTPConfig{Host: "::1", Port: 2525, Username: "me@example.com", Password: "p@ss:w", TLS: TLSNone, Auth: "login", LocalName: "herald.example.com"}},
		{raw: "smtp://mail.example.com?tls=TLS", want: SMTPConfig{Host: "mail.example.com", Port: 465, TLS: TLSImplicit}},
		{raw: "http://mail.example.com", err: true},
		{raw: "smtp://mail.example.com?tls=startls", err: true},
		{raw: "smtp://mail.example.com?tsl=none", err: true},
		{raw: "smtp://mail.example.com?auth=cram-md5", err: true},
		{raw: "smtp://mail.example.com:0", err: true},
		{raw: "smtp://mail.example.com:99999", err: true},
		{raw: "smtps://mail.example.com?tls=none", err: true},
		{raw: "smtp://:25", err: true},
		{raw: "", err: true},
	}
	for _, tt := range tests {
		t.Run(tt.raw, func(t *testing.T) {
			got, err := ParseSMTPURL(tt.raw)
			if tt.err {
				if err == nil {
					t.Fatalf("want an error, got %+v", got)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if got != tt.want {
				t.Fatalf("got %+v\nwant %+v", got, tt.want)
			}
		})
	}
}

func TestSMTPConfigStringHidesPassword(t *testing.T) {
	t.Parallel()
	c, err := ParseSMTPURL("smtp://user:s3cret@mail.example.com:587?tls=starttls")
	if err != nil {
		t.Fatal(err)
	}
	if s := c.String(); strings.Contains(s, "s3cret") || !strings.Contains(s, "user@mail.example.com:587") {
		t.Fatalf("String() = %q", s)
	}
}

func TestSMTPSend(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name   string
		server serverOpts
		client TLSMode
		auth   string
	}{
		{name: "plain", server: serverOpts{tls: TLSNone}, client: TLSNone},
		{name: "starttls auth plain", server: serverOpts{tls: TLSStartTLS, user: "relay", pass: "pa55 wörd"}, client: TLSStartTLS},
		{name: "starttls auth login", server: serverOpts{tls: TLSStartTLS, user: "relay", pass: "secret", login: true}, client: TLSStartTLS},
		{name: "starttls forced login", server: serverOpts{tls: TLSStartTLS, user: "relay", pass: "secret", login: true}, client: TLSStartTLS, auth: "login"},
		{name: "implicit tls auth plain", server: serverOpts{tls: TLSImplicit, user: "relay", pass: "secret"}, client: TLSImplicit},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s := startServer(t, tt.server)
			cfg := s.config(tt.client)
			cfg.Auth = tt.auth
			p := NewSMTPPool(cfg, 2)
			defer p.Close()

			msg := testMsg(1)
			if err := p.Send(context.Background(), "bounce@herald.test", []string{"a@example.test", "b@example.test"}, msg); err != nil {
				t.Fatal(err)
			}
			got := s.messages()
			if len(got) != 1 {
				t.Fatalf("server got %d messages", len(got))
			}
			m := got[0]
			if m.From != "bounce@herald.test" || strings.Join(m.To, ",") != "a@example.test,b@example.test" {
				t.Errorf("envelope %q -> %q", m.From, m.To)
			}
			if !bytes.Equal(m.Data, msg) {
				t.Errorf("data differs:\n%q\n%q", m.Data, msg)
			}
			if wantTLS := tt.client != TLSNone; m.TLS != wantTLS {
				t.Errorf("TLS = %v, want %v", m.TLS, wantTLS)
			}
			if m.AuthUser != tt.server.user {
				t.Errorf("authenticated as %q, want %q", m.AuthUser, tt.server.user)
			}
		})
	}
}

func TestSMTPConnectFailures(t *testing.T) {
	t.Run("wrong password is a permanent 535", func(t *testing.T) {
		s := startServer(t, serverOpts{tls: TLSStartTLS, user: "relay", pass: "right"})
		cfg := s.config(TLSStartTLS)
		cfg.Password = "wrong"
		p := NewSMTPPool(cfg, 1)
		defer p.Close()
		se := asSendError(t, send(t, p, "a@example.test", testMsg(1)))
		if se.Temporary || se.Code != 535 || se.Stage != StageAuth {
			t.Fatalf("got %+v", se)
		}
		if p.Stats().Open != 0 {
			t.Fatalf("failed connection kept open: %+v", p.Stats())
		}
	})
	t.Run("server without STARTTLS", func(t *testing.T) {
		s := startServer(t, serverOpts{tls: TLSNone})
		p := NewSMTPPool(s.config(TLSStartTLS), 1)
		defer p.Close()
		se := asSendError(t, send(t, p, "a@example.test", testMsg(1)))
		if se.Stage != StageConnect || len(s.messages()) != 0 {
			t.Fatalf("got %+v", se)
		}
	})
	t.Run("untrusted certificate", func(t *testing.T) {
		s := startServer(t, serverOpts{tls: TLSImplicit})
		cfg := s.config(TLSImplicit)
		cfg.TLSConfig = nil // system roots do not know the test CA
		p := NewSMTPPool(cfg, 1)
		defer p.Close()
		se := asSendError(t, send(t, p, "a@example.test", testMsg(1)))
		if !se.Temporary || se.Stage != StageConnect {
			t.Fatalf("got %+v", se)
		}
	})
	t.Run("nothing listening is temporary", func(t *testing.T) {
		ln, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			t.Fatal(err)
		}
		port := ln.Addr().(*net.TCPAddr).Port
		ln.Close()
		p := NewSMTPPool(SMTPConfig{Host: "127.0.0.1", Port: port, TLS: TLSNone}, 1)
		defer p.Close()
		se := asSendError(t, send(t, p, "a@example.test", testMsg(1)))
		if !se.Temporary || se.Stage != StageConnect || se.Code != 0 {
			t.Fatalf("got %+v", se)
		}
	})
	t.Run("silent server times out", func(t *testing.T) {
		ln, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			t.Fatal(err)
		}
		defer ln.Close()
		go func() {
			for {
				c, err := ln.Accept()
				if err != nil {
					return
				}
				defer c.Close() // accept and never greet
			}
		}()
		cfg := SMTPConfig{Host: "127.0.0.1", Port: ln.Addr().(*net.TCPAddr).Port, TLS: TLSNone, DialTimeout: 200 * time.Millisecond}
		p := NewSMTPPool(cfg, 1)
		defer p.Close()
		start := time.Now()
		se := asSendError(t, send(t, p, "a@example.test", testMsg(1)))
		if !se.Temporary || se.Stage != StageConnect || !errors.Is(se, context.DeadlineExceeded) {
			t.Fatalf("got %+v", se)
		}
		if d := time.Since(start); d > 5*time.Second {
			t.Fatalf("took %v", d)
		}
	})
}

func TestSMTPRecipientAnswers(t *testing.T) {
	t.Parallel()
	s := startServer(t, serverOpts{tls: TLSNone})
	s.reply("later@example.test", 451)
	s.always("gone@example.test", 550)
	p := NewSMTPPool(s.config(TLSNone), 1)
	defer p.Close()

	se := asSendError(t, send(t, p, "later@example.test", testMsg(1)))
	if !se.Temporary || se.Code != 451 || se.Stage != StageRcpt {
		t.Fatalf("first send: %+v", se)
	}
	var smtpErr *smtp.SMTPError
	if !errors.As(se, &smtpErr) {
		t.Errorf("SendError does not unwrap to *smtp.SMTPError")
	}
	if err := send(t, p, "later@example.test", testMsg(2)); err != nil {
		t.Fatalf("second send: %v", err)
	}
	for i := 0; i < 2; i++ {
		se = asSendError(t, send(t, p, "gone@example.test", testMsg(3)))
		if se.Temporary || se.Code != 550 || se.Stage != StageRcpt {
			t.Fatalf("550: %+v", se)
		}
	}
	// One refused recipient fails the message for all of them.
	err := p.Send(context.Background(), "bounce@herald.test", []string{"ok@example.test", "gone@example.test"}, testMsg(4))
	if se := asSendError(t, err); se.Code != 550 {
		t.Fatalf("mixed recipients: %+v", se)
	}
	if err := send(t, p, "ok@example.test", testMsg(5)); err != nil {
		t.Fatal(err)
	}
	got := s.messages()
	if len(got) != 2 || strings.Join(got[1].To, ",") != "ok@example.test" {
		t.Fatalf("server got %+v", got)
	}
	// Failures do not cost the connection: RSET ends the failed transaction.
	if n := s.connections(); n != 1 {
		t.Fatalf("%d connections, want 1", n)
	}
}

func TestSMTPEnvelopeRefused(t *testing.T) {
	t.Parallel()
	p := NewSMTPPool(SMTPConfig{Host: "127.0.0.1", Port: 1, TLS: TLSNone}, 1)
	defer p.Close()
	for _, to := range [][]string{nil, {""}, {"a@example.test\r\nRCPT TO:<b@example.test>"}, {"<a@example.test>"}} {
		err := p.Send(context.Background(), "bounce@herald.test", to, testMsg(1))
		if se := asSendError(t, err); se.Temporary || se.Stage != StageEnvelope {
			t.Errorf("%q: %+v", to, se)
		}
	}
}

func TestSMTPPoolReuse(t *testing.T) {
	t.Parallel()
	t.Run("sequential sends share one connection", func(t *testing.T) {
		s := startServer(t, serverOpts{tls: TLSStartTLS, user: "u", pass: "p"})
		cfg := s.config(TLSStartTLS)
		var transcript syncBuffer
		cfg.Debug = &transcript
		p := NewSMTPPool(cfg, 3)
		defer p.Close()
		for i := 0; i < 20; i++ {
			if err := send(t, p, fmt.Sprintf("r%d@example.test", i), testMsg(i)); err != nil {
				t.Fatal(err)
			}
		}
		if n := s.connections(); n != 1 {
			t.Fatalf("%d connections for 20 sequential sends", n)
		}
		if st := p.Stats(); st.Open != 1 || st.Idle != 1 || st.Dials != 1 {
			t.Fatalf("stats %+v", st)
		}
		// After a success the next MAIL starts a new transaction: no RSET.
		if n := strings.Count(transcript.String(), "RSET\r\n"); n != 0 {
			t.Fatalf("%d RSET between 20 successful messages, want 0", n)
		}
	})
	t.Run("concurrent sends stay within maxConns", func(t *testing.T) {
		s := startServer(t, serverOpts{tls: TLSNone})
		const maxConns, workers, each = 3, 8, 25
		p := NewSMTPPool(s.config(TLSNone), maxConns)
		var wg sync.WaitGroup
		errs := make(chan error, workers*each)
		for w := 0; w < workers; w++ {
			wg.Add(1)
			go func() {
				defer wg.Done()
				for i := 0; i < each; i++ {
					n := w*each + i
					errs <- p.Send(context.Background(), "bounce@herald.test", []string{fmt.Sprintf("r%d@example.test", n)}, testMsg(n))
				}
			}()
		}
		wg.Wait()
		close(errs)
		for err := range errs {
			if err != nil {
				t.Fatal(err)
			}
		}
		if got := len(s.messages()); got != workers*each {
			t.Fatalf("server got %d messages, want %d", got, workers*each)
		}
		if n := s.connections(); n < 1 || n > maxConns {
			t.Fatalf("%d connections, want 1..%d", n, maxConns)
		}
		if err := p.Close(); err != nil {
			t.Fatal(err)
		}
		if st := p.Stats(); st.Open != 0 || st.Idle != 0 {
			t.Fatalf("after Close: %+v", st)
		}
	})
}

func TestSMTPReconnect(t *testing.T) {
	t.Parallel()
	t.Run("server dropped idle connections", func(t *testing.T) {
		s := startServer(t, serverOpts{tls: TLSStartTLS, user: "u", pass: "p"})
		p := NewSMTPPool(s.config(TLSStartTLS), 2)
		defer p.Close()
		if err := send(t, p, "a@example.test", testMsg(1)); err != nil {
			t.Fatal(err)
		}
		s.dropAll()
		if err := send(t, p, "b@example.test", testMsg(2)); err != nil {
			t.Fatalf("send after drop: %v", err)
		}
		if n, m := s.connections(), len(s.messages()); n != 2 || m != 2 {
			t.Fatalf("%d connections, %d messages; want 2, 2", n, m)
		}
	})
	t.Run("server dropped several clean idle connections", func(t *testing.T) {
		// A relay's idle timeout (Postfix smtpd_timeout) or restart closes
		// every idle session at once: the retry after the first dead one must
		// dial, not take the next idle connection, which is just as dead.
		s := startServer(t, serverOpts{tls: TLSStartTLS, user: "u", pass: "p"})
		const idle = 3
		p := NewSMTPPool(s.config(TLSStartTLS), idle+1)
		defer p.Close()
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		// Clean idle connections, as left by successful sends.
		for i := 0; i < idle; i++ {
			sc, err := p.dial(ctx)
			if err != nil {
				t.Fatal(err)
			}
			p.put(sc)
		}
		if st := p.Stats(); st.Open != idle || st.Idle != idle || st.Dials != idle {
			t.Fatalf("before drop: %+v", st)
		}
		s.dropAll()
		if err := send(t, p, "a@example.test", testMsg(1)); err != nil {
			t.Fatalf("send after drop: %v", err)
		}
		if n, m := s.connections(), len(s.messages()); n != idle+1 || m != 1 {
			t.Fatalf("%d connections, %d messages; want %d, 1", n, m, idle+1)
		}
		// The other idle connections were idle longer than the dead one: dropped.
		if st := p.Stats(); st.Open != 1 || st.Idle != 1 || st.Dials != idle+1 {
			t.Fatalf("after send: %+v", st)
		}
	})
	t.Run("retry after a dead connection dials even past newer idle ones", func(t *testing.T) {
		// Idle connections last used after the dead one (put back by other
		// sends meanwhile) are kept, not dropped; the retry still must not
		// take them: they may be dead too (here they are).
		s := startServer(t, serverOpts{tls: TLSNone})
		const idle = 3
		p := NewSMTPPool(s.config(TLSNone), idle+1)
		defer p.Close()
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		for i := 0; i < idle; i++ {
			sc, err := p.dial(ctx)
			if err != nil {
				t.Fatal(err)
			}
			p.put(sc)
		}
		p.mu.Lock()
		top := p.idle[len(p.idle)-1] // taken first
		top.lastUsed = p.idle[0].lastUsed.Add(-time.Second)
		p.mu.Unlock()
		s.dropAll()
		if err := send(t, p, "a@example.test", testMsg(1)); err != nil {
			t.Fatalf("send after drop: %v", err)
		}
		if n, d := s.connections(), p.Stats().Dials; n != idle+1 || d != idle+1 {
			t.Fatalf("%d connections, %d dials; want %d", n, d, idle+1)
		}
	})
	t.Run("421 at MAIL on a reused connection retries once on a fresh one", func(t *testing.T) {
		s := startServer(t, serverOpts{tls: TLSNone})
		p := NewSMTPPool(s.config(TLSNone), 1)
		defer p.Close()
		if err := send(t, p, "a@example.test", testMsg(1)); err != nil {
			t.Fatal(err)
		}
		s.mailReply("flaky@herald.test", 421)
		err := p.Send(context.Background(), "flaky@herald.test", []string{"b@example.test"}, testMsg(2))
		if err != nil {
			t.Fatalf("send: %v", err)
		}
		if n := s.connections(); n != 2 {
			t.Fatalf("%d connections, want 2", n)
		}
	})
	t.Run("421 at MAIL on a fresh connection is reported", func(t *testing.T) {
		s := startServer(t, serverOpts{tls: TLSNone})
		p := NewSMTPPool(s.config(TLSNone), 1)
		defer p.Close()
		s.mailReply("flaky@herald.test", 421)
		err := p.Send(context.Background(), "flaky@herald.test", []string{"b@example.test"}, testMsg(2))
		if se := asSendError(t, err); !se.Temporary || se.Code != 421 || se.Stage != StageMail {
			t.Fatalf("got %+v", se)
		}
	})
}

func TestSMTPContextAndClose(t *testing.T) {
	t.Parallel()
	s := startServer(t, serverOpts{tls: TLSNone})
	p := NewSMTPPool(s.config(TLSNone), 1)

	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	err := p.Send(ctx, "bounce@herald.test", []string{"a@example.test"}, testMsg(1))
	if se := asSendError(t, err); !se.Temporary || !errors.Is(err, context.Canceled) {
		t.Fatalf("cancelled: %+v", se)
	}

	if err := send(t, p, "a@example.test", testMsg(1)); err != nil {
		t.Fatal(err)
	}
	if err := p.Close(); err != nil {
		t.Fatal(err)
	}
	if err := send(t, p, "a@example.test", testMsg(2)); !errors.Is(err, ErrClosed) {
		t.Fatalf("send after Close: %v", err)
	}
}

// syncBuffer is a bytes.Buffer safe for the pool's concurrent connections.
type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}
