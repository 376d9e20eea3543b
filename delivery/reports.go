package delivery

import (
	"bufio"
	"bytes"
	"encoding/base64"
	"errors"
	"io"
	"mime"
	"mime/multipart"
	"mime/quotedprintable"
	"net/mail"
	"net/textproto"
	"regexp"
	"strings"
	"unicode"
	"unicode/utf8"
)

// Limits of ParseReports: a mail is read whole (it is at most
// MaxReportSize), but what is kept of it is bounded.
const (
	// MaxReportSize is the largest mail ParseReports reads (and the
	// inbound server accepts): 10 MB.
	MaxReportSize = 10 << 20
	// maxReportDepth is how deep multiparts nest.
	maxReportDepth = 6
	// maxReportParts is how many MIME parts of one mail are looked at.
	maxReportParts = 100
	// maxReportsPerMail is how many reports one mail may make (a DSN's
	// per-recipient blocks).
	maxReportsPerMail = 100
	// maxReportText is how much of the text parts is searched for a
	// non-standard bounce.
	maxReportText = 256 << 10
	// Field caps.
	maxDiagnostic = 1000
	maxAddress    = 254
	maxMessageID  = 998
	maxSendUtr    = 100
	maxToken      = 64
)

// ErrReportTooLarge: the mail is over MaxReportSize.
var ErrReportTooLarge = errors.New("delivery: report over 10 MB")

// ErrNotMail: the bytes have no readable mail header.
var ErrNotMail = errors.New("delivery: not a mail")

// ParseReports reads one mail that came back to herald's bounce domain
// and says what it reports (decisions.md 7): the per-recipient blocks of
// an RFC 3464 delivery status notification, an RFC 5965 feedback report,
// a non-standard bounce text of a known mail server (bounceTexts), or a
// mail to a List-Unsubscribe mailto: address. rcpts are the mail's
// envelope recipients; a VERP token among them names the message, else
// the returned message's Message-ID, X-Herald-Send and Return-Path do.
// Auto-replies and mails it does not understand make no reports and no
// error. Errors: ErrReportTooLarge, ErrNotMail.
func ParseReports(raw []byte, rcpts []string, v *VERP) ([]Report, error) {
	if len(raw) > MaxReportSize {
		return nil, ErrReportTooLarge
	}
	msg, err := mail.ReadMessage(bytes.NewReader(raw))
	if err != nil {
		return nil, ErrNotMail
	}
	body, _ := io.ReadAll(msg.Body)
	w := &walker{}
	w.walk(textproto.MIMEHeader(msg.Header), body, 0)

	e := envelope(rcpts, v)
	switch {
	case w.deliveryStatus != nil:
		return w.dsn(e, v), nil
	case w.feedback != nil:
		return w.arf(e, v), nil
	case autoReply(msg.Header) && !fromDaemon(msg.Header):
		return nil, nil
	case len(e.unsubscribe) > 0:
		return unsubscribeReports(msg.Header, e), nil
	}
	return w.bounceText(msg.Header, e, v), nil
}

// env is what the envelope recipients say.
type env struct {
	token       string   // the first return path's token
	unsubscribe []string // unsubscribe addresses' tokens
}

func envelope(rcpts []string, v *VERP) env {
	var e env
	if v == nil {
		return e
	}
	for _, a := range rcpts {
		r, ok := v.Parse(a)
		switch {
		case !ok || r.Token == "" || len(r.Token) > maxToken:
		case r.Unsubscribe:
			if len(e.unsubscribe) < maxReportsPerMail {
				e.unsubscribe = append(e.unsubscribe, r.Token)
			}
		case e.token == "":
			e.token = r.Token
		}
	}
	return e
}

// walker collects the parts of a mail that reports are read from.
type walker struct {
	parts          int
	deliveryStatus []byte
	feedback       []byte
	original       textproto.MIMEHeader // the returned message's header
	text           []byte               // the text parts outside the returned message
	html           []byte
}

