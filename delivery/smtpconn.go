package delivery

import (
	"bufio"
	"bytes"
	"crypto/tls"
	"encoding/base64"
	"errors"
	"fmt"
	"io"
	"net"
	"strconv"
	"strings"
	"time"

	"github.com/emersion/go-sasl"
	"github.com/emersion/go-smtp"
)

// smtpConn is one connection to the relay. Herald speaks the client side of
// SMTP itself here instead of through go-smtp's Client, for two things that
// client cannot do and that cost a bulk sender most of its time per message:
//
//   - PIPELINING (RFC 2920): MAIL, RCPT and DATA go out in one write and their
//     answers are read together, two round trips per message instead of four;
//   - the message is dot-stuffed line by line with bulk copies, where go-smtp's
//     textproto dot writer handles one byte at a time (77 µs of a 16 KB
//     message, a fifth of herald's CPU per message in the send benchmark).
//
// Answers become *smtp.SMTPError (go-smtp's type, which the server side and
// the tests share), SASL mechanisms come from go-sasl. The rest is the plain
// RFC 5321 exchange: greeting, EHLO (HELO when refused), STARTTLS, AUTH.
type smtpConn struct {
	sock     net.Conn // the socket, or the TLS connection over it; Close interrupts anything
	r        *bufio.Reader
	w        *bufio.Writer
	ext      map[string]string // EHLO keywords (upper case) and their parameters
	cfg      *SMTPConfig
	lastUsed time.Time
	// dotSent: the last transaction sent the dot that ends its message,
	// so the relay may have taken it even when no answer came.
	dotSent bool
	// dirty: its last transaction failed and must be ended with RSET before
	// the next. After a success no RSET is needed (RFC 5321 3.3: MAIL starts
	// a new transaction), which saves a round trip per message.
	dirty bool
}

// replyLimit bounds one reply line (RFC 5321 4.5.3.1.5 says 512 octets; a
// longer one is a broken or hostile server).
const replyLimit = 4096

// writeBuffer holds a whole typical message, so that it leaves in one write.
const writeBuffer = 32 << 10

func newSMTPConn(sock net.Conn, cfg *SMTPConfig) *smtpConn {
	sc := &smtpConn{cfg: cfg}
	sc.attach(sock)
	return sc
}

// attach makes sock the connection's transport (again after STARTTLS).
func (sc *smtpConn) attach(sock net.Conn) {
	sc.sock = sock
	var rw io.ReadWriter = sock
	if sc.cfg.Debug != nil {
		rw = debugConn{sock, sc.cfg.Debug}
	}
	sc.r = bufio.NewReaderSize(rw, replyLimit)
	sc.w = bufio.NewWriterSize(rw, writeBuffer)
}

// debugConn copies the conversation to the configured debug writer.
type debugConn struct {
	c net.Conn
	d io.Writer
}

func (d debugConn) Read(p []byte) (int, error) {
	n, err := d.c.Read(p)
	if n > 0 {
		d.d.Write(p[:n])
	}
	return n, err
}

func (d debugConn) Write(p []byte) (int, error) {
	d.d.Write(p)
	return d.c.Write(p)
}

func (sc *smtpConn) close() error { return sc.sock.Close() }

// deadline bounds the next exchange.
func (sc *smtpConn) deadline(d time.Duration) { sc.sock.SetDeadline(time.Now().Add(d)) }

// readReply reads one reply, possibly of several lines, and returns its code
// and text (lines joined by "\n").
func (sc *smtpConn) readReply() (int, string, error) {
	var text strings.Builder
	code := 0
	for {
		line, err := sc.r.ReadSlice('\n')
		if err == bufio.ErrBufferFull {
			return 0, "", errors.New("smtp: reply line too long")
		}
		if err != nil {
			return 0, "", err
		}
		line = bytes.TrimRight(line, "\r\n")
		if len(line) < 3 || (len(line) > 3 && line[3] != ' ' && line[3] != '-') {
			return 0, "", fmt.Errorf("smtp: malformed reply %q", line)
		}
		c, err := strconv.Atoi(string(line[:3]))
		if err != nil || c < 200 || c > 599 || (code != 0 && c != code) {
			return 0, "", fmt.Errorf("smtp: malformed reply %q", line)
		}
		code = c
		if text.Len() > 0 {
			text.WriteByte('\n')
		}
		if len(line) > 4 {
			text.Write(line[4:])
		}
		if len(line) == 3 || line[3] == ' ' {
			return code, text.String(), nil
		}
	}
}

