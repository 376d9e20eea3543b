package delivery

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"net"
	"net/textproto"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/emersion/go-smtp"
)

// writeDotted must put on the wire what net/textproto's dot writer (go-smtp's
// way) puts there, for any message.
func FuzzWriteDotted(f *testing.F) {
	for _, s := range []string{
		"", ".", "..", "a", "a\r\n", "a\n", ".a\r\n.b\n..c", "\r\n.\r\n", "x\r", "x\ry\r\n",
		"a\r\r\n.b", "\n\n.", "From: a\r\n\r\nbody\r\n.\r\n", ".\n.\r\n.\r", "\r", "\r\r\n",
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, msg []byte) {
		var want bytes.Buffer
		tw := textproto.NewWriter(bufio.NewWriter(&want))
		dw := tw.DotWriter()
		dw.Write(msg)
		dw.Close()

		var got bytes.Buffer
		w := bufio.NewWriter(&got)
		w.WriteString(writeDotted(w, msg))
		w.Flush()
		if !bytes.Equal(got.Bytes(), want.Bytes()) {
			t.Fatalf("writeDotted(%q)\n got %q\nwant %q", msg, got.Bytes(), want.Bytes())
		}
	})
}

// scripted is an SMTP server on loopback that answers from a script and
// records every read it made, so that a test sees how the client batched its
// commands.
type scripted struct {
	ln     net.Listener
	mu     sync.Mutex
	reads  []string // each chunk of commands as read from the socket
	lines  []string // every command line, in order
	answer func(line string) string
}

// startScripted serves one connection at a time; answer gives the reply to
// each command line ("" to answer 250 OK). ehlo is the EHLO answer.
func startScripted(t *testing.T, answer func(line string) string) *scripted {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	s := &scripted{ln: ln, answer: answer}
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			s.serve(c)
		}
	}()
	t.Cleanup(func() { ln.Close() })
	return s
}

func (s *scripted) serve(c net.Conn) {
	defer c.Close()
	c.Write([]byte("220 scripted.test ESMTP\r\n"))
	buf := make([]byte, 64<<10)
	var pending []byte
	inData := false
	for {
		n, err := c.Read(buf)
		if err != nil {
			return
		}
		s.mu.Lock()
		s.reads = append(s.reads, string(buf[:n]))
		s.mu.Unlock()
		pending = append(pending, buf[:n]...)
		for {
			i := bytes.Index(pending, []byte("\r\n"))
			if i < 0 {
				break
			}
			line := string(pending[:i])
			pending = pending[i+2:]
			if inData {
				if line == "." {
					inData = false
					c.Write([]byte(s.reply("<end of data>")))
				}
				continue
			}
			s.mu.Lock()
			s.lines = append(s.lines, line)
			s.mu.Unlock()
			r := s.reply(line)
			if strings.HasPrefix(r, "354") {
				inData = true
			}
			if r, ok := strings.CutSuffix(r, "<close>"); ok {
				c.Write([]byte(r)) // answer, then hang up at once
				return
			}
			c.Write([]byte(r))
			if line == "QUIT" {
				return
			}
		}
	}
}

func (s *scripted) reply(line string) string {
	if r := s.answer(line); r != "" {
		return r
	}
	switch {
	case line == "DATA":
		return "354 go on\r\n"
	case line == "QUIT":
		return "221 bye\r\n"
	}
	return "250 OK\r\n"
}

func (s *scripted) commands() []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]string(nil), s.lines...)
}

func (s *scripted) chunks() []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]string(nil), s.reads...)
}

func (s *scripted) pool(t *testing.T) *SMTPPool {
	addr := s.ln.Addr().(*net.TCPAddr)
	p := NewSMTPPool(SMTPConfig{Host: "127.0.0.1", Port: addr.Port, TLS: TLSNone, CommandTimeout: 5 * time.Second}, 1)
	t.Cleanup(func() { p.Close() })
	return p
}

func ehloWith(exts ...string) func(string) string {
	return func(line string) string {
		if !strings.HasPrefix(line, "EHLO ") {
			return ""
		}
		r := "250-scripted.test\r\n"
		for _, e := range exts {
			r += "250-" + e + "\r\n"
		}
		return r + "250 HELP\r\n"
	}
}

