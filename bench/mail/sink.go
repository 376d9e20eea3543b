package main

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"log"
	"net"
	"os"
	"os/exec"
	"strings"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/emersion/go-smtp"
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
			fmt.Printf("stats %d %d\n", b.messages.Load(), selfCPU().Microseconds())
		default:
			return fmt.Errorf("sink: unknown command %q", in.Text())
		}
	}
	return in.Err()
}

// selfCPU is this process's user plus system time.
func selfCPU() time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// sinkProc is the parent's handle on the sink process.
type sinkProc struct {
	cmd  *exec.Cmd
	in   io.WriteCloser
	out  *bufio.Reader
	addr string
}

func startSink() (*sinkProc, error) {
	exe, err := os.Executable()
	if err != nil {
		return nil, err
	}
	cmd := exec.Command(exe, "-sink")
	cmd.Stderr = os.Stderr
	in, err := cmd.StdinPipe()
	if err != nil {
		return nil, err
	}
	out, err := cmd.StdoutPipe()
	if err != nil {
		return nil, err
	}
	if err := cmd.Start(); err != nil {
		return nil, err
	}
	s := &sinkProc{cmd: cmd, in: in, out: bufio.NewReader(out)}
	line, err := s.out.ReadString('\n')
	if err != nil || !strings.HasPrefix(line, "addr ") {
		s.stop()
		return nil, fmt.Errorf("sink did not start (%q, %v)", line, err)
	}
	s.addr = strings.TrimSpace(strings.TrimPrefix(line, "addr "))
	return s, nil
}

// stats returns the messages the sink has received and the CPU time it has
// used since it started.
func (s *sinkProc) stats() (messages int64, cpu time.Duration, err error) {
	if _, err := io.WriteString(s.in, "stats\n"); err != nil {
		return 0, 0, err
	}
	line, err := s.out.ReadString('\n')
	if err != nil {
		return 0, 0, err
	}
	var us int64
	if _, err := fmt.Sscanf(line, "stats %d %d", &messages, &us); err != nil {
		return 0, 0, fmt.Errorf("sink answered %q: %w", line, err)
	}
	return messages, time.Duration(us) * time.Microsecond, nil
}

// stop closes the sink's stdin, which ends it, and kills it if it lingers.
func (s *sinkProc) stop() {
	s.in.Close()
	done := make(chan error, 1)
	go func() { done <- s.cmd.Wait() }()
	select {
	case <-done:
	case <-time.After(5 * time.Second):
		_ = s.cmd.Process.Kill()
		<-done
	}
}

var errSinkCount = errors.New("the sink's count differs from the messages sent")
