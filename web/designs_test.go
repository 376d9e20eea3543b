package web_test

import (
	"encoding/json"
	"net/http"
	"net/url"
	"strings"
	"testing"

	"herald/web"
)

func TestTemplatesGalleryAndPreviews(t *testing.T) {
	t.Parallel()
	a := newTestApp(t, web.Options{})
	c, acct := a.account("Ada", "ada@example.com")
	au := a.audience(acct)
	typ := au.contactType("Customers")
	grace := au.contact(typ, "grace@example.com", "Grace", "Hopper", "DE", nil)

	r := c.get("/templates")
	wantStatus(t, r, http.StatusOK)
	lib, _ := a.svc.Templates.Library()
	cards := all(r.doc, "#library li.gallery-card")
	if len(cards) != len(lib) || len(cards) < 7 {
		t.Fatalf("%d cards for %d designs", len(cards), len(lib))
	}
	for _, card := range cards {
		img := first(card, "img")
		if !strings.HasPrefix(attr(img, "src"), "/static/img/templates/") || attr(img, "alt") == "" {
			t.Fatalf("thumbnail %q", attr(img, "src"))
		}
		if first(card, "a[data-preview]") == nil || !strings.HasPrefix(attr(first(card, "a[data-use]"), "href"), "/templates/editor?from=") {
			t.Fatal("card without its buttons")
		}
		// The thumbnail is served.
		wantStatus(t, c.get(attr(img, "src")), http.StatusOK)
	}
	if first(r.doc, "#designs-list .empty") == nil || first(r.doc, `a.nav-link.is-active[href="/templates"]`) == nil {
		t.Fatal("no empty list of own designs")
	}

	// The public preview: no login, the mail itself under a sandbox policy.
	anon := a.client()
	r = anon.get("/designs/2/preview")
	wantStatus(t, r, http.StatusOK)
	if csp := r.header.Get("Content-Security-Policy"); csp != "sandbox; default-src 'none'; img-src data:; style-src 'unsafe-inline'" {
		t.Fatalf("public CSP %q", csp)
	}
	if strings.Contains(r.body, "((") {
		t.Fatal("placeholders left in the public preview")
	}
	wantStatus(t, anon.get("/designs/999/preview"), http.StatusNotFound)

	// The console preview for a chosen contact, reloaded through htmx.
	r = c.get("/templates/library/2/preview")
	wantStatus(t, r, http.StatusOK)
	frame := first(r.doc, "iframe#preview-frame")
	if sb, ok := attrOK(frame, "sandbox"); !ok || sb != "" {
		t.Fatalf("sandbox %q", sb)
	}
	if first(r.doc, `#preview-contact option[value="`+itoa(grace)+`"]`) == nil {
		t.Fatal("Grace is not offered")
	}
	r = c.hxGet("/templates/library/2/preview?contact=" + itoa(grace))
	wantStatus(t, r, http.StatusOK)
	if first(r.doc, "nav.nav") != nil || first(r.doc, "#preview-panel") == nil {
		t.Fatal("htmx got more than the panel")
	}
	if doc := attr(first(r.doc, "iframe"), "srcdoc"); !strings.Contains(doc, "Grace") {
		t.Fatalf("preview not rendered for Grace: %.300q", doc)
	}
	if first(r.doc, `#preview-contact option[value="`+itoa(grace)+`"][selected]`) == nil {
		t.Fatal("Grace not selected")
	}
	r = c.hxGet("/templates/library/2/preview?q=nobody&contact=" + itoa(grace))
	if first(r.doc, `#preview-contact option[value="`+itoa(grace)+`"][selected]`) == nil {
		t.Fatal("the chosen contact vanished with the search")
	}

	// Another account's contact is not found.
	b, _ := a.account("Bob", "bob@example.com")
	wantStatus(t, b.get("/templates/library/2/preview?contact="+itoa(grace)), http.StatusNotFound)
}

