package api_test

import (
	"encoding/json"
	"reflect"
	"strings"
	"testing"
)

// taggedContact is a contact record's id, address and tags.
type taggedContact struct {
	ID    int64    `json:"id"`
	Email string   `json:"email"`
	Tags  []string `json:"tags"`
}

func TestContactTags(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	typeID := e.a.newType(t, "Customers")
	for _, addr := range []string{"ann@example.com", "bob@example.com"} {
		expectOK(t, e.a.send("POST", "/api/contacts/add", form("contact_type_id", typeID, "email", addr, "country", "840")), "Contact Added Successfully")
	}
	contacts := func(c *client) map[string]taggedContact {
		t.Helper()
		out := map[string]taggedContact{}
		for _, ct := range list[taggedContact](t, c.send("GET", "/api/contacts/list", nil), "contacts") {
			if ct.Tags == nil {
				t.Fatalf("contact %d: tags null or missing", ct.ID)
			}
			out[ct.Email] = ct
		}
		return out
	}
	before := contacts(e.a)
	ann, bob := before["ann@example.com"], before["bob@example.com"]
	if len(ann.Tags) != 0 {
		t.Fatalf("new contact tags: %v", ann.Tags)
	}

	// Form arrays by address, JSON arrays by id.
	expectOK(t, e.a.send("POST", "/api/contacts/tags/add", form("emails[]", "ann@example.com", "tags[]", "VIP", "tags[]", "beta")), "Tags Added Successfully")
	expectOK(t, e.a.send("POST", "/api/contacts/tags/add", `{"ids":["`+itoa(bob.ID)+`"],"tags":["news"," vip"]}`), "Tags Added Successfully")
	got := contacts(e.a)
	if !reflect.DeepEqual(got["ann@example.com"].Tags, []string{"beta", "vip"}) || !reflect.DeepEqual(got["bob@example.com"].Tags, []string{"news", "vip"}) {
		t.Fatalf("after add: %+v", got)
	}
	// contacts/details carries them too.
	r := e.a.send("GET", "/api/contacts/details?contact_id="+itoa(ann.ID), nil)
	var det struct {
		Contact taggedContact `json:"contact"`
	}
	if err := json.Unmarshal(r.Message, &det); err != nil || !reflect.DeepEqual(det.Contact.Tags, []string{"beta", "vip"}) {
		t.Fatalf("details: %s %v", r.raw, err)
	}
	// A page of the list as well.
	for _, ct := range list[taggedContact](t, e.a.send("GET", "/api/contacts/list?page=1&per_page=1", nil), "contacts") {
		if !reflect.DeepEqual(ct.Tags, []string{"beta", "vip"}) {
			t.Fatalf("page: %+v", ct)
		}
	}

	expectOK(t, e.a.send("POST", "/api/contacts/tags/remove", form("ids[0]", itoa(ann.ID), "ids[1]", itoa(bob.ID), "tags[0]", "vip")), "Tags Removed Successfully")
	got = contacts(e.a)
	if !reflect.DeepEqual(got["ann@example.com"].Tags, []string{"beta"}) || !reflect.DeepEqual(got["bob@example.com"].Tags, []string{"news"}) {
		t.Fatalf("after remove: %+v", got)
	}

	// Validation: 422 with field problems.
	expectVAL(t, e.a.send("POST", "/api/contacts/tags/add", form()), map[string][]string{
		"emails": {"The emails field is required."}, "tags": {"The tags field is required."}})
	expectVAL(t, e.a.send("POST", "/api/contacts/tags/add", form("ids[]", itoa(ann.ID), "tags[]", strings.Repeat("x", 65))), map[string][]string{
		"tags.0": {"The tags.0 may not be greater than 64 characters."}})
	expectVAL(t, e.a.send("POST", "/api/contacts/tags/add", form("emails[]", "not-an-address", "tags[]", "x")), map[string][]string{
		"emails.0": {"The emails.0 must be a valid email address."}})
	var many strings.Builder
	many.WriteString(`{"ids":["` + itoa(ann.ID) + `"],"tags":[`)
	for i := range 101 {
		if i > 0 {
			many.WriteByte(',')
		}
		many.WriteString(`"t` + itoa(int64(i)) + `"`)
	}
	many.WriteString("]}")
	expectVAL(t, e.a.send("POST", "/api/contacts/tags/add", many.String()), map[string][]string{
		"tags": {"The tags may not have more than 100 items."}})

	// Another account: its contacts are not found by id or by address,
	// and ours are not touched.
	expectNF(t, e.b.send("POST", "/api/contacts/tags/add", form("ids[]", itoa(ann.ID), "tags[]", "x")), "Record Not Found")
	expectNF(t, e.b.send("POST", "/api/contacts/tags/remove", form("emails[]", "ann@example.com", "tags[]", "beta")), "Record Not Found")
	expectNF(t, e.a.send("POST", "/api/contacts/tags/add", form("ids[]", itoa(ann.ID), "ids[]", "999999", "tags[]", "x")), "Record Not Found")
	if got := contacts(e.a); !reflect.DeepEqual(got["ann@example.com"].Tags, []string{"beta"}) {
		t.Fatalf("after refused changes: %+v", got)
	}

	// A segment on tags through the API.
	expectOK(t, e.a.send("POST", "/api/segment/store", form("contact_type_id", typeID, "segment_name", "Beta",
		"select_field[0]", "tags", "select_operator[0]", "contains", "value[0]", "Beta")), "Saved Successfully")
	expectVAL(t, e.a.send("POST", "/api/segment/store", form("contact_type_id", typeID, "segment_name", "Bad",
		"select_field[0]", "tags", "select_operator[0]", "starts_with", "value[0]", "b")), map[string][]string{
		"select_operator.0": {"The selected select operator.0 is invalid."}})
}
