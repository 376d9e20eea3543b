package web_test

import (
	"bytes"
	"context"
	"regexp"
	"strings"
	"testing"

	"github.com/a-h/templ"
	"golang.org/x/net/html"

	"herald/i18n"
	"herald/service"
	"herald/static"
	"herald/views/public"
)

// TestPublicPagesUseDefinedClasses renders the pages recipients open
// (preferences, sender verification) and fails on any class that the
// stylesheet does not define: the preference page once used classes
// app.css never had, and showed unstyled.
func TestPublicPagesUseDefinedClasses(t *testing.T) {
	t.Parallel()
	css, err := static.FS.ReadFile("css/app.css")
	if err != nil {
		t.Fatal(err)
	}
	defined := map[string]bool{}
	for _, m := range regexp.MustCompile(`\.([A-Za-z_][-A-Za-z0-9_]*)`).FindAllStringSubmatch(string(css), -1) {
		defined[m[1]] = true
	}
	prefs := &service.Preferences{
		Email:  "ann@example.com",
		Groups: []service.PreferenceGroup{{ID: 1, Name: "News", Description: "Monthly"}, {ID: 2, Name: "Offers", Unsubscribed: true}},
	}
	pages := map[string]templ.Component{
		"preferences":       public.PreferencesPage(i18n.English(), "/u/x", prefs, false, service.Brand{}),
		"preferences saved": public.PreferencesPage(i18n.English(), "/u/x", prefs, true, service.Brand{}),
		"preferences gone":  public.PreferencesPage(i18n.English(), "/u/x", nil, false, service.Brand{}),
		"public error":      public.ErrorPage(i18n.English(), 404, "Page not found", "Gone."),
		"verify confirm":    public.SenderVerify(public.VerifyConfirm, "ann@example.com", "/x"),
		"verify done":       public.SenderVerify(public.VerifyDone, "ann@example.com", "/x"),
		"verify expired":    public.SenderVerify(public.VerifyExpired, "ann@example.com", "/x"),
		"verify unknown":    public.SenderVerify(public.VerifyUnknown, "", "/x"),
	}
	for name, page := range pages {
		t.Run(name, func(t *testing.T) {
			var b bytes.Buffer
			if err := page.Render(context.Background(), &b); err != nil {
				t.Fatal(err)
			}
			doc, err := html.Parse(&b)
			if err != nil {
				t.Fatal(err)
			}
			used := 0
			var walk func(*html.Node)
			walk = func(n *html.Node) {
				if n.Type == html.ElementNode {
					for _, c := range strings.Fields(attr(n, "class")) {
						used++
						if !defined[c] {
							t.Errorf("<%s class=%q>: app.css defines no .%s", n.Data, attr(n, "class"), c)
						}
					}
				}
				for c := n.FirstChild; c != nil; c = c.NextSibling {
					walk(c)
				}
			}
			walk(doc)
			if used == 0 {
				t.Fatal("the page uses no class at all: is it rendered?")
			}
		})
	}
}

// TestStylesheetIsWellFormed: every block of app.css is closed. A rule
// left open by a merge once swallowed every style after it, silently.
func TestStylesheetIsWellFormed(t *testing.T) {
	t.Parallel()
	css, err := static.FS.ReadFile("css/app.css")
	if err != nil {
		t.Fatal(err)
	}
	text := regexp.MustCompile(`(?s)/\*.*?\*/`).ReplaceAllString(string(css), "")
	depth := 0
	for i, line := range strings.Split(text, "\n") {
		for _, ch := range line {
			switch ch {
			case '{':
				depth++
			case '}':
				depth--
			}
		}
		if depth < 0 || depth > 2 { // a rule, inside at most an @media block
			t.Fatalf("app.css line %d: blocks nested %d deep", i+1, depth)
		}
	}
	if depth != 0 {
		t.Fatalf("app.css ends with %d blocks open", depth)
	}
}
