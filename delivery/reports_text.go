package delivery

// Bounces without a DSN: the texts mail servers write in their own words.
// Rather than one reader per server, one reader for their common shape:
// a notice that names the failed addresses, each followed (or preceded)
// by the receiving server's reply, then a copy of the returned message or
// its headers. The notice is cut from the copy, the addresses it names
// are the recipients (less the sender's and the reporter's own), the text
// around each is its diagnostic, and Judge reads it.

import (
	"net/mail"
	"regexp"
	"strings"
)

var (
	// bounceSubject: subjects of delivery failures, in the languages met.
	bounceSubject = regexp.MustCompile(`(?i)(undeliver|undelivered|delivery (status|failure|failed|notification|problem|report)|returned (mail|to sender)|failure notice|mail (delivery|system) (error|failed|failure|subsystem)|not delivered|could not be delivered|delivery has failed|non[- ]?delivery|nondeliverable|message (not delivered|delivery failed)|mail delivery|warning: message|delayed mail|delivery delayed|rejected|unzustellbar|non remis|no entregado|non recapitabile|配信|エラー|送信できません|未配達|失敗|error|bounce|unable to deliver|problem delivering|mail failure|deliverability|postmaster|delivery status)`)
	// bounceWords: what a notice says when it reports a failure.
	bounceWords = regexp.MustCompile(`(?i)(could not be delivered|couldn'?t be delivered|was not delivered|wasn'?t delivered|undeliverable|delivery (has )?failed|failed to deliver|unable to deliver|permanent(ly)? (error|fatal|failure)|following (address|recipient)|delivery to the following|error (occurred )?(while |during )|returned (mail|message)|not be delivered|rejected|refused|smtp error|remote (host|server|mail server) said|did not like our|deferred|delivery problem|there was an error|failed recipient|user unknown|host unknown|mailbox|transcript of session|delivery status|delivery failure|problem delivering|could not deliver|cannot deliver|can'?t deliver|giving up|gave up|message (was )?(rejected|blocked|bounced)|bounce|not a member|are not member)`)
	// copyMarker: where a notice starts quoting the returned message.
	copyMarker = regexp.MustCompile(`(?im)^[ \t>|*=_-]*(this is a copy of|below this line is a copy|a copy of (the|your) (original )?message|original message (follows|headers|header|is attached)|(-+|=+|\*+) ?(original|returned|unsent|undelivered|rejected|bounced) (message|mail|e-?mail)|unsent message follows|message headers follow|(the )?headers? of (the )?(original|returned|your) message|returned message|original message ---|content of (the )?(original|your) message|included is a copy|your message reads|-+ ?(message|mail) (follows|header follows)|header of message|--- below this line)`)
	// headerStart: the header block of a returned message shown inline
	// (at the start of a line: a notice's own "From: …" lines are
	// indented).
	headerStart = regexp.MustCompile(`(?im)^(received|return-path|dkim-signature|arc-seal|arc-message-signature|arc-authentication-results|authentication-results|mime-version|message-id|delivered-to|x-received|x-google-smtp-source|x-mailer|content-type|x-originating-ip|x-sender):[ \t]*\S`)
	// emailIn: an address in a notice (quoted local parts included).
	// (Unbounded: counted repetitions make the expression's automaton
	// large and every read slow; plainAddress checks the lengths.)
	emailIn = regexp.MustCompile(`(?i)(?:"[^"\s<>@]+"|[a-z0-9.!#$%&'*+/=?^_` + "`" + `{|}~-]+)@[a-z0-9][a-z0-9-]*(?:\.[a-z0-9-]*[a-z0-9])+`)
	// messageIDLine: a Message-ID is not a recipient.
	messageIDLine = regexp.MustCompile(`(?i)(message-?id|msgid|queue ?id|\bid\b|in-reply-to|references)\s*[:=]?\s*<?$`)
	// inline returned headers.
	inlineMessageID = regexp.MustCompile(`(?im)^\s*Message-ID:\s*<?([^<>\s]+@[^<>\s]+)>?\s*$`)
	inlineSend      = regexp.MustCompile(`(?im)^\s*X-Herald-Send:\s*(\S+)\s*$`)
	inlineReturn    = regexp.MustCompile(`(?im)^\s*Return-Path:\s*<?([^<>\s]+@[^<>\s]+)>?\s*$`)
	inlineTo        = regexp.MustCompile(`(?im)^To:[ \t]*(.+)$`)
	inlineFrom      = regexp.MustCompile(`(?im)^(?:From|Sender|Reply-To):[ \t]*(.+)$`)
	expandedFrom    = regexp.MustCompile(`(?i)<([^<>\s]+@[^<>\s]+)>\s*\(expanded from\s*<([^<>\s]+@[^<>\s]+)>\)`)
	receivedFor     = regexp.MustCompile(`(?i)\bfor\s+<([^<>\s]+@[^<>\s]+)>`)
	// delayNotice: words of a notice about a delivery still being tried.
	delayNotice = regexp.MustCompile(`(?i)(delivery (status notification \()?delay|delivery incomplete|will (retry|try again|continue (trying|to try)|keep trying)|(has|have) not yet been delivered|not been delivered yet|still (trying|being retried)|delayed mail|warning: message .{0,40}delayed|this is only a temporary failure|is kept in the queue|no action is required on your part)`)
	replyStart  = regexp.MustCompile(`^[45]\d\d[ -]`)
	tagStrip    = regexp.MustCompile(`(?s)<[^>]*>`)
	// statusLine: a line that quotes a server's reply.
	statusLine = regexp.MustCompile(`(?m)^.*(\b[45]\d\d\b|\b[45]\.\d{1,3}\.\d{1,3}\b).*$`)
	enhanced   = regexp.MustCompile(`\b([245])\.(\d{1,3})\.(\d{1,3})\b`)
	// mailboxFull: a full mailbox, whatever the code (the SMTP path's
	// 552 at RCPT).
	mailboxFull = regexp.MustCompile(`(?i)(mailbox (is )?full|over ?quota|quota exceeded|exceeded (the )?(storage|quota)|insufficient (system )?storage|mailbox size limit|5\.2\.2)`)
)

