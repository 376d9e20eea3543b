package delivery

import (
	"bytes"
	"errors"
	"io"
	"mime"
	"mime/multipart"
	"mime/quotedprintable"
	"net/mail"
	"strings"
	"testing"
	"time"

	"golang.org/x/net/html"
)

const sampleHTML = `<!DOCTYPE html>
<html><head><title>Ignored title</title><style>p { color: red }</style></head>
<body class="main">
<h1>Café au lait ☕ &amp; crème</h1>
<p>Hello Zoë,   our <a href="https://shop.example.com/offer?id=1&amp;x=2">spring offer</a> is here 🎉.</p>
<ul><li>First</li><li>Second</li></ul>
<p>Line one<br>line two</p>
</body></html>`

func sampleMessage() *Message {
	return &Message{
		From:               mail.Address{Name: "Café Zoë", Address: "news@shop.example.com"},
		ReplyTo:            "help@shop.example.com",
		To:                 mail.Address{Name: "Ana", Address: "ana@example.net"},
		Subject:            "Spring sale — 20% off ☀️",
		HTML:               sampleHTML,
		Preheader:          "Only this week: croissants & more",
		ListUnsubscribeURL: "https://herald.example.com/u/abc123?t=1",
		OneClick:           true,
		Headers:            []Header{{Name: "X-Herald-Send", Value: "42"}},
	}
}

// parsed is a built message read back the way a mail client would.
type parsed struct {
	header mail.Header
	text   string
	html   string
	ctypes []string
	cte    []string
}

func parse(t *testing.T, raw []byte) parsed {
	t.Helper()
	checkLines(t, raw)
	msg, err := mail.ReadMessage(bytes.NewReader(raw))
	if err != nil {
		t.Fatal(err)
	}
	mt, params, err := mime.ParseMediaType(msg.Header.Get("Content-Type"))
	if err != nil || mt != "multipart/alternative" {
		t.Fatalf("Content-Type %q: %v", msg.Header.Get("Content-Type"), err)
	}
	p := parsed{header: msg.Header}
	mr := multipart.NewReader(msg.Body, params["boundary"])
	for {
		part, err := mr.NextRawPart()
		if err == io.EOF {
			break
		}
		if err != nil {
			t.Fatal(err)
		}
		p.ctypes = append(p.ctypes, part.Header.Get("Content-Type"))
		p.cte = append(p.cte, part.Header.Get("Content-Transfer-Encoding"))
		body, err := io.ReadAll(quotedprintable.NewReader(part))
		if err != nil {
			t.Fatal(err)
		}
		// Text parts travel in canonical form, CRLF line breaks: back to LF.
		body = bytes.ReplaceAll(body, []byte("\r\n"), []byte("\n"))
		if strings.HasPrefix(part.Header.Get("Content-Type"), "text/html") {
			p.html = string(body)
		} else {
			p.text = string(body)
		}
	}
	return p
}

// checkLines: CRLF only, lines of at most 998 octets, 7-bit.
func checkLines(t *testing.T, raw []byte) {
	t.Helper()
	if !bytes.HasSuffix(raw, []byte("\r\n")) {
		t.Errorf("message does not end with CRLF")
	}
	for i, line := range bytes.Split(raw, []byte("\r\n")) {
		if len(line) > 998 {
			t.Errorf("line %d has %d octets", i+1, len(line))
		}
		if bytes.ContainsAny(line, "\r\n") {
			t.Errorf("line %d has a bare CR or LF: %q", i+1, line)
		}
		for _, c := range line {
			if c >= 0x80 {
				t.Errorf("line %d is not 7-bit: %q", i+1, line)
				break
			}
		}
	}
}