// expect reads a reply and fails with *smtp.SMTPError unless its code is in
// the class want (2: any 2xx, 3: any 3xx).
func (sc *smtpConn) expect(want int) (string, error) {
	code, text, err := sc.readReply()
	if err != nil {
		return "", err
	}
	if code/100 != want {
		return "", replyError(code, text)
	}
	return text, nil
}

// replyError is an unexpected answer as go-smtp reports it: the enhanced
// status code (RFC 3463) taken out of the text. RFC 2034 puts the code at
// the start of every line; some servers (go-smtp's among them) put it on
// the last line only, so the first line is tried, then the last. A code
// whose class is not the reply's (a 550 saying "4.7.1") is text, not a
// status code.
func replyError(code int, text string) *smtp.SMTPError {
	e := &smtp.SMTPError{Code: code, Message: text}
	lines := strings.Split(text, "\n")
	var ec smtp.EnhancedCode
	found := ""
	for _, l := range []string{lines[0], lines[len(lines)-1]} {
		if first, _, ok := strings.Cut(l, " "); ok {
			if c, ok := parseEnhanced(first, code); ok {
				ec, found = c, first
				break
			}
		}
	}
	if found == "" {
		return e
	}
	e.EnhancedCode = ec
	for i, l := range lines {
		lines[i] = strings.TrimPrefix(l, found+" ")
	}
	e.Message = strings.Join(lines, "\n")
	return e
}

// parseEnhanced reads "5.7.1" as a status code of the reply code's class.
func parseEnhanced(s string, code int) (smtp.EnhancedCode, bool) {
	var ec smtp.EnhancedCode
	parts := strings.Split(s, ".")
	if len(parts) != 3 {
		return ec, false
	}
	for i, p := range parts {
		n, err := strconv.Atoi(p)
		if err != nil || n < 0 || n > 999 || len(p) > 3 {
			return ec, false
		}
		ec[i] = n
	}
	if ec[0] != code/100 {
		return ec, false
	}
	return ec, true
}

// writeLine sends one line; the exchange it starts must end within d.
func (sc *smtpConn) writeLine(line string, d time.Duration) error {
	sc.deadline(d)
	sc.w.WriteString(line)
	sc.w.WriteString("\r\n")
	return sc.w.Flush()
}

// cmd sends one command line and reads its reply, within CommandTimeout.
func (sc *smtpConn) cmd(want int, line string) (string, error) {
	if err := sc.writeLine(line, sc.cfg.CommandTimeout); err != nil {
		return "", err
	}
	return sc.expect(want)
}

// hello reads the greeting, says EHLO (HELO when EHLO is refused with 500 or
// 502), and on starttls upgrades the connection and says EHLO again.
func (sc *smtpConn) hello(tlsConfig *tls.Config, starttls bool) error {
	sc.deadline(sc.cfg.CommandTimeout)
	if _, err := sc.expect(2); err != nil {
		return err
	}
	if err := sc.ehlo(); err != nil {
		return err
	}
	if !starttls {
		return nil
	}
	if !sc.has("STARTTLS") {
		return errors.New("smtp: server doesn't support STARTTLS")
	}
	if _, err := sc.cmd(2, "STARTTLS"); err != nil {
		return err
	}
	tc := tls.Client(sc.sock, tlsConfig)
	sc.deadline(sc.cfg.CommandTimeout)
	if err := tc.Handshake(); err != nil {
		return err
	}
	sc.attach(tc)
	return sc.ehlo()
}

