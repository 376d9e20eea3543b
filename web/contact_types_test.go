package web_test

import (
	"context"
	"net/http"
	"net/url"
	"slices"
	"strings"
	"testing"

	"herald/service"
	"herald/web"
)

func TestContactTypes(t *testing.T) {
	t.Parallel()
	a := newTestApp(t, web.Options{})
	c, acct := a.account("Ada", "ada@example.com")
	au := a.audience(acct)

	r := c.get("/contacts/types")
	wantStatus(t, r, http.StatusOK)
	if first(r.doc, "#types-list .empty") == nil {
		t.Fatalf("no empty state:\n%s", r.body)
	}
	if first(r.doc, `a.nav-link.is-active[href="/contacts"]`) == nil || first(r.doc, `.tabs a.is-active[href="/contacts/types"]`) == nil {
		t.Fatal("the navigation does not mark the page")
	}

	// Create through htmx: the form emptied, the list out of band, a flash.
	r = c.hxPost("/contacts/types", url.Values{"name": {"Customers"}})
	wantStatus(t, r, http.StatusOK)
	if value(r.doc, "#type-create-name") != "" || attr(first(r.doc, "#types-list"), "hx-swap-oob") != "true" {
		t.Fatalf("create answer:\n%s", r.body)
	}
	row := first(r.doc, "#types-list tbody tr")
	id := strings.TrimPrefix(attr(row, "id"), "type-")
	if text(first(row, ".cell-main")) != "Customers" || text(first(row, "td.cell-num")) != "0" {
		t.Fatalf("row: %s", text(row))
	}
	if got := text(first(r.doc, "#flash .flash")); got != "Contact type “Customers” created." {
		t.Fatalf("flash %q", got)
	}

	// Validation beside the field.
	for _, tt := range []struct{ name, want string }{
		{"", "The name field is required."},
		{"x", "The name must be at least 2 characters."},
		{"customers", "The name has already been taken."},
	} {
		r = c.hxPost("/contacts/types", url.Values{"name": {tt.name}})
		wantStatus(t, r, http.StatusUnprocessableEntity)
		if got := texts(r.doc, "#type-create-name-error li"); !slices.Equal(got, []string{tt.want}) {
			t.Fatalf("%q: errors %q", tt.name, got)
		}
		if attr(first(r.doc, "#type-create-name"), "aria-invalid") != "true" || value(r.doc, "#type-create-name") != tt.name {
			t.Fatal("the field is not marked, or lost its value")
		}
	}
	// Without htmx: the whole page, 422.
	r = c.post("/contacts/types", url.Values{"name": {""}})
	wantStatus(t, r, http.StatusUnprocessableEntity)
	if first(r.doc, "nav.nav") == nil || len(texts(r.doc, "#type-create-name-error li")) != 1 {
		t.Fatalf("full page 422:\n%s", r.body)
	}
	wantRedirect(t, c.post("/contacts/types", url.Values{"name": {"Readers"}}), "/contacts/types")
	if got := text(first(c.get("/contacts/types").doc, "#flash .flash")); got != "Contact type “Readers” created." {
		t.Fatalf("flash %q", got)
	}

	// Counts follow the contacts.
	cid := parseID(t, id)
	au.contact(cid, "ann@example.com", "Ann", "Lee", "US", nil)
	au.contact(cid, "bob@example.com", "Bob", "Ray", "FR", nil)
	r = c.get("/contacts/types")
	if got := text(first(r.doc, "tr#type-"+id+" td.cell-num")); got != "2" {
		t.Fatalf("count %q", got)
	}
	if got := attr(first(r.doc, "tr#type-"+id+" .cell-main a"), "href"); got != "/contacts?type="+id {
		t.Fatalf("type links to %q", got)
	}

	// Rename in place.
	r = c.hxGet("/contacts/types/" + id + "/edit")
	wantStatus(t, r, http.StatusOK)
	edit := first(r.doc, "tr.is-editing")
	if attr(edit, "id") != "type-"+id || value(edit, `input[name="name"]`) != "Customers" || attr(first(edit, `input[name="name"]`), "form") != "type-edit-"+id {
		t.Fatalf("edit row:\n%s", r.body)
	}
	r = c.hxPost("/contacts/types/"+id, url.Values{"name": {"Readers"}})
	wantStatus(t, r, http.StatusUnprocessableEntity)
	if got := texts(r.doc, "#type-"+id+"-name-error li"); !slices.Equal(got, []string{"The name has already been taken."}) {
		t.Fatalf("rename errors %q\n%s", got, r.body)
	}
	r = c.hxPost("/contacts/types/"+id, url.Values{"name": {"Clients"}})
	wantStatus(t, r, http.StatusOK)
	row = first(r.doc, "tr#type-"+id)
	if hasClass(row, "is-editing") || text(first(row, ".cell-main")) != "Clients" || text(first(row, "td.cell-num")) != "2" {
		t.Fatalf("renamed row:\n%s", r.body)
	}
	if got := text(first(r.doc, `#flash[hx-swap-oob="true"]`)); got != "Contact type “Clients” saved." {
		t.Fatalf("flash %q", got)
	}
	r = c.hxGet("/contacts/types/" + id + "/row")
	if row := first(r.doc, "tr#type-"+id); row == nil || hasClass(row, "is-editing") {
		t.Fatalf("cancel: %s", r.body)
	}
	// Without htmx: an edit page.
	r = c.get("/contacts/types/" + id + "/edit")
	if value(r.doc, "form#type-edit #type-edit-name") != "Clients" || first(r.doc, "nav.nav") == nil {
		t.Fatalf("edit page:\n%s", r.body)
	}
	wantRedirect(t, c.post("/contacts/types/"+id, url.Values{"name": {"Clients 2"}}), "/contacts/types")

	// Delete: the confirmation says what goes with it; the list follows.
	r = c.get("/contacts/types")
	form := first(r.doc, "tr#type-"+id+" form")
	if q := attr(form, "hx-confirm"); !strings.Contains(q, "Its 2 contacts and all its segments are deleted") {
		t.Fatalf("confirmation %q", q)
	}
	r = c.hxPost(attr(form, "hx-post"), url.Values{"q": {""}, "page": {"1"}})
	wantStatus(t, r, http.StatusOK)
	if got := texts(r.doc, "#types-list td.cell-main"); !slices.Equal(got, []string{"Readers"}) {
		t.Fatalf("after delete: %q", got)
	}
	if got := text(first(r.doc, "#flash .flash")); got != "Contact type “Clients 2” deleted, with its 2 contacts." {
		t.Fatalf("flash %q", got)
	}
	n, err := a.svc.Contacts.Count(context.Background(), acct, service.ContactFilter{})
	if err != nil || n != 0 {
		t.Fatalf("%d contacts left (%v)", n, err)
	}
	wantStatus(t, c.hxPost("/contacts/types/"+id+"/delete", nil), http.StatusNotFound)

	// Search.
	c.hxPost("/contacts/types", url.Values{"name": {"Partners"}})
	r = c.hxGet("/contacts/types?q=part")
	if got := texts(r.doc, "#types-list td.cell-main"); !slices.Equal(got, []string{"Partners"}) || first(r.doc, "nav") != nil {
		t.Fatalf("search %q", got)
	}
}

func parseID(t *testing.T, s string) int64 {
	t.Helper()
	id, err := service.ParseID(s)
	if err != nil {
		t.Fatalf("id %q: %v", s, err)
	}
	return id
}