func TestBuild(t *testing.T) {
	t.Parallel()
	m := sampleMessage()
	raw, err := Build(m)
	if err != nil {
		t.Fatal(err)
	}
	p := parse(t, raw)
	h := p.header

	from, err := h.AddressList("From")
	if err != nil || len(from) != 1 || from[0].Name != "Café Zoë" || from[0].Address != "news@shop.example.com" {
		t.Errorf("From %q: %v %v", h.Get("From"), from, err)
	}
	if rt, err := h.AddressList("Reply-To"); err != nil || rt[0].Address != "help@shop.example.com" {
		t.Errorf("Reply-To %q", h.Get("Reply-To"))
	}
	if to, err := h.AddressList("To"); err != nil || to[0].Address != "ana@example.net" || to[0].Name != "Ana" {
		t.Errorf("To %q", h.Get("To"))
	}
	subject, err := new(mime.WordDecoder).DecodeHeader(h.Get("Subject"))
	if err != nil || subject != m.Subject {
		t.Errorf("Subject %q decodes to %q (%v)", h.Get("Subject"), subject, err)
	}
	if d, err := h.Date(); err != nil || time.Since(d) > time.Minute {
		t.Errorf("Date %q: %v", h.Get("Date"), err)
	}
	id := h.Get("Message-ID")
	if id != m.MessageID || !strings.HasPrefix(id, "<") || !strings.HasSuffix(id, "@shop.example.com>") {
		t.Errorf("Message-ID %q (recorded %q)", id, m.MessageID)
	}
	if h.Get("MIME-Version") != "1.0" {
		t.Errorf("MIME-Version %q", h.Get("MIME-Version"))
	}
	if got := h.Get("List-Unsubscribe"); got != "<https://herald.example.com/u/abc123?t=1>" {
		t.Errorf("List-Unsubscribe %q", got)
	}
	if got := h.Get("List-Unsubscribe-Post"); got != "List-Unsubscribe=One-Click" {
		t.Errorf("List-Unsubscribe-Post %q", got)
	}
	if got := h.Get("X-Herald-Send"); got != "42" {
		t.Errorf("X-Herald-Send %q", got)
	}

	if len(p.ctypes) != 2 || p.ctypes[0] != "text/plain; charset=utf-8" || p.ctypes[1] != "text/html; charset=utf-8" {
		t.Fatalf("parts %q", p.ctypes)
	}
	for _, cte := range p.cte {
		if cte != "quoted-printable" {
			t.Errorf("Content-Transfer-Encoding %q", cte)
		}
	}
	// The HTML decodes back to the original, UTF-8 intact, after the preheader.
	if !strings.Contains(p.html, `<body class="main">`) || !strings.HasSuffix(p.html, sampleHTML[strings.Index(sampleHTML, `<body class="main">`)+len(`<body class="main">`):]) {
		t.Errorf("HTML part does not end with the original body:\n%s", p.html)
	}
	if strings.Replace(p.html, preheaderSpan(t, p.html), "", 1) != sampleHTML {
		t.Errorf("HTML minus the preheader differs from the original")
	}
	for _, want := range []string{"Café au lait ☕ & crème", "Hello Zoë, our spring offer (https://shop.example.com/offer?id=1&x=2) is here 🎉.", "- First\n- Second", "Line one\nline two"} {
		if !strings.Contains(p.text, want) {
			t.Errorf("text part lacks %q:\n%s", want, p.text)
		}
	}
	for _, unwanted := range []string{"<", "Ignored title", "color: red", "croissants"} {
		if strings.Contains(p.text, unwanted) {
			t.Errorf("text part has %q:\n%s", unwanted, p.text)
		}
	}
}

// preheaderSpan finds the preheader by parsing the HTML: the first element in
// <body>, hidden, holding the preheader text. It returns the span's source.
func preheaderSpan(t *testing.T, src string) string {
	t.Helper()
	doc, err := html.Parse(strings.NewReader(src))
	if err != nil {
		t.Fatal(err)
	}
	var body *html.Node
	for n := range doc.Descendants() {
		if n.Type == html.ElementNode && n.Data == "body" {
			body = n
			break
		}
	}
	if body == nil {
		t.Fatal("no body")
	}
	first := body.FirstChild
	for first != nil && first.Type != html.ElementNode {
		first = first.NextSibling
	}
	if first == nil || first.Data != "span" {
		t.Fatalf("first element of body is %v", first)
	}
	style := ""
	for _, a := range first.Attr {
		if a.Key == "style" {
			style = a.Val
		}
	}
	if !strings.Contains(style, "display:none") || !strings.Contains(style, "mso-hide:all") {
		t.Errorf("preheader style %q does not hide it", style)
	}
	var text strings.Builder
	for n := range first.Descendants() {
		if n.Type == html.TextNode {
			text.WriteString(n.Data)
		}
	}
	if !strings.HasPrefix(text.String(), "Only this week: croissants & more") {
		t.Errorf("preheader text %q", text.String())
	}
	start := strings.Index(src, "<span style=")
	end := strings.Index(src[start:], "</span>")
	return src[start : start+end+len("</span>")]
}