// maxTextRecipients bounds how many addresses one notice may report.
const maxTextRecipients = 20

// bounceText reads a bounce without a DSN: the failed addresses the
// notice names, each with the words around it, judged.
func (w *walker) bounceText(h mail.Header, e env, v *VERP) []Report {
	body := string(w.text)
	if strings.TrimSpace(body) == "" && len(w.html) > 0 {
		body = tagStrip.ReplaceAllString(string(w.html), " ")
	}
	body = strings.ReplaceAll(body, "\r\n", "\n")
	notice, copied := splitNotice(body)
	subj := subject(h)
	if !fromDaemon(h) && !bounceSubject.MatchString(subj) && !bounceWords.MatchString(notice) && h.Get("X-Failed-Recipients") == "" {
		return nil
	}
	// The sender's own addresses and the reporter's are not recipients.
	own := map[string]bool{}
	for _, k := range []string{"From", "To", "Cc", "Reply-To", "Sender", "Return-Path"} {
		for _, a := range headerAddresses(h.Get(k)) {
			own[a] = true
		}
	}
	var origTo []string
	if w.original != nil {
		for _, k := range []string{"From", "Sender", "Reply-To", "Return-Path"} {
			for _, a := range headerAddresses(w.original.Get(k)) {
				own[a] = true
			}
		}
		origTo = headerAddresses(w.original.Get("To"))
	}
	for _, m := range inlineFrom.FindAllStringSubmatch(copied, 5) {
		for _, a := range headerAddresses(m[1]) {
			own[a] = true
		}
	}
	if len(origTo) == 0 {
		if m := inlineTo.FindStringSubmatch(copied); m != nil {
			origTo = headerAddresses(m[1])
		}
	}
	rcpts := noticeRecipients(notice, own)
	if len(rcpts) == 0 {
		for _, a := range headerAddresses(h.Get("X-Failed-Recipients")) {
			rcpts = append(rcpts, mention{addr: a, at: -1})
		}
	}
	if len(rcpts) == 0 && len(origTo) == 1 && !own[origTo[0]] {
		rcpts = append(rcpts, mention{addr: origTo[0], at: -1})
	}
	if len(rcpts) == 0 {
		if m := receivedFor.FindStringSubmatch(copied); m != nil {
			if a := plainAddress(m[1]); a != "" && !own[a] {
				rcpts = append(rcpts, mention{addr: a, at: -1})
			}
		}
	}
	if len(rcpts) == 0 {
		// Last, the bounce's own To: a bounce forwarded by its recipient
		// (or attached by a gateway) is addressed to the one it names.
		delete(own, headerAddress(h.Get("To")))
		rcpts = noticeRecipients(notice, own)
	}
	if len(rcpts) == 0 && e.token == "" {
		return nil // neither whom nor which message: too little to act on
	}
	a := w.about(e, v)
	if a.messageID == "" {
		if m := inlineMessageID.FindStringSubmatch(copied); m != nil {
			a.messageID = clean(m[1], maxMessageID)
		}
	}
	if a.sendUtr == "" {
		if m := inlineSend.FindStringSubmatch(copied); m != nil {
			a.sendUtr = clean(m[1], maxSendUtr)
		}
	}
	if a.token == "" && v != nil {
		if m := inlineReturn.FindStringSubmatch(copied); m != nil {
			if r, ok := v.Parse(m[1]); ok && r.Bounce && r.Token != "" && len(r.Token) <= maxToken {
				a.token = r.Token
			}
		}
	}
	if len(rcpts) == 0 {
		rcpts = []mention{{at: -1}} // the token names the message; the notice names no one
	}
	// A notice that the server is still trying is a deferral.
	delayed := delayNotice.MatchString(subj) || delayNotice.MatchString(notice)
	out := make([]Report, 0, len(rcpts))
	for i, r := range rcpts {
		seg := segment(notice, rcpts, i)
		// The lines that name the address say most about it; the rest of
		// its part of the notice counts where they say nothing.
		j := Judge(Failure{Diagnostic: addressLines(seg, r.addr), Stage: stageIn(prepareText(seg)), Delayed: delayed})
		if j.Reason == ReasonOnHold || j.Reason == ReasonUndefined || j.Status == "" && j.Code == 0 {
			// Nothing quoted beside the address: the reply may come
			// further down ("The response from the remote server was:").
			if k := Judge(Failure{Diagnostic: seg, Delayed: delayed}); k.Reason != ReasonOnHold && k.Reason != ReasonUndefined {
				j = k
			}
		}
		if j.Reason == ReasonOnHold || j.Reason == ReasonUndefined {
			// The subject may say what the notice does not ("Cannot send
			// message for 5 days").
			if s := Judge(Failure{Diagnostic: subj, Status: j.Status, Code: j.Code}); s.Reason == ReasonExpired {
				j = s
			}
		}
		out = append(out, Report{Kind: j.Kind, Source: SourceText, Token: a.token, MessageID: a.messageID, SendUtr: a.sendUtr,
			Recipient: r.addr, Reason: j.Reason, Status: j.Status, Diagnostic: replyOf(seg, r.addr)})
	}
	return out
}

