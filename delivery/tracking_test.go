package delivery

import (
	"strings"
	"testing"
)

func TestSafeRedirect(t *testing.T) {
	t.Parallel()
	for target, ok := range map[string]bool{
		"https://shop.example.com/sale?x=1&y=2#top": true,
		"http://a.example/é":                        true,
		"HTTPS://A.EXAMPLE/":                        true,
		"https://b.example/\r\nSet-Cookie: x=1":     false,
		"https://b.example/\nLocation: x":           false,
		"https://b.example/\r":                      false,
		"https://b.example/a b":                     false,
		"https://b.example/\t":                      false,
		"https://b.example/\x00":                    false,
		"https://b.example/\x7f":                    false,
		"https://b.example/\u0085":                  false,
		"https://b.example/\u2028":                  false,
		`https://b.example\@evil.example/`:          false,
		"https://user@b.example/":                   false,
		"javascript:alert(1)":                       false,
		"//b.example/":                              false,
		"/relative":                                 false,
		"mailto:a@b.example":                        false,
		"https:///path":                             false,
		"":                                          false,
	} {
		got, good := SafeRedirect(target)
		if good != ok || (ok && got != target) {
			t.Errorf("SafeRedirect(%q) = %q, %v; want %v", target, got, good, ok)
		}
	}
}

func TestURLValue(t *testing.T) {
	t.Parallel()
	for in, want := range map[string]string{
		"ann@example.com": "ann@example.com",
		"a&b=c":           "a&b=c",
		"Ann Lee":         "Ann%20Lee",
		"x\r\nSet-Cookie": "x%0D%0ASet-Cookie",
		"Zoë":             "Zo%C3%AB",
		`"<>\`:            "%22%3C%3E%5C",
	} {
		if got := URLValue(in); got != want {
			t.Errorf("URLValue(%q) = %q, want %q", in, got, want)
		}
		if _, ok := SafeRedirect("https://x.example/?v=" + URLValue(in)); !ok {
			t.Errorf("a link with URLValue(%q) is not a safe redirect", in)
		}
	}
}

// A link whose href decodes to a control character is not rewritten
// (its redirect could carry the character into a header); the others are.
func TestTrackLinksLeavesControlCharacters(t *testing.T) {
	t.Parallel()
	doc := `<a href="https://b.example/&#13;&#10;Set-Cookie: s=1">x</a><a href=" https://ok.example/ ">y</a><a href="https://t.example/a&#9;b">z</a>`
	out, links := TrackLinks(doc, func(i int, _ string) string { return "https://herald.test/t/c/T/" + string(rune('0'+i)) })
	if len(links) != 1 || links[0] != "https://ok.example/" {
		t.Fatalf("links %q", links)
	}
	if !strings.Contains(out, `<a href="https://b.example/&#13;&#10;Set-Cookie: s=1">`) || !strings.Contains(out, `href="https://herald.test/t/c/T/0"`) ||
		!strings.Contains(out, `<a href="https://t.example/a&#9;b">`) {
		t.Fatalf("rewritten: %s", out)
	}
}
