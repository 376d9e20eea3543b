package web_test

import (
	"context"
	"net/http"
	"net/url"
	"strings"
	"testing"

	"herald/models"
	"herald/service"
	"herald/web"
)

// Account B can neither see nor change account A's contact types,
// contacts, custom fields, segments and imports: each is "not found"
// (404), and A's data stays as it was.
func TestAudienceIsolation(t *testing.T) {
	t.Parallel()
	a := newTestApp(t, web.Options{})
	ctx := context.Background()
	ca, acctA := a.account("Ann", "ann@example.com")
	au := a.audience(acctA)
	typeA := au.contactType("Secret type")
	fieldA := au.field("secret_field", "text")
	contactA := au.contact(typeA, "secret-contact@example.com", "Secret", "Person", "US", map[string]string{"secret_field": "x"})
	seg, err := a.svc.Segments.Create(ctx, acctA, service.SegmentInput{ContactTypeID: itoa(typeA), SegmentName: "Secret segment", SelectField: []string{"email"}, SelectOperator: []string{"contains"}, Value: []string{"secret"}})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := a.svc.Segments.AddEmail(ctx, acctA, service.SegmentEmailInput{SegmentID: itoa(seg.ID), FirstName: "Hand", LastName: "Added", Email: "secret-hand@example.com"}); err != nil {
		t.Fatal(err)
	}
	var recipientID int64
	_ = a.svc.Segments.EachEmail(ctx, acctA, seg.ID, service.ListFilter{}, func(r *models.SegmentRecipient) error { recipientID = r.ID; return nil })
	ca.get("/contacts/import")
	r := ca.upload(itoa(typeA), "email\nsecret-import@example.com\n", uploadOpts{hx: true, fileName: "secret.csv"})
	importA := importID(t, r)
	ca.waitImport(importA)

	b, acctB := a.account("Bob", "bob@example.com")
	typeB := a.audience(acctB).contactType("Bob's type")
	segB, err := a.svc.Segments.Create(ctx, acctB, service.SegmentInput{ContactTypeID: itoa(typeB), SegmentName: "Bob's segment"})
	if err != nil {
		t.Fatal(err)
	}

	// B's pages do not show A's records.
	if r := b.get("/contacts?q=secret"); len(all(r.doc, "#contacts-list tbody tr")) != 0 {
		t.Fatal("B's search finds A's contacts")
	}
	for _, path := range []string{"/contacts", "/contacts/types", "/contacts/fields", "/contacts/import", "/segments", "/segments/new", "/contacts/new", "/segments/" + itoa(segB.ID)} {
		r := b.get(path)
		wantStatus(t, r, http.StatusOK)
		if strings.Contains(strings.ToLower(r.body), "secret") {
			t.Fatalf("%s shows A's data", path)
		}
	}

	b.get("/contacts")
	ct, cid, sid, rid, fid := itoa(typeA), itoa(contactA), itoa(seg.ID), itoa(recipientID), itoa(fieldA)
	contactForm := url.Values{"contact_type_id": {ct}, "email": {"x@example.com"}, "country": {"US"}}
	tests := []struct {
		method, path string
		form         url.Values
	}{
		{"GET", "/contacts/types/" + ct + "/edit", nil},
		{"GET", "/contacts/types/" + ct + "/row", nil},
		{"POST", "/contacts/types/" + ct, url.Values{"name": {"Taken over"}}},
		{"POST", "/contacts/types/" + ct + "/delete", nil},
		{"GET", "/contacts/" + cid + "/edit", nil},
		{"POST", "/contacts/" + cid, url.Values{"contact_type_id": {itoa(typeB)}, "email": {"x@example.com"}, "country": {"US"}}},
		{"POST", "/contacts/" + cid + "/delete", nil},
		{"POST", "/contacts/bulk-delete", url.Values{"ids": {cid}}},
		{"POST", "/contacts", contactForm},
		{"POST", "/contacts/fields/" + fid + "/delete", nil},
		{"GET", "/segments/" + sid, nil},
		{"GET", "/segments/" + sid + "/edit", nil},
		{"POST", "/segments/" + sid, url.Values{"contact_type_id": {itoa(typeB)}, "segment_name": {"Taken over"}}},
		{"POST", "/segments/" + sid + "/delete", nil},
		{"POST", "/segments/" + sid + "/recipients", url.Values{"first_name": {"X"}, "last_name": {"Y"}, "email": {"x@example.com"}}},
		{"POST", "/segments/" + sid + "/recipients/" + rid + "/delete", nil},
		// Through B's own segment, A's recipient is still not B's.
		{"POST", "/segments/" + itoa(segB.ID) + "/recipients/" + rid + "/delete", nil},
		{"POST", "/segments", url.Values{"contact_type_id": {ct}, "segment_name": {"Mine"}}},
		{"POST", "/segments/count", url.Values{"contact_type_id": {ct}}},
		{"GET", "/contacts/import/" + importA, nil},
		{"GET", "/contacts/import/" + importA + "/progress", nil},
	}
	for _, tt := range tests {
		for _, hx := range []bool{false, true} {
			name := tt.method + " " + tt.path
			if hx {
				name += " (htmx)"
			}
			t.Run(name, func(t *testing.T) {
				var r *response
				switch {
				case tt.method == "GET":
					r = b.do("GET", tt.path, nil, hx)
				case hx:
					r = b.hxPost(tt.path, tt.form)
				default:
					r = b.post(tt.path, tt.form)
				}
				wantStatus(t, r, http.StatusNotFound)
				if strings.Contains(strings.ToLower(r.body), "secret") {
					t.Fatal("the 404 shows A's data")
				}
			})
		}
	}

	// A's records are all still there, unchanged.
	if got, err := a.svc.ContactTypes.Get(ctx, acctA, typeA); err != nil || got.Name != "Secret type" {
		t.Fatalf("A's type: %+v %v", got, err)
	}
	if v := au.get(contactA); v.Email != "secret-contact@example.com" || v.ContactTypeID != typeA {
		t.Fatalf("A's contact: %+v", v)
	}
	if fs, _ := a.svc.Fields.Custom(ctx, acctA); len(fs) != 1 {
		t.Fatal("A's field is gone")
	}
	if got, err := a.svc.Segments.Get(ctx, acctA, seg.ID); err != nil || got.SegmentName != "Secret segment" {
		t.Fatalf("A's segment: %+v %v", got, err)
	}
	n := 0
	_ = a.svc.Segments.EachEmail(ctx, acctA, seg.ID, service.ListFilter{}, func(*models.SegmentRecipient) error { n++; return nil })
	if n != 3 { // the contact, the import's contact and the one added by hand
		t.Fatalf("A's segment has %d recipients", n)
	}
	if count, _ := a.svc.Contacts.Count(ctx, acctB, service.ContactFilter{}); count != 0 {
		t.Fatalf("B has %d contacts", count)
	}
}