func TestDesignEditor(t *testing.T) {
	t.Parallel()
	a := newTestApp(t, web.Options{})
	c, acct := a.account("Ada", "ada@example.com")

	r := c.get("/templates/editor?from=2")
	wantStatus(t, r, http.StatusOK)
	if first(r.doc, "#gjs") == nil || first(r.doc, `script[src="/static/js/editor.js"]`) == nil ||
		first(r.doc, `script[src^="/static/vendor/grapesjs/grapes-"]`) == nil || first(r.doc, `link[href^="/static/vendor/grapesjs/"]`) == nil {
		t.Fatal("the editor's files are not loaded")
	}
	var data struct {
		TemplateHTML string `json:"template_html"`
		SaveURL      string `json:"save_url"`
	}
	if err := json.Unmarshal([]byte(text(first(r.doc, `script#editor-data[type="application/json"]`))), &data); err != nil || data.SaveURL != "/templates/designs" || data.TemplateHTML == "" {
		t.Fatalf("editor data %+v %v", data, err)
	}
	csp := r.header.Get("Content-Security-Policy")
	if !strings.Contains(csp, "script-src 'self';") || strings.Contains(csp, "unsafe-eval") {
		t.Fatalf("editor CSP %q", csp)
	}
	wantStatus(t, c.get("/templates/editor?from=999"), http.StatusNotFound)

	// The script's save: JSON in, JSON out; 422 with messages per field.
	post := func(path string, form url.Values) *response {
		return c.do("POST", path, form, false, "Accept", "application/json", "X-CSRF-Token", c.csrf)
	}
	r = post("/templates/designs", url.Values{"name": {""}, "template_id": {"2"}, "template_html": {""}})
	wantStatus(t, r, http.StatusUnprocessableEntity)
	var ans struct {
		ID     int64               `json:"id"`
		URL    string              `json:"url"`
		Errors map[string][]string `json:"errors"`
	}
	if err := json.Unmarshal([]byte(r.body), &ans); err != nil || len(ans.Errors["name"]) == 0 || len(ans.Errors["template_html"]) == 0 {
		t.Fatalf("422 answer %s", r.body)
	}
	r = post("/templates/designs", url.Values{"name": {"Spring news"}, "template_id": {"2"}, "template_json": {`{"pages":[]}`}, "template_html": {"<!doctype html><html><body><p>Hi ((first_name))</p></body></html>"}})
	wantStatus(t, r, http.StatusOK)
	ans.Errors = nil
	if err := json.Unmarshal([]byte(r.body), &ans); err != nil || ans.ID == 0 || ans.URL != "/templates/designs/"+itoa(ans.ID)+"/edit" {
		t.Fatalf("save answer %s", r.body)
	}
	id := itoa(ans.ID)

	// It is listed, with its own editor (the JSON comes back) and preview.
	r = c.get("/templates")
	if got := texts(r.doc, "#designs-list td.cell-main"); len(got) != 1 || got[0] != "Spring news" {
		t.Fatalf("own designs %q", got)
	}
	r = c.get(ans.URL)
	wantStatus(t, r, http.StatusOK)
	if !strings.Contains(text(first(r.doc, "#editor-data")), `{\"pages\":[]}`) || value(r.doc, "#design-name") != "Spring news" {
		t.Fatalf("edit page data %s", text(first(r.doc, "#editor-data")))
	}
	r = c.get("/templates/designs/" + id + "/preview")
	if doc := attr(first(r.doc, "iframe#preview-frame"), "srcdoc"); !strings.Contains(doc, "Hi ") || strings.Contains(doc, "((") {
		t.Fatalf("own preview %q", doc)
	}

	// The HTML tab (a plain form): the JSON is emptied; errors beside fields.
	r = c.post("/templates/designs/"+id, url.Values{"name": {"Spring news 2"}, "template_id": {"2"}, "template_html": {""}})
	wantStatus(t, r, http.StatusUnprocessableEntity)
	if first(r.doc, "#design-html-error") == nil || value(r.doc, "#design-name") != "Spring news 2" {
		t.Fatalf("plain 422:\n%.3000s", r.body)
	}
	wantRedirect(t, c.post("/templates/designs/"+id, url.Values{"name": {"Spring news 2"}, "template_id": {"2"}, "template_html": {"<p>plain</p>"}}), ans.URL)
	d, err := a.svc.Designs.Get(t.Context(), acct, ans.ID)
	if err != nil || d.TemplateJSON != "" || d.TemplateHTML != "<p>plain</p>" || d.Name != "Spring news 2" {
		t.Fatalf("stored %+v %v", d, err)
	}

	// Isolation: B gets 404 on every page and action of A's design.
	b, _ := a.account("Bob", "bob@example.com")
	for _, p := range []string{ans.URL, "/templates/designs/" + id + "/preview"} {
		wantStatus(t, b.get(p), http.StatusNotFound)
	}
	wantStatus(t, b.post("/templates/designs/"+id, url.Values{"name": {"x"}, "template_html": {"<p>x</p>"}}), http.StatusNotFound)
	wantStatus(t, b.hxPost("/templates/designs/"+id+"/delete", nil), http.StatusNotFound)

	// Delete through htmx.
	r = c.hxPost("/templates/designs/"+id+"/delete", url.Values{"q": {""}, "page": {"1"}})
	wantStatus(t, r, http.StatusOK)
	if first(r.doc, "#designs-list .empty") == nil || text(first(r.doc, `#flash[hx-swap-oob="true"]`)) != "Design deleted." {
		t.Fatalf("after delete:\n%s", r.body)
	}
	wantStatus(t, c.get(ans.URL), http.StatusNotFound)
}
