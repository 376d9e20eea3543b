package web_test

import (
	"context"
	"fmt"
	"net/http"
	"net/url"
	"slices"
	"strings"
	"testing"

	"golang.org/x/net/html"

	"herald/models"
	"herald/service"
	"herald/web"
)

// rowIDs returns the ids of the checkboxes of a list's rows.
func rowIDs(doc *html.Node, list string) []string {
	var ids []string
	for _, n := range all(doc, list+` input[name="ids"]`) {
		ids = append(ids, attr(n, "value"))
	}
	return ids
}

func TestGlobalUnsubscribers(t *testing.T) {
	t.Parallel()
	a := newTestApp(t, web.Options{})
	c, acct := a.account("Ada", "ada@example.com")

	r := c.get("/suppressions/global")
	wantStatus(t, r, http.StatusOK)
	if first(r.doc, "#global-list .empty") == nil || first(r.doc, `a.nav-link.is-active[href="/suppressions/global"]`) == nil {
		t.Fatalf("empty page:\n%s", r.body)
	}

	// Add several at once, through htmx: the form comes back empty, the
	// list out of band, and a flash message.
	r = c.hxPost("/suppressions/global", url.Values{"email_address": {"Ann@Example.com, bob@example.com\ncarol@example.org\n\n"}})
	wantStatus(t, r, http.StatusOK)
	if value(r.doc, "#global-add #global-add-email") != "" {
		t.Fatal("the add form was not emptied")
	}
	list := first(r.doc, "#global-list")
	if attr(list, "hx-swap-oob") != "true" {
		t.Fatal("the list is not swapped out of band")
	}
	if got := texts(r.doc, "#global-list td.cell-main"); !slices.Equal(got, []string{"ann@example.com", "bob@example.com", "carol@example.org"}) {
		t.Fatalf("listed %q", got)
	}
	if flash := first(r.doc, `#flash[hx-swap-oob="true"] .flash-success`); text(flash) != "Added 3 addresses." {
		t.Fatalf("flash %q", text(flash))
	}
	if first(r.doc, "html") != nil && first(r.doc, "nav") != nil {
		t.Fatal("an htmx answer carries the layout")
	}

	// Adding them again adds nothing.
	r = c.hxPost("/suppressions/global", url.Values{"email_address": {"bob@example.com"}})
	if got := text(first(r.doc, "#flash .flash")); got != "Those addresses were already on the list." {
		t.Fatalf("flash %q", got)
	}

	// The full page lists them; with HX-Request only the list comes, and
	// the answer varies on that header.
	r = c.get("/suppressions/global")
	if got := len(all(r.doc, "#global-list tbody tr")); got != 3 {
		t.Fatalf("%d rows", got)
	}
	if !strings.Contains(r.header.Get("Vary"), "HX-Request") {
		t.Fatalf("Vary = %q", r.header.Get("Vary"))
	}
	r = c.hxGet("/suppressions/global?q=BOB")
	wantStatus(t, r, http.StatusOK)
	if first(r.doc, "nav") != nil || first(r.doc, "#global-add") != nil {
		t.Fatal("the search answered more than the list")
	}
	if got := texts(r.doc, "#global-list td.cell-main"); !slices.Equal(got, []string{"bob@example.com"}) {
		t.Fatalf("search found %q", got)
	}
	if value(r.doc, `#global-list input[name="q"]`) != "BOB" {
		t.Fatal("the list does not carry its search")
	}
	// A history restore wants the whole page.
	r = c.do("GET", "/suppressions/global?q=bob", nil, true, "HX-History-Restore-Request", "true")
	if first(r.doc, "nav.nav") == nil {
		t.Fatal("history restore got a fragment")
	}
	r = c.hxGet("/suppressions/global?q=nobody")
	if got := text(first(r.doc, "#global-list .empty h3")); got != "No matches" {
		t.Fatalf("empty search: %q", got)
	}
	// Search text is escaped like everything else.
	r = c.hxGet("/suppressions/global?q=" + url.QueryEscape(`<script>alert(1)</script>`))
	if strings.Contains(r.body, "<script>alert") || first(r.doc, "script") != nil {
		t.Fatal("search text not escaped")
	}

	// Delete one, through htmx: the list comes back without it.
	r = c.get("/suppressions/global")
	ids := rowIDs(r.doc, "#global-list")
	r = c.hxPost("/suppressions/global/"+ids[0]+"/delete", url.Values{"q": {""}, "page": {"1"}})
	wantStatus(t, r, http.StatusOK)
	if got := texts(r.doc, "#global-list td.cell-main"); !slices.Equal(got, []string{"bob@example.com", "carol@example.org"}) {
		t.Fatalf("after delete: %q", got)
	}
	if got := text(first(r.doc, `#flash[hx-swap-oob="true"]`)); got != "Address deleted." {
		t.Fatalf("flash %q", got)
	}
	// Deleting it again: not found.
	wantStatus(t, c.hxPost("/suppressions/global/"+ids[0]+"/delete", nil), http.StatusNotFound)

	// Bulk delete the rest.
	r = c.hxPost("/suppressions/global/bulk-delete", url.Values{"ids": {ids[1], ids[2]}})
	wantStatus(t, r, http.StatusOK)
	if first(r.doc, "#global-list .empty") == nil || len(all(r.doc, "#global-list tbody tr")) != 0 {
		t.Fatalf("after bulk delete:\n%s", r.body)
	}
	if got := text(first(r.doc, "#flash .flash")); got != "Deleted 2 addresses." {
		t.Fatalf("flash %q", got)
	}
	n := 0
	_ = a.svc.Unsubscribers.Each(context.Background(), acct, service.ListFilter{}, func(*models.Unsubscriber) error { n++; return nil })
	if n != 0 {
		t.Fatalf("%d left in the database", n)
	}
}

