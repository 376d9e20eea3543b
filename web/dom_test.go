package web_test

import (
	"strings"

	"golang.org/x/net/html"
)

// A small subset of CSS selectors to read pages in tests: compound
// selectors (tag, #id, .class, [attr], [attr=value], [attr$=value])
// joined by the descendant combinator (a space).

type compound struct {
	tag     string
	id      string
	classes []string
	attrs   []attrTest
}

type attrTest struct {
	name, op, value string // op: "" (present), "=", "$=", "^=", "*="
}

func parseSelector(sel string) []compound {
	var out []compound
	for _, part := range splitOutsideBrackets(sel) {
		var c compound
		for part != "" {
			switch part[0] {
			case '#', '.':
				end := strings.IndexAny(part[1:], "#.[")
				if end < 0 {
					end = len(part) - 1
				}
				name := part[1 : end+1]
				if part[0] == '#' {
					c.id = name
				} else {
					c.classes = append(c.classes, name)
				}
				part = part[end+1:]
			case '[':
				end := strings.IndexByte(part, ']')
				body := part[1:end]
				part = part[end+1:]
				t := attrTest{name: body}
				for _, op := range []string{"$=", "^=", "*=", "="} {
					if i := strings.Index(body, op); i > 0 {
						t = attrTest{name: body[:i], op: op, value: strings.Trim(body[i+len(op):], `"'`)}
						break
					}
				}
				c.attrs = append(c.attrs, t)
			default:
				end := strings.IndexAny(part, "#.[")
				if end < 0 {
					end = len(part)
				}
				c.tag = part[:end]
				part = part[end:]
			}
		}
		out = append(out, c)
	}
	return out
}

func splitOutsideBrackets(s string) []string {
	var parts []string
	depth, start := 0, 0
	for i, r := range s {
		switch {
		case r == '[':
			depth++
		case r == ']':
			depth--
		case r == ' ' && depth == 0:
			if i > start {
				parts = append(parts, s[start:i])
			}
			start = i + 1
		}
	}
	if start < len(s) {
		parts = append(parts, s[start:])
	}
	return parts
}

func (c compound) matches(n *html.Node) bool {
	if n.Type != html.ElementNode {
		return false
	}
	if c.tag != "" && n.Data != c.tag {
		return false
	}
	if c.id != "" && attr(n, "id") != c.id {
		return false
	}
	for _, cl := range c.classes {
		if !hasClass(n, cl) {
			return false
		}
	}
	for _, a := range c.attrs {
		v, ok := attrOK(n, a.name)
		if !ok {
			return false
		}
		switch a.op {
		case "=":
			ok = v == a.value
		case "$=":
			ok = strings.HasSuffix(v, a.value)
		case "^=":
			ok = strings.HasPrefix(v, a.value)
		case "*=":
			ok = strings.Contains(v, a.value)
		}
		if !ok {
			return false
		}
	}
	return true
}

// all returns the elements under root that match sel, in document order.
func all(root *html.Node, sel string) []*html.Node {
	if root == nil {
		return nil
	}
	chain := parseSelector(sel)
	var out []*html.Node
	var walk func(n *html.Node)
	walk = func(n *html.Node) {
		for ch := n.FirstChild; ch != nil; ch = ch.NextSibling {
			if chain[len(chain)-1].matches(ch) && ancestorsMatch(ch.Parent, chain[:len(chain)-1]) {
				out = append(out, ch)
			}
			walk(ch)
		}
	}
	walk(root)
	return out
}

// ancestorsMatch reports whether the ancestors of n (from n up) hold the
// chain, its last compound nearest.
func ancestorsMatch(n *html.Node, chain []compound) bool {
	if len(chain) == 0 {
		return true
	}
	for p := n; p != nil; p = p.Parent {
		if chain[len(chain)-1].matches(p) {
			return ancestorsMatch(p.Parent, chain[:len(chain)-1])
		}
	}
	return false
}

// first returns the first element under root matching sel, or nil.
func first(root *html.Node, sel string) *html.Node {
	if m := all(root, sel); len(m) > 0 {
		return m[0]
	}
	return nil
}

func attrOK(n *html.Node, key string) (string, bool) {
	if n == nil {
		return "", false
	}
	for _, a := range n.Attr {
		if a.Key == key {
			return a.Val, true
		}
	}
	return "", false
}

func attr(n *html.Node, key string) string {
	v, _ := attrOK(n, key)
	return v
}

func hasClass(n *html.Node, class string) bool {
	for _, c := range strings.Fields(attr(n, "class")) {
		if c == class {
			return true
		}
	}
	return false
}

// text is the text of n and its descendants, spaces collapsed.
func text(n *html.Node) string {
	if n == nil {
		return ""
	}
	var b strings.Builder
	var walk func(*html.Node)
	walk = func(n *html.Node) {
		if n.Type == html.TextNode {
			b.WriteString(n.Data)
			b.WriteByte(' ')
		}
		for c := n.FirstChild; c != nil; c = c.NextSibling {
			walk(c)
		}
	}
	walk(n)
	return strings.Join(strings.Fields(b.String()), " ")
}

// texts returns the text of every element matching sel.
func texts(root *html.Node, sel string) []string {
	var out []string
	for _, n := range all(root, sel) {
		out = append(out, text(n))
	}
	return out
}

// value is the value of the input (or text of the textarea) matching sel.
func value(root *html.Node, sel string) string {
	n := first(root, sel)
	if n != nil && n.Data == "textarea" {
		return text(n)
	}
	return attr(n, "value")
}
