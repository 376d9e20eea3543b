package web_test

import (
	"fmt"
	"net/http"
	"net/url"
	"slices"
	"strings"
	"testing"

	"golang.org/x/net/html"

	"herald/web"
)

// optionValue returns the value of the option of the select sel whose
// label is label, "" when none is.
func optionValue(doc *html.Node, sel, label string) string {
	for _, o := range all(doc, sel+" option") {
		if text(o) == label {
			return attr(o, "value")
		}
	}
	return ""
}

// selected is the label of the selected option of the select sel.
func selected(doc *html.Node, sel string) string {
	return text(first(doc, sel+" option[selected]"))
}

func TestContactsWithoutTypes(t *testing.T) {
	t.Parallel()
	a := newTestApp(t, web.Options{})
	c, _ := a.account("Ada", "ada@example.com")
	r := c.get("/contacts")
	wantStatus(t, r, http.StatusOK)
	if got := text(first(r.doc, ".empty h3")); got != "Create a contact type first" {
		t.Fatalf("empty state %q", got)
	}
	if first(r.doc, `.empty a[href="/contacts/types"]`) == nil || first(r.doc, "#new-contact") != nil {
		t.Fatal("the page offers to add a contact without a type")
	}
}

func TestContactForm(t *testing.T) {
	t.Parallel()
	a := newTestApp(t, web.Options{})
	c, acct := a.account("Ada", "ada@example.com")
	au := a.audience(acct)
	typeID := au.contactType("Customers")
	other := au.contactType("Readers")
	au.field("age", "number")
	au.field("plan", "text")
	au.field("renews", "datetime-local")

	r := c.get("/contacts/new")
	wantStatus(t, r, http.StatusOK)
	form := first(r.doc, "form#contact-form")
	if attr(form, "hx-post") != "/contacts" || attr(form, "action") != "/contacts" {
		t.Fatalf("form posts to %q", attr(form, "hx-post"))
	}
	for sel, typ := range map[string]string{"#custom-age": "number", "#custom-plan": "text", "#custom-renews": "datetime-local", "#contact-email": "email"} {
		if got := attr(first(r.doc, sel), "type"); got != typ {
			t.Errorf("%s is a %q input, want %q", sel, got, typ)
		}
	}
	if attr(first(r.doc, "#custom-age"), "name") != "custom_field[age]" {
		t.Fatal("custom field input name")
	}
	us := optionValue(r.doc, "#contact-country", "United States")
	if us == "" || attr(first(r.doc, "#contact-country"), "hx-get") != "/contacts/states" || attr(first(r.doc, "#contact-country"), "hx-target") != "#contact-state" {
		t.Fatalf("country select:\n%s", r.body)
	}
	if st := first(r.doc, "#contact-state"); attr(st, "hx-get") != "/contacts/cities" || attr(st, "hx-include") != "#contact-country" || attr(st, "hx-target") != "#contact-city" {
		t.Fatal("state select does not reload the cities")
	}

	// Country → states (and the city select emptied out of band).
	r = c.hxGet("/contacts/states?country=" + us)
	wantStatus(t, r, http.StatusOK)
	california := ""
	for _, o := range all(r.doc, "option") {
		if text(o) == "California" {
			california = attr(o, "value")
		}
	}
	if california == "" {
		t.Fatalf("no California in\n%.500s", r.body)
	}
	if oob := first(r.doc, `select#contact-city[hx-swap-oob="innerHTML"]`); oob == nil || text(first(oob, "option")) != "Choose a state first" {
		t.Fatalf("city select not emptied:\n%.300s", r.body)
	}
	// State → cities.
	r = c.hxGet("/contacts/cities?country=" + us + "&state=" + california)
	sf := ""
	for _, o := range all(r.doc, "option") {
		if text(o) == "San Francisco" {
			sf = attr(o, "value")
		}
	}
	if sf == "" {
		t.Fatalf("no San Francisco in the cities")
	}
	// A country without states offers its cities at once.
	r = c.hxGet("/contacts/states?country=" + optionValue(c.get("/contacts/new").doc, "#contact-country", "Aruba"))
	if got := text(first(r.doc, "option")); got != "No state" || len(all(r.doc, "select#contact-city option")) < 2 {
		t.Fatalf("Aruba:\n%.500s", r.body)
	}

	// Validation: each message beside its field, the values kept.
	bad := url.Values{
		"contact_type_id": {itoa(typeID)}, "email": {"not-an-email"}, "first_name": {"Ann"},
		"country": {""}, "custom_field[age]": {"old"}, "custom_field[renews]": {"soon"}, "custom_field[plan]": {"gold"},
	}
	r = c.hxPost("/contacts", bad)
	wantStatus(t, r, http.StatusUnprocessableEntity)
	for sel, want := range map[string]string{
		"#contact-email-error":   "The email must be a valid email address.",
		"#contact-country-error": "The country field is required.",
		"#custom-age-error":      "The age must be a number.",
		"#custom-renews-error":   "The renews is not a valid date.",
	} {
		if got := texts(r.doc, sel+" li"); !slices.Equal(got, []string{want}) {
			t.Errorf("%s: %q, want %q", sel, got, want)
		}
	}
	if value(r.doc, "#contact-first-name") != "Ann" || value(r.doc, "#custom-plan") != "gold" || value(r.doc, "#custom-age") != "old" {
		t.Fatal("the form lost values")
	}
	if first(r.doc, "nav") != nil || first(r.doc, "form#contact-form") == nil {
		t.Fatal("the 422 answer is not the form alone")
	}
	// Without htmx, the whole page.
	r = c.post("/contacts", bad)
	wantStatus(t, r, http.StatusUnprocessableEntity)
	if first(r.doc, "nav.nav") == nil || len(texts(r.doc, "#contact-email-error li")) != 1 {
		t.Fatalf("full page 422:\n%.2000s", r.body)
	}

	// Create: state and city are stored by name.
	good := url.Values{
		"contact_type_id": {itoa(typeID)}, "email": {"Ann@Example.com"}, "first_name": {"Ann"}, "last_name": {"Lee"},
		"country": {us}, "state": {california}, "city": {sf}, "address_line1": {"1 Market St"}, "postal_code": {"94105"},
		"custom_field[age]": {"42"}, "custom_field[renews]": {"2026-05-01T10:30"}, "custom_field[plan]": {"gold"},
	}
	r = c.hxPost("/contacts", good)
	wantStatus(t, r, http.StatusNoContent)
	if got := r.header.Get("HX-Redirect"); got != "/contacts?type="+itoa(typeID) {
		t.Fatalf("HX-Redirect %q", got)
	}
	r = c.get("/contacts?type=" + itoa(typeID))
	if got := text(first(r.doc, "#flash .flash")); got != "Contact ann@example.com added." {
		t.Fatalf("flash %q", got)
	}
	ids := rowIDs(r.doc, "#contacts-list")
	if len(ids) != 1 {
		t.Fatalf("%d rows", len(ids))
	}
	v := au.get(parseID(t, ids[0]))
	if v.State != "California" || v.City != "San Francisco" || v.Country != "United States" || v.PostalCode != "94105" {
		t.Fatalf("stored %q %q %q", v.Country, v.State, v.City)
	}
	if age := v.CustomField["age"].FieldValue; age == nil || *age != "42" {
		t.Fatalf("age %v", age)
	}

	// The same address again in the type: taken.
	r = c.hxPost("/contacts", good)
	wantStatus(t, r, http.StatusUnprocessableEntity)
	if got := texts(r.doc, "#contact-email-error li"); !slices.Equal(got, []string{"The email has already been taken."}) {
		t.Fatalf("duplicate: %q", got)
	}

	// Edit: the selects show what is stored.
	r = c.get("/contacts/" + ids[0] + "/edit")
	wantStatus(t, r, http.StatusOK)
	if selected(r.doc, "#contact-country") != "United States" || selected(r.doc, "#contact-state") != "California" || selected(r.doc, "#contact-city") != "San Francisco" {
		t.Fatalf("edit selects: %q %q %q", selected(r.doc, "#contact-country"), selected(r.doc, "#contact-state"), selected(r.doc, "#contact-city"))
	}
	if value(r.doc, "#custom-age") != "42" || value(r.doc, "#custom-renews") != "2026-05-01T10:30" || value(r.doc, "#contact-email") != "ann@example.com" {
		t.Fatalf("edit values %q %q", value(r.doc, "#custom-age"), value(r.doc, "#custom-renews"))
	}
	if attr(first(r.doc, "form#contact-form"), "hx-post") != "/contacts/"+ids[0] {
		t.Fatal("edit form posts elsewhere")
	}

	// Update: move to another type, clear a custom field, keep a free-text
	// state no select has.
	upd := url.Values{
		"contact_type_id": {itoa(other)}, "email": {"ann@example.com"}, "first_name": {"Annie"}, "last_name": {"Lee"},
		"country": {us}, "state": {"Old Province"}, "city": {""}, "custom_field[age]": {""}, "custom_field[plan]": {"silver"},
	}
	r = c.post("/contacts/"+ids[0], upd)
	wantRedirect(t, r, "/contacts?type="+itoa(other))
	v = au.get(parseID(t, ids[0]))
	if v.FirstName != "Annie" || v.ContactTypeID != other || v.State != "Old Province" || v.CustomField["age"].FieldValue != nil {
		t.Fatalf("updated: %+v", v)
	}
	r = c.get("/contacts/" + ids[0] + "/edit")
	if selected(r.doc, "#contact-state") != "Old Province" {
		t.Fatal("a free-text state is lost on the edit page")
	}
	wantStatus(t, c.get("/contacts/999999/edit"), http.StatusNotFound)
}

