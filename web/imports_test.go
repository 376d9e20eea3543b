package web_test

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"slices"
	"strings"
	"testing"

	"herald/models"
	"herald/service"
	"herald/web"
)

func TestImportUpload(t *testing.T) {
	t.Parallel()
	a := newTestApp(t, web.Options{})
	c, acct := a.account("Ada", "ada@example.com")
	au := a.audience(acct)
	typeID := au.contactType("Customers")
	au.field("age", "number")
	au.contact(typeID, "old@example.com", "Old", "Name", "US", nil)

	r := c.get("/contacts/import")
	wantStatus(t, r, http.StatusOK)
	form := first(r.doc, "form#import-form")
	if attr(form, "enctype") != "multipart/form-data" || attr(form, "hx-encoding") != "multipart/form-data" || attr(form, "hx-post") != web.UploadPath {
		t.Fatalf("upload form:\n%s", r.body)
	}
	// Without JavaScript the token rides in the action's query string.
	if got := attr(form, "action"); got != web.UploadPath+"?_csrf="+c.csrf {
		t.Fatalf("action %q", got)
	}
	if first(r.doc, `#import-file[type="file"][name="file"]`) == nil || attr(first(r.doc, `a[href="/contacts/import/sample.csv"]`), "download") == "" && first(r.doc, `a[href="/contacts/import/sample.csv"][download]`) == nil {
		t.Fatal("no file input or sample link")
	}
	if selected(r.doc, "#import-type") != "Customers" {
		t.Fatal("the only type is not chosen")
	}
	if first(r.doc, "#recent-imports .empty") == nil {
		t.Fatal("no empty recent imports")
	}

	// The upload, as htmx sends it: the panel comes back at once, polling.
	var csv strings.Builder
	csv.WriteString("email,first_name,last_name,country,age\n")
	csv.WriteString("old@example.com,Renamed,Person,US,40\n")
	for i := range 20 {
		fmt.Fprintf(&csv, "new%02d@example.com,New%02d,Person,FR,%d\n", i, i, 20+i)
	}
	csv.WriteString("not-an-address,Bad,Row,US,1\n")        // line 23
	csv.WriteString("bad-age@example.com,Bad,Age,US,old\n") // line 24
	r = c.upload(itoa(typeID), csv.String(), uploadOpts{hx: true, fileName: "people.csv"})
	wantStatus(t, r, http.StatusOK)
	panel := first(r.doc, `#import-current[hx-swap-oob="true"] #import-progress`)
	if panel == nil || first(r.doc, "form#import-form") == nil || attr(first(r.doc, "#recent-imports"), "hx-swap-oob") != "true" {
		t.Fatalf("upload answer:\n%s", r.body)
	}
	if attr(panel, "data-status") != "running" || attr(panel, "hx-trigger") != "every 500ms" {
		t.Fatalf("the panel does not poll:\n%s", r.body)
	}
	if first(panel, "progress#import-bar") == nil {
		t.Fatal("no progress bar")
	}
	id := importID(t, r)

	if got := attr(panel, "hx-get"); got != "/contacts/import/"+id+"/progress?recent=1" {
		t.Fatalf("the panel polls %q", got)
	}

	r = c.waitImport(id)
	// On the import page, the recent imports come with the last answer.
	if got := text(first(r.doc, `#recent-imports[hx-swap-oob="true"] tr#import-`+id+" .badge")); got != "Done" {
		t.Fatalf("recent imports not redrawn: %q\n%s", got, r.body)
	}
	panel = first(r.doc, "#import-progress")
	if st := attr(panel, "data-status"); st != "done" {
		t.Fatalf("status %s:\n%s", st, r.body)
	}
	for sel, want := range map[string]string{"#import-rows": "23", "#import-created": "20", "#import-updated": "1", "#import-skipped": "2"} {
		if got := text(first(panel, sel)); got != want {
			t.Errorf("%s = %q, want %q", sel, got, want)
		}
	}
	var lines []string
	for _, tr := range all(panel, "#import-problems tbody tr") {
		lines = append(lines, text(first(tr, "td")))
	}
	if !slices.Equal(lines, []string{"23", "24"}) {
		t.Fatalf("rejected lines %q", lines)
	}
	if reason := text(all(panel, "#import-problems tbody tr")[0]); !strings.Contains(reason, "valid email address") {
		t.Fatalf("reason %q", reason)
	}
	if attr(first(panel, `a[href^="/contacts?type="]`), "href") != "/contacts?type="+itoa(typeID) {
		t.Fatal("no link to the contacts")
	}

	// The contacts are there, the old one updated.
	n, _ := a.svc.Contacts.Count(context.Background(), acct, service.ContactFilter{ContactTypeID: typeID})
	if n != 21 {
		t.Fatalf("%d contacts", n)
	}
	r = c.get("/contacts?q=renamed")
	if got := texts(r.doc, "#contacts-list .contact-name"); !slices.Equal(got, []string{"Renamed Person"}) {
		t.Fatalf("updated contact: %q", got)
	}

	// The import page lists it; its report page shows the report.
	r = c.get("/contacts/import")
	if got := text(first(r.doc, "#recent-imports tr#import-"+id+" .cell-main a")); got != "people.csv" {
		t.Fatalf("recent %q", got)
	}
	if got := text(first(r.doc, "#recent-imports tr#import-"+id+" .badge")); got != "Done" {
		t.Fatalf("recent status %q", got)
	}
	r = c.get("/contacts/import/" + id)
	wantStatus(t, r, http.StatusOK)
	if first(r.doc, "nav.nav") == nil || len(all(r.doc, "#import-problems tbody tr")) != 2 {
		t.Fatalf("report page:\n%s", r.body)
	}
	wantRedirect(t, c.get("/contacts/import/"+id+"/progress"), "/contacts/import/"+id)
	// Polled from the report page, the panel comes alone.
	r = c.hxGet("/contacts/import/" + id + "/progress")
	if first(r.doc, "#import-progress") == nil || first(r.doc, "#recent-imports") != nil {
		t.Fatalf("report page's panel:\n%s", r.body)
	}

	// Without JavaScript: the token in the query, a redirect to the report.
	r = c.upload(itoa(typeID), "email\nsolo@example.com\n", uploadOpts{tokenInQuery: true, fileName: "solo.CSV"})
	wantRedirect(t, r, "/contacts/import/")
	id2 := strings.TrimPrefix(r.location(), "/contacts/import/")
	r = c.waitImport(id2)
	if text(first(r.doc, "#import-created")) != "1" || first(r.doc, ".import-clean") == nil {
		t.Fatalf("second import:\n%s", r.body)
	}

	// The contact type may come after the file.
	r = c.upload(itoa(typeID), "email\nlate@example.com\n", uploadOpts{hx: true, typeAfter: true, fileName: "late.csv"})
	wantStatus(t, r, http.StatusOK)
	id3 := importID(t, r)
	if text(first(c.waitImport(id3).doc, "#import-created")) != "1" {
		t.Fatal("type after the file: not imported")
	}

	// A file without an email column fails, and says why.
	r = c.upload(itoa(typeID), "name\nAnn\n", uploadOpts{hx: true, fileName: "noemail.csv"})
	id4 := importID(t, r)
	r = c.waitImport(id4)
	if attr(first(r.doc, "#import-progress"), "data-status") != "failed" || !strings.Contains(text(first(r.doc, "#import-message")), "email column") {
		t.Fatalf("failed import:\n%s", r.body)
	}
}

