package web_test

import (
	"net/http"
	"net/url"
	"slices"
	"strings"
	"testing"

	"herald/web"
)

func TestCustomFields(t *testing.T) {
	t.Parallel()
	a := newTestApp(t, web.Options{})
	c, acct := a.account("Ada", "ada@example.com")
	au := a.audience(acct)

	r := c.get("/contacts/fields")
	wantStatus(t, r, http.StatusOK)
	if got := len(all(r.doc, "#reserved-fields tbody tr")); got != 11 {
		t.Fatalf("%d reserved fields", got)
	}
	if got := texts(r.doc, "#reserved-fields code"); got[0] != "first_name" || !slices.Contains(got, "postal_code") {
		t.Fatalf("reserved %q", got)
	}
	if first(r.doc, "#reserved-fields form") != nil || first(r.doc, "#reserved-fields button") != nil {
		t.Fatal("reserved fields can be changed")
	}
	if first(r.doc, "#custom-fields .empty") == nil {
		t.Fatal("no empty state")
	}
	if got := texts(r.doc, "#field-create-type option"); !slices.Equal(got, []string{"Text", "Number", "Date and time"}) {
		t.Fatalf("types %q", got)
	}

	// Add: the form emptied, the fields out of band.
	r = c.hxPost("/contacts/fields", url.Values{"field_name": {"company_size"}, "field_type": {"number"}})
	wantStatus(t, r, http.StatusOK)
	if value(r.doc, "#field-create-name") != "" || attr(first(r.doc, "#custom-fields"), "hx-swap-oob") != "true" {
		t.Fatalf("add answer:\n%s", r.body)
	}
	if got := texts(r.doc, "#custom-fields td.cell-main"); !slices.Equal(got, []string{"Company Size"}) {
		t.Fatalf("custom %q", got)
	}
	if got := text(first(r.doc, "#custom-fields td[data-label=\"Type\"]")); got != "Number" {
		t.Fatalf("type %q", got)
	}

	// Errors beside the fields, the values kept.
	for _, tt := range []struct {
		name, typ, field, want string
	}{
		{"", "text", "field_name", "The field name field is required."},
		{"bad name", "text", "field_name", "The field name format is invalid."},
		{"email", "text", "field_name", "The field name is reserved."},
		{"Company_Size", "text", "field_name", "The field name has already been taken."},
		{"plan", "colour", "field_type", "The selected field type is invalid."},
	} {
		r = c.hxPost("/contacts/fields", url.Values{"field_name": {tt.name}, "field_type": {tt.typ}})
		wantStatus(t, r, http.StatusUnprocessableEntity)
		id := "#field-create-name-error"
		if tt.field == "field_type" {
			id = "#field-create-type-error"
		}
		if got := texts(r.doc, id+" li"); !slices.Equal(got, []string{tt.want}) {
			t.Errorf("%q/%q: %q", tt.name, tt.typ, got)
		}
		if value(r.doc, "#field-create-name") != tt.name {
			t.Errorf("name lost")
		}
	}
	wantRedirect(t, c.post("/contacts/fields", url.Values{"field_name": {"plan"}, "field_type": {"text"}}), "/contacts/fields")

	// Delete: asked first; the value leaves every contact.
	typeID := au.contactType("Customers")
	cid := au.contact(typeID, "ann@example.com", "Ann", "Lee", "US", map[string]string{"plan": "gold", "company_size": "12"})
	r = c.get("/contacts/fields")
	var form string
	for _, f := range all(r.doc, "#custom-fields form") {
		if strings.Contains(attr(f, "hx-confirm"), "“plan”") {
			form = attr(f, "hx-post")
			if !strings.Contains(attr(f, "hx-confirm"), "removed from every contact") {
				t.Fatalf("confirmation %q", attr(f, "hx-confirm"))
			}
		}
	}
	r = c.hxPost(form, nil)
	wantStatus(t, r, http.StatusOK)
	if got := texts(r.doc, "#custom-fields td.cell-main"); !slices.Equal(got, []string{"Company Size"}) {
		t.Fatalf("after delete %q", got)
	}
	if got := text(first(r.doc, "#flash .flash")); got != "Field “plan” deleted." {
		t.Fatalf("flash %q", got)
	}
	v := au.get(cid)
	if _, ok := v.CustomField["plan"]; ok {
		t.Fatal("the contact still has the field")
	}
	if s := v.CustomField["company_size"].FieldValue; s == nil || *s != "12" {
		t.Fatal("another field's value went too")
	}
	wantStatus(t, c.hxPost(form, nil), http.StatusNotFound)
}
