package delivery

import (
	"bufio"
	"bytes"
	"context"
	"crypto/sha256"
	"crypto/tls"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"maps"
	"net"
	"net/textproto"
	"slices"
	"strconv"
	"strings"
	"time"
)

// maxSetAside bounds the UIDLs a POP3 poller remembers; past it, further
// unreadable mails are read again at each poll.
const maxSetAside = 10000

// pollPOP3 is one poll over POP3 (RFC 1939): log in, list the mails with
// their sizes and UIDLs, read the oldest Batch ones not set aside, DELE the
// handled ones and QUIT, which is when the server deletes them.
func (m *Mailbox) pollPOP3(ctx context.Context) (handled int, err error) {
	p, stop, err := m.dialPOP3(ctx)
	if err != nil {
		return 0, err
	}
	defer p.conn.Close()
	defer stop()
	fail := func(what string, err error) (int, error) {
		if ctx.Err() != nil {
			return 0, ctx.Err()
		}
		return 0, fmt.Errorf("pop3 %s: %w", what, err)
	}
	if _, err := p.cmd("USER %s", m.url.Username); err != nil {
		return fail("login", err)
	}
	if _, err := p.cmd("PASS %s", m.url.Password); err != nil {
		return fail("login", err)
	}
	// Memory stays bounded however full the mailbox: only the first mails
	// are listed, enough for a batch past every set-aside one.
	window := m.cfg.Batch + maxSetAside
	sizes, err := p.list("LIST", window)
	if err != nil {
		return fail("list", err)
	}
	// UIDL is optional in RFC 1939; without it nothing can be remembered and
	// an unreadable mail is read again at each poll.
	uidls, err := p.list("UIDL", window)
	if err != nil {
		var perr pop3Error
		if !errors.As(err, &perr) {
			return fail("uidl", err)
		}
		uidls = nil
	}
	// Forget the set-aside mails that are gone.
	present := make(map[string]bool, len(uidls))
	for _, uid := range uidls {
		present[uid] = true
	}
	for uid := range m.unparsed {
		if !present[uid] {
			delete(m.unparsed, uid)
		}
	}
	// aside counts a mail set aside and remembers its UIDL, so that no
	// poll of this process reads it again (POP3 has no flags to say so;
	// the mail is simply not deleted). A mail not counted is read again.
	// Without UIDL the mail is named by its SHA-256, or by its number
	// and size when it was not downloaded: enough to count it once per
	// poll.
	var firstErr error
	aside := func(n int, raw []byte, why string) {
		uid, ok := uidls[n]
		id := uid
		switch {
		case ok:
		case raw != nil:
			sum := sha256.Sum256(raw)
			id = "sha256:" + hex.EncodeToString(sum[:])
		default:
			id = "msg:" + strconv.Itoa(n) + ":" + sizes[n]
		}
		if err := m.countKept(ctx, id, why); err != nil {
			if firstErr == nil {
				firstErr = err
			}
			return
		}
		if ok && len(m.unparsed) < maxSetAside {
			m.unparsed[uid] = struct{}{}
		}
	}
	read, removed := 0, 0
	for _, n := range sortedKeys(sizes) {
		if read == m.cfg.Batch || ctx.Err() != nil {
			break
		}
		if uid, ok := uidls[n]; ok {
			if _, ok := m.unparsed[uid]; ok {
				continue
			}
		}
		size, _ := strconv.ParseInt(sizes[n], 10, 64)
		if size > m.cfg.MaxMessageSize {
			aside(n, nil, KeptTooLarge)
			continue
		}
		read++
		raw, err := p.retr(n, m.cfg.MaxMessageSize)
		if errors.Is(err, errTooLarge) {
			aside(n, nil, KeptTooLarge)
			continue
		}
		if err != nil {
			return fail("retr", err)
		}
		v, why, err := m.judge(ctx, raw)
		switch v {
		case remove:
			if _, err := p.cmd("DELE %d", n); err != nil {
				return fail("dele", err)
			}
			removed++
		case setAside:
			aside(n, raw, why)
		case keep:
			if firstErr == nil {
				firstErr = err
			}
		}
	}
	if ctx.Err() != nil {
		// No QUIT: the server deletes nothing; the mails are handled again
		// next time, which counts them once.
		return 0, ctx.Err()
	}
	if _, err := p.cmd("QUIT"); err != nil {
		return fail("quit (the deletions may not have been made)", err)
	}
	return removed, firstErr
}

// pop3Conn is one POP3 session: command lines out, status lines and
// dot-terminated answers in, each exchange bounded by timeout.
type pop3Conn struct {
	conn    net.Conn
	tp      *textproto.Conn
	timeout time.Duration
}

// pop3Error is a -ERR answer.
type pop3Error string

func (e pop3Error) Error() string { return "server said: -ERR " + string(e) }