func TestContactsList(t *testing.T) {
	t.Parallel()
	a := newTestApp(t, web.Options{})
	c, acct := a.account("Ada", "ada@example.com")
	au := a.audience(acct)
	customers := au.contactType("Customers")
	readers := au.contactType("Readers")
	for i := range 120 {
		au.contact(customers, fmt.Sprintf("user%03d@example.com", i), fmt.Sprintf("User%03d", i), "Smith", "US", nil)
	}
	au.contact(readers, "grace@example.org", "Grace", "Hopper", "US", nil)
	au.contact(readers, "alan@example.org", "Alan", "Turing", "GB", nil)

	r := c.get("/contacts")
	wantStatus(t, r, http.StatusOK)
	if got := len(all(r.doc, "#contacts-list tbody tr")); got != 50 {
		t.Fatalf("%d rows on the first page", got)
	}
	if got := text(first(r.doc, "#contacts-list .pager-info")); got != "Showing 1–50 of 122" {
		t.Fatalf("pager %q", got)
	}
	row := first(r.doc, "#contacts-list tbody tr")
	if text(first(row, ".contact-name")) != "User000 Smith" || text(first(row, ".contact-email")) != "user000@example.com" || text(first(row, ".badge")) != "Customers" {
		t.Fatalf("row %q", text(row))
	}
	if got := attr(first(row, ".contact-name"), "href"); !strings.HasSuffix(got, "/edit") {
		t.Fatalf("row links to %q", got)
	}

	// Narrowed to a type: the filter rides in the page links.
	r = c.get("/contacts?type=" + itoa(customers) + "&page=2")
	if got := text(first(r.doc, "#contacts-list .pager-info")); got != "Showing 51–100 of 120" {
		t.Fatalf("pager %q", got)
	}
	if got := attr(first(r.doc, `#contacts-list a[rel="next"]`), "href"); got != "/contacts?page=3&type="+itoa(customers) {
		t.Fatalf("next %q", got)
	}
	if selected(r.doc, "#contacts-type") != "Customers" {
		t.Fatal("the type select does not show the filter")
	}
	if value(r.doc, `#contacts-list input[name="type"]`) != itoa(customers) {
		t.Fatal("the list form does not carry the type")
	}

	// Search by name or email, through htmx.
	r = c.hxGet("/contacts?q=hopper")
	if got := texts(r.doc, "#contacts-list .contact-email"); !slices.Equal(got, []string{"grace@example.org"}) || first(r.doc, "nav") != nil {
		t.Fatalf("search by name: %q", got)
	}
	r = c.hxGet("/contacts?q=example.org&type=" + itoa(customers))
	if first(r.doc, "#contacts-list .empty") == nil {
		t.Fatal("search within a type found others")
	}
	r = c.hxGet("/contacts?q=alan%40&type=" + itoa(readers))
	if got := texts(r.doc, "#contacts-list .contact-email"); !slices.Equal(got, []string{"alan@example.org"}) {
		t.Fatalf("search by email: %q", got)
	}

	// Delete one, through htmx: the list as it was asked for comes back.
	r = c.get("/contacts?type=" + itoa(readers))
	ids := rowIDs(r.doc, "#contacts-list")
	if len(ids) != 2 {
		t.Fatalf("%d readers", len(ids))
	}
	btn := first(r.doc, "#contacts-list tr#contact-"+ids[0]+" button[data-delete]")
	r = c.hxPost(attr(btn, "hx-post"), url.Values{"q": {""}, "page": {"1"}, "type": {itoa(readers)}})
	wantStatus(t, r, http.StatusOK)
	if got := rowIDs(r.doc, "#contacts-list"); !slices.Equal(got, ids[1:]) {
		t.Fatalf("after delete: %v", got)
	}
	if got := text(first(r.doc, "#flash .flash")); got != "Contact deleted." {
		t.Fatalf("flash %q", got)
	}

	// Bulk delete: all or none.
	r = c.get("/contacts?type=" + itoa(customers))
	page1 := rowIDs(r.doc, "#contacts-list")
	wantStatus(t, c.hxPost("/contacts/bulk-delete", url.Values{"ids": {page1[0], "999999"}}), http.StatusNotFound)
	r = c.hxPost("/contacts/bulk-delete", url.Values{"ids": page1[:3], "type": {itoa(customers)}, "page": {"1"}})
	wantStatus(t, r, http.StatusOK)
	if got := text(first(r.doc, "#flash .flash")); got != "Deleted 3 contacts." {
		t.Fatalf("flash %q", got)
	}
	if got := text(first(r.doc, "#contacts-list .pager-info")); got != "Showing 1–50 of 117" {
		t.Fatalf("pager after bulk delete %q", got)
	}
	r = c.hxPost("/contacts/bulk-delete", url.Values{})
	wantStatus(t, r, http.StatusUnprocessableEntity)
	if text(first(r.doc, ".flash-error")) != "Select at least one contact first." {
		t.Fatalf("nothing selected: %s", r.body)
	}
	// Without htmx: a redirect back to the same list.
	r = c.post("/contacts/bulk-delete", url.Values{"ids": page1[3:5], "type": {itoa(customers)}, "page": {"2"}})
	wantRedirect(t, r, "/contacts?page=2&type="+itoa(customers))
}
