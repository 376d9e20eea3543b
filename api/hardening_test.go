package api_test

import (
	"fmt"
	"mime/multipart"
	"net/http"
	"net/url"
	"strings"
	"testing"
)

// expectFieldError checks a 422 whose errors hold message for field.
func expectFieldError(t *testing.T, r reply, field, message string) {
	t.Helper()
	if r.Code != http.StatusUnprocessableEntity || r.Status != "failed" {
		t.Fatalf("want 422 failed, got %d %s", r.Code, r.raw)
	}
	for _, m := range r.fieldErrors()[field] {
		if m == message {
			return
		}
	}
	t.Fatalf("want %s: %q, got %s", field, message, r.raw)
}

// Names that become the To header (contacts, segment recipients) and the
// owner of a notification address are refused with a line break or any
// other control character in them (decisions.md 8).
// Before, they were stored and every mail to them failed at delivery.
func TestHeaderBoundNamesRefuseControlCharacters(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	typeID := e.a.newType(t, "Customers")
	expectOK(t, e.a.send("POST", "/api/contacts/add", form("contact_type_id", typeID, "email", "ok@example.com", "first_name", "Ok", "country", "840")),
		"Contact Added Successfully")
	contactID := list[contact](t, e.a.send("GET", "/api/contacts/list", nil), "contacts")[0].ID
	expectOK(t, e.a.send("POST", "/api/segment/store", form("contact_type_id", typeID, "segment_name", "All",
		"select_field[0]", "email", "select_operator[0]", "is_not_empty")), "Saved Successfully")
	segID := itoa(list[segment](t, e.a.send("GET", "/api/segment/list", nil), "segments")[0].ID)

	for _, bad := range []string{"Ann\r\nBcc: victim@example.com", "Ann\nLee", "Ann\rLee", "Ann\x00", "Ann\tLee", "Ann\u2028Lee"} {
		t.Run(strings.NewReplacer("\r", `\r`, "\n", `\n`, "\x00", `\0`, "\t", `\t`).Replace(bad), func(t *testing.T) {
			expectFieldError(t, e.a.send("POST", "/api/contacts/add",
				form("contact_type_id", typeID, "email", "new@example.com", "first_name", bad, "country", "840")),
				"first_name", "The first name must not contain line breaks.")
			expectFieldError(t, e.a.send("POST", "/api/contacts/update",
				form("contact_id", itoa(contactID), "contact_type_id", typeID, "email", "ok@example.com", "last_name", bad, "country", "840")),
				"last_name", "The last name must not contain line breaks.")
			expectFieldError(t, e.a.send("POST", "/api/segment/email/store",
				form("segment_id", segID, "first_name", bad, "last_name", "Lee", "email", "hand@example.com")),
				"first_name", "The first name must not contain line breaks.")
			expectFieldError(t, e.a.send("POST", "/api/notification-recipient/save", form("email_address", "boss@example.com", "email_owner", bad)),
				"email_owner", "The email owner must not contain line breaks.")
		})
	}
	// Nothing was stored.
	if cs := list[contact](t, e.a.send("GET", "/api/contacts/list", nil), "contacts"); len(cs) != 1 || cs[0].LastName != "" {
		t.Fatalf("contacts: %+v", cs)
	}
	if r := e.a.send("GET", "/api/notification-recipients", nil); strings.Contains(r.raw, "boss@example.com") {
		t.Fatalf("notification recipient stored: %s", r.raw)
	}
	// Names from far away are fine.
	expectOK(t, e.a.send("POST", "/api/contacts/add", form("contact_type_id", typeID, "email", "zoe@example.com",
		"first_name", "Zoë", "last_name", "Ōtsuka – 大塚", "country", "840")), "Contact Added Successfully")
}