var errTooLarge = errors.New("mail larger than the limit")

// dialPOP3 connects, reads the greeting and secures the session as the URL
// says (STLS, RFC 2595, when tls=starttls). The connection closes when ctx
// ends (stop undoes that).
func (m *Mailbox) dialPOP3(ctx context.Context) (_ *pop3Conn, stop func(), err error) {
	d := &net.Dialer{Timeout: m.cfg.Timeout}
	var conn net.Conn
	if m.url.TLS == TLSImplicit {
		conn, err = (&tls.Dialer{NetDialer: d, Config: m.tlsConfig()}).DialContext(ctx, "tcp", m.url.Addr())
	} else {
		conn, err = d.DialContext(ctx, "tcp", m.url.Addr())
	}
	if err != nil {
		return nil, nil, fmt.Errorf("pop3 connect %s: %w", m.url.Addr(), err)
	}
	stop = closeOnDone(ctx, conn)
	p := &pop3Conn{conn: conn, tp: textproto.NewConn(conn), timeout: m.cfg.Timeout}
	fail := func(format string, err error) (*pop3Conn, func(), error) {
		stop()
		conn.Close()
		if ctx.Err() != nil {
			return nil, nil, ctx.Err()
		}
		return nil, nil, fmt.Errorf(format, err)
	}
	conn.SetDeadline(time.Now().Add(p.timeout))
	if _, err := p.status(); err != nil {
		return fail("pop3 greeting: %w", err)
	}
	if m.url.TLS == TLSStartTLS {
		if _, err := p.cmd("STLS"); err != nil {
			return fail("pop3 STLS (tls=starttls is required; tls=none reads in plain text): %w", err)
		}
		tc := tls.Client(conn, m.tlsConfig())
		if err := tc.HandshakeContext(ctx); err != nil {
			return fail("pop3 STLS: %w", err)
		}
		p.conn, p.tp = tc, textproto.NewConn(tc)
	}
	return p, stop, nil
}

// cmd sends one command and reads its status line.
func (p *pop3Conn) cmd(format string, args ...any) (string, error) {
	p.conn.SetDeadline(time.Now().Add(p.timeout))
	if err := p.tp.PrintfLine(format, args...); err != nil {
		return "", err
	}
	return p.status()
}

// status reads a status line: the text after +OK, or a pop3Error.
func (p *pop3Conn) status() (string, error) {
	line, err := p.tp.ReadLine()
	if err != nil {
		return "", err
	}
	switch {
	case strings.HasPrefix(line, "+OK"):
		return strings.TrimSpace(line[3:]), nil
	case strings.HasPrefix(line, "-ERR"):
		return "", pop3Error(strings.TrimSpace(line[4:]))
	}
	return "", fmt.Errorf("unexpected answer %q", clip(line, 80))
}

// list runs LIST or UIDL without argument: message number → the second
// word of each line (the size, or the unique id), for messages 1 to max.
func (p *pop3Conn) list(command string, max int) (map[int]string, error) {
	if _, err := p.cmd("%s", command); err != nil {
		return nil, err
	}
	out := map[int]string{}
	sc := bufio.NewScanner(p.tp.DotReader())
	for sc.Scan() {
		f := strings.Fields(sc.Text())
		if len(f) < 2 {
			continue
		}
		if n, err := strconv.Atoi(f[0]); err == nil && n > 0 && n <= max {
			out[n] = f[1]
		}
	}
	return out, sc.Err()
}

// retr downloads message n, dot-stuffing undone, lines ending in CRLF. Past
// limit bytes it stops keeping them, drains the answer and says errTooLarge.
func (p *pop3Conn) retr(n int, limit int64) ([]byte, error) {
	if _, err := p.cmd("RETR %d", n); err != nil {
		return nil, err
	}
	var buf bytes.Buffer
	r := p.tp.DotReader() // LF line ends
	lr := &io.LimitedReader{R: r, N: limit + 1}
	br := bufio.NewReader(lr)
	var total int64
	for {
		line, err := br.ReadString('\n')
		if len(line) > 0 {
			line = strings.TrimSuffix(line, "\n")
			total += int64(len(line)) + 2
			if total > limit {
				break
			}
			buf.WriteString(line)
			buf.WriteString("\r\n")
		}
		if err == io.EOF {
			break
		}
		if err != nil {
			return nil, err
		}
	}
	if total > limit {
		if _, err := io.Copy(io.Discard, r); err != nil {
			return nil, err
		}
		return nil, errTooLarge
	}
	return buf.Bytes(), nil
}

func sortedKeys(m map[int]string) []int {
	return slices.Sorted(maps.Keys(m))
}

// clip shortens a server's line for an error message.
func clip(s string, n int) string {
	if len(s) > n {
		return s[:n] + "…"
	}
	return s
}
