package web_test

import (
	"context"
	"net/http"
	"net/url"
	"slices"
	"strings"
	"testing"

	"herald/service"
)

// The sends list sorts by its column headers (links with aria-sort) and
// filters by status (links with aria-current); every link keeps the
// others' choices, and the list's forms carry them.
func TestSendsListSortsAndFilters(t *testing.T) {
	t.Parallel()
	s := newSendSetup(t)
	c := s.c
	for _, n := range []string{"bravo", "alpha", "charlie"} {
		if _, err := s.a.svc.SingleSends.SaveDraft(context.Background(), s.acct, service.SingleSendInput{SingleSendName: n}); err != nil {
			t.Fatal(err)
		}
	}
	done := s.create("delta")
	s.exec("UPDATE single_sends SET status = 3 WHERE id = ?", done.ID)
	names := func(r *response) []string { return texts(r.doc, "#sends-list td.cell-main a") }

	r := c.get("/single-sends")
	wantStatus(t, r, http.StatusOK)
	if got := names(r); !slices.Equal(got, []string{"bravo", "alpha", "charlie", "delta"}) {
		t.Fatalf("default order: %v", got)
	}
	th := first(r.doc, `#sends-list th[aria-sort]`)
	if th == nil || attr(th, "aria-sort") != "none" {
		t.Fatalf("no sortable header:\n%.3000s", r.body)
	}
	link := first(r.doc, `#sends-list th a[data-sort="name"]`)
	if link == nil || attr(link, "href") != "/single-sends?sort=name" || attr(link, "hx-get") != "/single-sends?sort=name" {
		t.Fatalf("name header link: %v", link)
	}
	r = c.get("/single-sends?sort=name")
	if got := names(r); !slices.Equal(got, []string{"alpha", "bravo", "charlie", "delta"}) {
		t.Fatalf("by name: %v", got)
	}
	th = first(r.doc, `#sends-list th[aria-sort="ascending"]`)
	if th == nil || first(th, `a[data-sort="name"]`) == nil {
		t.Fatal("the name column does not say it sorts ascending")
	}
	// A second click descends.
	if got := attr(first(r.doc, `#sends-list th a[data-sort="name"]`), "href"); got != "/single-sends?dir=desc&sort=name" {
		t.Fatalf("second click: %q", got)
	}
	r = c.get("/single-sends?dir=desc&sort=name")
	if got := names(r); !slices.Equal(got, []string{"delta", "charlie", "bravo", "alpha"}) {
		t.Fatalf("by name descending: %v", got)
	}
	if first(r.doc, `#sends-list th[aria-sort="descending"] a[data-sort="name"]`) == nil {
		t.Fatal("no aria-sort descending")
	}
	// The status filter keeps the sort; the sort links keep the filter.
	chip := first(r.doc, `#sends-status a[data-status-filter="draft"]`)
	u, _ := url.Parse(attr(chip, "href"))
	if u.Path != "/single-sends" || u.Query().Get("status") != "draft" || u.Query().Get("sort") != "name" || u.Query().Get("dir") != "desc" {
		t.Fatalf("draft filter link: %q", attr(chip, "href"))
	}
	r = c.get(attr(chip, "href"))
	if got := names(r); !slices.Equal(got, []string{"charlie", "bravo", "alpha"}) {
		t.Fatalf("drafts by name descending: %v", got)
	}
	if a := first(r.doc, `#sends-status a[aria-current="page"]`); a == nil || attr(a, "data-status-filter") != "draft" {
		t.Fatal("the active filter is not marked")
	}
	for _, n := range all(r.doc, `#sends-list .badge`) {
		if attr(n, "data-status") != "Draft" {
			t.Fatalf("a %s send among the drafts", attr(n, "data-status"))
		}
	}
	if got := attr(first(r.doc, `#sends-list th a[data-sort="sent"]`), "href"); !strings.Contains(got, "status=draft") {
		t.Fatalf("the sort link lost the filter: %q", got)
	}
	// The list's form and search carry sort and filter.
	if value(r.doc, `#sends-list-form input[name="status"]`) != "draft" || value(r.doc, `#sends-list-form input[name="sort"]`) != "name" ||
		value(r.doc, `form.search input[name="status"]`) != "draft" {
		t.Fatalf("the forms lost the list's state:\n%.3000s", r.body)
	}
	r = c.get("/single-sends?status=completed")
	if got := names(r); !slices.Equal(got, []string{"delta"}) {
		t.Fatalf("completed: %v", got)
	}
	r = c.get("/single-sends?status=scheduled")
	if first(r.doc, "#sends-list .empty") == nil {
		t.Fatal("no empty state for a filter that keeps nothing")
	}
	// htmx gets the list alone.
	r = c.hxGet("/single-sends?sort=name&status=draft")
	if got := names(r); !slices.Equal(got, []string{"alpha", "bravo", "charlie"}) || first(r.doc, "nav.nav") != nil {
		t.Fatalf("partial: %v", got)
	}
}

