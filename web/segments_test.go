package web_test

import (
	"fmt"
	"net/http"
	"net/url"
	"slices"
	"strings"
	"testing"

	"herald/web"
)

// segmentForm is the builder's form with conditions given as triples.
func segmentForm(typeID int64, name, queryType string, conds ...[3]string) url.Values {
	v := url.Values{"contact_type_id": {itoa(typeID)}, "segment_name": {name}, "query_type": {queryType}}
	for _, c := range conds {
		v.Add("select_field", c[0])
		v.Add("select_operator", c[1])
		v.Add("value", c[2])
	}
	return v
}

func TestSegmentCount(t *testing.T) {
	t.Parallel()
	a := newTestApp(t, web.Options{})
	c, acct := a.account("Ada", "ada@example.com")
	au := a.audience(acct)
	customers := au.contactType("Customers")
	readers := au.contactType("Readers")
	au.field("age", "number")
	for i := range 30 {
		domain := "example.com"
		if i%3 == 0 {
			domain = "example.org"
		}
		au.contact(customers, fmt.Sprintf("c%02d@%s", i, domain), fmt.Sprintf("C%02d", i), "Smith", "US", map[string]string{"age": fmt.Sprint(20 + i)})
	}
	au.contact(readers, "r1@example.org", "R", "One", "US", nil)
	c.get("/segments/new")

	tests := []struct {
		name  string
		form  url.Values
		count string
		msgs  []string
	}{
		{"no conditions", segmentForm(customers, "", "and"), "30", nil},
		{"ends with", segmentForm(customers, "", "and", [3]string{"email", "ends_with", "@EXAMPLE.ORG "}), "10", nil},
		{"other type", segmentForm(readers, "", "and", [3]string{"email", "ends_with", "example.org"}), "1", nil},
		{"and", segmentForm(customers, "", "and", [3]string{"email", "ends_with", "example.org"}, [3]string{"age", "greater_than", "35"}), "4", nil},
		{"or", segmentForm(customers, "", "or", [3]string{"email", "ends_with", "example.org"}, [3]string{"age", "greater_than", "45"}), "13", nil},
		{"in", segmentForm(customers, "", "and", [3]string{"first_name", "in", "c01|C02|nobody"}), "2", nil},
		{"is empty", segmentForm(customers, "", "and", [3]string{"city", "is_empty", ""}), "30", nil},
		{"no type", url.Values{"segment_name": {"x"}}, "", []string{"Choose a contact type to see how many of its contacts match."}},
		{"no value", segmentForm(customers, "", "and", [3]string{"email", "contains", ""}), "", nil},
		{"no value and a bad number", segmentForm(customers, "", "and", [3]string{"email", "contains", ""}, [3]string{"age", "greater_than", "old"}), "", []string{"Condition 1: The value field is required.", "Condition 2: The value does not fit the age field."}},
		{"bad number", segmentForm(customers, "", "and", [3]string{"email", "contains", "x"}, [3]string{"age", "greater_than", "old"}), "", []string{"Condition 2: The value does not fit the age field."}},
		{"bad operator", segmentForm(customers, "", "and", [3]string{"age", "contains", "1"}), "", []string{"Condition 1: The selected operator is invalid."}},
		{"unknown field", segmentForm(customers, "", "and", [3]string{"shoe_size", "equals", "1"}), "", []string{"Condition 1: The selected field is invalid."}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := c.hxPost("/segments/count", tt.form)
			wantStatus(t, r, http.StatusOK)
			if got := text(first(r.doc, "#segment-count-value")); got != tt.count {
				t.Fatalf("count %q, want %q\n%s", got, tt.count, r.body)
			}
			if got := texts(r.doc, "#segment-count-messages li"); !slices.Equal(got, tt.msgs) {
				t.Fatalf("messages %q, want %q", got, tt.msgs)
			}
		})
	}
	// A condition just added, its value not yet typed: a hint, not an
	// error shown before the person touched anything.
	r := c.hxPost("/segments/count", segmentForm(customers, "", "and", [3]string{"email", "contains", ""}, [3]string{"city", "equals", ""}))
	if got := text(first(r.doc, ".count-hint")); got != "Give conditions 1 and 2 a value to see how many contacts match." {
		t.Fatalf("hint %q\n%s", got, r.body)
	}
	r = c.hxPost("/segments/count", segmentForm(customers, "", "and", [3]string{"email", "ends_with", "example.org"}))
	if got := text(first(r.doc, ".help")); got != "of 30 contacts of this type." {
		t.Fatalf("of type %q", got)
	}
	// Counting saves nothing.
	r = c.get("/segments")
	if first(r.doc, "#segments-list .empty") == nil {
		t.Fatal("a count saved a segment")
	}
}