// walk visits one part: its header and its (transfer-encoded) body. Of
// a returned message, only the header counts (its parts are not
// visited: their text is not the report's).
func (w *walker) walk(h textproto.MIMEHeader, body []byte, depth int) {
	w.parts++
	if w.parts > maxReportParts || depth > maxReportDepth {
		return
	}
	mt, params, err := mime.ParseMediaType(h.Get("Content-Type"))
	if err != nil {
		mt = "text/plain"
		if h.Get("Content-Type") != "" {
			mt = "application/octet-stream"
		}
	}
	if strings.HasPrefix(mt, "multipart/") {
		boundary := params["boundary"]
		if boundary == "" {
			return
		}
		mr := multipart.NewReader(bytes.NewReader(body), boundary)
		for w.parts < maxReportParts {
			p, err := mr.NextPart()
			if err != nil {
				return
			}
			b, err := io.ReadAll(io.LimitReader(p, MaxReportSize))
			if err != nil {
				return
			}
			w.walk(p.Header, b, depth+1)
		}
		return
	}
	body = decodeBody(h.Get("Content-Transfer-Encoding"), body)
	switch mt {
	case "message/delivery-status", "message/global-delivery-status":
		if w.deliveryStatus == nil {
			w.deliveryStatus = body
		}
	case "message/feedback-report":
		if w.feedback == nil {
			w.feedback = body
		}
	case "message/rfc822", "message/global", "text/rfc822-headers", "message/rfc822-headers", "message/global-headers":
		if w.original != nil {
			return
		}
		if mt == "text/rfc822-headers" || mt == "message/rfc822-headers" || mt == "message/global-headers" {
			body = append(body[:len(body):len(body)], "\r\n\r\n"...)
		}
		m, err := mail.ReadMessage(bytes.NewReader(body))
		if err != nil {
			return
		}
		w.original = textproto.MIMEHeader(m.Header)
	case "text/plain":
		if len(w.text) < maxReportText {
			w.text = append(w.text, body[:min(len(body), maxReportText-len(w.text))]...)
			w.text = append(w.text, '\n')
		}
	case "text/html":
		if len(w.html) < maxReportText {
			w.html = append(w.html, body[:min(len(body), maxReportText-len(w.html))]...)
		}
	}
}

func decodeBody(cte string, body []byte) []byte {
	switch strings.ToLower(strings.TrimSpace(cte)) {
	case "base64":
		dec := base64.NewDecoder(base64.StdEncoding, newlineFilter{bytes.NewReader(body)})
		b, err := io.ReadAll(dec)
		if err != nil && len(b) == 0 {
			return body
		}
		return b
	case "quoted-printable":
		b, err := io.ReadAll(quotedprintable.NewReader(bytes.NewReader(body)))
		if err != nil && len(b) == 0 {
			return body
		}
		return b
	}
	return body
}

// newlineFilter drops the line breaks and spaces of a base64 body.
type newlineFilter struct{ r io.Reader }

func (f newlineFilter) Read(p []byte) (int, error) {
	n, err := f.r.Read(p)
	j := 0
	for _, c := range p[:n] {
		if c != '\r' && c != '\n' && c != ' ' && c != '\t' {
			p[j] = c
			j++
		}
	}
	return j, err
}

// blocks reads the header blocks of a message/delivery-status or
// message/feedback-report body (RFC 3464 2.1: the per-message fields,
// then one block per recipient, separated by blank lines).
func blocks(body []byte) []textproto.MIMEHeader {
	r := textproto.NewReader(bufio.NewReader(bytes.NewReader(body)))
	var out []textproto.MIMEHeader
	for len(out) <= maxReportsPerMail {
		// Blank lines between blocks.
		for {
			b, err := r.R.Peek(1)
			if err != nil {
				return out
			}
			if b[0] != '\r' && b[0] != '\n' {
				break
			}
			_, _ = r.R.ReadByte()
		}
		h, err := r.ReadMIMEHeader()
		if len(h) > 0 {
			out = append(out, h)
		}
		if err != nil {
			return out
		}
	}
	return out
}

// about is what the returned message (or the envelope) says about which
// message a report is for.
type about struct {
	token, messageID, sendUtr string
}

