package send

import (
	"bufio"
	"bytes"
	"flag"
	"fmt"
	"io"
	"log"
	"mime"
	"net"
	"net/mail"
	"os"
	"regexp"
	"strconv"
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
//
// With -capture it also reads each message: its Subject, and in its body
// (quoted-printable soft breaks joined) the path of the open pixel
// (/t/o/TOKEN) and of the first tracked link (/t/c/TOKEN/N). It counts the
// messages and distinct recipients of each subject ("subjects" answers
// "subjects SUBJECT DISTINCT MESSAGES …", subjects without spaces), and
// keeps, for each recipient, the tracking paths of the first message it got
// and its messages by subject: "capture FILE" writes them to FILE as
// "RECIPIENT<TAB>SUBJECT=N,SUBJECT=N<TAB>OPEN-PATH<TAB>CLICK-PATH" lines
// (answers "ok"). `load automation -branch` reads who got which email, and
// opens or clicks the first one as its recipient would.

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

	refuse   atomic.Bool // answer 421 to EHLO and MAIL ("refuse")
	capture  bool
	got      map[string]*captured // recipient → its messages (-capture)
	subjects map[string]*[2]int64 // subject → distinct recipients, messages (-capture)
}

// captured is what -capture keeps of one recipient's messages.
type captured struct {
	bySubject map[string]int32
	open      string // the first message's open pixel path
	click     string // the first message's first tracked link path
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
	b := s.b
	var n int64
	var err error
	var subject, open, click string
	if b.capture {
		var data []byte
		data, err = io.ReadAll(r)
		n = int64(len(data))
		if err == nil {
			subject, open, click = readCaptured(data)
		}
	} else {
		n, err = io.Copy(io.Discard, r)
	}
	if err != nil {
		return err
	}
	b.mu.Lock()
	if b.capture {
		for _, to := range s.to {
			k := strings.ToLower(to)
			c := b.got[k]
			if c == nil {
				c = &captured{bySubject: map[string]int32{}, open: open, click: click}
				b.got[k] = c
			}
			sc := b.subjects[subject]
			if sc == nil {
				sc = &[2]int64{}
				b.subjects[subject] = sc
			}
			if c.bySubject[subject] == 0 {
				sc[0]++
			}
			sc[1]++
			c.bySubject[subject]++
		}
	}
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
	capture := fs.Bool("capture", false, "read each message's subject and tracking paths for the subjects and capture commands")
	if err := fs.Parse(args); err != nil {
		return err
	}
	b := newSinkBackend(*keepFrom, *capture)
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
			b.got, b.subjects = map[string]*captured{}, map[string]*[2]int64{}
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
		case "subjects":
			fmt.Println(b.subjectLine())
		case "capture":
			if err := b.writeCaptured(arg); err != nil {
				return err
			}
			fmt.Println("ok")
		default:
			return fmt.Errorf("sink: unknown command %q", in.Text())
		}
	}
	return in.Err()
}

func newSinkBackend(keepFrom, capture bool) *sinkBackend {
	return &sinkBackend{rcpts: map[string]int32{}, keepFrom: keepFrom, from: map[string]string{}, capture: capture,
		got: map[string]*captured{}, subjects: map[string]*[2]int64{}}
}

var (
	openPathRE  = regexp.MustCompile(`/t/o/[A-Za-z0-9_-]+`)
	clickPathRE = regexp.MustCompile(`/t/c/[A-Za-z0-9_-]+/[0-9]+`)
)

// readCaptured returns a message's subject (decoded, spaces as "_") and
// the paths of its open pixel and first tracked link ("" when none).
func readCaptured(data []byte) (subject, open, click string) {
	m, err := mail.ReadMessage(bytes.NewReader(data))
	if err != nil {
		return "?", "", ""
	}
	subject = m.Header.Get("Subject")
	if d, err := new(mime.WordDecoder).DecodeHeader(subject); err == nil {
		subject = d
	}
	subject = strings.ReplaceAll(strings.TrimSpace(subject), " ", "_")
	if subject == "" {
		subject = "?"
	}
	body, _ := io.ReadAll(m.Body)
	body = bytes.ReplaceAll(body, []byte("=\r\n"), nil) // quoted-printable soft breaks
	return subject, string(openPathRE.Find(body)), string(clickPathRE.Find(body))
}

// subjectLine is the answer to "subjects".
func (b *sinkBackend) subjectLine() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	var sb strings.Builder
	sb.WriteString("subjects")
	for s, c := range b.subjects {
		fmt.Fprintf(&sb, " %s %d %d", s, c[0], c[1])
	}
	return sb.String()
}

func (b *sinkBackend) writeCaptured(path string) error {
	f, err := os.Create(path)
	if err != nil {
		return err
	}
	w := bufio.NewWriter(f)
	b.mu.Lock()
	for rcpt, c := range b.got {
		var subs []string
		for s, n := range c.bySubject {
			subs = append(subs, s+"="+strconv.Itoa(int(n)))
		}
		fmt.Fprintf(w, "%s\t%s\t%s\t%s\n", rcpt, strings.Join(subs, ","), c.open, c.click)
	}
	b.mu.Unlock()
	if err := w.Flush(); err != nil {
		f.Close()
		return err
	}
	return f.Close()
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

// subjectCounts is an answer to "subjects" (-capture): per subject, its
// distinct recipients and messages since the last reset.
func (s *sinkProc) subjectCounts() (map[string][2]int64, error) {
	line, err := s.Ask("subjects")
	if err != nil {
		return nil, err
	}
	f := strings.Fields(line)
	if len(f) == 0 || f[0] != "subjects" || len(f)%3 != 1 {
		return nil, fmt.Errorf("sink answered %q to subjects", line)
	}
	out := map[string][2]int64{}
	for i := 1; i+2 < len(f); i += 3 {
		d, err1 := strconv.ParseInt(f[i+1], 10, 64)
		m, err2 := strconv.ParseInt(f[i+2], 10, 64)
		if err1 != nil || err2 != nil {
			return nil, fmt.Errorf("sink answered %q to subjects", line)
		}
		out[f[i]] = [2]int64{d, m}
	}
	return out, nil
}

// captured writes what -capture kept of each recipient to file.
func (s *sinkProc) captured(file string) error {
	line, err := s.Ask("capture " + file)
	if err != nil {
		return err
	}
	if strings.TrimSpace(line) != "ok" {
		return fmt.Errorf("sink answered %q to capture", line)
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
