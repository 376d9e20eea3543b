package delivery

import (
	"bytes"
	"encoding/base64"
	"errors"
	"io"
	"mime"
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
	return parseReports(raw, rcpts, v, 0)
}

// vague reports tell who but not why: a notice that only says a mail
// could not be delivered.
func vague(rs []Report) bool {
	for _, r := range rs {
		if r.Reason != ReasonOnHold && r.Reason != ReasonUndefined && r.Reason != "" {
			return false
		}
	}
	return true
}

func parseReports(raw []byte, rcpts []string, v *VERP, depth int) ([]Report, error) {
	msg, err := mail.ReadMessage(bytes.NewReader(raw))
	if err != nil {
		return nil, ErrNotMail
	}
	body, _ := io.ReadAll(msg.Body)
	w := &walker{}
	w.walk(textproto.MIMEHeader(msg.Header), body, 0)

	e := envelope(rcpts, v)
	if w.deliveryStatus == nil {
		// A delivery status written into the text (no part of its own).
		if loc := inlineStatus.FindIndex(w.text); loc != nil {
			w.deliveryStatus = w.text[loc[0]:]
		}
	}
	switch {
	case w.deliveryStatus != nil:
		if out := w.dsn(e, v); len(out) > 0 || !failedIn(w.deliveryStatus) {
			return out, nil
		}
		// A failure whose block names no one readable
		// ("Final-Recipient: rfc822; @host"): the notice may.
	case w.feedback != nil:
		return w.arf(e, v), nil
	case w.original != nil && (w.original.Get("X-Hmxmroriginalrecipient") != "" || jmrpSubject.MatchString(subject(msg.Header))):
		return w.jmrp(e, v), nil
	case len(e.unsubscribe) > 0:
		return unsubscribeReports(msg.Header, e), nil
	case strings.EqualFold(strings.TrimSpace(msg.Header.Get("X-Apple-Unsubscribe")), "true"):
		// Apple Mail's unsubscribe button, sent to a List-Unsubscribe
		// mailto: address that is not (or no longer) one of herald's.
		return unsubscribeReports(msg.Header, env{unsubscribe: []string{""}}), nil
	case autoReply(msg.Header) && !fromDaemon(msg.Header):
		return nil, nil
	}
	if reports, ok := sesInMail(w.text); ok {
		return reports, nil
	}
	out := w.bounceText(msg.Header, e, v)
	if vague(out) && w.originalRaw != nil && depth == 0 {
		// A gateway that says only "could not be delivered" and attaches
		// the bounce it got (InterScan and others): that bounce says why.
		inner, err := parseReports(w.originalRaw, rcpts, v, depth+1)
		if err == nil && len(inner) > 0 && !vague(inner) {
			a := w.about(e, v)
			for i := range inner {
				if inner[i].Token == "" {
					inner[i].Token = a.token
				}
			}
			return inner, nil
		}
	}
	return out, nil
}

