package api_test

import (
	"encoding/json"
	"strconv"
	"testing"
)

type contactType struct {
	ID            int64   `json:"id"`
	UserID        int64   `json:"user_id"`
	Name          string  `json:"name"`
	DeletedAt     *string `json:"deleted_at"`
	CreatedAt     string  `json:"created_at"`
	UpdatedAt     string  `json:"updated_at"`
	ContactsCount *int64  `json:"contacts_count"`
}

type customValue struct {
	FieldName  string  `json:"field_name"`
	FieldValue *string `json:"field_value"`
}

type contact struct {
	ID            int64                  `json:"id"`
	UserID        int64                  `json:"user_id"`
	ContactTypeID int64                  `json:"contact_type_id"`
	FirstName     string                 `json:"first_name"`
	LastName      string                 `json:"last_name"`
	Email         string                 `json:"email"`
	AltEmail      *string                `json:"alt_email"`
	Country       string                 `json:"country"`
	State         string                 `json:"state"`
	City          string                 `json:"city"`
	AddressLine1  string                 `json:"address_line1"`
	PostalCode    string                 `json:"postal_code"`
	CustomField   map[string]customValue `json:"custom_field"`
	DeletedAt     *string                `json:"deleted_at"`
	CreatedAt     string                 `json:"created_at"`
	Fullname      string                 `json:"fullname"`
	ContactType   *contactType           `json:"contact_type"`
}

type field struct {
	ID         int64   `json:"id"`
	UserID     *int64  `json:"user_id"`
	FieldName  string  `json:"field_name"`
	FieldType  string  `json:"field_type"`
	IsReserved int     `json:"is_reserved"`
	CreatedAt  *string `json:"created_at"`
}

func one[T any](t *testing.T, r reply, key string) T {
	t.Helper()
	if r.Code != 200 || r.Status != "success" {
		t.Fatalf("%d %s", r.Code, r.raw)
	}
	var m map[string]T
	if err := json.Unmarshal(r.Message, &m); err != nil {
		t.Fatalf("%v: %s", err, r.raw)
	}
	v, ok := m[key]
	if !ok {
		t.Fatalf("no %q in %s", key, r.Message)
	}
	return v
}

func (c *client) newType(t *testing.T, name string) string {
	t.Helper()
	expectOK(t, c.send("POST", "/api/contacts-type/add", form("name", name)), "Added Successfully")
	types := list[contactType](t, c.send("GET", "/api/contacts-type", nil), "contactTypes")
	for _, ct := range types {
		if ct.Name == name {
			return strconv.FormatInt(ct.ID, 10)
		}
	}
	t.Fatalf("type %q not listed", name)
	return ""
}

func TestContactTypes(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	id := e.a.newType(t, "Customers")
	expectVAL(t, e.a.send("POST", "/api/contacts-type/add", form()), map[string][]string{"name": {"The name field is required."}})
	expectVAL(t, e.a.send("POST", "/api/contacts-type/add", form("name", "x")), map[string][]string{"name": {"The name must be at least 2 characters."}})
	expectVAL(t, e.a.send("POST", "/api/contacts-type/add", form("name", "customers")), map[string][]string{"name": {"The name has already been taken."}})

	ct := one[contactType](t, e.a.send("GET", "/api/contacts-type/view?contact_type_id="+id, nil), "contactType")
	if ct.Name != "Customers" || ct.DeletedAt != nil || ct.ContactsCount != nil {
		t.Fatalf("view: %+v", ct)
	}
	checkTimestamps(t, ct.CreatedAt, ct.UpdatedAt)
	for _, q := range []string{"", "?contact_type_id=abc", "?contact_type_id=99999"} {
		expectNF(t, e.a.send("GET", "/api/contacts-type/view"+q, nil), "Record Not Found")
	}
	expectNF(t, e.b.send("GET", "/api/contacts-type/view?contact_type_id="+id, nil), "Record Not Found")

	expectOK(t, e.a.send("POST", "/api/contacts-type/update", form("id", id, "name", "Clients")), "Updated Successfully")
	expectNF(t, e.b.send("POST", "/api/contacts-type/update", form("id", id, "name", "Mine")), "Record Not Found")
	expectNF(t, e.a.send("POST", "/api/contacts-type/update", form("id", "x", "name", "Mine")), "Record Not Found")
	expectVAL(t, e.a.send("POST", "/api/contacts-type/update", form("id", id, "name", "y")), map[string][]string{"name": {"The name must be at least 2 characters."}})

	expectOK(t, e.a.send("POST", "/api/contacts/add", form("contact_type_id", id, "email", "a@example.com", "country", "US")), "Contact Added Successfully")
	types := list[contactType](t, e.a.send("GET", "/api/contacts-type", nil), "contactTypes")
	if len(types) != 1 || types[0].Name != "Clients" || types[0].ContactsCount == nil || *types[0].ContactsCount != 1 {
		t.Fatalf("list: %+v", types)
	}
	if len(list[contactType](t, e.b.send("GET", "/api/contacts-type", nil), "contactTypes")) != 0 {
		t.Fatal("b sees a's types")
	}

	expectNF(t, e.b.send("DELETE", "/api/contacts-type/delete?contact_type_id="+id, nil), "Record Not Found")
	r := e.a.send("DELETE", "/api/contacts-type/delete?contact_type_id="+id, nil)
	if r.Code != 200 || r.Status != "success" || r.text(r.Errors) != "Deleted Successfully" {
		t.Fatalf("delete: %d %s", r.Code, r.raw)
	}
	expectNF(t, e.a.send("DELETE", "/api/contacts-type/delete?contact_type_id="+id, nil), "Record Not Found")
	if n := len(list[contact](t, e.a.send("GET", "/api/contacts/list", nil), "contacts")); n != 0 {
		t.Fatalf("contacts of a deleted type still listed: %d", n)
	}
}

