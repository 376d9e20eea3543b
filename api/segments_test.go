package api_test

import (
	"strconv"
	"testing"
)

type segment struct {
	ID                 int64    `json:"id"`
	UserID             int64    `json:"user_id"`
	ContactTypeID      int64    `json:"contact_type_id"`
	SegmentName        string   `json:"segment_name"`
	SelectField        []string `json:"select_field"`
	SelectOperator     []string `json:"select_operator"`
	Value              []string `json:"value"`
	QueryType          *string  `json:"query_type"`
	DeletedAt          *string  `json:"deleted_at"`
	CreatedAt          string   `json:"created_at"`
	SegmentEmailsCount int64    `json:"segment_emails_count"`
}

type segmentEmail struct {
	ID           int64   `json:"id"`
	UserID       int64   `json:"user_id"`
	SegmentID    int64   `json:"segment_id"`
	ContactID    *int64  `json:"contact_id"`
	FirstName    string  `json:"first_name"`
	LastName     string  `json:"last_name"`
	Email        string  `json:"email"`
	Country      *string `json:"country"`
	City         *string `json:"city"`
	AddressLine1 *string `json:"address_line1"`
	CreatedAt    string  `json:"created_at"`
	Fullname     string  `json:"fullname"`
}

func TestSegments(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	typeID := e.a.newType(t, "Members")
	expectOK(t, e.a.send("POST", "/api/custom-fields/save", form("field_name", "age", "field_type", "number")), "Added Successfully")
	for i, c := range []struct{ first, email, country, age string }{
		{"Ann", "ann@example.com", "US", "31"},
		{"Bob", "bob@example.org", "DE", "17"},
		{"Cid", "cid@example.com", "US", "45"},
	} {
		expectOK(t, e.a.send("POST", "/api/contacts/add", form("contact_type_id", typeID, "first_name", c.first, "last_name", "N"+strconv.Itoa(i),
			"email", c.email, "country", c.country, "city", "Town", "custom_field[age]", c.age)), "Contact Added Successfully")
	}
	segs := func(c *client) []segment {
		return list[segment](t, c.send("GET", "/api/segment/list", nil), "segments")
	}

	expectOK(t, e.a.send("POST", "/api/segment/store", form("contact_type_id", typeID, "segment_name", "Adults in US",
		"select_field[0]", "country", "select_operator[0]", "equals", "value[0]", "United States",
		"select_field[1]", "age", "select_operator[1]", "greater_than", "value[1]", "18")), "Saved Successfully")
	s := segs(e.a)
	if len(s) != 1 || s[0].SegmentEmailsCount != 2 || s[0].QueryType != nil || len(s[0].SelectField) != 2 || s[0].SelectOperator[1] != "greater_than" || s[0].Value[0] != "United States" {
		t.Fatalf("segments: %+v", s)
	}
	checkTimestamps(t, s[0].CreatedAt)
	if len(segs(e.b)) != 0 {
		t.Fatal("b sees a's segments")
	}
	sid := strconv.FormatInt(s[0].ID, 10)

	emails := list[segmentEmail](t, e.a.send("GET", "/api/segment/email/list?segment_id="+sid, nil), "contactEmails")
	if len(emails) != 2 || emails[0].Email != "ann@example.com" || emails[0].Fullname != "Ann N0" || emails[0].ContactID == nil ||
		emails[0].Country == nil || *emails[0].Country != "United States" || *emails[0].City != "Town" {
		t.Fatalf("emails: %+v", emails)
	}
	for _, q := range []string{"", "?segment_id=x", "?segment_id=9999"} {
		expectNF(t, e.a.send("GET", "/api/segment/email/list"+q, nil), "Record not found")
	}
	expectNF(t, e.b.send("GET", "/api/segment/email/list?segment_id="+sid, nil), "Record not found")

	t.Run("kept current", func(t *testing.T) {
		// Bob turns 19 and moves to the US: he enters. Ann leaves for Canada.
		all := list[contact](t, e.a.send("GET", "/api/contacts/list", nil), "contacts")
		expectOK(t, e.a.send("POST", "/api/contacts/update", form("contact_id", strconv.FormatInt(all[1].ID, 10), "contact_type_id", typeID,
			"first_name", "Bob", "email", "bob@example.org", "country", "US", "custom_field[age]", "19")), "Contact Updated Successfully")
		expectOK(t, e.a.send("POST", "/api/contacts/update", form("contact_id", strconv.FormatInt(all[0].ID, 10), "contact_type_id", typeID,
			"first_name", "Ann", "email", "ann@example.com", "country", "CA")), "Contact Updated Successfully")
		expectOK(t, e.a.send("POST", "/api/contacts/add", form("contact_type_id", typeID, "email", "dee@example.com", "country", "US", "custom_field[age]", "60")), "Contact Added Successfully")
		expectOK(t, e.a.send("DELETE", "/api/contacts/delete?contact_id="+strconv.FormatInt(all[2].ID, 10), nil), "Deleted Successfully")
		got := list[segmentEmail](t, e.a.send("GET", "/api/segment/email/list?segment_id="+sid, nil), "contactEmails")
		if len(got) != 2 || got[0].Email != "bob@example.org" || got[1].Email != "dee@example.com" {
			t.Fatalf("after changes: %+v", got)
		}
		if c := segs(e.a)[0].SegmentEmailsCount; c != 2 {
			t.Fatalf("count %d", c)
		}
	})

	t.Run("manual recipients", func(t *testing.T) {
		expectOK(t, e.a.send("POST", "/api/segment/email/store", form("segment_id", sid, "first_name", "Hand", "last_name", "Added", "email", "Hand@Example.net")), "Added Successfully")
		expectVAL(t, e.a.send("POST", "/api/segment/email/store", form()), map[string][]string{
			"segment_id": {"The segment id field is required."}, "first_name": {"The first name field is required."},
			"last_name": {"The last name field is required."}, "email": {"The email field is required."},
		})
		expectVAL(t, e.a.send("POST", "/api/segment/email/store", form("segment_id", sid, "first_name", "H", "last_name", "A", "email", "hand@example.net")), map[string][]string{
			"email": {"The email has already been taken."},
		})
		expectNF(t, e.b.send("POST", "/api/segment/email/store", form("segment_id", sid, "first_name", "H", "last_name", "A", "email", "z@example.net")), "Record Not Found")
		// Changing the conditions keeps hand-added recipients.
		expectOK(t, e.a.send("POST", "/api/segment/update", form("segment_id", sid, "contact_type_id", typeID, "segment_name", "Everyone",
			"select_field[0]", "email", "select_operator[0]", "ends_with", "value[0]", ".COM ")), "Updated Successfully")
		got := list[segmentEmail](t, e.a.send("GET", "/api/segment/email/list?segment_id="+sid, nil), "contactEmails")
		emails := map[string]bool{}
		for _, g := range got {
			emails[g.Email] = true
		}
		if len(got) != 3 || !emails["hand@example.net"] || !emails["ann@example.com"] || !emails["dee@example.com"] {
			t.Fatalf("after update: %+v", got)
		}
		var manual segmentEmail
		for _, g := range got {
			if g.ContactID == nil {
				manual = g
			}
		}
		if manual.Fullname != "Hand Added" || manual.Country != nil {
			t.Fatalf("manual: %+v", manual)
		}
		mid := strconv.FormatInt(manual.ID, 10)
		expectNF(t, e.b.send("DELETE", "/api/segment/email/delete?segment_recipient_id="+mid, nil), "Record Not Found")
		expectOK(t, e.a.send("DELETE", "/api/segment/email/delete?segment_recipient_id="+mid, nil), "Deleted Successfully")
		expectNF(t, e.a.send("DELETE", "/api/segment/email/delete?segment_recipient_id="+mid, nil), "Record Not Found")
	})

	t.Run("validation", func(t *testing.T) {
		expectVAL(t, e.a.send("POST", "/api/segment/store", form()), map[string][]string{
			"contact_type_id": {"The contact type id field is required."}, "segment_name": {"The segment name field is required."},
		})
		expectVAL(t, e.a.send("POST", "/api/segment/store", form("contact_type_id", typeID, "segment_name", "S",
			"select_field[0]", "shoe_size", "select_operator[0]", "equals", "value[0]", "4",
			"select_field[1]", "age", "select_operator[1]", "contains", "value[1]", "4",
			"select_field[2]", "age", "select_operator[2]", "less_than", "value[2]", "young",
			"select_field[3]", "email", "select_operator[3]", "equals", "query_type", "xor")), map[string][]string{
			"select_field.0":    {"The selected select field.0 is invalid."},
			"select_operator.1": {"The selected select operator.1 is invalid."},
			"value.2":           {"The value.2 does not fit the age field."},
			"value.3":           {"The value.3 field is required."},
			"query_type":        {"The selected query type is invalid."},
		})
		expectNF(t, e.b.send("POST", "/api/segment/store", form("contact_type_id", typeID, "segment_name", "S")), "Record Not Found")
		expectVAL(t, e.a.send("POST", "/api/segment/update", form("segment_name", "S")), map[string][]string{"segment_id": {"The segment id field is required."}})
		expectNF(t, e.b.send("POST", "/api/segment/update", form("segment_id", sid, "segment_name", "S")), "Record Not Found")
	})

	t.Run("or and in", func(t *testing.T) {
		expectOK(t, e.a.send("POST", "/api/segment/store", form("contact_type_id", typeID, "segment_name", "Either", "query_type", "or",
			"select_field[0]", "first_name", "select_operator[0]", "in", "value[0]", "bob|ANN",
			"select_field[1]", "age", "select_operator[1]", "equals", "value[1]", "60.0")), "Saved Successfully")
		s := segs(e.a)
		if len(s) != 2 || s[1].SegmentEmailsCount != 3 || s[1].QueryType == nil || *s[1].QueryType != "or" {
			t.Fatalf("or segment: %+v", s)
		}
	})

	t.Run("delete", func(t *testing.T) {
		expectNF(t, e.b.send("DELETE", "/api/segment/delete?segment_id="+sid, nil), "Record Not Found")
		r := e.a.send("DELETE", "/api/segment/delete?segment_id="+sid, nil)
		if r.Code != 200 || r.Status != "success" || r.text(r.Errors) != "Deleted Successfully" {
			t.Fatalf("delete: %d %s", r.Code, r.raw)
		}
		expectNF(t, e.a.send("DELETE", "/api/segment/delete?segment_id="+sid, nil), "Record Not Found")
		expectNF(t, e.a.send("GET", "/api/segment/email/list?segment_id="+sid, nil), "Record not found")
		if len(segs(e.a)) != 1 {
			t.Fatal("deleted segment still listed")
		}
	})
}