func TestBuildMessageIDUnique(t *testing.T) {
	t.Parallel()
	seen := map[string]bool{}
	for i := 0; i < 200; i++ {
		raw, err := Build(sampleMessage())
		if err != nil {
			t.Fatal(err)
		}
		msg, _ := mail.ReadMessage(bytes.NewReader(raw))
		id := msg.Header.Get("Message-ID")
		if seen[id] {
			t.Fatalf("Message-ID %s repeated", id)
		}
		seen[id] = true
	}
}

func TestBuildVariants(t *testing.T) {
	t.Parallel()
	t.Run("given text, id and date are kept", func(t *testing.T) {
		m := sampleMessage()
		m.Text = "Plain version, ünïcode."
		m.MessageID = "fixed.1@shop.example.com"
		m.Date = time.Date(2026, 3, 1, 9, 30, 0, 0, time.UTC)
		raw, err := Build(m)
		if err != nil {
			t.Fatal(err)
		}
		p := parse(t, raw)
		if p.text != m.Text {
			t.Errorf("text %q", p.text)
		}
		if got := p.header.Get("Message-ID"); got != "<fixed.1@shop.example.com>" {
			t.Errorf("Message-ID %q", got)
		}
		if got := p.header.Get("Date"); got != "Sun, 01 Mar 2026 09:30:00 +0000" {
			t.Errorf("Date %q", got)
		}
	})
	t.Run("no body tag: preheader first; no unsubscribe headers", func(t *testing.T) {
		m := sampleMessage()
		m.HTML = "<p>Just a fragment</p>"
		m.ListUnsubscribeURL, m.OneClick, m.ReplyTo = "", false, ""
		raw, err := Build(m)
		if err != nil {
			t.Fatal(err)
		}
		p := parse(t, raw)
		if !strings.HasPrefix(p.html, "<span style=") || !strings.HasSuffix(p.html, "</span><p>Just a fragment</p>") {
			t.Errorf("html %q", p.html)
		}
		for _, k := range []string{"List-Unsubscribe", "List-Unsubscribe-Post", "Reply-To"} {
			if v, ok := p.header[k]; ok {
				t.Errorf("%s present: %q", k, v)
			}
		}
		if p.text != "Just a fragment" {
			t.Errorf("text %q", p.text)
		}
	})
	t.Run("list-unsubscribe without one-click", func(t *testing.T) {
		m := sampleMessage()
		m.OneClick = false
		raw, err := Build(m)
		if err != nil {
			t.Fatal(err)
		}
		p := parse(t, raw)
		if p.header.Get("List-Unsubscribe") == "" || p.header.Get("List-Unsubscribe-Post") != "" {
			t.Errorf("headers %v", p.header)
		}
	})
	t.Run("long subject and long lines are folded and wrapped", func(t *testing.T) {
		m := sampleMessage()
		m.Subject = strings.Repeat("Très long sujet ", 80)
		m.HTML = "<p>" + strings.Repeat("x", 5000) + "</p>\n<p>" + strings.Repeat("é", 3000) + "</p>"
		raw, err := Build(m)
		if err != nil {
			t.Fatal(err)
		}
		p := parse(t, raw) // checks every line is ≤ 998
		if got, _ := new(mime.WordDecoder).DecodeHeader(p.header.Get("Subject")); got != m.Subject {
			t.Errorf("subject does not round-trip: %q", got)
		}
		if !strings.HasSuffix(p.html, m.HTML) {
			t.Errorf("html does not round-trip")
		}
	})
	t.Run("line breaks in the subject cannot add headers", func(t *testing.T) {
		m := sampleMessage()
		m.Subject = "Hi\r\nBcc: victim@example.org"
		raw, err := Build(m)
		if err != nil {
			t.Fatal(err)
		}
		p := parse(t, raw)
		if p.header.Get("Bcc") != "" || p.header.Get("Subject") != "Hi Bcc: victim@example.org" {
			t.Errorf("subject %q, bcc %q", p.header.Get("Subject"), p.header.Get("Bcc"))
		}
	})
}

