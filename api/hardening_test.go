package api_test

import (
	"net/http"
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
// other control character in them (issue 11, finding 2; decisions.md 8).
// Before, they were stored and every mail to them failed at delivery.
func TestHeaderBoundNamesRefuseControlCharacters(t *testing.T) {
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
