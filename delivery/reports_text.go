package delivery

// The non-standard bounce texts: a table of the forms mail servers write
// when they send no DSN, and the reader that uses it.

import (
	"net/mail"
	"regexp"
	"strings"
)

// textForm is one known form of non-standard bounce: detect tells it
// (on the subject and the text, joined by a line break), rcpt finds the
// failed address (its last group that matched).
type textForm struct {
	name   string
	detect *regexp.Regexp
	rcpt   *regexp.Regexp
}

// bounceTexts: the non-standard bounces of common mail servers
// (testdata/reports/README.md tells where each form comes from). The
// first whose detect matches reads the mail.
var bounceTexts = []textForm{
	{"qmail", regexp.MustCompile(`(?i)This is the qmail-send program`),
		regexp.MustCompile(`(?m)^<([^<>\s]+@[^<>\s]+)>:\s*$`)},
	{"postfix", regexp.MustCompile(`(?i)(Undelivered Mail Returned to Sender|This is the mail system at host)`),
		regexp.MustCompile(`(?m)^<([^<>\s]+@[^<>\s]+)>(?: \((?:expanded from <([^<>\s]+@[^<>\s]+)>|[^)]*)\))?:`)},
	{"exim", regexp.MustCompile(`(?i)(Mail delivery failed: returning message to sender|This message was created automatically by mail delivery software)`),
		regexp.MustCompile(`(?m)following address(?:\(es\)|es)? failed:\s*\n\s*\n?\s*<?([^<>\s]+@[^<>\s:]+)>?`)},
	{"exchange", regexp.MustCompile(`(?i)(Delivery has failed to these recipients|RESOLVER\.ADR\.|Your message to .* couldn't be delivered|Undeliverable:)`),
		regexp.MustCompile(`(?is)(?:Delivery has failed to these recipients or (?:groups|distribution lists):\s*|Your message to\s+|couldn't be delivered to\s+)<?([^<>\s]+@[^<>\s]+)`)},
	{"gmail", regexp.MustCompile(`(?i)(Delivery Status Notification \((Failure|Delay)\)|The email account that you tried to reach does not exist|Your message wasn't delivered to)`),
		regexp.MustCompile(`(?i)(?:wasn't delivered to|There was a (?:temporary )?problem delivering your message to|delivery to the following recipients? failed[a-z ]*:)\s*<?([^<>\s]+@[^<>\s]+)`)},
	{"yahoo", regexp.MustCompile(`(?i)(Sorry, we were unable to deliver your message|delivery error: dd )`),
		regexp.MustCompile(`(?m)^\s*<?([^<>\s]+@[^<>\s]+?)>?:\s*$`)},
	{"generic", regexp.MustCompile(`(?i)(Undeliverable|Undelivered Mail|Delivery (Status Notification|Failure)|Returned mail:|failure notice|Mail System Error|mailbox (is )?(full|unavailable)|over quota|quota exceeded)`),
		regexp.MustCompile(`(?i)(?:to the following (?:recipient|address)(?:s|\(es\))?:?|failed recipient:?|Original-Recipient:\s*rfc822;|Final-Recipient:\s*rfc822;)\s*<?([^<>\s]+@[^<>\s]+)`)},
}

var (
	// mailboxFull: a full mailbox is temporary, whatever its code.
	mailboxFull = regexp.MustCompile(`(?i)(mailbox (is )?full|over ?quota|quota exceeded|exceeded (the )?(storage|quota)|insufficient (system )?storage|mailbox size limit|5\.2\.2)`)
	// softText: words of a temporary failure in a text.
	softText = regexp.MustCompile(`(?i)(delayed|will (retry|try again|continue trying)|not yet been delivered|temporar(y|ily) (failure|error|problem)|this is a temporary error)`)
	// statusLine: the line that quotes the remote server's answer.
	statusLine = regexp.MustCompile(`(?m)^.*\b[45]\d\d\b[ -:]*(?:#?[45]\.\d{1,3}\.\d{1,3})?.*$`)
	enhanced   = regexp.MustCompile(`\b([245])\.(\d{1,3})\.(\d{1,3})\b`)
	basicCode  = regexp.MustCompile(`(?:^|[\s#:(])([45]\d\d)(?:[\s:-]|$)`)
	// embedded headers quoted in a text (a returned message shown inline).
	inlineMessageID = regexp.MustCompile(`(?im)^\s*Message-ID:\s*<?([^<>\s]+@[^<>\s]+)>?\s*$`)
	inlineSend      = regexp.MustCompile(`(?im)^\s*X-Herald-Send:\s*(\S+)\s*$`)
	inlineReturn    = regexp.MustCompile(`(?im)^\s*Return-Path:\s*<?([^<>\s]+@[^<>\s]+)>?\s*$`)
	tagStrip        = regexp.MustCompile(`(?s)<[^>]*>`)
	// copyMarker: where a text bounce starts quoting the returned message.
	copyMarker = regexp.MustCompile(`(?im)^.*(this is a copy of the message|below this line is a copy of the message|original message headers:|original message follows)`)
)