func TestImportUploadRefused(t *testing.T) {
	t.Parallel()
	a := newTestApp(t, web.Options{})
	c, acct := a.account("Ada", "ada@example.com")
	typeID := a.audience(acct).contactType("Customers")
	c.get("/contacts/import")

	for _, tt := range []struct {
		name     string
		typeID   string
		fileName string
		field    string
		want     string
	}{
		{"no file", itoa(typeID), "", "#import-file-error", "The file field is required."},
		{"not csv", itoa(typeID), "people.xlsx", "#import-file-error", "The file must be a file of type: csv."},
		{"no type", "", "people.csv", "#import-type-error", "The contact type id field is required."},
	} {
		t.Run(tt.name, func(t *testing.T) {
			r := c.upload(tt.typeID, "email\nx@example.com\n", uploadOpts{hx: true, fileName: tt.fileName})
			wantStatus(t, r, http.StatusUnprocessableEntity)
			if got := texts(r.doc, tt.field+" li"); !slices.Equal(got, []string{tt.want}) {
				t.Fatalf("errors %q\n%s", got, r.body)
			}
			if first(r.doc, "form#import-form") == nil || first(r.doc, "nav") != nil {
				t.Fatal("the 422 answer is not the form")
			}
			r = c.upload(tt.typeID, "email\nx@example.com\n", uploadOpts{tokenInQuery: true, fileName: tt.fileName})
			wantStatus(t, r, http.StatusUnprocessableEntity)
			if first(r.doc, "nav.nav") == nil || len(all(r.doc, tt.field+" li")) != 1 {
				t.Fatal("without htmx: not the page with the message")
			}
		})
	}

	// Another account's contact type is not found.
	_, other := a.account("Bob", "bob@example.com")
	otherType := a.audience(other).contactType("Bob's")
	wantStatus(t, c.upload(itoa(otherType), "email\nx@example.com\n", uploadOpts{hx: true, fileName: "x.csv"}), http.StatusNotFound)

	// No token, or a wrong one: refused before the body is read.
	r := c.upload(itoa(typeID), "email\nx@example.com\n", uploadOpts{hx: true, noToken: true, fileName: "x.csv"})
	wantStatus(t, r, http.StatusForbidden)
	saved := c.csrf
	c.csrf = "forged"
	wantStatus(t, c.upload(itoa(typeID), "email\nx@example.com\n", uploadOpts{tokenInQuery: true, fileName: "x.csv"}), http.StatusForbidden)
	c.csrf = saved
	// A token in the multipart body is not looked for.
	wantStatus(t, c.postMultipart(web.UploadPath, map[string][]string{"contact_type_id": {itoa(typeID)}}), http.StatusForbidden)

	// Nothing was imported.
	n, _ := a.svc.Contacts.Count(context.Background(), acct, service.ContactFilter{})
	if n != 0 {
		t.Fatalf("%d contacts imported", n)
	}
}