// splitNotice cuts a bounce text where the copy of the returned message
// begins: the notice before it is the reporter's, the copy herald's own.
func splitNotice(body string) (notice, copied string) {
	cut := len(body)
	if loc := copyMarker.FindStringIndex(body); loc != nil {
		cut = loc[0]
	}
	if loc := headerStart.FindStringIndex(body); loc != nil && loc[0] < cut {
		cut = loc[0]
	}
	return body[:cut], body[cut:]
}

// mention is an address named in a notice and where.
type mention struct {
	addr string
	at   int // byte offset of its first mention; -1: named elsewhere
}

// noticeRecipients are the addresses a notice names, in order, less
// own (the sender's and the reporter's) and Message-IDs.
func noticeRecipients(notice string, own map[string]bool) []mention {
	var out []mention
	seen := map[string]bool{}
	// Postfix names where an alias led: "<final> (expanded from
	// <given>)". The address herald gave is the one that counts.
	for _, m := range expandedFrom.FindAllStringSubmatch(notice, 50) {
		if final := plainAddress(m[1]); final != "" && plainAddress(m[2]) != "" {
			seen[final] = true
		}
	}
	for _, loc := range emailIn.FindAllStringIndex(notice, 200) {
		raw := notice[loc[0]:loc[1]]
		a := plainAddress(raw)
		if a == "" || own[a] || seen[a] {
			continue
		}
		// A Message-ID, a queue id or a link's mailto: is not a recipient.
		line := notice[strings.LastIndexByte(notice[:loc[0]], '\n')+1 : loc[0]]
		if messageIDLine.MatchString(strings.TrimRight(line, " \t<")) || strings.HasSuffix(line, "mailto:") || strings.HasSuffix(line, "/") {
			continue
		}
		if strings.HasPrefix(a, "mailer-daemon@") || strings.HasPrefix(a, "postmaster@") && len(out) > 0 {
			continue
		}
		seen[a] = true
		out = append(out, mention{addr: a, at: loc[0]})
		if len(out) == maxTextRecipients {
			break
		}
	}
	return out
}

