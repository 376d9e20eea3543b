package delivery

import (
	"bytes"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"html"
	"io"
	"mime"
	"mime/multipart"
	"net/mail"
	"net/textproto"
	"net/url"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"

	xhtml "golang.org/x/net/html"
)

// Message is one mail to one recipient, with placeholders already rendered.
type Message struct {
	From    mail.Address // sender's from_name and from_email; Address required
	ReplyTo string       // address only; empty: no Reply-To header
	To      mail.Address // Address required; Name optional
	Subject string

	HTML string
	Text string // empty: derived from HTML by HTMLToText

	Preheader string // hidden preview text put at the start of the HTML body

	// ListUnsubscribeURL is an http(s) link; with OneClick the link accepts a POST
	// of List-Unsubscribe=One-Click (RFC 8058).
	ListUnsubscribeURL string
	OneClick           bool
	// ListUnsubscribeMailto, when set, is an address put beside the link
	// in List-Unsubscribe (RFC 2369's mailto:, which RFC 8058 keeps).
	ListUnsubscribeMailto string

	// ListID, when set, makes the List-Id header (RFC 2919) `"ListName"
	// <ListID>`: ListID is a dot-atom such as "type1.a1.shop.example.com",
	// ListName the list's human name (RFC 2047-encoded beyond ASCII, made
	// one line, control characters dropped).
	ListID, ListName string
	// FeedbackID, when set, is the Feedback-ID header Gmail's feedback loop
	// reads ("s12:1:herald"): printable ASCII without spaces.
	FeedbackID string

	Headers []Header // extra headers, written in this order

	MessageID string    // empty: <random@from-domain>; brackets added if missing
	Date      time.Time // zero: now
}

// Header is one extra header field of a Message.
type Header struct {
	Name, Value string
}

// ErrInvalidMessage is wrapped by every error Build returns for a message that
// cannot be written (missing address, bad header, line too long).
var ErrInvalidMessage = errors.New("delivery: invalid message")

// maxLine is RFC 5322's limit on a line, without its CRLF.
const maxLine = 998

// Build writes m as an RFC 5322 message: CRLF line endings, every line at most
// 998 octets, 7-bit clean (non-ASCII headers are RFC 2047 encoded, both parts are
// UTF-8 quoted-printable inside multipart/alternative, text before HTML). It fills
// m.MessageID and m.Date when they are empty so that the caller can record them.
// Errors wrap ErrInvalidMessage.
func Build(m *Message) ([]byte, error) {
	return build(m, nil, 0)
}

// BuildSigned is Build followed by SignMessage with keys, in one pass: the
// encoder canonicalizes and hashes the body while it writes it (relaxed or
// simple, as each key says), the header fields are read back from the few
// hundred bytes it wrote, and the DKIM-Signature fields go in room kept
// before the message, so that the message is not copied. The signatures
// are made on the calling goroutine (the engine's sending workers: all
// cores). No key: Build.
func BuildSigned(m *Message, keys ...*DKIMKey) ([]byte, error) {
	if len(keys) == 0 {
		return Build(m)
	}
	bh := newBodyHashes(keys)
	reserve := 0
	for _, k := range keys {
		reserve += k.signatureRoom()
	}
	buf, err := build(m, bh, reserve)
	if err != nil {
		return nil, err
	}
	fields, _, err := splitHeader(buf[reserve:])
	if err != nil {
		return nil, err
	}
	sigs, err := bh.signatures(fields, keys)
	if err != nil {
		return nil, err
	}
	if len(sigs) > reserve { // cannot happen: signatureRoom is an upper bound
		return append(sigs, buf[reserve:]...), nil
	}
	start := reserve - len(sigs)
	copy(buf[start:], sigs)
	return buf[start:], nil
}

// zeros fills the room BuildSigned keeps for the signatures.
var zeros [4096]byte

// teeBody writes the body both into the message and into its DKIM hashes.
type teeBody struct {
	b *bytes.Buffer
	h *bodyHashes
}

func (t teeBody) Write(p []byte) (int, error) {
	t.b.Write(p)
	t.h.Write(p)
	return len(p), nil
}