func (sc *smtpConn) ehlo() error {
	text, err := sc.cmd(2, "EHLO "+sc.cfg.LocalName)
	var se *smtp.SMTPError
	if errors.As(err, &se) && (se.Code == 500 || se.Code == 502) {
		sc.ext = map[string]string{}
		_, err = sc.cmd(2, "HELO "+sc.cfg.LocalName)
		return err
	}
	if err != nil {
		return err
	}
	sc.ext = map[string]string{}
	lines := strings.Split(text, "\n")
	for _, l := range lines[1:] { // the first line is the server's name
		k, v, _ := strings.Cut(l, " ")
		sc.ext[strings.ToUpper(k)] = v
	}
	return nil
}

func (sc *smtpConn) has(ext string) bool { _, ok := sc.ext[ext]; return ok }

// supportsAuth reports whether the server offers the SASL mechanism mech.
func (sc *smtpConn) supportsAuth(mech string) bool {
	for _, m := range strings.Fields(sc.ext["AUTH"]) {
		if strings.EqualFold(m, mech) {
			return true
		}
	}
	return false
}

// auth runs the AUTH exchange of RFC 4954 for a go-sasl client.
func (sc *smtpConn) auth(a sasl.Client) error {
	enc := base64.StdEncoding
	mech, resp, err := a.Start()
	if err != nil {
		return err
	}
	line := "AUTH " + mech
	if len(resp) > 0 {
		line += " " + enc.EncodeToString(resp)
	} else if resp != nil {
		line += " ="
	}
	for {
		if err := sc.writeLine(line, sc.cfg.CommandTimeout); err != nil {
			return err
		}
		code, text, err := sc.readReply()
		if err != nil {
			return err
		}
		switch code {
		case 235:
			return nil
		case 334:
		default:
			return replyError(code, text)
		}
		challenge, err := enc.DecodeString(text)
		if err == nil {
			resp, err = a.Next(challenge)
		}
		if err != nil {
			sc.cmd(5, "*") // cancels the exchange (RFC 4954 4: answered 501)
			return err
		}
		line = enc.EncodeToString(resp)
	}
}

// transact sends one message: MAIL, RCPT and DATA (pipelined when the server
// offers PIPELINING), then the dot-stuffed message. stage is where it failed;
// broken means the connection cannot carry another message (it failed below
// SMTP, or the server's answers left the transaction in an unknown state).
// fresh (nil: always) is asked before the dot that ends the message: when
// it answers false the dot is not sent, the server keeps nothing, and the
// error is ErrStale (the connection, left inside DATA, is broken).
func (sc *smtpConn) transact(from string, to []string, msg []byte, utf8 bool, fresh func() bool) (stage string, broken bool, err error) {
	sc.dotSent = false
	mail := "MAIL FROM:<" + from + ">"
	if sc.has("8BITMIME") { // as go-smtp: allowed for 7-bit content too
		mail += " BODY=8BITMIME"
	}
	if sc.has("SIZE") {
		mail += " SIZE=" + strconv.Itoa(len(msg))
	}
	if utf8 {
		mail += " SMTPUTF8"
	}
	sc.deadline(sc.cfg.CommandTimeout)
	if sc.has("PIPELINING") {
		if stage, broken, err = sc.pipelined(mail, to); err != nil {
			return stage, broken, err
		}
	} else {
		stage = StageMail
		if _, err := sc.cmd(2, mail); err != nil {
			return stage, !isReply(err), err
		}
		stage = StageRcpt
		for _, r := range to {
			if _, err := sc.cmd(2, "RCPT TO:<"+r+">"); err != nil {
				return stage, !isReply(err), err
			}
		}
		stage = StageData
		if _, err := sc.cmd(3, "DATA"); err != nil {
			return stage, !isReply(err), err
		}
	}
	stage = StageData
	sc.deadline(sc.cfg.DataTimeout)
	end := writeDotted(sc.w, msg)
	if fresh != nil && !fresh() {
		return stage, true, ErrStale
	}
	sc.w.WriteString(end)
	sc.dotSent = true
	if err := sc.w.Flush(); err != nil {
		return stage, true, err
	}
	if _, err := sc.expect(2); err != nil {
		return stage, !isReply(err), err
	}
	return "", false, nil
}