// The other lists offer their sorts and filters too.
func TestOtherListsSortAndFilter(t *testing.T) {
	t.Parallel()
	s := newSendSetup(t)
	c := s.c
	r := c.get("/senders?status=unverified&sort=name")
	wantStatus(t, r, http.StatusOK)
	if got := texts(r.doc, "#senders-list td.cell-main a"); !slices.Equal(got, []string{"Shop"}) || len(all(r.doc, "#senders-list tbody tr")) != 1 {
		t.Fatalf("unverified senders: %v", got)
	}
	if first(r.doc, `#senders-list th[aria-sort="ascending"] a[data-sort="name"]`) == nil || first(r.doc, `#senders-status a[aria-current="page"][data-status-filter="unverified"]`) == nil {
		t.Fatalf("senders' headers and filters:\n%.3000s", r.body)
	}
	r = c.get("/senders?status=verified")
	if n := len(all(r.doc, "#senders-list tbody tr")); n != 1 {
		t.Fatalf("verified senders: %d rows", n)
	}
	r = c.get("/contacts?sort=email&dir=desc")
	wantStatus(t, r, http.StatusOK)
	got := texts(r.doc, "#contacts-list .contact-email")
	if len(got) < 2 || !slices.IsSortedFunc(got, func(a, b string) int { return strings.Compare(b, a) }) {
		t.Fatalf("contacts by email descending: %v", got)
	}
	if first(r.doc, `#contacts-list th[aria-sort="descending"] a[data-sort="email"]`) == nil || value(r.doc, `#contacts-filters input[name="sort"]`) != "email" {
		t.Fatalf("contacts' header or filter form:\n%.3000s", r.body)
	}
	for _, p := range []string{"/segments?sort=name&dir=desc", "/automations?status=live&sort=status"} {
		r = c.get(p)
		wantStatus(t, r, http.StatusOK)
		if first(r.doc, `th[aria-sort]`) == nil && first(r.doc, ".empty") == nil {
			t.Fatalf("%s: no sortable header", p)
		}
	}
	r = c.get("/automations")
	if first(r.doc, `#automations-status a[data-status-filter="paused"]`) == nil {
		t.Fatal("no automation status filter")
	}
}

// On phones the headers are hidden: a select sorts instead, sending
// sort=key:dir with the list's search and filter.
func TestSortSelectForPhones(t *testing.T) {
	t.Parallel()
	s := newSendSetup(t)
	c := s.c
	for _, n := range []string{"bravo", "alpha"} {
		if _, err := s.a.svc.SingleSends.SaveDraft(context.Background(), s.acct, service.SingleSendInput{SingleSendName: n}); err != nil {
			t.Fatal(err)
		}
	}
	r := c.get("/single-sends?status=draft&q=a&sort=name&dir=desc")
	form := first(r.doc, "form.sort-form")
	if form == nil || value(form, `input[name="status"]`) != "draft" || value(form, `input[name="q"]`) != "a" {
		t.Fatalf("sort form:\n%.3000s", r.body)
	}
	if sel := first(form, `select#sends-sort option[selected]`); sel == nil || attr(sel, "value") != "name:desc" {
		t.Fatal("the current sort is not selected")
	}
	r = c.get("/single-sends?status=draft&sort=name:asc")
	if got := texts(r.doc, "#sends-list td.cell-main a"); !slices.Equal(got, []string{"alpha", "bravo"}) {
		t.Fatalf("sorted by the select: %v", got)
	}
	if first(r.doc, `#sends-list th[aria-sort="ascending"] a[data-sort="name"]`) == nil {
		t.Fatal("the select's sort is not the headers'")
	}
	r = c.get("/contacts?type=" + itoa(s.ctype))
	if value(first(r.doc, "form.sort-form"), `input[name="type"]`) != itoa(s.ctype) {
		t.Fatal("the contacts' sort form lost the type filter")
	}
}