// build writes m after reserve bytes of room; with bh, the body is also
// written into bh.
func build(m *Message, bh *bodyHashes, reserve int) ([]byte, error) {
	if err := m.check(); err != nil {
		return nil, err
	}
	if m.Date.IsZero() {
		m.Date = time.Now()
	}
	if m.MessageID == "" {
		m.MessageID = NewMessageID(domainOf(m.From.Address))
	} else if !strings.HasPrefix(m.MessageID, "<") {
		m.MessageID = "<" + m.MessageID + ">"
	}
	text := m.Text
	if text == "" {
		text = HTMLToText(m.HTML)
	}
	body := m.HTML
	if m.Preheader != "" {
		body = insertPreheader(body, m.Preheader)
	}

	var buf bytes.Buffer
	buf.Grow(reserve + len(text) + len(body)*11/10 + 2048)
	for n := reserve; n > 0; n -= min(n, len(zeros)) {
		buf.Write(zeros[:min(n, len(zeros))])
	}
	h := headerWriter{b: &buf}
	h.add("From", m.From.String())
	if m.ReplyTo != "" {
		h.add("Reply-To", (&mail.Address{Address: m.ReplyTo}).String())
	}
	h.add("To", m.To.String())
	h.add("Subject", encodeWords(oneLine(m.Subject)))
	h.add("Date", m.Date.Format(time.RFC1123Z))
	h.add("Message-ID", m.MessageID)
	h.add("MIME-Version", "1.0")
	if m.ListUnsubscribeURL != "" {
		v := "<" + m.ListUnsubscribeURL + ">"
		if m.ListUnsubscribeMailto != "" {
			// The https link first: clients that take the first usable
			// entry (and RFC 8058's one-click POST) use it.
			v += ", <mailto:" + m.ListUnsubscribeMailto + "?subject=unsubscribe>"
		}
		h.add("List-Unsubscribe", v)
		if m.OneClick {
			h.add("List-Unsubscribe-Post", "List-Unsubscribe=One-Click")
		}
	}
	if m.ListID != "" {
		h.add("List-Id", listPhrase(m.ListName)+"<"+m.ListID+">")
	}
	if m.FeedbackID != "" {
		h.add("Feedback-ID", m.FeedbackID)
	}
	for _, x := range m.Headers {
		h.add(x.Name, encodeWords(x.Value))
	}

	// The multipart writer writes nothing before CreatePart: its boundary can go
	// in the header first.
	var bw io.Writer = &buf
	if bh != nil {
		bw = teeBody{b: &buf, h: bh}
	}
	mw := multipart.NewWriter(bw)
	h.add("Content-Type", mime.FormatMediaType("multipart/alternative", map[string]string{"boundary": mw.Boundary()}))
	if h.err != nil {
		return nil, h.err
	}
	buf.WriteString("\r\n")
	for _, p := range []struct{ typ, content string }{
		{"text/plain; charset=utf-8", text},
		{"text/html; charset=utf-8", body},
	} {
		pw, err := mw.CreatePart(textproto.MIMEHeader{
			"Content-Type":              {p.typ},
			"Content-Transfer-Encoding": {"quoted-printable"},
		})
		if err != nil {
			return nil, err
		}
		if err := writeQP(pw, p.content); err != nil {
			return nil, err
		}
	}
	if err := mw.Close(); err != nil {
		return nil, err
	}
	return buf.Bytes(), nil
}

// check refuses what would make a broken or forged message.
func (m *Message) check() error {
	bad := func(format string, args ...any) error {
		return fmt.Errorf("%w: %s", ErrInvalidMessage, fmt.Sprintf(format, args...))
	}
	if !validAddress(m.From.Address) {
		return bad("from address %q", m.From.Address)
	}
	if !validAddress(m.To.Address) {
		return bad("to address %q", m.To.Address)
	}
	if m.ReplyTo != "" && !validAddress(m.ReplyTo) {
		return bad("reply-to address %q", m.ReplyTo)
	}
	if strings.ContainsAny(m.From.Name+m.To.Name, "\r\n") {
		return bad("display name with a line break")
	}
	if m.ListUnsubscribeMailto != "" && !validAddress(m.ListUnsubscribeMailto) {
		return bad("list-unsubscribe address %q", m.ListUnsubscribeMailto)
	}
	if m.ListUnsubscribeURL != "" {
		u, err := url.Parse(m.ListUnsubscribeURL)
		if err != nil || (u.Scheme != "https" && u.Scheme != "http") || u.Host == "" ||
			strings.ContainsAny(m.ListUnsubscribeURL, " <>\r\n\t") {
			return bad("list-unsubscribe URL %q is not an http(s) link", m.ListUnsubscribeURL)
		}
	} else if m.OneClick {
		return bad("one-click unsubscribe without a List-Unsubscribe URL")
	}
	if m.MessageID != "" && (strings.ContainsAny(m.MessageID, " \t\r\n") || !strings.Contains(m.MessageID, "@")) {
		return bad("message-id %q", m.MessageID)
	}
	if m.ListID != "" && !ValidListID(m.ListID) {
		return bad("list-id %q is not a dot-atom", m.ListID)
	}
	if m.FeedbackID != "" && !validToken(m.FeedbackID) {
		return bad("feedback-id %q", m.FeedbackID)
	}
	for _, x := range m.Headers {
		if !validFieldName(x.Name) {
			return bad("header name %q", x.Name)
		}
		if strings.ContainsAny(x.Value, "\r\n") {
			return bad("header %s with a line break", x.Name)
		}
		if reservedHeader(x.Name) {
			return bad("header %s is set by Build", x.Name)
		}
	}
	return nil
}

