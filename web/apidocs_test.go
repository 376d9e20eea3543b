package web_test

import (
	"net/http"
	"strings"
	"testing"

	"herald/web"
)

// TestAPIDocsPage: the console's API documentation page loads the vendored
// Swagger UI and its starter from this site only (no inline script), under
// a policy that keeps scripts to 'self'; the files it names are served.
func TestAPIDocsPage(t *testing.T) {
	t.Parallel()
	a := newTestApp(t, web.Options{})
	c, _ := a.account("Ann", "ann@example.com")
	r := c.get("/docs/api")
	wantStatus(t, r, http.StatusOK)
	csp := r.header.Get("Content-Security-Policy")
	if !strings.Contains(csp, "script-src 'self';") || strings.Contains(csp, "unsafe-eval") || !strings.Contains(csp, "frame-ancestors 'none'") {
		t.Fatalf("CSP %q", csp)
	}
	if first(r.doc, `a.nav-link.is-active[href="/docs/api"]`) == nil {
		t.Fatal("the navigation does not mark the page")
	}
	ui := first(r.doc, "#swagger-ui")
	if ui == nil || attr(ui, "data-openapi-url") != "/api/openapi.json" || first(r.doc, `a[href="/api/openapi.json"]`) == nil {
		t.Fatal("no renderer element pointing at /api/openapi.json")
	}
	var srcs []string
	for _, s := range all(r.doc, "script") {
		src := attr(s, "src")
		if src == "" {
			t.Fatalf("inline script: %q", text(s))
		}
		srcs = append(srcs, src)
	}
	links := attrs(all(r.doc, `link[rel="stylesheet"]`), "href")
	for _, want := range []string{"/static/vendor/swagger-ui-dist-5.35.0/swagger-ui-bundle.js", "/static/js/apidocs.js"} {
		if !strings.Contains(strings.Join(srcs, " "), want) {
			t.Fatalf("scripts %v lack %s", srcs, want)
		}
	}
	for _, f := range append(append(srcs, links...), "/static/vendor/swagger-ui-dist-5.35.0/LICENSE") {
		if !strings.HasPrefix(f, "/static/") {
			t.Fatalf("a file from elsewhere: %s", f)
		}
		if r := c.get(f); r.status != http.StatusOK {
			t.Fatalf("%s: %d", f, r.status)
		}
	}
	// Signed out: the login page, as for every console page.
	r = a.client().get("/docs/api")
	if r.status != http.StatusSeeOther && r.status != http.StatusFound {
		t.Fatalf("signed out: %d", r.status)
	}
}

// TestPeopleAndMachinesPage: the dashboard's note on human figures links
// to a console page that lists the rules, not to a file of the repository.
func TestPeopleAndMachinesPage(t *testing.T) {
	t.Parallel()
	a := newTestApp(t, web.Options{})
	c, _ := a.account("Ann", "ann@example.com")
	r := c.get("/dashboard")
	wantStatus(t, r, http.StatusOK)
	note := first(r.doc, "#human-note")
	if note == nil || first(note, `a[href="/help/people-and-machines"]`) == nil || strings.Contains(text(note), "MACHINE_ACTIVITY") {
		t.Fatalf("the dashboard's note: %q", text(note))
	}
	r = c.get("/help/people-and-machines")
	wantStatus(t, r, http.StatusOK)
	if n := len(all(r.doc, "#machine-rules li")); n != 12 {
		t.Fatalf("%d rules listed, want 12", n)
	}
}
