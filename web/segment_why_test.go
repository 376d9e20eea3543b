package web_test

import (
	"context"
	"net/http"
	"net/url"
	"strings"
	"testing"

	"herald/service"
	"herald/web"
)

// A segment's page asks "why is this address in or out?"; the answer
// shows the verdict and each condition with the values compared. A
// contact's page lists its segments with a "Why?" link each.
func TestSegmentWhy(t *testing.T) {
	t.Parallel()
	a := newTestApp(t, web.Options{})
	c, acct := a.account("Ada", "ada@example.com")
	au := a.audience(acct)
	customers := au.contactType("Customers")
	leads := au.contactType("Leads")
	au.field("age", "number")
	ann := au.contact(customers, "ann@example.com", "Ann", "Lee", "FR", map[string]string{"age": "42"})
	au.contact(customers, "bob@example.com", "Bob", "Ray", "FR", map[string]string{"age": "20"})
	lea := au.contact(leads, "lea@example.com", "Lea", "Moss", "FR", map[string]string{"age": "50"})
	ctx := context.Background()
	seg, err := a.svc.Segments.Create(ctx, acct, service.SegmentInput{ContactTypeID: itoa(customers), SegmentName: "French adults",
		SelectField: []string{"country", "age"}, SelectOperator: []string{"equals", "greater_than"}, Value: []string{"FR", "30"}})
	if err != nil {
		t.Fatal(err)
	}
	why := "/segments/" + itoa(seg.ID) + "/why"

	// The segment's page: the form, and a "Why?" link per recipient.
	r := c.get("/segments/" + itoa(seg.ID))
	wantStatus(t, r, http.StatusOK)
	if f := first(r.doc, "form#why-ask"); f == nil || attr(f, "action") != why || attr(f, "method") != "get" {
		t.Fatalf("no why form on the segment's page:\n%s", r.body)
	}
	if links := all(r.doc, "#segment-recipients a[data-why]"); len(links) != 1 || attr(links[0], "href") != why+"?contact="+itoa(ann) {
		t.Fatalf("why links %d", len(links))
	}

	// In: every condition met, with the contact's own values.
	r = c.get(why + "?email=" + url.QueryEscape("Ann@Example.com"))
	wantStatus(t, r, http.StatusOK)
	if v := first(r.doc, "#why-verdict"); v == nil || attr(v, "data-in") != "true" || !strings.Contains(text(v), "ann@example.com is in this segment") {
		t.Fatalf("verdict for ann:\n%s", r.body)
	}
	rows := all(r.doc, "#why-table tbody tr")
	if len(rows) != 2 {
		t.Fatalf("%d condition rows", len(rows))
	}
	cells := func(tr int) []string { return texts(rows[tr], "td") }
	if got := cells(0); got[0] != "Country is" || got[1] != "France" || got[2] != "France" || got[3] != "Met" {
		t.Errorf("country row %q", got)
	}
	if got := cells(1); got[0] != "Age is greater than" || got[1] != "30" || got[2] != "42" || got[3] != "Met" {
		t.Errorf("age row %q", got)
	}
	if first(r.doc, "#why-email") == nil || attr(first(r.doc, "#why-email"), "value") != "Ann@Example.com" {
		t.Errorf("the form does not keep the address")
	}

	// Out by a condition, asked with htmx: the result only.
	r = c.hxGet(why + "?email=bob@example.com")
	wantStatus(t, r, http.StatusOK)
	if strings.Contains(r.body, "<html") || first(r.doc, "#why-result") == nil {
		t.Fatalf("htmx answer is not the result alone:\n%s", r.body)
	}
	if v := first(r.doc, "#why-verdict"); attr(v, "data-in") != "false" || !strings.Contains(text(v), "fails one condition") {
		t.Errorf("verdict for bob: %q", text(v))
	}
	if got := texts(r.doc, "#why-table tbody tr[data-met=false] td"); len(got) != 4 || got[2] != "20" || got[3] != "Not met" {
		t.Errorf("bob's failed condition %q", got)
	}

	// Out by contact type, though its values would do.
	r = c.get(why + "?email=lea@example.com")
	if v := first(r.doc, "#why-verdict"); attr(v, "data-in") != "false" || !strings.Contains(text(v), "of the type “Leads”") {
		t.Errorf("verdict for lea: %q", text(v))
	}
	if got := texts(r.doc, "#why-table tbody tr[data-met=true]"); len(got) != 2 {
		t.Errorf("lea meets %d conditions, want 2", len(got))
	}
	if attr(first(r.doc, "#why-contact"), "href") != "/contacts/"+itoa(lea)+"/edit" {
		t.Errorf("no link to lea's page")
	}

	// No contact; a malformed address.
	r = c.get(why + "?email=nobody@example.com")
	if v := first(r.doc, "#why-verdict"); !strings.Contains(text(v), "No contact has this address") || first(r.doc, "#why-table") != nil {
		t.Errorf("verdict for nobody: %q", text(v))
	}
	r = c.hxGet(why + "?email=not-an-address")
	wantStatus(t, r, http.StatusUnprocessableEntity)
	if first(r.doc, "#why-result .alert-error") == nil {
		t.Errorf("no error for a malformed address:\n%s", r.body)
	}

	// The contact's page: its segment with a Why? link that explains it.
	r = c.get("/contacts/" + itoa(ann) + "/edit")
	wantStatus(t, r, http.StatusOK)
	link := first(r.doc, "#contact-segments tr[data-in=true] a[data-why]")
	if link == nil || attr(link, "href") != why+"?contact="+itoa(ann) {
		t.Fatalf("contact page segments card:\n%s", r.body)
	}
	r = c.get(attr(link, "href"))
	if v := first(r.doc, "#why-verdict"); attr(v, "data-in") != "true" {
		t.Errorf("the contact's why link: %q", text(v))
	}
	r = c.get("/contacts/" + itoa(lea) + "/edit")
	if first(r.doc, "#contact-segments .empty") == nil {
		t.Errorf("lea's type has no segment, the card should say so")
	}

	// Another account sees neither the segment nor the contact.
	other, oacct := a.account("Eve", "eve@example.com")
	wantStatus(t, other.get(why+"?email=ann@example.com"), http.StatusNotFound)
	oau := a.audience(oacct)
	theirs, err := a.svc.Segments.Create(ctx, oacct, service.SegmentInput{ContactTypeID: itoa(oau.contactType("Theirs")), SegmentName: "All"})
	if err != nil {
		t.Fatal(err)
	}
	wantStatus(t, other.get("/segments/"+itoa(theirs.ID)+"/why?contact="+itoa(ann)), http.StatusNotFound)
}