func TestImportSample(t *testing.T) {
	t.Parallel()
	a := newTestApp(t, web.Options{})
	c, acct := a.account("Ada", "ada@example.com")
	a.audience(acct).field("plan", "text")
	req := httptest.NewRequest("GET", "/contacts/import/sample.csv", nil)
	for k, v := range c.cookies {
		req.AddCookie(&http.Cookie{Name: k, Value: v})
	}
	resp, err := a.app.Test(req, -1)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	body, _ := io.ReadAll(resp.Body)
	if resp.StatusCode != http.StatusOK || !strings.HasPrefix(resp.Header.Get("Content-Type"), "text/csv") ||
		!strings.Contains(resp.Header.Get("Content-Disposition"), "attachment") {
		t.Fatalf("%d %v", resp.StatusCode, resp.Header)
	}
	header, _, _ := strings.Cut(string(body), "\n")
	if !strings.HasPrefix(header, "email,first_name") || !strings.HasSuffix(header, ",plan") {
		t.Fatalf("header %q", header)
	}
}

// The preview's column choices travel with the upload: columns of a file
// whose header names no field fill the chosen fields, one is left out,
// one fills a custom field made for it; a refused choice answers the
// form and imports nothing.
func TestImportColumnChoices(t *testing.T) {
	t.Parallel()
	a := newTestApp(t, web.Options{})
	c, acct := a.account("Ada", "ada@example.com")
	au := a.audience(acct)
	typeID := au.contactType("Kunden")
	au.field("firma", "text")

	r := c.get("/contacts/import")
	if first(r.doc, `#import-preview[data-import-preview][hidden]`) == nil {
		t.Fatal("no preview region")
	}
	for _, opt := range []string{"-", "email", "first_name", "postal_code", "firma", "+new"} {
		if first(r.doc, `select#import-field-choices[disabled] option[value="`+opt+`"]`) == nil {
			t.Errorf("the field choices lack %q", opt)
		}
	}

	file := "Mail;Vorname;Intern;VIP\nanna@example.com;Anna;x;ja\n"
	r = c.upload(itoa(typeID), file, uploadOpts{hx: true, fileName: "kunden.csv", fields: url.Values{
		"column[0]": {"email"}, "column[1]": {"first_name"}, "column[2]": {"email"},
	}})
	wantStatus(t, r, http.StatusUnprocessableEntity)
	if got := texts(r.doc, "form#import-form .alert-error p"); !slices.Equal(got, []string{"Columns 1 and 3 both fill email: choose one."}) {
		t.Fatalf("refused mapping: %q\n%.2000s", got, r.body)
	}

	r = c.upload(itoa(typeID), file, uploadOpts{hx: true, fileName: "kunden.csv", fields: url.Values{
		"column[0]": {"email"}, "column[1]": {"first_name"}, "column[2]": {"-"},
		"column[3]": {"+new"}, "new_name[3]": {"vip"}, "new_type[3]": {"text"},
	}})
	wantStatus(t, r, http.StatusOK)
	r = c.waitImport(importID(t, r))
	if st := attr(first(r.doc, "#import-progress"), "data-status"); st != "done" {
		t.Fatalf("status %s:\n%s", st, r.body)
	}
	r = c.get("/contacts")
	if !strings.Contains(r.body, "anna@example.com") {
		t.Fatal("the contact was not imported")
	}
	fields, err := a.svc.Fields.Custom(context.Background(), acct)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, f := range fields {
		names = append(names, f.FieldName)
	}
	if !slices.Equal(names, []string{"firma", "vip"}) {
		t.Fatalf("custom fields %v", names)
	}
	var vip, first string
	err = a.svc.Contacts.Each(context.Background(), acct, service.ContactFilter{}, func(v *models.ContactView) error {
		first = v.FirstName
		if cv := v.CustomField["vip"]; cv.FieldValue != nil {
			vip = *cv.FieldValue
		}
		return nil
	})
	if err != nil || first != "Anna" || vip != "ja" {
		t.Fatalf("contact: first %q, vip %q, %v", first, vip, err)
	}
}