func TestSMTPPipelining(t *testing.T) {
	t.Parallel()
	t.Run("offered: MAIL, RCPT and DATA in one write", func(t *testing.T) {
		s := startScripted(t, ehloWith("PIPELINING", "SIZE 1000000", "8BITMIME"))
		p := s.pool(t)
		msg := testMsg(1)
		if err := send(t, p, "a@example.test", msg); err != nil {
			t.Fatal(err)
		}
		want := "MAIL FROM:<bounce@herald.test> BODY=8BITMIME SIZE=" + strconv.Itoa(len(msg)) + "\r\nRCPT TO:<a@example.test>\r\nDATA\r\n"
		if !containsChunk(s.chunks(), want) {
			t.Fatalf("no single write %q in %q", want, s.chunks())
		}
	})
	t.Run("not offered: one command at a time", func(t *testing.T) {
		s := startScripted(t, ehloWith("SIZE"))
		p := s.pool(t)
		for i := 0; i < 3; i++ {
			if err := send(t, p, "a@example.test", testMsg(i)); err != nil {
				t.Fatal(err)
			}
		}
		for _, c := range s.chunks() {
			if strings.Count(c, "\r\n") > 1 && !strings.Contains(c, "leading dot") {
				t.Fatalf("several commands in one write without PIPELINING: %q", c)
			}
		}
		if got := strings.Join(s.commands(), "|"); strings.Count(got, "DATA") != 3 || strings.Contains(got, "RSET") {
			t.Fatalf("commands %s", got)
		}
	})
	t.Run("refused recipient: DATA refused too, connection kept", func(t *testing.T) {
		ehlo := ehloWith("PIPELINING")
		bad := false
		s := startScripted(t, func(line string) string {
			switch {
			case line == "RCPT TO:<gone@example.test>":
				bad = true
				return "550-5.1.1 no such\r\n550 5.1.1 user here\r\n"
			case line == "DATA" && bad:
				return "554 5.5.1 no valid recipients\r\n"
			case strings.HasPrefix(line, "MAIL"), line == "RSET":
				bad = false
			}
			return ehlo(line)
		})
		p := s.pool(t)
		se := asSendError(t, send(t, p, "gone@example.test", testMsg(1)))
		if se.Temporary || se.Code != 550 || se.Stage != StageRcpt || se.Message != "no such\nuser here" {
			t.Fatalf("got %+v", se)
		}
		var smtpErr *smtp.SMTPError
		if !errors.As(se, &smtpErr) || smtpErr.EnhancedCode != (smtp.EnhancedCode{5, 1, 1}) {
			t.Fatalf("enhanced code: %+v", smtpErr)
		}
		if err := send(t, p, "ok@example.test", testMsg(2)); err != nil {
			t.Fatal(err)
		}
		cmds := strings.Join(s.commands(), "|")
		if strings.Count(cmds, "EHLO") != 1 || !strings.Contains(cmds, "DATA|RSET|MAIL") {
			t.Fatalf("want one connection and an RSET after the refusal: %s", cmds)
		}
	})
	t.Run("DATA accepted after a refused recipient: connection given up", func(t *testing.T) {
		ehlo := ehloWith("PIPELINING")
		s := startScripted(t, func(line string) string {
			if line == "RCPT TO:<gone@example.test>" {
				return "550 no such user\r\n"
			}
			return ehlo(line)
		})
		p := s.pool(t)
		se := asSendError(t, send(t, p, "gone@example.test", testMsg(1)))
		if se.Code != 550 || se.Stage != StageRcpt {
			t.Fatalf("got %+v", se)
		}
		if st := p.Stats(); st.Open != 0 {
			t.Fatalf("connection kept: %+v", st)
		}
		if err := send(t, p, "ok@example.test", testMsg(2)); err != nil {
			t.Fatal(err)
		}
		if n := strings.Count(strings.Join(s.commands(), "|"), "EHLO"); n != 2 {
			t.Fatalf("%d connections, want 2", n)
		}
	})
}

