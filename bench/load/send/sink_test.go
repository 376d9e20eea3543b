package send

import (
	"errors"
	"io"
	"log"
	"net"
	"os"
	"path/filepath"
	"runtime/debug"
	"strings"
	"testing"

	"github.com/emersion/go-smtp"
)

// TestSinkCountsEachAddress checks what the scale-out's verdicts rest on:
// the sink counts distinct recipients, the messages beyond the first to an
// address and the most to one, keeps each recipient's return path, and
// forgets them all on reset.
func TestSinkCountsEachAddress(t *testing.T) {
	b := &sinkBackend{rcpts: map[string]int32{}, keepFrom: true, from: map[string]string{}}
	srv := smtp.NewServer(b)
	srv.Domain = "sink.test"
	srv.ErrorLog = log.New(io.Discard, "", 0)
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	go srv.Serve(ln)
	defer srv.Close()

	c, err := smtp.Dial(ln.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	for i, m := range []struct{ from, to string }{
		{"b+1@bounce.test", "a@example.com"},
		{"b+2@bounce.test", "B@example.com"},
		{"b+3@bounce.test", "A@Example.com"}, // a duplicate of the first, in another case
		{"b+4@bounce.test", "a@example.com"},
	} {
		if err := plainSend(c, m.from, m.to, []byte("Subject: x\r\n\r\nbody\r\n"), i > 0); err != nil {
			t.Fatal(err)
		}
	}
	b.mu.Lock()
	distinct, dups, most := len(b.rcpts), b.dups, b.most
	b.mu.Unlock()
	if b.messages.Load() != 4 || distinct != 2 || dups != 2 || most != 3 {
		t.Fatalf("messages %d, distinct %d, duplicates %d, most %d; want 4, 2, 2, 3", b.messages.Load(), distinct, dups, most)
	}
	file := filepath.Join(t.TempDir(), "paths")
	if err := b.writePaths(file); err != nil {
		t.Fatal(err)
	}
	data, err := os.ReadFile(file)
	if err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(strings.TrimSpace(string(data)), "\n")
	got := map[string]string{}
	for _, l := range lines {
		rcpt, rp, _ := strings.Cut(l, " ")
		got[rcpt] = rp
	}
	if len(lines) != 2 || got["a@example.com"] != "b+4@bounce.test" || got["b@example.com"] != "b+2@bounce.test" {
		t.Fatalf("return paths %q", lines)
	}
}

// TestSinkGoesDownAndComesBack checks the failures the relays' failover
// benchmark gives a relay: down refuses dials and cuts the connections,
// refuse answers 421 to MAIL and to a new connection's EHLO, and up
// accepts mail again on the same address, the counts kept throughout.
func TestSinkGoesDownAndComesBack(t *testing.T) {
	t.Parallel()
	b := &sinkBackend{rcpts: map[string]int32{}, from: map[string]string{}}
	s, err := listenSink(b, "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer s.down()
	addr := s.addr
	msg := []byte("Subject: x\r\n\r\nbody\r\n")
	send := func(c *smtp.Client, to string) error { return plainSend(c, "b@bounce.test", to, msg, false) }
	code := func(err error) int {
		var se *smtp.SMTPError
		if errors.As(err, &se) {
			return se.Code
		}
		return 0
	}

	before, err := smtp.Dial(addr)
	if err != nil {
		t.Fatal(err)
	}
	defer before.Close()
	if err := send(before, "a@example.com"); err != nil {
		t.Fatal(err)
	}

	s.down()
	if err := send(before, "b@example.com"); err == nil {
		t.Fatal("a connection of before the sink went down still took a message")
	}
	if c, err := smtp.Dial(addr); err == nil {
		c.Close()
		t.Fatal("the sink is down but a dial succeeded")
	}

	if err := s.up(); err != nil {
		t.Fatal(err)
	}
	if s.addr != addr {
		t.Fatalf("the sink came back on %s, was %s", s.addr, addr)
	}
	kept, err := smtp.Dial(addr)
	if err != nil {
		t.Fatal(err)
	}
	defer kept.Close()
	if err := send(kept, "b@example.com"); err != nil {
		t.Fatal(err)
	}

	s.refuseMail()
	if err := send(kept, "c@example.com"); code(err) != 421 {
		t.Fatalf("MAIL while refusing: %v, want a 421", err)
	}
	fresh, err := smtp.Dial(addr)
	if err != nil {
		t.Fatal(err)
	}
	if err := fresh.Hello("localhost"); code(err) != 421 {
		t.Fatalf("EHLO while refusing: %v, want a 421", err)
	}
	fresh.Close()

	if err := s.up(); err != nil {
		t.Fatal(err)
	}
	again, err := smtp.Dial(addr)
	if err != nil {
		t.Fatal(err)
	}
	defer again.Close()
	if err := send(again, "c@example.com"); err != nil {
		t.Fatal(err)
	}
	b.mu.Lock()
	distinct := len(b.rcpts)
	b.mu.Unlock()
	if b.messages.Load() != 3 || distinct != 3 {
		t.Fatalf("messages %d to %d recipients, want 3 to 3", b.messages.Load(), distinct)
	}
}

// TestBuildTagsOfThisTest: the tags read from a binary's file are those
// it was built with (this test binary's, as it knows them itself); an
// unreadable file gives none.
func TestBuildTagsOfThisTest(t *testing.T) {
	self, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	want := ""
	if info, ok := debug.ReadBuildInfo(); ok {
		for _, s := range info.Settings {
			if s.Key == "-tags" {
				want = s.Value
			}
		}
	}
	if got := buildTags(self); got != want {
		t.Fatalf("tags of the test binary %q, want %q", got, want)
	}
	if got := buildTags(filepath.Join(t.TempDir(), "nothing")); got != "" {
		t.Fatalf("tags of no file %q", got)
	}
}

// TestSinkCapturesTrackingPaths checks what `load automation -branch`
// rests on: with -capture the sink counts each subject's recipients and
// messages, and keeps the open pixel and first tracked link of each
// recipient's first message, across quoted-printable soft line breaks.
func TestSinkCapturesTrackingPaths(t *testing.T) {
	b := newSinkBackend(false, true)
	srv := smtp.NewServer(b)
	srv.Domain = "sink.test"
	srv.ErrorLog = log.New(io.Discard, "", 0)
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	go srv.Serve(ln)
	defer srv.Close()
	c, err := smtp.Dial(ln.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	msg := func(subject, token string) []byte {
		return []byte("Subject: " + subject + "\r\nContent-Type: text/html; charset=utf-8\r\nContent-Transfer-Encoding: quoted-printable\r\n\r\n" +
			"<p><a href=3D\"https://mail.example.com/t/c/" + token[:5] + "=\r\n" + token[5:] + "/0\">shop</a></p>" +
			"<img src=3D\"https://mail.example.com/t/o/" + token + ".gif\" width=3D\"1\">\r\n")
	}
	for i, m := range []struct{ to, subject, token string }{
		{"a@example.com", "Welcome", "AAAAAAAAB5UU7UxNPTk--JlwDEI"},
		{"b@example.com", "Welcome", "AAAAAAAAAE6KgSQ0XDlEG8RvtEA"},
		{"a@example.com", "Thanks", "AAAAAAAAAO0pEl7f_WEABPFZO4c"},
		{"A@example.com", "Welcome", "AAAAAAAAB5UU7UxNPTk--JlwDEI"}, // a duplicate
	} {
		if err := plainSend(c, "b@bounce.test", m.to, msg(m.subject, m.token), i > 0); err != nil {
			t.Fatal(err)
		}
	}
	if got := b.subjectLine(); !strings.Contains(got, " Welcome 2 3") || !strings.Contains(got, " Thanks 1 1") {
		t.Fatalf("subjects %q", got)
	}
	file := filepath.Join(t.TempDir(), "capture")
	if err := b.writeCaptured(file); err != nil {
		t.Fatal(err)
	}
	recs, err := readCapture(file)
	if err != nil {
		t.Fatal(err)
	}
	a := recs["a@example.com"]
	if len(recs) != 2 || a == nil || a.counts["Welcome"] != 2 || a.counts["Thanks"] != 1 ||
		a.open != "/t/o/AAAAAAAAB5UU7UxNPTk--JlwDEI" || a.click != "/t/c/AAAAAAAAB5UU7UxNPTk--JlwDEI/0" {
		t.Fatalf("captured %d recipients, a: %+v", len(recs), a)
	}
}