func TestGlobalUnsubscribersWithoutJS(t *testing.T) {
	t.Parallel()
	a := newTestApp(t, web.Options{})
	c, _ := a.account("Ada", "ada@example.com")
	c.get("/suppressions/global")

	// A plain form post redirects, and the flash shows once.
	r := c.post("/suppressions/global", url.Values{"email_address": {"ann@example.com,bob@example.com"}})
	wantRedirect(t, r, "/suppressions/global")
	r = c.get(r.location())
	if got := text(first(r.doc, "#flash .flash-success")); got != "Added 2 addresses." {
		t.Fatalf("flash %q", got)
	}
	if got := len(all(r.doc, "#global-list tbody tr")); got != 2 {
		t.Fatalf("%d rows", got)
	}
	if first(c.get("/suppressions/global").doc, "#flash .flash") != nil {
		t.Fatal("the flash showed twice")
	}

	// The row's delete button posts the list form to its own address.
	r = c.get("/suppressions/global?q=ann")
	btn := first(r.doc, "#global-list button[data-delete]")
	form := first(r.doc, "#global-list form")
	if attr(form, "method") != "post" || first(form, `input[name="_csrf"]`) == nil {
		t.Fatal("the list form lacks method or token")
	}
	r = c.post(attr(btn, "formaction"), url.Values{"q": {"ann"}, "page": {"1"}})
	wantRedirect(t, r, "/suppressions/global?q=ann")
	r = c.get(r.location())
	if got := text(first(r.doc, "#flash .flash")); got != "Address deleted." {
		t.Fatalf("flash %q", got)
	}

	// Bulk delete with nothing selected: a message, nothing deleted.
	r = c.post("/suppressions/global/bulk-delete", url.Values{})
	wantRedirect(t, r, "/suppressions/global")
	r = c.get(r.location())
	if got := text(first(r.doc, "#flash .flash-error")); got != "Select at least one address first." {
		t.Fatalf("flash %q", got)
	}
	if got := len(all(r.doc, "#global-list tbody tr")); got != 1 {
		t.Fatalf("%d rows", got)
	}
	// A multipart body is read too.
	c.post("/suppressions/global", url.Values{"email_address": {"x@example.com, y@example.com"}})
	ids := rowIDs(c.get("/suppressions/global").doc, "#global-list")
	wantRedirect(t, c.postMultipart("/suppressions/global/bulk-delete", url.Values{"ids": ids[1:]}), "/suppressions/global")
	if got := texts(c.get("/suppressions/global").doc, "#global-list td.cell-main"); !slices.Equal(got, []string{"bob@example.com"}) {
		t.Fatalf("after multipart bulk delete: %q", got)
	}

	r = c.hxPost("/suppressions/global/bulk-delete", url.Values{})
	wantStatus(t, r, http.StatusUnprocessableEntity)
	if r.header.Get("HX-Retarget") != "#flash" || text(first(r.doc, ".flash-error")) != "Select at least one address first." {
		t.Fatalf("htmx nothing selected: %v\n%s", r.header, r.body)
	}
}

