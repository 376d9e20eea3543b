package delivery

import (
	"html"
	"strings"
)

// Template is a text with ((name)) placeholders, parsed once by Compile and then
// rendered for every recipient without parsing again. A Template is immutable and
// safe for concurrent use.
type Template struct {
	parts   []part
	literal int // bytes of literal text, to size the output once
	holes   int // placeholders, counting repeats
	names   []string
}

// part is either literal text or, when isName is set, a placeholder name.
type part struct {
	text   string
	isName bool
}

// Compile parses template for placeholders written ((name)), where name is one or
// more ASCII letters, digits or underscores (the characters custom field names may
// hold), optionally after "data." (((data.plan)): a key of an automation
// trigger's data). Anything else, including "(( name ))" or an unclosed "((", is literal
// text. Compile never fails.
func Compile(template string) *Template {
	t := &Template{}
	seen := map[string]bool{}
	start := 0 // beginning of the pending literal text
	i := 0
	for {
		j := strings.Index(template[i:], "((")
		if j < 0 {
			break
		}
		open := i + j
		name, end, ok := scanPlaceholder(template, open)
		if !ok {
			// Only the first "(" is literal: "(((a))" holds the placeholder "a".
			i = open + 1
			continue
		}
		if open > start {
			t.addLiteral(template[start:open])
		}
		t.parts = append(t.parts, part{text: name, isName: true})
		t.holes++
		if !seen[name] {
			seen[name] = true
			t.names = append(t.names, name)
		}
		start, i = end, end
	}
	if start < len(template) {
		t.addLiteral(template[start:])
	}
	return t
}

func (t *Template) addLiteral(s string) {
	t.parts = append(t.parts, part{text: s})
	t.literal += len(s)
}

// scanPlaceholder reads "((name))" at s[open:] and returns the name and the index
// just past the closing parentheses.
func scanPlaceholder(s string, open int) (name string, end int, ok bool) {
	k := open + 2
	if strings.HasPrefix(s[k:], DataPrefix) {
		k += len(DataPrefix)
	}
	first := k
	for k < len(s) && isNameByte(s[k]) {
		k++
	}
	if k == first || !strings.HasPrefix(s[k:], "))") {
		return "", 0, false
	}
	return s[open+2 : k], k + 2, true
}

// DataPrefix starts the name of a placeholder filled from an automation
// trigger's data: ((data.plan)) is the key "plan".
const DataPrefix = "data."

func isNameByte(c byte) bool {
	return c == '_' || ('0' <= c && c <= '9') || ('a' <= c && c <= 'z') || ('A' <= c && c <= 'Z')
}

// Names returns the distinct placeholder names in the order they first appear, so
// that a caller can load only the fields a template uses.
func (t *Template) Names() []string {
	return append([]string(nil), t.names...)
}

// Render returns the template with every placeholder replaced by lookup(name).
// lookup decides what an unknown name becomes (decisions.md: the empty string).
func (t *Template) Render(lookup func(name string) string) string {
	var b strings.Builder
	t.Execute(&b, lookup)
	return b.String()
}

// Execute appends the rendered template to b; see Render.
func (t *Template) Execute(b *strings.Builder, lookup func(name string) string) {
	if len(t.parts) == 1 && !t.parts[0].isName {
		b.WriteString(t.parts[0].text)
		return
	}
	// Values are usually short next to the literal text: growing once by the
	// literal size plus a margin avoids most reallocations.
	b.Grow(t.literal + 16*t.holes)
	for _, p := range t.parts {
		if p.isName {
			b.WriteString(lookup(p.text))
		} else {
			b.WriteString(p.text)
		}
	}
}

// HTMLEscaped wraps lookup so that every value is HTML-escaped, which is what a
// placeholder inside an HTML body (text or attribute) needs; subjects and text
// parts take the raw values.
func HTMLEscaped(lookup func(name string) string) func(name string) string {
	return func(name string) string { return html.EscapeString(lookup(name)) }
}