func (w *walker) about(e env, v *VERP) about {
	a := about{token: e.token}
	if w.original == nil {
		return a
	}
	a.messageID = clean(strings.Trim(strings.TrimSpace(w.original.Get("Message-Id")), "<>"), maxMessageID)
	a.sendUtr = clean(w.original.Get("X-Herald-Send"), maxSendUtr)
	if a.token == "" && v != nil {
		if r, ok := v.Parse(w.original.Get("Return-Path")); ok && r.Bounce && r.Token != "" && len(r.Token) <= maxToken {
			a.token = r.Token
		}
	}
	return a
}

// dsn reads an RFC 3464 report: one report per failed or delayed
// recipient.
func (w *walker) dsn(e env, v *VERP) []Report {
	a := w.about(e, v)
	bs := blocks(w.deliveryStatus)
	var out []Report
	for i, b := range bs {
		if i == 0 && b.Get("Final-Recipient") == "" {
			continue // the per-message fields
		}
		// The address herald gave (ORCPT) when the relay kept it, else
		// where delivery ended (after forwarding, possibly another).
		rcpt := fieldAddress(b.Get("Original-Recipient"))
		if rcpt == "" {
			rcpt = fieldAddress(b.Get("Final-Recipient"))
		}
		if rcpt == "" {
			continue
		}
		diag := b.Get("Diagnostic-Code")
		if t, rest, ok := strings.Cut(diag, ";"); ok && !strings.ContainsAny(t, " \t") {
			diag = rest
		}
		diag = clean(diag, maxDiagnostic)
		status := enhancedIn(b.Get("Status"))
		if status == "" {
			status = enhancedIn(diag)
		}
		var kind ReportKind
		switch strings.ToLower(strings.TrimSpace(b.Get("Action"))) {
		case "failed":
			kind = failedKind(status, diag)
		case "delayed":
			kind = ReportSoftBounce
		default: // delivered, relayed, expanded
			continue
		}
		if kind == 0 {
			continue
		}
		// When it happened: the last attempt, when the report says
		// (Arrival-Date is when the message came, not when it failed).
		when, _ := mail.ParseDate(b.Get("Last-Attempt-Date"))
		out = append(out, Report{Kind: kind, Source: SourceDSN, Token: a.token, MessageID: a.messageID, SendUtr: a.sendUtr,
			Recipient: rcpt, Status: status, Diagnostic: diag, At: when})
	}
	return out
}

// failedKind is what a failure with status (and diagnostic) is: a
// refusal of the mailbox is a hard bounce, a temporary one or a full
// mailbox soft; a policy refusal (5.7.x: the sender or the content, not
// the recipient, decisions.md 8) is a block, never a bounce.
func failedKind(status, diag string) ReportKind {
	switch {
	case strings.HasPrefix(status, "4."), status == "5.2.2", mailboxFull.MatchString(diag):
		return ReportSoftBounce
	case strings.HasPrefix(status, "5.7."):
		return ReportBlock
	}
	return ReportHardBounce
}

// arf reads an RFC 5965 feedback report: a complaint about one message.
func (w *walker) arf(e env, v *VERP) []Report {
	bs := blocks(w.feedback)
	if len(bs) == 0 {
		return nil
	}
	f := bs[0]
	switch strings.ToLower(strings.TrimSpace(f.Get("Feedback-Type"))) {
	case "not-spam", "auth-failure":
		return nil
	}
	a := w.about(e, v)
	rcpt := fieldAddress(f.Get("Original-Rcpt-To"))
	if rcpt == "" && w.original != nil {
		rcpt = headerAddress(w.original.Get("To"))
	}
	// Arrival-Date is when the message came, not when it was reported:
	// the complaint's time is when it is handled.
	return []Report{{Kind: ReportComplaint, Source: SourceARF, Token: a.token, MessageID: a.messageID, SendUtr: a.sendUtr,
		Recipient: rcpt}}
}