func validAddress(s string) bool {
	if s == "" || strings.ContainsAny(s, "\r\n<> ") {
		return false
	}
	a, err := mail.ParseAddress(s)
	return err == nil && a.Address == s
}

// validFieldName: printable ASCII except colon (RFC 5322 section 2.2).
func validFieldName(s string) bool {
	if s == "" {
		return false
	}
	for i := 0; i < len(s); i++ {
		if c := s[i]; c < 33 || c > 126 || c == ':' {
			return false
		}
	}
	return true
}

func reservedHeader(name string) bool {
	switch textproto.CanonicalMIMEHeaderKey(name) {
	case "From", "To", "Reply-To", "Subject", "Date", "Message-Id", "Mime-Version",
		"Content-Type", "Content-Transfer-Encoding", "List-Unsubscribe", "List-Unsubscribe-Post",
		"List-Id", "Feedback-Id", "Dkim-Signature":
		return true
	}
	return false
}

// ValidListID reports whether s can be a List-Id's id: a dot-atom of
// letters, digits and hyphens (RFC 2919's list-id is a dot-atom-text;
// herald's are "type1.a1.<domain>").
func ValidListID(s string) bool {
	if s == "" || len(s) > 255 || s[0] == '.' || s[len(s)-1] == '.' || strings.Contains(s, "..") {
		return false
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		if !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '-' || c == '.') {
			return false
		}
	}
	return true
}

// validToken: printable ASCII without spaces, at most 200 characters.
func validToken(s string) bool {
	if len(s) > 200 {
		return false
	}
	for i := 0; i < len(s); i++ {
		if c := s[i]; c < 33 || c > 126 {
			return false
		}
	}
	return true
}