func TestFields(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	reserved := list[field](t, e.a.send("GET", "/api/reserve-fields", nil), "reservedFields")
	if len(reserved) < 11 || reserved[0].FieldName != "first_name" || reserved[0].UserID != nil || reserved[0].IsReserved != 1 || reserved[0].CreatedAt != nil {
		t.Fatalf("reserved: %+v", reserved)
	}
	expectOK(t, e.a.send("POST", "/api/custom-fields/save", form("field_name", "company_name", "field_type", "text")), "Added Successfully")
	expectOK(t, e.a.send("POST", "/api/custom-fields/save", form("field_name", "age", "field_type", "number")), "Added Successfully")
	for _, tc := range []struct {
		body map[string][]string
		in   []string
	}{
		{map[string][]string{"field_name": {"The field name field is required."}, "field_type": {"The field type field is required."}}, nil},
		{map[string][]string{"field_name": {"The field name format is invalid."}}, []string{"field_name", "bad name", "field_type", "text"}},
		{map[string][]string{"field_name": {"The field name is reserved."}}, []string{"field_name", "first_name", "field_type", "text"}},
		{map[string][]string{"field_name": {"The field name has already been taken."}}, []string{"field_name", "AGE", "field_type", "text"}},
		{map[string][]string{"field_type": {"The selected field type is invalid."}}, []string{"field_name", "x", "field_type", "date"}},
	} {
		expectVAL(t, e.a.send("POST", "/api/custom-fields/save", form(tc.in...)), tc.body)
	}
	custom := list[field](t, e.a.send("GET", "/api/custom-fields", nil), "customFields")
	if len(custom) != 2 || custom[1].FieldName != "age" || custom[1].FieldType != "number" || custom[1].IsReserved != 0 || custom[1].UserID == nil || *custom[1].UserID != e.a.id {
		t.Fatalf("custom: %+v", custom)
	}
	checkTimestamps(t, *custom[0].CreatedAt)
	if len(list[field](t, e.b.send("GET", "/api/custom-fields", nil), "customFields")) != 0 {
		t.Fatal("b sees a's fields")
	}

	typeID := e.a.newType(t, "People")
	expectOK(t, e.a.send("POST", "/api/contacts/add", form("contact_type_id", typeID, "email", "p@example.com", "country", "DE", "custom_field[age]", "42", "custom_field[company_name]", "Acme")), "Contact Added Successfully")

	ageID := strconv.FormatInt(custom[1].ID, 10)
	expectNF(t, e.b.send("DELETE", "/api/custom-fields/delete?id="+ageID, nil), "Record Not Found")
	expectNF(t, e.a.send("DELETE", "/api/custom-fields/delete?id="+strconv.FormatInt(reserved[0].ID, 10), nil), "Record Not Found")
	expectOK(t, e.a.send("DELETE", "/api/custom-fields/delete?id="+ageID, nil), "Deleted Successfully")
	cs := list[contact](t, e.a.send("GET", "/api/contacts/list", nil), "contacts")
	if _, ok := cs[0].CustomField["age"]; ok || *cs[0].CustomField["company_name"].FieldValue != "Acme" {
		t.Fatalf("custom fields after delete: %+v", cs[0].CustomField)
	}
	// Re-creating the field does not bring the old value back.
	expectOK(t, e.a.send("POST", "/api/custom-fields/save", form("field_name", "age", "field_type", "number")), "Added Successfully")
	cs = list[contact](t, e.a.send("GET", "/api/contacts/list", nil), "contacts")
	if cs[0].CustomField["age"].FieldValue != nil {
		t.Fatalf("old value came back: %+v", cs[0].CustomField["age"])
	}
}