func TestSegmentBuilder(t *testing.T) {
	t.Parallel()
	a := newTestApp(t, web.Options{})
	c, acct := a.account("Ada", "ada@example.com")
	au := a.audience(acct)
	customers := au.contactType("Customers")
	au.field("age", "number")
	au.field("renews", "datetime-local")
	for i := range 12 {
		au.contact(customers, fmt.Sprintf("c%02d@example.com", i), "C", "Smith", "US", map[string]string{"age": fmt.Sprint(20 + i)})
	}

	r := c.get("/segments/new")
	wantStatus(t, r, http.StatusOK)
	if first(r.doc, `a.nav-link.is-active[href="/segments"]`) == nil {
		t.Fatal("nav")
	}
	if selected(r.doc, "#segment-type") != "Customers" {
		t.Fatal("the only type is not chosen")
	}
	count := first(r.doc, "#segment-count")
	if attr(count, "hx-post") != "/segments/count" || !strings.Contains(attr(count, "hx-trigger"), "keyup changed delay:400ms") || !strings.Contains(attr(count, "hx-trigger"), "change") {
		t.Fatalf("count element:\n%s", r.body)
	}
	if got := len(all(r.doc, "#conditions li.condition")); got != 1 {
		t.Fatalf("%d conditions on a new segment", got)
	}
	// Field choices: email, the reserved fields, the date, custom fields.
	fields := texts(r.doc, "#cond-0-field option")
	if fields[0] != "Email" || !slices.Contains(fields, "Date added") || !slices.Contains(fields, "Age") || !slices.Contains(fields, "Postal Code") {
		t.Fatalf("fields %q", fields)
	}

	// The operators follow the field's type, and so does the value's input.
	r = c.hxPost("/segments/conditions", segmentForm(customers, "Adults", "and", [3]string{"age", "contains", "30"}))
	wantStatus(t, r, http.StatusOK)
	if r.header.Get("HX-Trigger-After-Swap") != "segment-changed" {
		t.Fatal("the count is not told to follow")
	}
	if got := texts(r.doc, "#cond-0-operator option"); slices.Contains(got, "contains") || !slices.Contains(got, "is greater than") {
		t.Fatalf("number operators %q", got)
	}
	if selected(r.doc, "#cond-0-operator") != "is" || attr(first(r.doc, "#cond-0-value"), "type") != "number" || value(r.doc, "#cond-0-value") != "30" {
		t.Fatalf("number condition:\n%s", r.body)
	}
	r = c.hxPost("/segments/conditions", segmentForm(customers, "", "and", [3]string{"renews", "greater_than", ""}))
	if got := texts(r.doc, "#cond-0-operator option"); !slices.Contains(got, "is after") || attr(first(r.doc, "#cond-0-value"), "type") != "datetime-local" {
		t.Fatalf("date operators %q", got)
	}
	r = c.hxPost("/segments/conditions", segmentForm(customers, "", "and", [3]string{"email", "is_empty", ""}))
	if first(r.doc, "#cond-0-value") != nil || value(r.doc, `#cond-0 input[type="hidden"][name="value"]`) != "" || first(r.doc, `#cond-0 input[name="value"]`) == nil {
		t.Fatal("is empty: the value input is not replaced by a hidden empty one")
	}
	// Add and remove conditions.
	f := segmentForm(customers, "", "or", [3]string{"email", "contains", "a"}, [3]string{"age", "less_than", "25"})
	f.Set("add_condition", "1")
	r = c.hxPost("/segments/conditions", f)
	if got := len(all(r.doc, "li.condition")); got != 3 {
		t.Fatalf("%d conditions after add", got)
	}
	if got := texts(r.doc, ".condition-join"); !slices.Equal(got, []string{"Where", "or", "or"}) {
		t.Fatalf("joins %q", got)
	}
	f.Del("add_condition")
	f.Set("remove_condition", "0")
	r = c.hxPost("/segments/conditions", f)
	if got := len(all(r.doc, "li.condition")); got != 1 || selected(r.doc, "#cond-0-field") != "Age" || value(r.doc, "#cond-0-value") != "25" {
		t.Fatalf("after remove:\n%s", r.body)
	}
	// Without htmx the same buttons redraw the whole builder.
	f.Set("segment_name", "Kept")
	r = c.post("/segments/conditions", f)
	wantStatus(t, r, http.StatusOK)
	if first(r.doc, "nav.nav") == nil || value(r.doc, "#segment-name") != "Kept" || len(all(r.doc, "li.condition")) != 1 {
		t.Fatalf("no-JS redraw:\n%s", r.body)
	}

	// Save with errors: each beside its control, worded for people.
	r = c.post("/segments", segmentForm(customers, "", "and", [3]string{"age", "greater_than", "old"}))
	wantStatus(t, r, http.StatusUnprocessableEntity)
	if got := texts(r.doc, "#segment-name-error li"); !slices.Equal(got, []string{"The segment name field is required."}) {
		t.Fatalf("name errors %q", got)
	}
	if got := texts(r.doc, "#cond-0-value-error li"); !slices.Equal(got, []string{"The value does not fit the age field."}) {
		t.Fatalf("value errors %q\n%s", got, r.body)
	}
	if value(r.doc, "#cond-0-value") != "old" {
		t.Fatal("the value is lost")
	}

	// Save: to the recipients page, with the matching contacts.
	r = c.post("/segments", segmentForm(customers, "Over 25", "and", [3]string{"age", "greater_than", "25"}))
	wantRedirect(t, r, "/segments/")
	segURL := r.location()
	sid := strings.TrimPrefix(segURL, "/segments/")
	r = c.get(segURL)
	wantStatus(t, r, http.StatusOK)
	if got := text(first(r.doc, "#flash .flash")); got != "Segment “Over 25” created." {
		t.Fatalf("flash %q", got)
	}
	if got := len(all(r.doc, "#segment-recipients tbody tr")); got != 6 {
		t.Fatalf("%d recipients", got)
	}
	if got := text(first(r.doc, "#segment-recipients .badge")); got != "Matching contact" {
		t.Fatalf("source %q", got)
	}
	if got := text(first(r.doc, "#segment-count")); got != "6 recipients" {
		t.Fatalf("headline count %q", got)
	}
	if first(r.doc, "#segment-remove-help") == nil {
		t.Fatal("no word on what Remove does to a matching contact")
	}

	// The list shows it with its count.
	r = c.get("/segments")
	row := first(r.doc, "tr#segment-"+sid)
	if text(first(row, ".cell-main")) != "Over 25" || text(first(row, "td.cell-num")) != "6" || text(first(row, ".badge")) != "Customers" {
		t.Fatalf("list row %q", text(row))
	}

	// Edit: the builder shows it, with its count.
	r = c.get("/segments/" + sid + "/edit")
	wantStatus(t, r, http.StatusOK)
	if value(r.doc, "#segment-name") != "Over 25" || selected(r.doc, "#cond-0-field") != "Age" || selected(r.doc, "#cond-0-operator") != "is greater than" || value(r.doc, "#cond-0-value") != "25" {
		t.Fatalf("edit builder:\n%s", r.body)
	}
	if got := text(first(r.doc, "#segment-count-value")); got != "6" {
		t.Fatalf("edit count %q", got)
	}
	if attr(first(r.doc, "form#segment-form"), "action") != "/segments/"+sid || value(r.doc, `input[name="segment_id"]`) != sid {
		t.Fatal("edit form posts elsewhere")
	}
	wantRedirect(t, c.post("/segments/"+sid, segmentForm(customers, "Over 29", "and", [3]string{"age", "greater_than", "29"})), "/segments/"+sid)
	r = c.get("/segments/" + sid)
	if got := len(all(r.doc, "#segment-recipients tbody tr")); got != 2 || text(first(r.doc, ".page-header h1")) != "Over 29" {
		t.Fatalf("after update: %d recipients", got)
	}

	// Add by hand; errors beside the fields.
	r = c.hxPost("/segments/"+sid+"/recipients", url.Values{"first_name": {""}, "last_name": {"X"}, "email": {"nope"}})
	wantStatus(t, r, http.StatusUnprocessableEntity)
	if got := texts(r.doc, "#recipient-first-name-error li"); !slices.Equal(got, []string{"The first name field is required."}) {
		t.Fatalf("errors %q", got)
	}
	if got := texts(r.doc, "#recipient-email-error li"); !slices.Equal(got, []string{"The email must be a valid email address."}) {
		t.Fatalf("errors %q", got)
	}
	r = c.hxPost("/segments/"+sid+"/recipients", url.Values{"first_name": {"Hand"}, "last_name": {"Added"}, "email": {"hand@example.net"}})
	wantStatus(t, r, http.StatusOK)
	if value(r.doc, "#recipient-email") != "" || attr(first(r.doc, "#segment-recipients"), "hx-swap-oob") != "true" {
		t.Fatalf("add answer:\n%s", r.body)
	}
	var handRow string
	for _, tr := range all(r.doc, "#segment-recipients tbody tr") {
		if text(first(tr, ".recipient-email")) == "hand@example.net" {
			handRow = attr(tr, "id")
			if text(first(tr, ".badge")) != "Added by hand" || text(first(tr, ".recipient-name")) != "Hand Added" {
				t.Fatalf("hand row %q", text(tr))
			}
		}
	}
	if handRow == "" {
		t.Fatal("the address added by hand is not listed")
	}
	if got := text(first(r.doc, "#flash .flash")); got != "hand@example.net added to the segment." {
		t.Fatalf("flash %q", got)
	}
	// Delete it.
	del := attr(first(r.doc, "tr#"+handRow+" form"), "hx-post")
	r = c.hxPost(del, url.Values{"q": {""}, "page": {"1"}})
	wantStatus(t, r, http.StatusOK)
	if got := len(all(r.doc, "#segment-recipients tbody tr")); got != 2 {
		t.Fatalf("%d recipients after removal", got)
	}
	wantStatus(t, c.hxPost(del, nil), http.StatusNotFound)

	// Delete the segment.
	r = c.get("/segments")
	r = c.hxPost(attr(first(r.doc, "tr#segment-"+sid+" form"), "hx-post"), url.Values{"q": {""}, "page": {"1"}})
	wantStatus(t, r, http.StatusOK)
	if first(r.doc, "#segments-list .empty") == nil || text(first(r.doc, "#flash .flash")) != "Segment “Over 29” deleted." {
		t.Fatalf("after delete:\n%s", r.body)
	}
	wantStatus(t, c.get("/segments/"+sid), http.StatusNotFound)
}