// Contact type and segment names are refused with a line break in them,
// as every other name is (decisions.md 8), whatever the body's encoding.
func TestTypeAndSegmentNamesRefuseLineBreaks(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	typeID := e.a.newType(t, "Customers")
	expectOK(t, e.a.send("POST", "/api/segment/store", form("contact_type_id", typeID, "segment_name", "All",
		"select_field[0]", "email", "select_operator[0]", "is_not_empty")), "Saved Successfully")
	segID := itoa(list[segment](t, e.a.send("GET", "/api/segment/list", nil), "segments")[0].ID)
	const bad = "VIP\r\nBcc: victim@example.com"
	expectFieldError(t, e.a.send("POST", "/api/contacts-type/add", form("name", bad)), "name", "The name must not contain line breaks.")
	expectFieldError(t, e.a.send("POST", "/api/contacts-type/update", `{"id":`+typeID+`,"name":"VIP\nList"}`),
		"name", "The name must not contain line breaks.")
	expectFieldError(t, e.a.send("POST", "/api/segment/store", form("contact_type_id", typeID, "segment_name", bad,
		"select_field[0]", "email", "select_operator[0]", "is_not_empty")), "segment_name", "The segment name must not contain line breaks.")
	expectFieldError(t, e.a.send("POST", "/api/segment/update", `{"segment_id":`+segID+`,"segment_name":"All\u2028of them",`+
		`"select_field":["email"],"select_operator":["is_not_empty"]}`), "segment_name", "The segment name must not contain line breaks.")
	if ts := list[contactType](t, e.a.send("GET", "/api/contacts-type", nil), "contactTypes"); len(ts) != 1 || ts[0].Name != "Customers" {
		t.Fatalf("contact types: %+v", ts)
	}
	if ss := list[segment](t, e.a.send("GET", "/api/segment/list", nil), "segments"); len(ss) != 1 || ss[0].SegmentName != "All" {
		t.Fatalf("segments: %+v", ss)
	}
}

// Segments hold at most 50 conditions and 1,000 values per `in` condition
// (decisions.md 8); at those limits a segment works
// and every later change of a contact of its type still answers. Before,
// 600 OR conditions made every later contacts/add of the type answer 500.
func TestSegmentLimits(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	typeID := e.a.newType(t, "Customers")
	expectOK(t, e.a.send("POST", "/api/custom-fields/save", form("field_name", "age", "field_type", "number")), "Added Successfully")
	seg := func(name string, n int, values func(i int) (field, op, value string), or bool) reply {
		f := form("contact_type_id", typeID, "segment_name", name)
		if or {
			f.Set("query_type", "or")
		}
		for i := range n {
			field, op, value := values(i)
			f.Set(fmt.Sprintf("select_field[%d]", i), field)
			f.Set(fmt.Sprintf("select_operator[%d]", i), op)
			f.Set(fmt.Sprintf("value[%d]", i), value)
		}
		return e.a.send("POST", "/api/segment/store", f)
	}
	emails := func(i int) (string, string, string) { return "email", "equals", fmt.Sprintf("x%d@example.com", i) }
	expectFieldError(t, seg("S51", 51, emails, true), "select_field", "The select field may not have more than 50 items.")
	expectFieldError(t, seg("S600", 600, emails, true), "select_field", "The select field may not have more than 50 items.")
	many := func(n int, format string) string {
		vals := make([]string, n)
		for i := range vals {
			vals[i] = fmt.Sprintf(format, i)
		}
		return strings.Join(vals, "|")
	}
	expectFieldError(t, seg("S1", 1, func(int) (string, string, string) { return "email", "in", many(1001, "y%d@example.com") }, false),
		"value.0", "The value.0 may not have more than 1000 items.")

	// At the limits: 50 conditions of 1,000 values each (text and number),
	// joined by or, is 50,000 values: more than SQLite's bind variables.
	expectOK(t, seg("Lists", 50, func(i int) (string, string, string) {
		if i%2 == 0 {
			return "email", "in", many(1000, fmt.Sprintf("c%d-%%d@example.com", i))
		}
		return "age", "in", many(1000, "%d")
	}, true), "Saved Successfully")
	expectOK(t, seg("Emails", 50, emails, true), "Saved Successfully")
	for _, c := range []struct{ email, age string }{{"c0-999@example.com", "5000"}, {"x49@example.com", "3000"}, {"nobody@example.com", "999"}} {
		expectOK(t, e.a.send("POST", "/api/contacts/add", form("contact_type_id", typeID, "email", c.email, "country", "840", "custom_field[age]", c.age)),
			"Contact Added Successfully")
	}
	counts := map[string]int64{}
	for _, s := range list[segment](t, e.a.send("GET", "/api/segment/list", nil), "segments") {
		counts[s.SegmentName] = s.SegmentEmailsCount
	}
	if len(counts) != 2 || counts["Lists"] != 2 || counts["Emails"] != 1 {
		t.Fatalf("segments: %v", counts)
	}
}