// segment is the part of the notice about recipient i: from its first
// mention to the next recipient's, or the whole notice when it is the
// only one (the reply may come before the address).
func segment(notice string, rs []mention, i int) string {
	if len(rs) == 1 || rs[i].at < 0 {
		return notice
	}
	// Up to where another recipient is named next (notices repeat the
	// list, in a second language or a summary).
	end := len(notice)
	from := rs[i].at + len(rs[i].addr)
	low := asciiLower(notice)
	for j, o := range rs {
		if j == i || o.addr == "" {
			continue
		}
		if k := strings.Index(low[from:], o.addr); k >= 0 && from+k < end {
			end = from + k
		}
	}
	if end < len(notice) {
		// Back to the start of that line: the next address's line is
		// its own.
		if nl := strings.LastIndexByte(notice[rs[i].at:end], '\n'); nl > 0 {
			end = rs[i].at + nl
		}
	}
	start := strings.LastIndexByte(notice[:rs[i].at], '\n') + 1
	return notice[start:end]
}

// addressLines are the lines of a segment from the first that names addr
// to a blank line (at most eight): the address and the reply that
// follows it, or "" when addr is not named.
func addressLines(seg, addr string) string {
	if addr == "" {
		return ""
	}
	i := strings.Index(asciiLower(seg), addr)
	if i < 0 {
		return ""
	}
	start := strings.LastIndexByte(seg[:i], '\n') + 1
	lines := strings.Split(seg[start:], "\n")
	n, replied := 0, false
	for n < len(lines) && n < 8 {
		if n > 0 && (strings.TrimSpace(lines[n]) == "" || replied && replyStart.MatchString(lines[n])) {
			// A blank line, or a new reply after one was quoted: about
			// someone or something else.
			break
		}
		replied = replied || replyCode.MatchString(lines[n])
		n++
	}
	return strings.Join(lines[:n], "\n")
}

// replyOf is the diagnostic kept of a segment: the server's reply it
// quotes (the first line with a reply or status code, and the lines that
// continue it), else its words without the address.
func replyOf(seg, addr string) string {
	if loc := statusLine.FindStringIndex(seg); loc != nil {
		end := loc[1]
		for n := 0; n < 4; n++ {
			rest := seg[end:]
			if !strings.HasPrefix(rest, "\n") {
				break
			}
			next, _, _ := strings.Cut(rest[1:], "\n")
			indented := strings.HasPrefix(next, " ") || strings.HasPrefix(next, "\t")
			if strings.TrimSpace(next) == "" || !indented && emailIn.MatchString(next) && !statusLine.MatchString(next) {
				break
			}
			end += 1 + len(next)
		}
		return clean(seg[loc[0]:end], maxDiagnostic)
	}
	s := seg
	if addr != "" {
		s = strings.ReplaceAll(asciiLower(s), addr, " ")
	}
	return clean(s, maxDiagnostic)
}

// headerAddresses reads the addresses of a header (or a DSN field):
// lower-cased, at most 20.
func headerAddresses(s string) []string {
	if s == "" || len(s) > 20*maxAddress {
		return nil
	}
	var out []string
	if as, err := mail.ParseAddressList(s); err == nil {
		for _, a := range as {
			if p := plainAddress(a.Address); p != "" {
				out = append(out, p)
			}
		}
		return out
	}
	for _, m := range emailIn.FindAllString(s, 20) {
		if p := plainAddress(m); p != "" {
			out = append(out, p)
		}
	}
	return out
}

// asciiLower lower-cases the ASCII letters of s and nothing else, so that
// byte offsets found in it hold in s (strings.ToLower may change lengths).
func asciiLower(s string) string {
	b := []byte(s)
	for i, c := range b {
		if 'A' <= c && c <= 'Z' {
			b[i] = c + 'a' - 'A'
		}
	}
	return string(b)
}