func TestSegmentRecipientPages(t *testing.T) {
	t.Parallel()
	a := newTestApp(t, web.Options{})
	c, acct := a.account("Ada", "ada@example.com")
	au := a.audience(acct)
	customers := au.contactType("Customers")
	for i := range 70 {
		au.contact(customers, fmt.Sprintf("c%02d@example.com", i), "C", fmt.Sprintf("N%02d", i), "US", nil)
	}
	c.get("/segments/new")
	r := c.post("/segments", segmentForm(customers, "Everyone", "and"))
	wantRedirect(t, r, "/segments/")
	r = c.get(r.location())
	if got := len(all(r.doc, "#segment-recipients tbody tr")); got != 50 {
		t.Fatalf("%d on the first page", got)
	}
	next := attr(first(r.doc, `#segment-recipients a[rel="next"]`), "href")
	r = c.hxGet(next)
	if got := len(all(r.doc, "#segment-recipients tbody tr")); got != 20 || first(r.doc, "nav.nav") != nil {
		t.Fatalf("%d on the second page", got)
	}
	r = c.hxGet(strings.Split(next, "?")[0] + "?q=n07")
	if got := texts(r.doc, "#segment-recipients .recipient-email"); !slices.Equal(got, []string{"c07@example.com"}) {
		t.Fatalf("search %q", got)
	}
}
