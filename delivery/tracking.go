package delivery

import (
	"crypto/hmac"
	"crypto/sha256"
	"encoding/base64"
	"encoding/binary"
	"html"
	"net/url"
	"strings"

	xhtml "golang.org/x/net/html"
)

// TrackLinks rewrites the href of every <a> whose link is http(s) to
// rewrite(i, href), where i is the link's index in the returned list of
// original hrefs (the same href twice gets one index). Other links
// (mailto:, anchors, placeholders such as ((unsubscribe_preferences)))
// stay as they are. The rest of the document is kept byte for byte.
func TrackLinks(doc string, rewrite func(i int, href string) string) (string, []string) {
	return walkLinks(doc, func(i int, href string) (string, string) { return rewrite(i, href), "" })
}

// MarkLinks inserts mark(i) at the start of the content of every link
// TrackLinks would track, where i is the index TrackLinks gives it (the
// index in a send's links): the click map draws each link's clicks there.
// mark's answer is written as it is (HTML). Hrefs and the rest of the
// document stay as they are.
func MarkLinks(doc string, mark func(i int) string) string {
	out, _ := walkLinks(doc, func(i int, href string) (string, string) { return href, mark(i) })
	return out
}

// walkLinks writes doc with the href of each trackable link replaced by
// edit's first answer and its second written after the link's start tag.
func walkLinks(doc string, edit func(i int, href string) (string, string)) (string, []string) {
	var b strings.Builder
	b.Grow(len(doc) + len(doc)/8)
	var links []string
	index := map[string]int{}
	z := xhtml.NewTokenizer(strings.NewReader(doc))
	for {
		tt := z.Next()
		if tt == xhtml.ErrorToken {
			break
		}
		raw := z.Raw()
		if tt != xhtml.StartTagToken && tt != xhtml.SelfClosingTagToken {
			b.Write(raw)
			continue
		}
		// Token() copies the raw bytes the tokenizer reuses: write raw first.
		tagRaw := string(raw)
		tok := z.Token()
		if tok.Data != "a" {
			b.WriteString(tagRaw)
			continue
		}
		hrefAt := -1
		for k, a := range tok.Attr {
			if a.Namespace == "" && strings.EqualFold(a.Key, "href") {
				hrefAt = k
				break
			}
		}
		if hrefAt < 0 || !trackable(tok.Attr[hrefAt].Val) {
			b.WriteString(tagRaw)
			continue
		}
		href := strings.TrimSpace(tok.Attr[hrefAt].Val)
		i, ok := index[href]
		if !ok {
			i = len(links)
			index[href] = i
			links = append(links, href)
		}
		var after string
		tok.Attr[hrefAt].Val, after = edit(i, href)
		b.WriteByte('<')
		b.WriteString(tok.Data)
		for _, a := range tok.Attr {
			b.WriteByte(' ')
			b.WriteString(a.Key)
			b.WriteString(`="`)
			b.WriteString(html.EscapeString(a.Val))
			b.WriteByte('"')
		}
		if tt == xhtml.SelfClosingTagToken {
			b.WriteByte('/')
		}
		b.WriteByte('>')
		b.WriteString(after)
	}
	return b.String(), links
}

// trackable reports whether a link is rewritten through the click
// redirect: an http(s) link that SafeRedirect accepts. A link carrying a
// control character stays as written (decisions.md 8): its target would
// otherwise reach the redirect's Location header.
func trackable(href string) bool {
	_, ok := SafeRedirect(strings.TrimSpace(href))
	return ok
}

// SafeRedirect returns target as a Location header may carry it, and
// whether it is one: an absolute http or https URL with a host and no
// control character (CR and LF above all: they would end the header and
// start another, such as a Set-Cookie on herald's own domain), no space
// and no backslash. Anything else is refused, not repaired.
func SafeRedirect(target string) (string, bool) {
	for i := 0; i < len(target); i++ {
		if c := target[i]; c < 0x21 || c == 0x7f || c == '\\' {
			return "", false
		}
	}
	for _, r := range target {
		if r == '\u0085' || r == '\u2028' || r == '\u2029' || (r >= 0x80 && r <= 0x9f) {
			return "", false
		}
	}
	u, err := url.Parse(target)
	if err != nil || u.Host == "" || u.User != nil {
		return "", false
	}
	if scheme := strings.ToLower(u.Scheme); scheme != "http" && scheme != "https" {
		return "", false
	}
	return target, true
}

// URLValue is a placeholder's value as it goes into a link: the bytes a
// URL may not carry (controls, spaces, quotes, angle brackets, backslash,
// non-ASCII) percent-encoded, everything else (such as the @ of an address
// or the & of a query) as it is, so that a contact's value neither breaks
// the link nor reaches the redirect's header raw.
func URLValue(v string) string {
	clean := true
	for i := 0; i < len(v); i++ {
		if urlUnsafe(v[i]) {
			clean = false
			break
		}
	}
	if clean {
		return v
	}
	const hexDigits = "0123456789ABCDEF"
	var b strings.Builder
	b.Grow(len(v) + 8)
	for i := 0; i < len(v); i++ {
		c := v[i]
		if urlUnsafe(c) {
			b.WriteByte('%')
			b.WriteByte(hexDigits[c>>4])
			b.WriteByte(hexDigits[c&15])
			continue
		}
		b.WriteByte(c)
	}
	return b.String()
}

func urlUnsafe(c byte) bool {
	return c < 0x21 || c >= 0x7f || c == '"' || c == '<' || c == '>' || c == '\\' || c == '`' || c == '{' || c == '}' || c == '|' || c == '^'
}

// AddPixel puts an invisible 1x1 image of src just before </body>, or at
// the end when there is none.
func AddPixel(doc, src string) string {
	img := `<img src="` + html.EscapeString(src) + `" width="1" height="1" alt="" style="display:block;width:1px;height:1px;border:0">`
	if i := strings.LastIndex(strings.ToLower(doc), "</body"); i >= 0 {
		return doc[:i] + img + doc[i:]
	}
	return doc + img
}

// InsertPreheader puts the hidden preview text at the start of the body,
// as Build does for Message.Preheader. Senders that render one template
// for many recipients call it once and leave Message.Preheader empty.
func InsertPreheader(doc, preheader string) string {
	if strings.TrimSpace(preheader) == "" {
		return doc
	}
	return insertPreheader(doc, preheader)
}

// tokenMAC is how many bytes of HMAC-SHA256 a token carries: 96 bits make
// guessing a valid token hopeless.
const tokenMAC = 12

// SignToken makes the public token of a ledger row: its id and a MAC under
// key, base64url. Tracking and unsubscribe links carry it.
func SignToken(key []byte, id int64) string {
	var buf [8 + tokenMAC]byte
	binary.BigEndian.PutUint64(buf[:8], uint64(id))
	m := hmac.New(sha256.New, key)
	m.Write(buf[:8])
	copy(buf[8:], m.Sum(nil))
	return base64.RawURLEncoding.EncodeToString(buf[:])
}

// ParseToken returns the ledger id of a token SignToken made with key.
func ParseToken(key []byte, tok string) (int64, bool) {
	buf, err := base64.RawURLEncoding.DecodeString(tok)
	if err != nil || len(buf) != 8+tokenMAC {
		return 0, false
	}
	m := hmac.New(sha256.New, key)
	m.Write(buf[:8])
	if !hmac.Equal(m.Sum(nil)[:tokenMAC], buf[8:]) {
		return 0, false
	}
	id := int64(binary.BigEndian.Uint64(buf[:8]))
	return id, id > 0
}
