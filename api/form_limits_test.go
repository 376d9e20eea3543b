package api_test

import (
	"fmt"
	"net/http"
	"strings"
	"testing"
)

// jsonList is `{"<key>":[<item>,<item>,…` with n items; closed with "]}"
// unless cut, when it stops after the last item as if the rest of a far
// larger body were still to come.
func jsonList(key string, n int, item string, cut bool) string {
	var b strings.Builder
	b.Grow(len(key) + n*(len(item)+1) + 8)
	b.WriteString(`{"` + key + `":[`)
	for i := range n {
		if i > 0 {
			b.WriteByte(',')
		}
		b.WriteString(item)
	}
	if !cut {
		b.WriteString("]}")
	}
	return b.String()
}

// A list in a request body is counted while the body is read and refused
// at its first item past the limit (decisions.md 8), with the same 422 and
// text as a list refused after reading. Before, a JSON body was decoded
// whole first: about 4.9 million ids (within the 10 MB body limit) took a
// minute and 1.7 GB before the bulk limit refused them. A body cut off
// after the item too many shows that nothing after it is read: it is
// refused for its list, not answered 400 for its broken end.
func TestListsRefusedWhileTheBodyIsRead(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	const tooManyIDs = "The str ids may not have more than 10000 items."
	for _, path := range []string{"/api/contacts/bulk-delete", "/api/global-unsubscribes/bulk-delete", "/api/single/send/bulk-delete"} {
		t.Run(path, func(t *testing.T) {
			expectFieldError(t, e.a.send("POST", path, jsonList("strIds", 10001, "1", false)), "strIds", tooManyIDs)
			expectFieldError(t, e.a.send("POST", path, jsonList("strIds", 10001, "1", true)), "strIds", tooManyIDs)
		})
	}
	// The body of the report: 4.9 million ids, 9.8 MB.
	huge := jsonList("strIds", 4_900_000, "1", false)
	if len(huge) > 10<<20 {
		t.Fatalf("body of %d bytes is over the 10 MB limit", len(huge))
	}
	expectFieldError(t, e.a.send("POST", "/api/contacts/bulk-delete", huge), "strIds", tooManyIDs)
	// Lists of lists, and one comma-separated value, count their items.
	expectFieldError(t, e.a.send("POST", "/api/contacts/bulk-delete", jsonList("strIds", 10001, "[]", true)), "strIds", tooManyIDs)
	commas := `{"strIds":"` + strings.Repeat("7,", 10001) + `"}`
	expectFieldError(t, e.a.send("POST", "/api/contacts/bulk-delete", commas), "strIds", tooManyIDs)
	expectFieldError(t, e.a.send("POST", "/api/contacts/bulk-delete", form("strIds", strings.Repeat("7,", 10001))), "strIds", tooManyIDs)

	// A segment's lists: 50 conditions, worded as the service words them.
	typeID := e.a.newType(t, "Customers")
	seg := func(key string, n int) string {
		return `{"contact_type_id":"` + typeID + `","segment_name":"S",` + jsonList(key, n, `"email"`, true)[1:]
	}
	expectFieldError(t, e.a.send("POST", "/api/segment/store", seg("select_field", 51)), "select_field", "The select field may not have more than 50 items.")
	expectFieldError(t, e.a.send("POST", "/api/segment/store", seg("select_operator", 51)), "select_field", "The select field may not have more than 50 items.")
	expectFieldError(t, e.a.send("POST", "/api/segment/store", seg("value", 51)), "value", "The value may not have more than 50 items.")

	// Every other list takes at most 10,000 items; before, 10,001 event
	// names were read whole and taken.
	expectFieldError(t, e.a.send("POST", "/api/event-webhooks/save", `{"url":"https://hooks.example/in",`+jsonList("events", 10001, `"open"`, false)[1:]),
		"events", "The events may not have more than 10000 items.")
	expectFieldError(t, e.a.send("POST", "/api/contacts-type/add", `{"name":"Leads",`+jsonList("tags", 10001, `{}`, true)[1:]),
		"tags", "The tags may not have more than 10000 items.")

	// The whole body holds at most 20,000 values, whatever their names.
	var many strings.Builder
	many.WriteString(`{"name":"Leads"`)
	for i := range 20001 {
		fmt.Fprintf(&many, `,"n%d":1`, i)
	}
	many.WriteString("}")
	if r := e.a.send("POST", "/api/contacts-type/add", many.String()); r.Code != http.StatusUnprocessableEntity ||
		r.text(r.Errors) != "The request may not have more than 20000 values." {
		t.Fatalf("20,002 values: %d %s", r.Code, r.raw)
	}
	// A name given twice in one object, and a body nested deeper than any
	// name the API reads, cannot be read as a form.
	for _, body := range []string{`{"name":"Leads","name":"Other"}`, `{"name":"Leads","x":` + strings.Repeat("[", 9) + strings.Repeat("]", 9) + `}`} {
		if r := e.a.send("POST", "/api/contacts-type/add", body); r.Code != http.StatusBadRequest {
			t.Fatalf("%s: %d %s", body, r.Code, r.raw)
		}
	}

	// Within the limits nothing changed: 10,000 ids are read, a nested
	// object, a list and a plain value still arrive as before.
	r := e.a.send("POST", "/api/contacts/bulk-delete", jsonList("strIds", 10000, "1", false))
	if r.Code != http.StatusNotFound {
		t.Fatalf("10,000 ids of no contact: %d %s", r.Code, r.raw)
	}
	expectOK(t, e.a.send("POST", "/api/contacts/add", `{"contact_type_id":`+typeID+`,"email":"ann@example.com","country":"840","custom_field":{},"first_name":"Ann"}`),
		"Contact Added Successfully")
	expectOK(t, e.a.send("POST", "/api/segment/store", `{"contact_type_id":"`+typeID+`","segment_name":"Ann","select_field":["email"],"select_operator":["in"],"value":["ann@example.com|bob@example.com"]}`),
		"Saved Successfully")
}