func TestContacts(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	typeID := e.a.newType(t, "Leads")
	otherType := e.a.newType(t, "Partners")
	expectOK(t, e.a.send("POST", "/api/custom-fields/save", form("field_name", "age", "field_type", "number")), "Added Successfully")
	expectOK(t, e.a.send("POST", "/api/custom-fields/save", form("field_name", "join_date", "field_type", "datetime-local")), "Added Successfully")

	expectOK(t, e.a.send("POST", "/api/contacts/add", form("contact_type_id", typeID, "first_name", "Ann", "last_name", "Lee",
		"email", "Ann@Example.com", "country", "840", "state", "California", "city", "Los Angeles", "postal_code", "90001",
		"custom_field[age]", "31", "custom_field[join_date]", "2026-01-02T10:30")), "Contact Added Successfully")
	// JSON body with a custom_field object.
	expectOK(t, e.a.send("POST", "/api/contacts/add", `{"contact_type_id":`+typeID+`,"first_name":"Bo","email":"bo@example.com","country":"Germany","custom_field":{"age":7}}`), "Contact Added Successfully")

	cs := list[contact](t, e.a.send("GET", "/api/contacts/list", nil), "contacts")
	if len(cs) != 2 {
		t.Fatalf("contacts: %+v", cs)
	}
	ann := cs[0]
	if ann.Email != "ann@example.com" || ann.Fullname != "Ann Lee" || ann.Country != "United States" || ann.ContactType == nil || ann.ContactType.Name != "Leads" {
		t.Fatalf("ann: %+v", ann)
	}
	if v := ann.CustomField["age"]; v.FieldName != "Age" || *v.FieldValue != "31" {
		t.Fatalf("age: %+v", v)
	}
	if v := ann.CustomField["join_date"]; v.FieldName != "Join Date" || *v.FieldValue != "2026-01-02T10:30:00" {
		t.Fatalf("join_date: %+v", v)
	}
	if cs[1].CustomField["join_date"].FieldValue != nil || cs[1].Country != "Germany" {
		t.Fatalf("bo: %+v", cs[1])
	}
	checkTimestamps(t, ann.CreatedAt)
	annID := strconv.FormatInt(ann.ID, 10)

	t.Run("validation", func(t *testing.T) {
		expectVAL(t, e.a.send("POST", "/api/contacts/add", form()), map[string][]string{
			"contact_type_id": {"The contact type id field is required."},
			"email":           {"The email field is required."},
			"country":         {"The country field is required."},
		})
		expectVAL(t, e.a.send("POST", "/api/contacts/add", form("contact_type_id", typeID, "email", "ANN@example.com", "country", "US")), map[string][]string{
			"email": {"The email has already been taken."},
		})
		expectVAL(t, e.a.send("POST", "/api/contacts/add", form("contact_type_id", typeID, "email", "x@example.com", "country", "Atlantis",
			"custom_field[age]", "old", "custom_field[join_date]", "soon", "custom_field[nope]", "1", "alt_email", "bad")), map[string][]string{
			"country":                {"The selected country is invalid."},
			"custom_field.age":       {"The age must be a number."},
			"custom_field.join_date": {"The join date is not a valid date."},
			"custom_field.nope":      {"The custom field nope does not exist."},
			"alt_email":              {"The alt email must be a valid email address."},
		})
		expectNF(t, e.a.send("POST", "/api/contacts/add", form("contact_type_id", "999", "email", "x@example.com", "country", "US")), "Record Not Found")
		expectNF(t, e.b.send("POST", "/api/contacts/add", form("contact_type_id", typeID, "email", "x@example.com", "country", "US")), "Record Not Found")
		// The same address in another type is fine.
		expectOK(t, e.a.send("POST", "/api/contacts/add", form("contact_type_id", otherType, "email", "ann@example.com", "country", "US")), "Contact Added Successfully")
	})

	t.Run("details", func(t *testing.T) {
		c := one[contact](t, e.a.send("GET", "/api/contacts/details?contact_id="+annID, nil), "contact")
		if c.ID != ann.ID || c.ContactType != nil || c.Fullname != "Ann Lee" {
			t.Fatalf("details: %+v", c)
		}
		for _, q := range []string{"", "?contact_id=z", "?contact_id=123456"} {
			expectNF(t, e.a.send("GET", "/api/contacts/details"+q, nil), "Record Not Found")
		}
		expectNF(t, e.b.send("GET", "/api/contacts/details?contact_id="+annID, nil), "Record Not Found")
	})

	t.Run("update", func(t *testing.T) {
		expectOK(t, e.a.send("POST", "/api/contacts/update", form("contact_id", annID, "contact_type_id", typeID, "first_name", "Anne",
			"email", "anne@example.com", "country", "GB", "custom_field[age]", "32")), "Contact Updated Successfully")
		c := one[contact](t, e.a.send("GET", "/api/contacts/details?contact_id="+annID, nil), "contact")
		if c.FirstName != "Anne" || c.Email != "anne@example.com" || c.Country != "United Kingdom" || *c.CustomField["age"].FieldValue != "32" ||
			*c.CustomField["join_date"].FieldValue != "2026-01-02T10:30:00" || c.City != "" {
			t.Fatalf("updated: %+v", c)
		}
		expectVAL(t, e.a.send("POST", "/api/contacts/update", form("contact_type_id", typeID, "email", "q@example.com", "country", "US")), map[string][]string{
			"contact_id": {"The contact id field is required."},
		})
		expectVAL(t, e.a.send("POST", "/api/contacts/update", form("contact_id", annID, "contact_type_id", typeID, "email", "bo@example.com", "country", "US")), map[string][]string{
			"email": {"The email has already been taken."},
		})
		expectNF(t, e.b.send("POST", "/api/contacts/update", form("contact_id", annID, "contact_type_id", typeID, "email", "q@example.com", "country", "US")), "Record Not Found")
		expectNF(t, e.a.send("POST", "/api/contacts/update", form("contact_id", "nope", "contact_type_id", typeID, "email", "q@example.com", "country", "US")), "Record Not Found")
	})

	t.Run("delete", func(t *testing.T) {
		all := list[contact](t, e.a.send("GET", "/api/contacts/list", nil), "contacts")
		if len(all) != 3 {
			t.Fatalf("%d contacts", len(all))
		}
		bo, third := strconv.FormatInt(all[1].ID, 10), strconv.FormatInt(all[2].ID, 10)
		expectNF(t, e.b.send("DELETE", "/api/contacts/delete?contact_id="+annID, nil), "Record Not Found")
		expectOK(t, e.a.send("DELETE", "/api/contacts/delete?contact_id="+annID, nil), "Deleted Successfully")
		expectNF(t, e.a.send("DELETE", "/api/contacts/delete?contact_id="+annID, nil), "Record Not Found")
		expectNF(t, e.a.send("POST", "/api/contacts/bulk-delete", form("strIds[0]", bo, "strIds[1]", annID)), "Record Not Found")
		expectVAL(t, e.a.send("POST", "/api/contacts/bulk-delete", form()), map[string][]string{"strIds": {"The str ids field is required."}})
		expectOK(t, e.a.send("POST", "/api/contacts/bulk-delete", form("strIds[0]", bo, "strIds[1]", third)), "Deleted Successfully")
		if n := len(list[contact](t, e.a.send("GET", "/api/contacts/list", nil), "contacts")); n != 0 {
			t.Fatalf("%d left", n)
		}
		// A deleted contact's address may be added again.
		expectOK(t, e.a.send("POST", "/api/contacts/add", form("contact_type_id", typeID, "email", "anne@example.com", "country", "US")), "Contact Added Successfully")
	})
}