func TestBuildRefuses(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name   string
		change func(m *Message)
	}{
		{"no from", func(m *Message) { m.From.Address = "" }},
		{"bad to", func(m *Message) { m.To.Address = "not an address" }},
		{"to with angle brackets", func(m *Message) { m.To.Address = "<a@example.net>" }},
		{"bad reply-to", func(m *Message) { m.ReplyTo = "x" }},
		{"name with newline", func(m *Message) { m.From.Name = "A\nB" }},
		{"mailto unsubscribe", func(m *Message) { m.ListUnsubscribeURL = "mailto:u@example.com" }},
		{"unsubscribe with spaces", func(m *Message) { m.ListUnsubscribeURL = "https://x.example/a b" }},
		{"one-click without url", func(m *Message) { m.ListUnsubscribeURL = "" }},
		{"header injection", func(m *Message) { m.Headers = []Header{{"X-A", "1\r\nBcc: x@example.org"}} }},
		{"bad header name", func(m *Message) { m.Headers = []Header{{"X A", "1"}} }},
		{"reserved header", func(m *Message) { m.Headers = []Header{{"subject", "again"}} }},
		{"bad message id", func(m *Message) { m.MessageID = "no at sign" }},
		{"overlong header", func(m *Message) { m.Headers = []Header{{"X-Long", strings.Repeat("a", 1200)}} }},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			m := sampleMessage()
			tt.change(m)
			if _, err := Build(m); !errors.Is(err, ErrInvalidMessage) {
				t.Fatalf("err = %v, want ErrInvalidMessage", err)
			}
		})
	}
}

func TestHTMLToText(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name, html, want string
	}{
		{"entities and whitespace", "<p>Fish &amp; chips\n\n   &lt;hot&gt;&nbsp;now</p>", "Fish & chips <hot> now"},
		{"paragraphs", "<p>One</p><p>Two</p>\n<div>Three</div>", "One\n\nTwo\n\nThree"},
		{"link", `Read <a href="https://x.example/a">the post</a>.`, "Read the post (https://x.example/a)."},
		{"link equal to its text", `<a href="https://x.example/">https://x.example/</a>`, "https://x.example/"},
		{"mailto", `<a href="mailto:hi@x.example">hi@x.example</a>`, "hi@x.example"},
		{"image link", `<a href="https://x.example/"><img src="logo.png" alt=""></a>`, "https://x.example/"},
		{"image alt between words", `Hi<img alt="wave">there`, "Hi wave there"},
		{"image alt in link", `<a href="https://x.example/"><img src="logo.png" alt="Logo"></a>`, "Logo (https://x.example/)"},
		{"anchor link", `<a href="#top">Top</a>`, "Top"},
		{"placeholder link", `<a href="((unsubscribe_preferences))">Unsubscribe</a>`, "Unsubscribe (((unsubscribe_preferences)))"},
		{"table cells", "<table><tr><td>A</td><td>B</td></tr><tr><td>C</td><td>D</td></tr></table>", "A B\nC D"},
		{"list", "<ol><li>x</li><li> y </li></ol>", "- x\n- y"},
		{"hidden preheader", `<body><div style="display: none; max-height:0">preview</div><p>Body</p></body>`, "Body"},
		{"nested hidden", `<div style="DISPLAY:NONE"><div>a</div><div>b</div></div>c`, "c"},
		{"script and style", "<style>.a{}</style><script>alert(1)</script>ok", "ok"},
		{"invisible padding", "Hi&zwnj;&#847;&nbsp;there", "Hi there"},
		{"pre keeps lines", "<pre>a  b\n  c</pre>", "a  b\n  c"},
		{"br", "a<br/>b<br>c", "a\nb\nc"},
		{"unclosed tags", "<p>open <b>bold", "open bold"},
		{"empty", "", ""},
		{"text only", "just text", "just text"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := HTMLToText(tt.html); got != tt.want {
				t.Errorf("HTMLToText(%q)\n got %q\nwant %q", tt.html, got, tt.want)
			}
		})
	}
}

func FuzzHTMLToText(f *testing.F) {
	f.Add(sampleHTML)
	f.Add(`<a href="x"><a href="y">z</a></a></p></div>`)
	f.Add("<pre><pre></pre>")
	f.Fuzz(func(t *testing.T, s string) {
		out := HTMLToText(s)
		if strings.Contains(out, "\n\n\n") {
			t.Fatalf("more than one blank line: %q", out)
		}
	})
}