// pipelined writes MAIL, every RCPT and, for one recipient, DATA at once,
// then reads their answers in order; the first refusal is the error. With
// several recipients DATA waits for their answers: a server accepts DATA
// when any recipient was accepted, and herald sends a message to all of them
// or to none. With one, a refused MAIL or RCPT makes a conforming server
// refuse DATA too (RFC 2920 3.1); one that accepts it anyway waits for a
// message herald does not send, so the connection is given up.
func (sc *smtpConn) pipelined(mail string, to []string) (stage string, broken bool, err error) {
	sc.w.WriteString(mail)
	sc.w.WriteString("\r\n")
	for _, r := range to {
		sc.w.WriteString("RCPT TO:<")
		sc.w.WriteString(r)
		sc.w.WriteString(">\r\n")
	}
	withData := len(to) == 1
	if withData {
		sc.w.WriteString("DATA\r\n")
	}
	if err := sc.w.Flush(); err != nil {
		return StageMail, true, err
	}
	var first error
	// read takes the next answer. A connection that fails after a refusal
	// (a server closing after 421) reports the refusal, the better reason.
	read := func(s string, class int) (ok bool, failed error) {
		_, err := sc.expect(class)
		switch {
		case err == nil:
			return true, nil
		case isReply(err):
			if first == nil {
				stage, first = s, err
			}
			return false, nil
		case first != nil:
			return false, first
		}
		stage = s
		return false, err
	}
	if _, err := read(StageMail, 2); err != nil {
		return stage, true, err
	}
	for range to {
		if _, err := read(StageRcpt, 2); err != nil {
			return stage, true, err
		}
	}
	if !withData {
		if first != nil {
			return stage, false, first
		}
		_, err := sc.cmd(3, "DATA")
		return StageData, !isReply(err) && err != nil, err
	}
	dataOK, err := read(StageData, 3)
	if err != nil {
		return stage, true, err
	}
	if first != nil {
		// A conforming server refused DATA too; one that accepted it waits
		// for a message herald does not send.
		return stage, dataOK, first
	}
	return "", false, nil
}

// isReply reports whether err is the server's answer (the connection still
// speaks SMTP) rather than a failure of the connection itself.
func isReply(err error) bool {
	var se *smtp.SMTPError
	return errors.As(err, &se)
}

// writeDotted writes msg as DATA content the way net/textproto's dot writer
// does (go-smtp's way, which herald's test compares with), a line at a time:
// a dot doubled at the start of a line (RFC 5321 4.5.2), a bare LF written
// as CRLF; it returns the end to write after it: a CRLF when msg lacks one,
// then the terminating "." (written apart, so the message can still be
// taken back before it).
// Like textproto, a LF after an even run of CRs (an odd one ends in the CR of
// a CRLF) gets its own CR.
func writeDotted(w *bufio.Writer, msg []byte) (end string) {
	if len(msg) == 0 {
		return "\r\n.\r\n"
	}
	for len(msg) > 0 {
		if msg[0] == '.' {
			w.WriteByte('.')
		}
		i := bytes.IndexByte(msg, '\n')
		if i < 0 {
			w.Write(msg)
			if oddCRs(msg) {
				return "\n.\r\n"
			}
			return "\r\n.\r\n"
		}
		w.Write(msg[:i])
		if !oddCRs(msg[:i]) {
			w.WriteByte('\r')
		}
		w.WriteByte('\n')
		msg = msg[i+1:]
	}
	return ".\r\n"
}

// oddCRs reports whether b ends in an odd number of CRs.
func oddCRs(b []byte) bool {
	n := 0
	for n < len(b) && b[len(b)-1-n] == '\r' {
		n++
	}
	return n%2 == 1
}

// reset ends a failed transaction.
func (sc *smtpConn) reset() error {
	_, err := sc.cmd(2, "RSET")
	return err
}

// quit says QUIT and waits at most d for the answer; the caller closes.
func (sc *smtpConn) quit(d time.Duration) {
	if sc.writeLine("QUIT", d) == nil {
		sc.readReply()
	}
}
