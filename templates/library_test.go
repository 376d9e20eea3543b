package templates

import (
	"image/png"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"

	"golang.org/x/net/html"
	"golang.org/x/net/html/atom"
)

// placeholders are the names a library design may use: the contact fields
// and sender values of the spec's dynamic content (custom fields differ per
// account, so no library design relies on one).
var placeholders = []string{
	"first_name", "last_name", "email", "alt_email", "country", "state", "city",
	"address_line1", "address_line2", "state_province_region", "postal_code",
	"sender_name", "sender_address", "unsubscribe_preferences", "view_in_browser",
}

var placeholderRE = regexp.MustCompile(`\(\(([^()]*)\)\)`)

// external matches a reference that would make a mail client fetch
// something: an absolute or scheme-relative URL.
var external = regexp.MustCompile(`(?i)^\s*(https?:)?//`)

// cssURL matches url(...) and @import in CSS, whatever they point at.
var cssURL = regexp.MustCompile(`(?i)url\s*\(|@import`)

const maxThumbBytes = 80 << 10

func TestLibrary(t *testing.T) {
	designs, err := Library()
	if err != nil {
		t.Fatal(err)
	}
	if len(designs) < 7 {
		t.Fatalf("library has %d designs, want the blank one and at least six more", len(designs))
	}
	names := map[string]bool{}
	for i, d := range designs {
		if d.ID != int64(i+1) {
			t.Errorf("design %d has id %d", i, d.ID)
		}
		if want := boolInt(d.ID == 1); d.IsBlank != want {
			t.Errorf("design %d: is_blank %d, want %d", d.ID, d.IsBlank, want)
		}
		if d.Name == "" || names[d.Name] {
			t.Errorf("design %d: name %q is empty or repeated", d.ID, d.Name)
		}
		names[d.Name] = true
	}

	// The slice is the caller's own.
	designs[0].Name = "changed"
	again, err := Library()
	if err != nil {
		t.Fatal(err)
	}
	if again[0].Name == "changed" {
		t.Error("Library returned shared state")
	}
}

func TestDesigns(t *testing.T) {
	designs, err := Library()
	if err != nil {
		t.Fatal(err)
	}
	for _, d := range designs {
		t.Run(d.File, func(t *testing.T) {
			checkTokens(t, d.HTML)

			doc, err := html.Parse(strings.NewReader(d.HTML))
			if err != nil {
				t.Fatalf("parse: %v", err)
			}
			checkDocument(t, doc, d)
			checkPlaceholders(t, d)
			checkThumbnail(t, d)
		})
	}
}

// checkTokens checks what the parser would silently repair: the doctype
// comes first, and every element that is opened is closed, in order.
func checkTokens(t *testing.T, src string) {
	t.Helper()
	z := html.NewTokenizer(strings.NewReader(src))
	var open []string
	first := true
	for {
		tt := z.Next()
		if tt == html.ErrorToken {
			break
		}
		tok := z.Token()
		if first && tt != html.TextToken {
			first = false
			if tt != html.DoctypeToken || !strings.EqualFold(tok.Data, "html") {
				t.Errorf("document does not start with <!doctype html>, starts with %v %q", tt, tok.Data)
			}
		}
		switch tt {
		case html.StartTagToken:
			if !isVoid(tok.DataAtom) {
				open = append(open, tok.Data)
			}
		case html.EndTagToken:
			if len(open) == 0 || open[len(open)-1] != tok.Data {
				t.Errorf("</%s> closes %v", tok.Data, open)
				return
			}
			open = open[:len(open)-1]
		}
	}
	if len(open) > 0 {
		t.Errorf("elements left open: %v", open)
	}
}