// listPhrase is the display name of a List-Id, with the space before the
// angle bracket: a quoted string for printable ASCII, RFC 2047 encoded
// words beyond it; "" for an empty name. Line breaks become spaces and
// other control characters are dropped, so a name never starts a header.
func listPhrase(name string) string {
	name = strings.Map(func(r rune) rune {
		if r == '\r' || r == '\n' || r == '\t' {
			return ' '
		}
		if r < 32 || r == 127 || r >= 0x80 && r < 0xa0 {
			return -1
		}
		return r
	}, name)
	name = strings.Join(strings.Fields(name), " ")
	if name == "" {
		return ""
	}
	for i := 0; i < len(name); i++ {
		if name[i] >= 0x80 {
			return phraseWords(name) + " "
		}
	}
	return `"` + strings.NewReplacer(`\`, `\\`, `"`, `\"`).Replace(name) + `" `
}

// phraseWords Q-encodes s as RFC 2047 encoded words fit for a phrase
// (section 5 (3): only letters, digits and !*+-/ stay as they are, a space
// is "_"), each at most 75 characters and never splitting a character.
// mime.QEncoding keeps quotes and parentheses, which a phrase may not hold.
func phraseWords(s string) string {
	const prefix, suffix, room = "=?utf-8?q?", "?=", 75 - len("=?utf-8?q?") - len("?=")
	var out, word strings.Builder
	for _, r := range s {
		var enc string
		switch {
		case r == ' ':
			enc = "_"
		case r < 0x80 && (r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || strings.ContainsRune("!*+-/", r)):
			enc = string(r)
		default:
			var b [4]byte
			for _, c := range b[:utf8.EncodeRune(b[:], r)] {
				enc += fmt.Sprintf("=%02X", c)
			}
		}
		if word.Len()+len(enc) > room {
			out.WriteString(prefix + word.String() + suffix + " ")
			word.Reset()
		}
		word.WriteString(enc)
	}
	out.WriteString(prefix + word.String() + suffix)
	return out.String()
}

// NewMessageID returns a fresh, globally unique Message-ID "<time.random@domain>".
func NewMessageID(domain string) string {
	if domain == "" {
		domain = "localhost"
	}
	var r [12]byte
	_, _ = rand.Read(r[:]) // crypto/rand.Read never fails (Go 1.24+)
	return "<" + strconv.FormatInt(time.Now().UnixNano(), 36) + "." + hex.EncodeToString(r[:]) + "@" + domain + ">"
}

func domainOf(addr string) string {
	if i := strings.LastIndexByte(addr, '@'); i >= 0 {
		return strings.ToLower(addr[i+1:])
	}
	return ""
}

// oneLine turns line breaks in a user-typed value (a subject) into spaces, so that
// it can never start another header.
func oneLine(s string) string {
	if !strings.ContainsAny(s, "\r\n") {
		return s
	}
	return strings.Join(strings.Fields(s), " ")
}

// encodeWords RFC 2047-encodes s when it holds anything but printable ASCII.
func encodeWords(s string) string {
	return mime.QEncoding.Encode("utf-8", s)
}

// headerWriter writes header fields folded at spaces to lines of at most 78
// characters where possible; a line that still exceeds 998 is an error.
type headerWriter struct {
	b   *bytes.Buffer
	err error
}

func (h *headerWriter) add(name, value string) {
	if h.err != nil {
		return
	}
	line := name + ": " + value
	start := h.b.Len()
	for len(line) > 78 {
		// Fold before the last space that keeps the line within 78, else the first
		// space at all; the leading line of the field must keep its name.
		cut := strings.LastIndexByte(line[:79], ' ')
		if cut <= len(name)+1 {
			cut = strings.IndexByte(line[len(name)+2:], ' ')
			if cut < 0 {
				break
			}
			cut += len(name) + 2
		}
		h.b.WriteString(line[:cut])
		h.b.WriteString("\r\n")
		line = line[cut:]
		name = "" // continuation lines start with the space at line[0]
	}
	h.b.WriteString(line)
	h.b.WriteString("\r\n")
	for _, l := range strings.Split(string(h.b.Bytes()[start:]), "\r\n") {
		if len(l) > maxLine {
			h.err = fmt.Errorf("%w: header line longer than %d characters", ErrInvalidMessage, maxLine)
		}
	}
}

// writeQP writes s quoted-printable with CRLF line breaks in a single Write,
// byte for byte as mime/quotedprintable's Writer in text mode would (LF and CRLF
// become CRLF, lines stay within 76 characters); see appendQP.
func writeQP(w io.Writer, s string) error {
	bp := qpBufs.Get().(*[]byte)
	buf := appendQP((*bp)[:0], s)
	_, err := w.Write(buf)
	if cap(buf) <= 1<<20 { // don't keep a rare huge buffer alive
		*bp = buf
		qpBufs.Put(bp)
	}
	return err
}

// preheaderStyle hides the preview text in every common client (mso-hide for
// Outlook on Windows) while inbox lists still show it.
const preheaderStyle = "display:none!important;visibility:hidden;mso-hide:all;font-size:1px;" +
	"line-height:1px;max-height:0;max-width:0;opacity:0;overflow:hidden;color:transparent"

// insertPreheader puts the hidden preview text right after the <body> start tag,
// or before everything when there is none. The filler after it keeps clients from
// pulling the body's first words into the preview.
func insertPreheader(body, preheader string) string {
	span := `<span style="` + preheaderStyle + `">` + html.EscapeString(oneLine(preheader)) +
		strings.Repeat("&#847;&zwnj;&nbsp;", 20) + "</span>"
	at := bodyStart(body)
	return body[:at] + span + body[at:]
}

// bodyStart is the offset just past the <body …> start tag, found with the HTML
// tokenizer so that "<body" in a comment or script does not count; 0 without one.
func bodyStart(body string) int {
	z := xhtml.NewTokenizer(strings.NewReader(body))
	off := 0
	for {
		tt := z.Next()
		if tt == xhtml.ErrorToken {
			return 0
		}
		off += len(z.Raw())
		if tt == xhtml.StartTagToken || tt == xhtml.SelfClosingTagToken {
			if name, _ := z.TagName(); string(name) == "body" {
				return off
			}
		}
	}
}
