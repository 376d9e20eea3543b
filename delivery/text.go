package delivery

import (
	"strings"
	"unicode"
	"unicode/utf8"

	"golang.org/x/net/html"
	"golang.org/x/net/html/atom"
)

// HTMLToText derives the text/plain alternative of an HTML mail: the readable text
// without tags, entities decoded, links written "text (url)", one blank line
// between paragraphs, list items prefixed "- ". The contents of head, style,
// script and of elements hidden with display:none (preheaders) are left out.
func HTMLToText(src string) string {
	w := textWriter{}
	z := html.NewTokenizer(strings.NewReader(src))

	var (
		skipName  string // element whose whole content is left out
		skipDepth int
		pre       int // depth inside <pre>
		links     []link
	)
	for {
		tt := z.Next()
		if tt == html.ErrorToken {
			break
		}
		if skipDepth > 0 {
			switch tt {
			case html.StartTagToken:
				if name, _ := z.TagName(); string(name) == skipName {
					skipDepth++
				}
			case html.EndTagToken:
				if name, _ := z.TagName(); string(name) == skipName {
					skipDepth--
				}
			}
			continue
		}
		switch tt {
		case html.TextToken:
			w.text(z.Text(), pre > 0)
		case html.StartTagToken, html.SelfClosingTagToken:
			// TagName and TagAttr instead of Token: no allocation for the many
			// tags whose attributes do not matter here.
			name, hasAttr := z.TagName()
			a := atom.Lookup(name)
			var at attrs
			if hasAttr {
				at = readAttrs(z)
			}
			if tt == html.StartTagToken && !isVoid(a) && (skipContent(a) || at.hidden) {
				skipName, skipDepth = string(name), 1
				continue
			}
			switch a {
			case atom.Br:
				w.newline(1)
			case atom.Hr:
				w.newline(2)
			case atom.Li:
				w.newline(1)
				w.raw("- ")
			case atom.Td, atom.Th:
				w.gap()
			case atom.Img:
				if strings.TrimSpace(at.alt) != "" {
					w.gap()
					w.text([]byte(at.alt), false)
					w.gap()
				}
			case atom.Pre:
				w.newline(2)
				if tt == html.StartTagToken {
					pre++
				}
			case atom.A:
				if tt == html.StartTagToken {
					links = append(links, link{href: strings.TrimSpace(at.href), start: w.b.Len()})
				}
			default:
				if n := blockBreak(a); n > 0 {
					w.newline(n)
				}
			}
		case html.EndTagToken:
			name, _ := z.TagName()
			a := atom.Lookup(name)
			switch a {
			case atom.A:
				if len(links) > 0 {
					l := links[len(links)-1]
					links = links[:len(links)-1]
					w.linkEnd(l)
				}
			case atom.Pre:
				if pre > 0 {
					pre--
				}
				w.newline(2)
			default:
				if n := blockBreak(a); n > 0 {
					w.newline(n)
				}
			}
		}
	}
	return w.String()
}

type link struct {
	href  string
	start int // length of the output when <a> opened
}

// attrs are the attributes HTMLToText looks at.
type attrs struct {
	href, alt string
	hidden    bool // styled display:none, as preheaders are
}

func readAttrs(z *html.Tokenizer) attrs {
	var at attrs
	for {
		key, val, more := z.TagAttr()
		switch string(key) {
		case "href":
			at.href = string(val)
		case "alt":
			at.alt = string(val)
		case "style":
			at.hidden = displayNone(val)
		}
		if !more {
			return at
		}
	}
}

// displayNone finds "display:none" in a style attribute, ignoring case and spaces.
func displayNone(style []byte) bool {
	const want = "display:none"
	for i := 0; i < len(style); i++ {
		j, k := i, 0
		for j < len(style) && k < len(want) {
			c := style[j]
			if c == ' ' || c == '\t' || c == '\n' || c == '\r' {
				if k == 0 {
					break
				}
				j++
				continue
			}
			if c|0x20 != want[k] && c != want[k] {
				break
			}
			j, k = j+1, k+1
		}
		if k == len(want) {
			return true
		}
	}
	return false
}

func skipContent(a atom.Atom) bool {
	switch a {
	case atom.Head, atom.Style, atom.Script, atom.Title, atom.Template, atom.Noscript:
		return true
	}
	return false
}