// unsubscribeReports: a mail to List-Unsubscribe mailto: addresses
// unsubscribes its sender.
func unsubscribeReports(h mail.Header, e env) []Report {
	from := headerAddress(h.Get("From"))
	if from == "" {
		return nil
	}
	out := make([]Report, 0, len(e.unsubscribe))
	for _, tok := range e.unsubscribe {
		out = append(out, Report{Kind: ReportUnsubscribe, Source: SourceMailto, Token: tok, Recipient: from})
	}
	return out
}

// autoReply tells a vacation message or another automatic answer
// (RFC 3834's Auto-Submitted: auto-replied, and the older conventions).
func autoReply(h mail.Header) bool {
	as := strings.ToLower(h.Get("Auto-Submitted"))
	switch {
	case strings.HasPrefix(as, "auto-replied"),
		h.Get("X-Autoreply") != "", h.Get("X-Autorespond") != "", h.Get("X-Autoreply-From") != "",
		strings.EqualFold(strings.TrimSpace(h.Get("Precedence")), "auto_reply"):
		return true
	}
	return autoReplySubject.MatchString(subject(h))
}

// fromDaemon tells a mail from a mail server's bounce sender (bounces of
// Postfix and Exim carry Auto-Submitted: auto-replied too).
func fromDaemon(h mail.Header) bool {
	return daemonFrom.MatchString(h.Get("From"))
}

var daemonFrom = regexp.MustCompile(`(?i)(mailer-?daemon|postmaster|mail delivery (system|subsystem)|MicrosoftExchange)`)

var autoReplySubject = regexp.MustCompile(`(?i)^\s*(auto(matic)?[ -]?(reply|response|antwort)|out of (the )?office|vacation|abwesenheit|r[ée]ponse automatique)\b`)

func subject(h mail.Header) string {
	s, err := new(mime.WordDecoder).DecodeHeader(h.Get("Subject"))
	if err != nil {
		s = h.Get("Subject")
	}
	return clean(s, maxDiagnostic)
}

// enhancedIn returns the first enhanced status code (RFC 3463) in s.
func enhancedIn(s string) string {
	m := enhanced.FindStringSubmatch(s)
	if m == nil || m[1] == "2" {
		return ""
	}
	return m[1] + "." + m[2] + "." + m[3]
}

// fieldAddress reads a DSN/ARF address field: "rfc822; bob@example.com"
// or a bare address.
func fieldAddress(s string) string {
	if t, rest, ok := strings.Cut(s, ";"); ok && !strings.Contains(t, "@") {
		s = rest
	}
	return plainAddress(s)
}

// headerAddress reads a From or To header's first address.
func headerAddress(s string) string {
	if len(s) > 4*maxAddress {
		return ""
	}
	if as, err := mail.ParseAddressList(s); err == nil && len(as) > 0 {
		return plainAddress(as[0].Address)
	}
	return plainAddress(s)
}

// plainAddress keeps s when it is one address, lower-cased; else "".
func plainAddress(s string) string {
	s = strings.Trim(strings.TrimSpace(s), "<>.,;:()'\"")
	if s == "" || len(s) > maxAddress || strings.IndexFunc(s, func(r rune) bool { return r <= ' ' || r == 0x7f || r == '<' || r == '>' }) >= 0 {
		return ""
	}
	at := strings.LastIndexByte(s, '@')
	if at <= 0 || at == len(s)-1 || !utf8.ValidString(s) {
		return ""
	}
	return strings.ToLower(s)
}

// clean makes remote text safe to keep: valid UTF-8, no control
// characters, whitespace collapsed, at most n bytes.
func clean(s string, n int) string {
	if len(s) > 4*n {
		s = s[:4*n]
	}
	s = strings.ToValidUTF8(s, "\uFFFD")
	s = strings.Map(func(r rune) rune {
		if unicode.IsControl(r) {
			return ' '
		}
		return r
	}, s)
	s = strings.Join(strings.Fields(s), " ")
	if len(s) > n {
		cut := n
		for cut > 0 && !utf8.RuneStart(s[cut]) {
			cut--
		}
		s = s[:cut]
	}
	return s
}