func checkDocument(t *testing.T, doc *html.Node, d Design) {
	t.Helper()
	var (
		lang, charset, viewport, unsubscribe, maxWidth bool
		styles                                         int
	)
	for n := range doc.Descendants() {
		if n.Type != html.ElementNode {
			continue
		}
		switch n.DataAtom {
		case atom.Html:
			lang = attr(n, "lang") != ""
		case atom.Meta:
			if attr(n, "charset") != "" {
				charset = strings.EqualFold(attr(n, "charset"), "utf-8")
			}
			if attr(n, "name") == "viewport" {
				viewport = strings.Contains(attr(n, "content"), "width=device-width")
			}
		case atom.Script:
			t.Error("has a <script>")
		case atom.Link:
			t.Errorf("has a <link href=%q>: a mail must not load stylesheets", attr(n, "href"))
		case atom.Style:
			styles++
			if n.Parent == nil || n.Parent.DataAtom != atom.Head {
				t.Error("<style> outside <head>")
			}
			if n.FirstChild != nil && cssURL.MatchString(n.FirstChild.Data) {
				t.Errorf("<style> refers to a resource: %q", n.FirstChild.Data)
			}
		case atom.Img:
			if _, ok := attrOK(n, "alt"); !ok {
				t.Errorf("<img src=%q> has no alt", attr(n, "src"))
			}
		case atom.A:
			href := attr(n, "href")
			if href == "((unsubscribe_preferences))" {
				unsubscribe = true
			}
			if href == "" {
				t.Error("<a> without href")
			}
		}
		for _, a := range n.Attr {
			switch a.Key {
			case "src", "srcset", "background", "poster", "data", "action", "formaction":
				if external.MatchString(a.Val) {
					t.Errorf("<%s %s=%q> refers to an external resource", n.Data, a.Key, a.Val)
				}
			case "style":
				if cssURL.MatchString(a.Val) {
					t.Errorf("<%s style=%q> refers to a resource", n.Data, a.Val)
				}
				if n.DataAtom == atom.Table && strings.Contains(strings.ReplaceAll(a.Val, " ", ""), "max-width:600px") {
					maxWidth = true
				}
			}
		}
	}
	for _, c := range []struct {
		ok   bool
		what string
	}{
		{lang, "<html lang>"},
		{charset, `<meta charset="utf-8">`},
		{viewport, `<meta name="viewport" content="width=device-width…">`},
		{unsubscribe, `<a href="((unsubscribe_preferences))">`},
		{maxWidth, "a table of max-width 600px"},
	} {
		if !c.ok {
			t.Errorf("missing %s", c.what)
		}
	}
	if styles > 1 {
		t.Errorf("%d <style> blocks; want at most one (media queries), the rest inline", styles)
	}
}

func checkPlaceholders(t *testing.T, d Design) {
	t.Helper()
	used := map[string]bool{}
	for _, m := range placeholderRE.FindAllStringSubmatch(d.HTML, -1) {
		if !slices.Contains(placeholders, m[1]) {
			t.Errorf("unknown placeholder %s", m[0])
		}
		used[m[1]] = true
	}
	if n := strings.Count(d.HTML, "(("); n != len(placeholderRE.FindAllString(d.HTML, -1)) {
		t.Errorf("a stray (( that is not a well-formed placeholder")
	}
	want := []string{"sender_name", "sender_address", "unsubscribe_preferences"}
	if d.IsBlank == 0 {
		// Every finished design offers the web copy of the mail too.
		want = append(want, "first_name", "view_in_browser")
	}
	for _, name := range want {
		if !used[name] {
			t.Errorf("does not use ((%s))", name)
		}
	}
}

func checkThumbnail(t *testing.T, d Design) {
	t.Helper()
	if d.PreviewImage == "" || filepath.Base(d.PreviewImage) != d.PreviewImage {
		t.Fatalf("preview image %q is not a plain file name", d.PreviewImage)
	}
	f, err := os.Open(filepath.Join("..", "static", "img", "templates", d.PreviewImage))
	if err != nil {
		t.Fatalf("preview image: %v", err)
	}
	defer f.Close()
	cfg, err := png.DecodeConfig(f)
	if err != nil {
		t.Fatalf("preview image %s is not a PNG: %v", d.PreviewImage, err)
	}
	if cfg.Width != 300 {
		t.Errorf("preview image %s is %d px wide, want 300", d.PreviewImage, cfg.Width)
	}
	if fi, err := f.Stat(); err == nil && fi.Size() > maxThumbBytes {
		t.Errorf("preview image %s is %d bytes, want at most %d", d.PreviewImage, fi.Size(), maxThumbBytes)
	}
}

func TestSampleValues(t *testing.T) {
	s := SampleValues()
	for _, name := range placeholders {
		if _, ok := s[name]; !ok {
			t.Errorf("no sample value for %s", name)
		}
	}
	s["first_name"] = "changed"
	if SampleValues()["first_name"] == "changed" {
		t.Error("SampleValues returned shared state")
	}
}

func attr(n *html.Node, key string) string {
	v, _ := attrOK(n, key)
	return v
}

func attrOK(n *html.Node, key string) (string, bool) {
	for _, a := range n.Attr {
		if a.Key == key {
			return a.Val, true
		}
	}
	return "", false
}

func isVoid(a atom.Atom) bool {
	switch a {
	case atom.Area, atom.Base, atom.Br, atom.Col, atom.Embed, atom.Hr, atom.Img, atom.Input,
		atom.Link, atom.Meta, atom.Source, atom.Track, atom.Wbr:
		return true
	}
	return false
}

func boolInt(b bool) int {
	if b {
		return 1
	}
	return 0
}