func TestGlobalUnsubscribersValidation(t *testing.T) {
	t.Parallel()
	a := newTestApp(t, web.Options{})
	c, _ := a.account("Ada", "ada@example.com")
	c.get("/suppressions/global")
	for _, tt := range []struct{ input, want string }{
		{"", "The email address field is required."},
		{"ann@example.com, not-an-address", "“not-an-address” is not a valid email address. Nothing was added: mend or remove them and add the list again."},
		{"a@x.example, bad, b@y.example, worse@", "These are not valid email addresses: “bad”, “worse@”. Nothing was added: mend or remove them and add the list again."},
		{"b1 b2 b3 b4 b5 b6 b7 b8 b9 b10 b11 b12 ok@example.com", "These are not valid email addresses: “b1”, “b2”, “b3”, “b4”, “b5”, “b6”, “b7”, “b8”, “b9”, “b10” and 2 more. Nothing was added: mend or remove them and add the list again."},
	} {
		// htmx: 422 with the form, the message beside the field.
		r := c.hxPost("/suppressions/global", url.Values{"email_address": {tt.input}})
		wantStatus(t, r, http.StatusUnprocessableEntity)
		if first(r.doc, "form#global-add") == nil || first(r.doc, "#global-list") != nil {
			t.Fatalf("422 answer:\n%s", r.body)
		}
		if got := texts(r.doc, "#global-add-email-error li"); !slices.Equal(got, []string{tt.want}) {
			t.Fatalf("%q: errors %q", tt.input, got)
		}
		if attr(first(r.doc, "#global-add-email"), "aria-invalid") != "true" {
			t.Fatal("field not marked invalid")
		}
		if got := value(r.doc, "#global-add-email"); got != strings.Join(strings.Fields(tt.input), " ") {
			t.Fatalf("input lost: %q", got)
		}
		// Without htmx: the whole page, 422, the same message.
		r = c.post("/suppressions/global", url.Values{"email_address": {tt.input}})
		wantStatus(t, r, http.StatusUnprocessableEntity)
		if first(r.doc, "nav.nav") == nil || !slices.Equal(texts(r.doc, "#global-add-email-error li"), []string{tt.want}) {
			t.Fatalf("full page 422:\n%s", r.body)
		}
	}
	// Nothing was added, not even the valid address.
	r := c.get("/suppressions/global")
	if first(r.doc, "#global-list .empty") == nil {
		t.Fatal("an invalid list added some addresses")
	}
}

func TestGlobalUnsubscribersPages(t *testing.T) {
	t.Parallel()
	a := newTestApp(t, web.Options{})
	c, acct := a.account("Ada", "ada@example.com")
	var list []string
	for i := range 120 {
		list = append(list, fmt.Sprintf("user%03d@example.com", i))
	}
	if _, err := a.svc.Unsubscribers.Add(context.Background(), acct, strings.Join(list, ",")); err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		path       string
		rows       int
		firstEmail string
		prev, next string
		info       string
	}{
		{"/suppressions/global", 50, "user000@example.com", "", "/suppressions/global?page=2", "Showing 1–50"},
		{"/suppressions/global?page=2", 50, "user050@example.com", "/suppressions/global", "/suppressions/global?page=3", "Showing 51–100"},
		{"/suppressions/global?page=3", 20, "user100@example.com", "/suppressions/global?page=2", "", "Showing 101–120"},
		{"/suppressions/global?page=9", 50, "user000@example.com", "", "/suppressions/global?page=2", "Showing 1–50"}, // past the end: the first page
		{"/suppressions/global?q=user11", 10, "user110@example.com", "", "", "10 rows"},
	}
	for _, tt := range tests {
		t.Run(tt.path, func(t *testing.T) {
			r := c.get(tt.path)
			wantStatus(t, r, http.StatusOK)
			emails := texts(r.doc, "#global-list td.cell-main")
			if len(emails) != tt.rows || emails[0] != tt.firstEmail {
				t.Fatalf("%d rows from %q", len(emails), emails[0])
			}
			if got := attr(first(r.doc, `#global-list a[rel="prev"]`), "href"); got != tt.prev {
				t.Errorf("prev = %q, want %q", got, tt.prev)
			}
			if got := attr(first(r.doc, `#global-list a[rel="next"]`), "href"); got != tt.next {
				t.Errorf("next = %q, want %q", got, tt.next)
			}
			if got := text(first(r.doc, "#global-list .pager-info")); got != tt.info {
				t.Errorf("pager says %q, want %q", got, tt.info)
			}
			if n := first(r.doc, `#global-list a[rel="next"]`); n != nil && attr(n, "hx-target") != "#global-list" {
				t.Errorf("next link does not swap the list")
			}
		})
	}
	// A search keeps its text in the page links.
	r := c.get("/suppressions/global?q=user&page=2")
	if got := attr(first(r.doc, `a[rel="next"]`), "href"); got != "/suppressions/global?page=3&q=user" {
		t.Fatalf("next with search = %q", got)
	}
}