func TestSMTPPipelinedServerHangsUp(t *testing.T) {
	t.Parallel()
	// The server answers MAIL of one sender with 421 and closes: the RCPT
	// and DATA answers never come. The error is the 421 at MAIL, and on a
	// reused connection the pool tries once more on a fresh one.
	ehlo := ehloWith("PIPELINING")
	var mu sync.Mutex
	flaky := 1
	s := startScripted(t, func(line string) string {
		mu.Lock()
		defer mu.Unlock()
		if line == "MAIL FROM:<flaky@herald.test>" && flaky > 0 {
			flaky--
			return "421 4.3.2 going down\r\n<close>"
		}
		return ehlo(line)
	})
	p := s.pool(t)
	if err := send(t, p, "a@example.test", testMsg(1)); err != nil {
		t.Fatal(err)
	}
	if err := p.Send(context.Background(), "flaky@herald.test", []string{"b@example.test"}, testMsg(2)); err != nil {
		t.Fatalf("reused connection: %v", err)
	}
	p.Close() // the scripted server serves one connection at a time
	mu.Lock()
	flaky = 1
	mu.Unlock()
	p2 := s.pool(t)
	se := asSendError(t, p2.Send(context.Background(), "flaky@herald.test", []string{"b@example.test"}, testMsg(3)))
	if !se.Temporary || se.Code != 421 || se.Stage != StageMail || se.Message != "going down" {
		t.Fatalf("fresh connection: %+v", se)
	}
	if st := p2.Stats(); st.Open != 0 {
		t.Fatalf("connection kept after 421: %+v", st)
	}
}

func TestSMTPConversation(t *testing.T) {
	t.Parallel()
	t.Run("EHLO refused: HELO", func(t *testing.T) {
		s := startScripted(t, func(line string) string {
			if strings.HasPrefix(line, "EHLO") {
				return "502 not implemented\r\n"
			}
			return ""
		})
		p := s.pool(t)
		if err := send(t, p, "a@example.test", testMsg(1)); err != nil {
			t.Fatal(err)
		}
		got := strings.Join(s.commands(), "|")
		if !strings.HasPrefix(got, "EHLO localhost|HELO localhost|MAIL FROM:<bounce@herald.test>|RCPT") {
			t.Fatalf("commands %s", got)
		}
	})
	t.Run("final answer refused is the data stage", func(t *testing.T) {
		s := startScripted(t, func(line string) string {
			if line == "<end of data>" {
				return "452 4.3.1 queue full\r\n"
			}
			return ""
		})
		p := s.pool(t)
		se := asSendError(t, send(t, p, "a@example.test", testMsg(1)))
		if !se.Temporary || se.Code != 452 || se.Stage != StageData || se.Message != "queue full" {
			t.Fatalf("got %+v", se)
		}
	})
	t.Run("a reply line too long breaks the connection", func(t *testing.T) {
		s := startScripted(t, func(line string) string {
			if strings.HasPrefix(line, "MAIL") {
				return "250 " + strings.Repeat("x", 5000) + "\r\n"
			}
			return ""
		})
		p := s.pool(t)
		se := asSendError(t, send(t, p, "a@example.test", testMsg(1)))
		if !se.Temporary || se.Code != 0 || !strings.Contains(se.Message, "too long") {
			t.Fatalf("got %+v", se)
		}
		if st := p.Stats(); st.Open != 0 {
			t.Fatalf("connection kept: %+v", st)
		}
	})
	t.Run("malformed reply", func(t *testing.T) {
		s := startScripted(t, func(line string) string {
			if strings.HasPrefix(line, "RCPT") {
				return "hello there\r\n"
			}
			return ""
		})
		p := s.pool(t)
		se := asSendError(t, send(t, p, "a@example.test", testMsg(1)))
		if !se.Temporary || !strings.Contains(se.Message, "malformed") {
			t.Fatalf("got %+v", se)
		}
	})
	t.Run("server that stops answering times out", func(t *testing.T) {
		s := startScripted(t, func(line string) string {
			if strings.HasPrefix(line, "RCPT") {
				time.Sleep(2 * time.Second)
			}
			return ""
		})
		addr := s.ln.Addr().(*net.TCPAddr)
		p := NewSMTPPool(SMTPConfig{Host: "127.0.0.1", Port: addr.Port, TLS: TLSNone, CommandTimeout: 200 * time.Millisecond}, 1)
		defer p.Close()
		se := asSendError(t, p.Send(context.Background(), "bounce@herald.test", []string{"a@example.test"}, testMsg(1)))
		var ne net.Error
		if !se.Temporary || !errors.As(se, &ne) || !ne.Timeout() {
			t.Fatalf("got %+v", se)
		}
	})
}

func containsChunk(chunks []string, want string) bool {
	for _, c := range chunks {
		if strings.Contains(c, want) {
			return true
		}
	}
	return false
}
