package main

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"log"
	"net"
	"os"
	"strings"
	"sync/atomic"
	"time"

	"github.com/emersion/go-smtp"

	"herald/bench/harness"
)

// The sink is this same program started with -sink: a go-smtp server on a
// loopback port that accepts every sender and recipient and discards the
// data, counting the messages. It runs in its own process so that its CPU is
// not scheduled by the client's Go runtime.
//
// Protocol with the parent, one line each way: the sink prints "addr HOST:PORT"
// once listening; for every "stats" line on stdin it prints
// "stats MESSAGES CPU_MICROSECONDS" (its own user+system time); it exits at the
// end of stdin.

type sinkBackend struct{ messages atomic.Int64 }

func (b *sinkBackend) NewSession(*smtp.Conn) (smtp.Session, error) {
	return sinkSession{b}, nil
}

type sinkSession struct{ b *sinkBackend }

func (sinkSession) Mail(string, *smtp.MailOptions) error { return nil }
func (sinkSession) Rcpt(string, *smtp.RcptOptions) error { return nil }
func (s sinkSession) Data(r io.Reader) error {
	if _, err := io.Copy(io.Discard, r); err != nil {
		return err
	}
	s.b.messages.Add(1)
	return nil
}
func (sinkSession) Reset()        {}
func (sinkSession) Logout() error { return nil }

func runSink() error {
	b := &sinkBackend{}
	srv := smtp.NewServer(b)
	srv.Domain = "sink.bench"
	srv.ErrorLog = log.New(io.Discard, "", 0)
	srv.ReadTimeout = 2 * time.Minute
	srv.WriteTimeout = 2 * time.Minute
	srv.MaxMessageBytes = 32 << 20

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
			fmt.Printf("stats %d %d\n", b.messages.Load(), harness.SelfCPU().Microseconds())
		default:
			return fmt.Errorf("sink: unknown command %q", in.Text())
		}
	}
	return in.Err()
}

// sinkProc is the parent's handle on the sink process.
type sinkProc struct{ *harness.Child }

func startSink() (*sinkProc, error) {
	c, err := harness.StartChild("-sink")
	if err != nil {
		return nil, err
	}
	return &sinkProc{c}, nil
}

// stats returns the messages the sink has received and the CPU time it has
// used since it started.
func (s *sinkProc) stats() (messages int64, cpu time.Duration, err error) {
	line, err := s.Ask("stats")
	if err != nil {
		return 0, 0, err
	}
	var us int64
	if _, err := fmt.Sscanf(line, "stats %d %d", &messages, &us); err != nil {
		return 0, 0, fmt.Errorf("sink answered %q: %w", line, err)
	}
	return messages, time.Duration(us) * time.Microsecond, nil
}

var errSinkCount = errors.New("the sink's count differs from the messages sent")