// A segment stored before the limits, of 600 conditions joined by or,
// made every contacts/add of its type fail on SQLite ("Expression tree is
// too large"): it is kept current now.
func TestSegmentStoredBeforeTheLimits(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	typeID := e.a.newType(t, "Customers")
	var f, o, v []string
	for i := range 600 {
		f, o, v = append(f, `"email"`), append(o, `"equals"`), append(v, fmt.Sprintf(`"x%d@example.com"`, i))
	}
	arr := func(a []string) string { return "[" + strings.Join(a, ",") + "]" }
	if err := e.svc.DB.W.Exec(`INSERT INTO segments (user_id, contact_type_id, segment_name, select_field, select_operator, value, query_type, created_at, updated_at)
		VALUES (?, ?, 'Big', ?, ?, ?, 'or', CURRENT_TIMESTAMP, CURRENT_TIMESTAMP)`, e.a.id, typeID, arr(f), arr(o), arr(v)).Error; err != nil {
		t.Fatal(err)
	}
	for _, email := range []string{"x5@example.com", "x599@example.com", "y@example.com"} {
		expectOK(t, e.a.send("POST", "/api/contacts/add", form("contact_type_id", typeID, "email", email, "country", "840")), "Contact Added Successfully")
	}
	if s := list[segment](t, e.a.send("GET", "/api/segment/list", nil), "segments"); len(s) != 1 || s[0].SegmentEmailsCount != 2 {
		t.Fatalf("segments: %+v", s)
	}
}

// An `in` list is one JSON bind value now (inSQL): each field type still
// compares as before, created_at to the microsecond included.
func TestSegmentInListKinds(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	typeID := e.a.newType(t, "Customers")
	expectOK(t, e.a.send("POST", "/api/custom-fields/save", form("field_name", "age", "field_type", "number")), "Added Successfully")
	expectOK(t, e.a.send("POST", "/api/custom-fields/save", form("field_name", "joined", "field_type", "datetime-local")), "Added Successfully")
	for _, c := range [][3]string{{"ann@example.com", "7", "2026-06-15T12:30"}, {"bob@example.com", "18.5", "2026-01-01"}, {"cy@example.com", "", ""}} {
		expectOK(t, e.a.send("POST", "/api/contacts/add", form("contact_type_id", typeID, "email", c[0], "country", "840",
			"custom_field[age]", c[1], "custom_field[joined]", c[2])), "Contact Added Successfully")
	}
	created := map[string]string{}
	for _, c := range list[contact](t, e.a.send("GET", "/api/contacts/list", nil), "contacts") {
		created[c.Email] = c.CreatedAt
	}
	for _, tt := range []struct{ field, value string }{
		{"email", " ANN@example.com |bob@example.com|nobody@example.com"},
		{"age", "7|18.50|99"},
		{"joined", "2026-06-15T12:30:00|2026-01-01 00:00|2020-01-01"},
		{"created_at", created["ann@example.com"] + "|" + created["bob@example.com"]},
	} {
		t.Run(tt.field, func(t *testing.T) {
			name := "In " + tt.field
			expectOK(t, e.a.send("POST", "/api/segment/store", form("contact_type_id", typeID, "segment_name", name,
				"select_field[0]", tt.field, "select_operator[0]", "in", "value[0]", tt.value)), "Saved Successfully")
			n := int64(-1)
			for _, s := range list[segment](t, e.a.send("GET", "/api/segment/list", nil), "segments") {
				if s.SegmentName == name {
					n = s.SegmentEmailsCount
				}
			}
			if n != 2 {
				t.Fatalf("%s matches %d contacts, want ann and bob", name, n)
			}
		})
	}
}

