package main

import (
	"bufio"
	"fmt"
	"io"
	"log"
	"net"
	"os"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/emersion/go-smtp"

	"herald/bench/harness"
)

// The sink is this same program started with -sink: a go-smtp server on a
// loopback port that accepts every sender and recipient and discards the
// data, counting messages and bytes and noting when the last message was
// accepted. It runs in its own process so that its CPU is not counted
// against herald or the ceiling's client.
//
// Protocol with the parent, one line each way: the sink prints
// "addr HOST:PORT" once listening; for "stats" it prints
// "stats MESSAGES BYTES LAST_UNIX_NANO DISTINCT CPU_MICROSECONDS", where
// DISTINCT counts the recipients seen since the last "reset" (which answers
// "ok"); it exits at the end of stdin.

type sinkBackend struct {
	messages atomic.Int64
	bytes    atomic.Int64
	last     atomic.Int64 // wall clock (Unix ns) when the last message's data was read

	mu    sync.Mutex
	rcpts map[string]struct{}
}

func (b *sinkBackend) NewSession(*smtp.Conn) (smtp.Session, error) {
	return &sinkSession{b: b}, nil
}

type sinkSession struct {
	b  *sinkBackend
	to []string
}

func (*sinkSession) Mail(string, *smtp.MailOptions) error { return nil }
func (s *sinkSession) Rcpt(to string, _ *smtp.RcptOptions) error {
	s.to = append(s.to, to)
	return nil
}

func (s *sinkSession) Data(r io.Reader) error {
	n, err := io.Copy(io.Discard, r)
	if err != nil {
		return err
	}
	b := s.b
	b.mu.Lock()
	for _, to := range s.to {
		b.rcpts[strings.ToLower(to)] = struct{}{}
	}
	b.mu.Unlock()
	s.to = s.to[:0]
	b.bytes.Add(n)
	b.last.Store(time.Now().UnixNano())
	b.messages.Add(1)
	return nil
}

func (s *sinkSession) Reset()      { s.to = s.to[:0] }
func (*sinkSession) Logout() error { return nil }

func runSink() error {
	b := &sinkBackend{rcpts: map[string]struct{}{}}
	srv := smtp.NewServer(b)
	srv.Domain = "sink.bench"
	srv.ErrorLog = log.New(io.Discard, "", 0)
	srv.ReadTimeout = 2 * time.Minute
	srv.WriteTimeout = 2 * time.Minute
	srv.MaxMessageBytes = 32 << 20
	srv.MaxRecipients = 1000

	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return err
	}
	go srv.Serve(ln)
	defer srv.Close()
	fmt.Printf("addr %s\n", ln.Addr())

	in := bufio.NewScanner(os.Stdin)
	for in.Scan() {
		switch strings.TrimSpace(in.Text()) {
		case "stats":
			b.mu.Lock()
			distinct := len(b.rcpts)
			b.mu.Unlock()
			fmt.Printf("stats %d %d %d %d %d\n", b.messages.Load(), b.bytes.Load(), b.last.Load(), distinct, harness.SelfCPU().Microseconds())
		case "reset":
			b.mu.Lock()
			b.rcpts = map[string]struct{}{}
			b.mu.Unlock()
			fmt.Println("ok")
		default:
			return fmt.Errorf("sink: unknown command %q", in.Text())
		}
	}
	return in.Err()
}

// sinkProc is the parent's handle on the sink process.
type sinkProc struct{ *harness.Child }

// sinkStats is one answer to "stats".
type sinkStats struct {
	messages int64
	bytes    int64
	last     time.Time // zero before the first message
	distinct int64     // recipients since the last reset
	cpu      time.Duration
}

func startSink() (*sinkProc, error) {
	c, err := harness.StartChild("-sink")
	if err != nil {
		return nil, err
	}
	return &sinkProc{c}, nil
}

func (s *sinkProc) stats() (sinkStats, error) {
	var st sinkStats
	line, err := s.Ask("stats")
	if err != nil {
		return st, err
	}
	var last, us int64
	if _, err := fmt.Sscanf(line, "stats %d %d %d %d %d", &st.messages, &st.bytes, &last, &st.distinct, &us); err != nil {
		return st, fmt.Errorf("sink answered %q: %w", line, err)
	}
	if last > 0 {
		st.last = time.Unix(0, last)
	}
	st.cpu = time.Duration(us) * time.Microsecond
	return st, nil
}

// reset forgets the recipients seen so far.
func (s *sinkProc) reset() error {
	line, err := s.Ask("reset")
	if err != nil {
		return err
	}
	if strings.TrimSpace(line) != "ok" {
		return fmt.Errorf("sink answered %q to reset", line)
	}
	return nil
}