// inlineStatus: where a delivery status written as text begins (its
// fields at the start of lines, a recipient and an action among them).
var inlineStatus = regexp.MustCompile(`(?im)^(reporting-mta|original-recipient|final-recipient|action):[ \t]*\S[^\n]*\n(?:[^\n]*\n){0,8}?(final-recipient|action):`)

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
	originalRaw    []byte               // the returned message whole (message/rfc822)
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
	mt, boundary := mediaType(h.Get("Content-Type"))
	if strings.HasPrefix(mt, "multipart/") {
		if boundary == "" {
			return
		}
		parts := splitParts(body, boundary, maxReportParts)
		if len(parts) == 0 {
			// No delimiter where the header says: the body is read as
			// the text it is.
			w.walk(textproto.MIMEHeader{"Content-Type": {"text/plain"}}, body, depth+1)
			return
		}
		for _, p := range parts {
			if w.parts >= maxReportParts {
				return
			}
			ph, pb := readPart(p)
			w.walk(ph, pb, depth+1)
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
		if mt == "message/rfc822" || mt == "message/global" {
			w.originalRaw = body
		}
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
// then one block per recipient, separated by blank lines). Some servers
// leave out the blank lines: a recipient field seen twice starts the next
// recipient's block.
func blocks(body []byte) []textproto.MIMEHeader {
	var out []textproto.MIMEHeader
	cur := textproto.MIMEHeader{}
	var key string
	flush := func() {
		if len(cur) > 0 && len(out) <= maxReportsPerMail {
			out = append(out, cur)
		}
		cur, key = textproto.MIMEHeader{}, ""
	}
	for _, line := range strings.Split(strings.ReplaceAll(string(body), "\r\n", "\n"), "\n") {
		if strings.TrimSpace(line) == "" {
			flush()
			continue
		}
		colon := strings.IndexByte(line, ':')
		if line[0] == ' ' || line[0] == '\t' || colon <= 0 || strings.ContainsAny(line[:colon], " \t") {
			if key != "" {
				vs := cur[key]
				vs[len(vs)-1] += " " + strings.TrimSpace(line)
			}
			continue
		}
		key = textproto.CanonicalMIMEHeaderKey(line[:colon])
		switch key {
		case "Final-Recipient":
			if cur.Get("Final-Recipient") != "" {
				flush()
				key = "Final-Recipient"
			}
		case "Original-Recipient":
			if cur.Get("Original-Recipient") != "" {
				flush()
				key = "Original-Recipient"
			}
		}
		if key == "Original-Rcpt-To" || len(cur[key]) == 0 {
			cur[key] = append(cur[key], strings.TrimSpace(line[colon+1:]))
		}
		if len(out) > maxReportsPerMail {
			break
		}
	}
	flush()
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
// recipient, each judged on its Status, its Diagnostic-Code and, where
// the block says little, the words the notice gives about that address.
func (w *walker) dsn(e env, v *VERP) []Report {
	a := w.about(e, v)
	bs := blocks(w.deliveryStatus)
	notice, _ := splitNotice(strings.ReplaceAll(string(w.text), "\r\n", "\n"))
	var out []Report
	for i, b := range bs {
		if i == 0 && b.Get("Final-Recipient") == "" && b.Get("Original-Recipient") == "" {
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
		diag, diagType := b.Get("Diagnostic-Code"), ""
		if t, rest, ok := strings.Cut(diag, ";"); ok && !strings.ContainsAny(strings.TrimSpace(t), " \t") {
			diag, diagType = rest, t
		}
		diag = clean(diag, maxDiagnostic)
		status := enhancedIn(b.Get("Status"))
		var delayed bool
		switch strings.ToLower(strings.TrimSpace(b.Get("Action"))) {
		case "delivered", "relayed", "expanded":
			continue
		case "delayed":
			delayed = true
		case "failed", "":
			if strings.HasPrefix(status, "2.") {
				continue
			}
		default:
			// Some relays write their own words ("expired"): a failure.
		}
		// What the block says beside the reply: the Status field's own
		// words ("5.2.1 (mailbox disabled, not accepting messages)").
		judged := diag
		if _, comment, ok := strings.Cut(b.Get("Status"), "("); ok {
			judged = strings.TrimSpace(judged + " " + strings.TrimSuffix(strings.TrimSpace(comment), ")"))
		}
		seg := dsnSegment(notice, rcpt)
		stage := stageIn(prepareText(judged))
		j := Judge(Failure{Stage: stage, Status: status, Diagnostic: judged, Delayed: delayed})
		if seg != "" && (j.Reason == ReasonOnHold || j.Reason == ReasonUndefined || j.Reason == ReasonFiltered || diag == "") {
			// The block says little, or says "user unknown" without the
			// command or code that makes it the mailbox's: the notice's
			// words about this address may (Exchange, Gmail and sendmail
			// put their transcripts there).
			more := judged + "\n" + seg
			if stage == "" {
				stage = stageIn(prepareText(seg))
			}
			if k := Judge(Failure{Stage: stage, Status: status, Diagnostic: more, Delayed: delayed}); k.Reason != ReasonOnHold && k.Reason != ReasonUndefined {
				j = k
			}
			if diag == "" {
				diag = replyOf(seg, rcpt)
			}
		}
		if strings.EqualFold(strings.TrimSpace(diagType), "x-unix") && IsHardReason(j.Reason) {
			// A local delivery program failed (procmail, a pipe): its
			// words about the user are the program's, not a mailbox's.
			j.Kind, j.Reason = ReportSoftBounce, ReasonMailerError
		}
		// When it happened: the last attempt, when the report says
		// (Arrival-Date is when the message came, not when it failed).
		when, _ := mail.ParseDate(b.Get("Last-Attempt-Date"))
		out = append(out, Report{Kind: j.Kind, Source: SourceDSN, Token: a.token, MessageID: a.messageID, SendUtr: a.sendUtr,
			Recipient: rcpt, Reason: j.Reason, Status: j.Status, Diagnostic: diag, At: when})
	}
	return out
}

// failedIn reports whether a delivery status says a delivery failed or
// is delayed.
func failedIn(status []byte) bool {
	for _, b := range blocks(status) {
		switch strings.ToLower(strings.TrimSpace(b.Get("Action"))) {
		case "failed", "delayed":
			return true
		}
	}
	return false
}

// dsnSegment is what the notice of a DSN says about one address: the
// text from its mention to the next blank line pair, or, when the notice
// names no address at all, the whole notice.
func dsnSegment(notice, rcpt string) string {
	low := asciiLower(notice)
	i := strings.Index(low, rcpt)
	if i < 0 {
		if emailIn.MatchString(notice) {
			return ""
		}
		return notice
	}
	end := len(notice)
	if j := strings.Index(notice[i:], "\n\n\n"); j >= 0 {
		end = i + j
	}
	return notice[i:min(end, i+2000)]
}

// arf reads an RFC 5965 feedback report: a complaint about one message
// by each recipient it names (Original-Rcpt-To, else the returned
// message's To). Reports of a failed authentication (RFC 6591) and
// "not spam" reports are not complaints; an opt-out is an unsubscribe.
func (w *walker) arf(e env, v *VERP) []Report {
	bs := blocks(w.feedback)
	if len(bs) == 0 {
		return nil
	}
	f := bs[0]
	ft := strings.ToLower(strings.TrimSpace(f.Get("Feedback-Type")))
	kind, reason := ReportComplaint, ReasonFeedback
	switch ft {
	case "not-spam", "auth-failure":
		return nil
	case "opt-out", "opt-out-list":
		kind, reason = ReportUnsubscribe, ReasonUnsubscribe
	}
	var rcpts []string
	for _, r := range f.Values("Original-Rcpt-To") {
		rcpts = append(rcpts, headerAddresses(strings.TrimPrefix(strings.TrimSpace(r), "rfc822;"))...)
	}
	if len(rcpts) == 0 {
		rcpts = headerAddresses(f.Get("Removal-Recipient"))
	}
	if len(rcpts) == 0 && w.original != nil {
		rcpts = headerAddresses(w.original.Get("To"))
	}
	return complaints(w.about(e, v), SourceARF, kind, reason, ft, rcpts)
}

// complaints are the reports of one complaint about message a, one per
// recipient named (one without a recipient when none is: the message
// still says who).
func complaints(a about, source string, kind ReportKind, reason, diag string, rcpts []string) []Report {
	if len(rcpts) == 0 {
		rcpts = []string{""}
	}
	if len(rcpts) > maxReportsPerMail {
		rcpts = rcpts[:maxReportsPerMail]
	}
	// Arrival-Date is when the message came, not when it was reported:
	// the complaint's time is when it is handled.
	out := make([]Report, 0, len(rcpts))
	for _, r := range rcpts {
		out = append(out, Report{Kind: kind, Source: source, Token: a.token, MessageID: a.messageID, SendUtr: a.sendUtr,
			Recipient: r, Reason: reason, Diagnostic: clean(diag, maxDiagnostic)})
	}
	return out
}

// jmrpSubject: Microsoft's junk mail reporting program sends complaints
// without an ARF part: the returned message, and this subject.
var jmrpSubject = regexp.MustCompile(`(?i)^\s*complaint about message from`)

// jmrp reads a complaint of Microsoft's junk mail reporting program: the
// recipient is in the returned message's X-HmXmrOriginalRecipient.
func (w *walker) jmrp(e env, v *VERP) []Report {
	rcpts := headerAddresses(w.original.Get("X-Hmxmroriginalrecipient"))
	if len(rcpts) == 0 {
		rcpts = headerAddresses(w.original.Get("To"))
	}
	return complaints(w.about(e, v), SourceARF, ReportComplaint, ReasonFeedback, "abuse", rcpts)
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
		out = append(out, Report{Kind: ReportUnsubscribe, Source: SourceMailto, Token: tok, Recipient: from, Reason: ReasonUnsubscribe})
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