// Bulk operations take at most 10,000 ids (decisions.md 8), checked
// before any query; up to that, the queries are
// chunked. Before, 600,000 strIds took the process to 1.5 GB and answered
// 500 ("too many SQL variables").
func TestBulkOperationLimits(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	ids := func(n int, from int) string {
		var b strings.Builder
		for i := range n {
			if i > 0 {
				b.WriteByte('&')
			}
			fmt.Fprintf(&b, "strIds%%5B%%5D=%d", from+i)
		}
		return b.String()
	}
	urlencoded := func(body string) rawBody { return rawBody{"application/x-www-form-urlencoded", body} }
	for _, path := range []string{
		"/api/global-unsubscribes/bulk-delete", "/api/unsubscribes-groups/recipients-bulk-delete", "/api/contacts/bulk-delete",
		"/api/notification-recipient/bulk-delete", "/api/single/send/bulk-delete", "/api/automations/bulk-delete",
	} {
		for _, n := range []int{10001, 600000} {
			expectFieldError(t, e.a.send("POST", path, urlencoded(ids(n, 1))), "strIds", "The str ids may not have more than 10000 items.")
		}
	}
	// A JSON array counts the same.
	var js strings.Builder
	js.WriteString(`{"strIds":[`)
	for i := range 10001 {
		if i > 0 {
			js.WriteByte(',')
		}
		fmt.Fprintf(&js, "%d", i+1)
	}
	js.WriteString("]}")
	expectFieldError(t, e.a.send("POST", "/api/contacts/bulk-delete", js.String()), "strIds", "The str ids may not have more than 10000 items.")

	// 10,000 global unsubscribers go in one bulk delete; one more id of
	// another account's makes it delete none.
	var addrs strings.Builder
	for i := range 10000 {
		fmt.Fprintf(&addrs, "u%d@example.com,", i)
	}
	expectOK(t, e.a.send("POST", "/api/global-unsubscribes/save", form("email_address", addrs.String())), "Added Successfully")
	expectOK(t, e.b.send("POST", "/api/global-unsubscribes/save", form("email_address", "theirs@example.com")), "Added Successfully")
	var first, theirs int64
	if err := e.svc.DB.R.Raw("SELECT MIN(id) FROM unsubscribers WHERE user_id = ?", e.a.id).Scan(&first).Error; err != nil {
		t.Fatal(err)
	}
	if err := e.svc.DB.R.Raw("SELECT id FROM unsubscribers WHERE user_id = ?", e.b.id).Scan(&theirs).Error; err != nil {
		t.Fatal(err)
	}
	r := e.a.send("POST", "/api/global-unsubscribes/bulk-delete", urlencoded(ids(9999, int(first))+fmt.Sprintf("&strIds%%5B%%5D=%d", theirs)))
	if r.Code != 404 || r.text(r.Errors) != "Record Not Found" {
		t.Fatalf("with another account's id: %d %s", r.Code, r.raw)
	}
	if n := len(list[struct{ ID int64 }](t, e.a.send("GET", "/api/global-unsubscribes", nil), "unSubscribers")); n != 10000 {
		t.Fatalf("%d unsubscribers left, want all 10000", n)
	}
	expectOK(t, e.a.send("POST", "/api/global-unsubscribes/bulk-delete", urlencoded(ids(10000, int(first)))), "Deleted Successfully")
	if n := len(list[struct{ ID int64 }](t, e.a.send("GET", "/api/global-unsubscribes", nil), "unSubscribers")); n != 0 {
		t.Fatalf("%d unsubscribers left", n)
	}

	// Contacts across several chunks, their segments kept current.
	typeID := e.a.newType(t, "Customers")
	var csv strings.Builder
	csv.WriteString("email\n")
	for i := range 2500 {
		fmt.Fprintf(&csv, "c%d@example.com\n", i)
	}
	r, rep := upload(t, e.a, [][2]string{{"contact_type_id", typeID}, {"file", ""}}, "c.csv", csv.String())
	expectOK(t, r, "Imported Successfully")
	if rep.Created != 2500 {
		t.Fatalf("import: %+v", rep)
	}
	expectOK(t, e.a.send("POST", "/api/segment/store", form("contact_type_id", typeID, "segment_name", "All",
		"select_field[0]", "email", "select_operator[0]", "ends_with", "value[0]", "example.com")), "Saved Successfully")
	var low int64
	if err := e.svc.DB.R.Raw("SELECT MIN(id) FROM contacts WHERE user_id = ?", e.a.id).Scan(&low).Error; err != nil {
		t.Fatal(err)
	}
	expectOK(t, e.a.send("POST", "/api/contacts/bulk-delete", urlencoded(ids(2400, int(low)))), "Deleted Successfully")
	if s := list[segment](t, e.a.send("GET", "/api/segment/list", nil), "segments"); s[0].SegmentEmailsCount != 100 {
		t.Fatalf("segment after the bulk delete: %+v", s[0])
	}
}