// bounceText reads a non-standard bounce: the first entry of bounceTexts that
// knows it, the status code the text quotes, hard unless the text says
// temporary or mailbox full.
func (w *walker) bounceText(h mail.Header, e env, v *VERP) []Report {
	body := string(w.text)
	if strings.TrimSpace(body) == "" && len(w.html) > 0 {
		body = tagStrip.ReplaceAllString(string(w.html), " ")
	}
	body = strings.ReplaceAll(body, "\r\n", "\n")
	// The notice: the text before the copy of the returned message (whose
	// words are herald's own, not the server's).
	notice := body
	if loc := copyMarker.FindStringIndex(body); loc != nil {
		notice = body[:loc[0]]
	}
	hay := subject(h) + "\n" + notice
	var bt *textForm
	for i := range bounceTexts {
		if bounceTexts[i].detect.MatchString(hay) {
			bt = &bounceTexts[i]
			break
		}
	}
	if bt == nil {
		return nil
	}
	rcpt := ""
	if m := bt.rcpt.FindStringSubmatch(notice); m != nil {
		// The last address found: Postfix's "(expanded from <…>)" is
		// the one herald sent to.
		for _, g := range m[1:] {
			if a := plainAddress(g); a != "" {
				rcpt = a
			}
		}
	}
	if rcpt == "" && w.original != nil {
		rcpt = headerAddress(w.original.Get("To"))
	}
	// The answer quoted: the first line with a status code after the
	// recipient's mention.
	from := 0
	if rcpt != "" {
		if i := strings.Index(strings.ToLower(notice), rcpt); i >= 0 {
			from = min(i, len(notice)) // ToLower may change lengths
		}
	}
	diag, status := "", ""
	for _, line := range statusLine.FindAllString(notice[from:], 20) {
		if s := enhancedIn(line); s != "" || basicCode.MatchString(line) {
			diag, status = clean(line, maxDiagnostic), s
			break
		}
	}
	if status == "" && diag != "" {
		if m := basicCode.FindStringSubmatch(diag); m != nil {
			status = m[1][:1] + ".0.0"
		}
	}
	kind := ReportHardBounce
	switch {
	case strings.HasPrefix(status, "4."), status == "5.2.2", mailboxFull.MatchString(notice), softText.MatchString(hay):
		kind = ReportSoftBounce
	case strings.HasPrefix(status, "5.7."):
		kind = ReportBlock // a policy refusal: not the recipient's mailbox
	}
	if rcpt == "" && (e.token == "" || status == "") {
		// Neither whom nor what: too little to act on.
		return nil
	}
	a := w.about(e, v)
	if a.messageID == "" {
		if m := inlineMessageID.FindStringSubmatch(body); m != nil {
			a.messageID = clean(m[1], maxMessageID)
		}
	}
	if a.sendUtr == "" {
		if m := inlineSend.FindStringSubmatch(body); m != nil {
			a.sendUtr = clean(m[1], maxSendUtr)
		}
	}
	if a.token == "" && v != nil {
		if m := inlineReturn.FindStringSubmatch(body); m != nil {
			if r, ok := v.Parse(m[1]); ok && r.Bounce && r.Token != "" && len(r.Token) <= maxToken {
				a.token = r.Token
			}
		}
	}
	return []Report{{Kind: kind, Source: SourceText, Token: a.token, MessageID: a.messageID, SendUtr: a.sendUtr,
		Recipient: rcpt, Status: status, Diagnostic: diag}}
}
