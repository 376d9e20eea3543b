package send

import (
	"bufio"
	"flag"
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

// The sink is this same program started as `load sink`: a go-smtp server on
// a loopback port that accepts every sender and recipient and discards the
// data, counting messages and bytes, the messages of each recipient, and
// noting when the last message was accepted. It runs in its own process so
// that its CPU is not counted against herald or the ceiling's client.
//
// Protocol with the parent, one line each way: the sink prints
// "addr HOST:PORT" once listening; for "stats" it prints
// "stats MESSAGES BYTES LAST_UNIX_NANO DISTINCT CPU_MICROSECONDS DUPLICATES
// MOST", where DISTINCT counts the recipients seen since the last "reset"
// (which answers "ok"), DUPLICATES the messages beyond the first to a
// recipient and MOST the most messages one recipient got; with
// -return-paths it keeps each recipient's MAIL FROM, and "paths FILE"
// writes them to FILE as "RECIPIENT RETURN-PATH" lines (answers "ok"); it
// exits at the end of stdin.
//
// For the relays' failover (relays.go) the sink can fail as a relay does,
// each command answered "ok": "down" closes its listener and drops every
// connection (a dial is then refused), "refuse" keeps listening but
// answers 421 to EHLO and to MAIL (a relay closing its service), and "up"
// listens again on the same address and accepts mail again. The counts
// survive both.

type sinkBackend struct {
	messages atomic.Int64
	bytes    atomic.Int64
	last     atomic.Int64 // wall clock (Unix ns) when the last message's data was read

	mu       sync.Mutex
	rcpts    map[string]int32 // messages per recipient
	dups     int64
	most     int32
	keepFrom bool
	from     map[string]string // recipient → MAIL FROM (-return-paths)

	refuse atomic.Bool // answer 421 to EHLO and MAIL ("refuse")
}

// errRefused is the sink's answer while it refuses mail.
var errRefused = &smtp.SMTPError{Code: 421, EnhancedCode: smtp.EnhancedCode{4, 3, 2}, Message: "Service not available, closing transmission channel"}

func (b *sinkBackend) NewSession(*smtp.Conn) (smtp.Session, error) {
	if b.refuse.Load() {
		return nil, errRefused
	}
	return &sinkSession{b: b}, nil
}

type sinkSession struct {
	b    *sinkBackend
	from string
	to   []string
}

func (s *sinkSession) Mail(from string, _ *smtp.MailOptions) error {
	if s.b.refuse.Load() {
		return errRefused
	}
	s.from = from
	return nil
}
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
		k := strings.ToLower(to)
		n := b.rcpts[k] + 1
		b.rcpts[k] = n
		if n > 1 {
			b.dups++
		}
		b.most = max(b.most, n)
		if b.keepFrom {
			b.from[k] = s.from
		}
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

// sinkServer is the sink's SMTP side. The backend and its counts outlive
// the go-smtp servers, so that the sink can go down and come back on the
// same address.
type sinkServer struct {
	b    *sinkBackend
	mu   sync.Mutex
	addr string       // fixed by the first listen
	srv  *smtp.Server // nil while down
}

// listenSink starts a sink server on addr ("127.0.0.1:0": a free port).
func listenSink(b *sinkBackend, addr string) (*sinkServer, error) {
	s := &sinkServer{b: b, addr: addr}
	if err := s.up(); err != nil {
		return nil, err
	}
	return s, nil
}

// up accepts mail again: it listens again on the sink's address if it was
// down, and stops refusing.
func (s *sinkServer) up() error {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.b.refuse.Store(false)
	if s.srv != nil {
		return nil
	}
	srv := smtp.NewServer(s.b)
	srv.Domain = "sink.bench"
	srv.ErrorLog = log.New(io.Discard, "", 0)
	srv.ReadTimeout = 2 * time.Minute
	srv.WriteTimeout = 2 * time.Minute
	srv.MaxMessageBytes = 32 << 20
	srv.MaxRecipients = 1000
	ln, err := net.Listen("tcp", s.addr)
	if err != nil {
		return err
	}
	s.addr, s.srv = ln.Addr().String(), srv
	go srv.Serve(ln)
	return nil
}

// down closes the listener and every connection: dials are refused and
// the transactions under way are cut.
func (s *sinkServer) down() {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.srv != nil {
		s.srv.Close()
		s.srv = nil
	}
}

// refuseMail keeps the connections but answers 421 to EHLO and MAIL.
func (s *sinkServer) refuseMail() { s.b.refuse.Store(true) }

// RunSink is `load sink [-return-paths]`.
func RunSink(args []string) error {
	fs := flag.NewFlagSet("sink", flag.ContinueOnError)
	keepFrom := fs.Bool("return-paths", false, "keep each recipient's MAIL FROM for the paths command")
	if err := fs.Parse(args); err != nil {
		return err
	}
	b := &sinkBackend{rcpts: map[string]int32{}, keepFrom: *keepFrom, from: map[string]string{}}
	srv, err := listenSink(b, "127.0.0.1:0")
	if err != nil {
		return err
	}
	defer srv.down()
	fmt.Printf("addr %s\n", srv.addr)

	in := bufio.NewScanner(os.Stdin)
	for in.Scan() {
		cmd, arg, _ := strings.Cut(strings.TrimSpace(in.Text()), " ")
		switch cmd {
		case "stats":
			b.mu.Lock()
			distinct, dups, most := len(b.rcpts), b.dups, b.most
			b.mu.Unlock()
			fmt.Printf("stats %d %d %d %d %d %d %d\n", b.messages.Load(), b.bytes.Load(), b.last.Load(), distinct, harness.SelfCPU().Microseconds(), dups, most)
		case "reset":
			b.mu.Lock()
			b.rcpts, b.dups, b.most = map[string]int32{}, 0, 0
			b.from = map[string]string{}
			b.mu.Unlock()
			fmt.Println("ok")
		case "paths":
			if err := b.writePaths(arg); err != nil {
				return err
			}
			fmt.Println("ok")
		case "down":
			srv.down()
			fmt.Println("ok")
		case "refuse":
			srv.refuseMail()
			fmt.Println("ok")
		case "up":
			if err := srv.up(); err != nil {
				return fmt.Errorf("sink: listen again on %s: %w", srv.addr, err)
			}
			fmt.Println("ok")
		default:
			return fmt.Errorf("sink: unknown command %q", in.Text())
		}
	}
	return in.Err()
}

func (b *sinkBackend) writePaths(path string) error {
	f, err := os.Create(path)
	if err != nil {
		return err
	}
	w := bufio.NewWriter(f)
	b.mu.Lock()
	for rcpt, from := range b.from {
		fmt.Fprintf(w, "%s %s\n", rcpt, from)
	}
	b.mu.Unlock()
	if err := w.Flush(); err != nil {
		f.Close()
		return err
	}
	return f.Close()
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
	dups     int64 // messages beyond the first to a recipient, since the last reset
	most     int64 // most messages to one recipient, since the last reset
}

func startSink(args ...string) (*sinkProc, error) {
	c, err := harness.StartChild(append([]string{"sink"}, args...)...)
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
	if _, err := fmt.Sscanf(line, "stats %d %d %d %d %d %d %d", &st.messages, &st.bytes, &last, &st.distinct, &us, &st.dups, &st.most); err != nil {
		return st, fmt.Errorf("sink answered %q: %w", line, err)
	}
	if last > 0 {
		st.last = time.Unix(0, last)
	}
	st.cpu = time.Duration(us) * time.Microsecond
	return st, nil
}

// paths writes the recipients' return paths to file (-return-paths).
func (s *sinkProc) paths(file string) error {
	line, err := s.Ask("paths " + file)
	if err != nil {
		return err
	}
	if strings.TrimSpace(line) != "ok" {
		return fmt.Errorf("sink answered %q to paths", line)
	}
	return nil
}

// reset forgets the recipients seen so far.
func (s *sinkProc) reset() error { return s.command("reset") }

// command sends a command answered by "ok": reset, down, refuse, up.
func (s *sinkProc) command(cmd string) error {
	line, err := s.Ask(cmd)
	if err != nil {
		return err
	}
	if strings.TrimSpace(line) != "ok" {
		return fmt.Errorf("sink answered %q to %s", line, cmd)
	}
	return nil
}