// Text that is not valid UTF-8 is refused (422), whatever carries it: a
// query, a URL-encoded, multipart or JSON body.
// Before, it was stored as sent on SQLite.
func TestInvalidUTF8IsRefused(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	typeID := e.a.newType(t, "Customers")
	bad := "Ann\xff\xfe"
	expectFieldError(t, e.a.send("POST", "/api/contacts/add", form("contact_type_id", typeID, "email", "a@example.com", "first_name", bad, "country", "840")),
		"first_name", "The first name must be valid UTF-8.")
	expectFieldError(t, e.a.send("POST", "/api/contacts-type/add", form("name", bad)), "name", "The name must be valid UTF-8.")
	expectFieldError(t, e.a.send("GET", "/api/contacts/list?search=%FF", nil), "search", "The search must be valid UTF-8.")
	var b strings.Builder
	mw := multipart.NewWriter(&b)
	_ = mw.WriteField("name", bad)
	_ = mw.Close()
	expectFieldError(t, e.a.send("POST", "/api/contacts-type/add", rawBody{mw.FormDataContentType(), b.String()}), "name", "The name must be valid UTF-8.")
	r := e.a.send("POST", "/api/contacts-type/add", `{"name":"`+bad+`"}`)
	if r.Code != 422 || r.text(r.Errors) != "The request must be valid UTF-8." {
		t.Fatalf("JSON body: %d %s", r.Code, r.raw)
	}
	// Nothing was stored; valid text of any script is fine.
	if ts := list[contactType](t, e.a.send("GET", "/api/contacts-type", nil), "contactTypes"); len(ts) != 1 {
		t.Fatalf("contact types: %+v", ts)
	}
	expectOK(t, e.a.send("POST", "/api/contacts-type/add", form("name", "Клиенты 顧客")), "Added Successfully")
}

// A NUL is valid UTF-8 but no text PostgreSQL stores: every stored text
// refuses it (422), names that become headers as a control character; on
// PostgreSQL these answered 500 (found by FuzzAPI's seeds).
func TestNULInStoredTextIsRefused(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	typeID := e.a.newType(t, "Customers")
	nul := "A\x00B"
	for _, c := range []struct {
		path  string
		body  url.Values
		field string
		msg   string
	}{
		{"/api/contacts-type/add", form("name", nul), "name", "The name must not contain line breaks."},
		{"/api/contacts-type/update", form("id", typeID, "name", nul), "name", "The name must not contain line breaks."},
		{"/api/unsubscribes-groups/save", form("group_name", nul, "description", "D", "is_display", "1"), "group_name", "The group name must not contain a NUL character."},
		{"/api/unsubscribes-groups/save", form("group_name", "G", "description", nul, "is_display", "1"), "description", "The description must not contain a NUL character."},
		{"/api/segment/store", form("contact_type_id", typeID, "segment_name", nul), "segment_name", "The segment name must not contain line breaks."},
		{"/api/segment/store", form("contact_type_id", typeID, "segment_name", "S", "select_field[0]", "email", "select_operator[0]", "equals", "value[0]", nul),
			"value.0", "The value.0 must not contain a NUL character."},
		{"/api/sender/save", form("from_name", "Ann", "from_email", "a@shop.example.com", "reply_to_email", "a@shop.example.com", "country_id", "840",
			"company_address", nul, "nickname", "n", "zip_code", "1"), "company_address", "The company address must not contain a NUL character."},
		{"/api/sender/save", form("from_name", "Ann", "from_email", "a@shop.example.com", "reply_to_email", "a@shop.example.com", "country_id", "840",
			"company_address", "1 Main", "nickname", nul), "nickname", "The nickname must not contain line breaks."},
		{"/api/contacts/add", form("contact_type_id", typeID, "email", "c@example.com", "country", "840", "city", nul), "city", "The city must not contain a NUL character."},
		{"/api/contacts/add", form("contact_type_id", typeID, "email", "c@example.com", "country", "840", "first_name", nul), "first_name", "The first name must not contain line breaks."},
	} {
		expectFieldError(t, e.a.send("POST", c.path, c.body), c.field, c.msg)
	}
	expectOK(t, e.a.send("POST", "/api/custom-fields/save", form("field_name", "nick", "field_type", "text")), "Added Successfully")
	expectFieldError(t, e.a.send("POST", "/api/contacts/add", form("contact_type_id", typeID, "email", "c@example.com", "country", "840", "custom_field[nick]", nul)),
		"custom_field.nick", "The nick must not contain a NUL character.")
}
