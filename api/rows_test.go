package api

import (
	"encoding/json"
	"testing"
	"time"

	"herald/models"
)

// The hand-written rows must be byte for byte what encoding/json writes.
func TestRowsMatchEncodingJSON(t *testing.T) {
	t.Parallel()
	gid := int64(7)
	ts := models.NewTimestamp(time.Date(2026, 11, 22, 5, 10, 1, 123456000, time.UTC))
	odd := "a\"b\\c<d>&e\u2028f\x01g\xffh é 😀\n"
	alt := "alt@example.com"
	rows := []any{
		&models.Unsubscriber{ID: 1, UserID: 2, EmailAddress: odd, CreatedAt: ts, UpdatedAt: ts},
		&models.Unsubscriber{ID: 1, UserID: 2, UnsubscribeGroupsID: &gid, EmailAddress: "x@example.com", CreatedAt: ts},
		&models.UnsubscribeGroupCount{UnsubscribeGroup: models.UnsubscribeGroup{ID: 3, UserID: 2, RandID: "r", GroupName: odd, Description: odd, IsDisplay: 1, CreatedAt: ts, UpdatedAt: ts}, UnsubscribeClientsCount: 42},
		&models.NotificationRecipient{ID: 4, UserID: 2, EmailAddress: "n@example.com", EmailOwner: odd, CreatedAt: ts, UpdatedAt: ts},
		&models.ContactView{Contact: models.Contact{ID: 5, UserID: 2, ContactTypeID: 9, FirstName: odd, Email: "c@example.com", CreatedAt: ts, UpdatedAt: ts}, Fullname: odd},
		&models.ContactView{
			Contact:     models.Contact{ID: 6, UserID: 2, ContactTypeID: 9, AltEmail: &alt, Country: "United States", PostalCode: odd, DeletedAt: &ts, CreatedAt: ts, UpdatedAt: ts},
			CustomField: map[string]models.CustomValue{"zeta": {FieldName: "Zeta", FieldValue: &alt}, "age": {FieldName: "Age"}, "b_c": {FieldName: odd, FieldValue: &odd}},
			Fullname:    "x",
			ContactType: &models.ContactType{ID: 9, UserID: 2, Name: odd, CreatedAt: ts, UpdatedAt: ts},
		},
		&models.ContactView{Contact: models.Contact{ID: 7}, CustomField: map[string]models.CustomValue{}},
		&models.ContactView{Contact: models.Contact{ID: 8}, Tags: []string{}},
		&models.ContactView{Contact: models.Contact{ID: 9}, Tags: []string{"a", odd, "vip"}},
	}
	for _, r := range rows {
		want, err := json.Marshal(r)
		if err != nil {
			t.Fatal(err)
		}
		got, err := appendRow(nil, r)
		if err != nil || string(got) != string(want) {
			t.Fatalf("%T:\n got %s\nwant %s", r, got, want)
		}
	}
}