func isVoid(a atom.Atom) bool {
	switch a {
	case atom.Area, atom.Base, atom.Br, atom.Col, atom.Embed, atom.Hr, atom.Img, atom.Input,
		atom.Link, atom.Meta, atom.Source, atom.Track, atom.Wbr:
		return true
	}
	return false
}

// blockBreak is the number of line breaks an element's start or end causes:
// 2 for paragraphs (a blank line), 1 for rows and generic blocks.
func blockBreak(a atom.Atom) int {
	switch a {
	case atom.P, atom.H1, atom.H2, atom.H3, atom.H4, atom.H5, atom.H6, atom.Table,
		atom.Blockquote, atom.Ul, atom.Ol, atom.Dl:
		return 2
	case atom.Div, atom.Tr, atom.Section, atom.Article, atom.Header, atom.Footer,
		atom.Center, atom.Main, atom.Nav, atom.Aside, atom.Address, atom.Figure,
		atom.Figcaption, atom.Dt, atom.Dd, atom.Body:
		return 1
	}
	return 0
}

// textWriter collapses whitespace the way a browser does and turns pending
// breaks into at most one blank line.
type textWriter struct {
	b        strings.Builder
	newlines int  // line breaks asked for since the last text
	space    bool // a space asked for since the last text
}

func (w *textWriter) newline(n int) {
	if n > w.newlines {
		w.newlines = n
	}
}

func (w *textWriter) gap() { w.space = true }

// flush writes what was asked for before the next text; nothing at the start.
func (w *textWriter) flush() {
	if w.b.Len() == 0 {
		w.newlines, w.space = 0, false
		return
	}
	out := w.b.String()
	last := out[len(out)-1]
	if w.newlines > 0 {
		// Breaks already written count: "</p><p>" gives one blank line, not two.
		have := len(out) - len(strings.TrimRight(out, "\n"))
		if have < w.newlines {
			w.b.WriteString(strings.Repeat("\n", w.newlines-have))
		}
	} else if w.space && last != ' ' && last != '\n' {
		w.b.WriteByte(' ')
	}
	w.newlines, w.space = 0, false
}

func (w *textWriter) raw(s string) {
	w.flush()
	w.b.WriteString(s)
}

// text writes decoded text, collapsing runs of whitespace into one space outside
// <pre>, in one pass without allocating.
func (w *textWriter) text(s []byte, pre bool) {
	for len(s) > 0 {
		r, size := rune(s[0]), 1
		if r >= utf8.RuneSelf {
			r, size = utf8.DecodeRune(s)
		}
		s = s[size:]
		if r = cleanRune(r); r < 0 || (pre && r == '\r') {
			continue
		}
		if !pre && unicode.IsSpace(r) {
			w.space = true
			continue
		}
		if w.space || w.newlines > 0 || w.b.Len() == 0 {
			w.flush()
		}
		w.b.WriteRune(r)
	}
}

// linkEnd writes the URL after a link's text: "text (url)", or the URL alone for
// a link without text. Anchors, javascript: and a URL equal to its text add nothing.
func (w *textWriter) linkEnd(l link) {
	href := l.href
	if href == "" || strings.HasPrefix(href, "#") || strings.HasPrefix(strings.ToLower(href), "javascript:") {
		return
	}
	label := ""
	if l.start <= w.b.Len() {
		label = strings.TrimSpace(w.b.String()[l.start:])
	}
	shown := strings.TrimPrefix(href, "mailto:")
	if label == href || label == shown {
		return
	}
	if label == "" {
		w.raw(href)
		return
	}
	w.b.WriteString(" (" + href + ")")
}

// String returns the text with trailing spaces trimmed from every line.
func (w *textWriter) String() string {
	lines := strings.Split(w.b.String(), "\n")
	for i, l := range lines {
		lines[i] = strings.TrimRightFunc(l, unicode.IsSpace)
	}
	return strings.TrimSpace(strings.Join(lines, "\n"))
}

// cleanRune turns no-break spaces into spaces and drops the invisible characters
// that mail templates use to pad previews.
func cleanRune(r rune) rune {
	switch r {
	case '\u00a0', '\u2007', '\u202f':
		return ' '
	case '\u200b', '\u200c', '\u200d', '\u2060', '\ufeff', '\u034f', '\u00ad':
		return -1
	}
	return r
}
