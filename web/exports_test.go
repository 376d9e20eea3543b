package web_test

import (
	"context"
	"encoding/csv"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"testing"
	"time"

	"herald/models"
	"herald/service"
)

func readCSV(t *testing.T, body string) [][]string {
	t.Helper()
	rows, err := csv.NewReader(strings.NewReader(body)).ReadAll()
	if err != nil {
		t.Fatalf("CSV: %v\n%s", err, body)
	}
	return rows
}

// The console downloads a contact type's contacts, a send's recipients
// with their outcomes, and a send's statistics as CSV; another account's
// are not found.
func TestConsoleExports(t *testing.T) {
	t.Parallel()
	s := newSendSetup(t)
	c := s.c
	other, _ := s.a.account("Bob", "bob@example.com")

	// The Export CSV button starts a background export (TestConsoleBackgroundExports);
	// the streamed download stays for the API's sake and direct links.
	r := c.get("/contacts?type=" + itoa(s.ctype))
	if form := first(r.doc, `form[action="/exports/contacts"]`); form == nil || first(form, "button#export-contacts") == nil ||
		attr(first(form, `input[name="contact_type_id"]`), "value") != itoa(s.ctype) || attr(form, "method") != "post" {
		t.Fatal("no Export CSV form for the contact type")
	}
	r = c.get("/contacts/export.csv?contact_type_id=" + itoa(s.ctype))
	wantStatus(t, r, http.StatusOK)
	if ct := r.header.Get("Content-Type"); !strings.HasPrefix(ct, "text/csv") {
		t.Fatalf("content type %q", ct)
	}
	rows := readCSV(t, r.body)
	if len(rows) != 4 || rows[0][0] != "email" || rows[1][0] != "ann@example.com" {
		t.Fatalf("contacts CSV: %v", rows)
	}
	wantStatus(t, other.get("/contacts/export.csv?contact_type_id="+itoa(s.ctype)), http.StatusNotFound)
	r = c.get("/contacts/export.csv?segment_id=" + itoa(s.segment))
	if rows := readCSV(t, r.body); len(rows) != 3 { // bob and cy are @example.org
		t.Fatalf("segment CSV: %v", rows)
	}

	ss := s.create("Exported")
	sent := models.NewTimestamp(time.Now().Add(-time.Hour))
	s.exec("UPDATE single_sends SET status = 3, resolved = 1, triggered = 3, delivered = 2, bounces = 1, unique_opens = 1, total_opens = 2, links = ?, sent_at = ? WHERE id = ?",
		`["https://shop.example.com/sale"]`, sent, ss.ID)
	s.exec("INSERT INTO send_messages (send_id, user_id, email, first_name, state, sent_at, opened_at) VALUES (?, ?, 'ann@example.com', '=cmd', 2, ?, ?)", ss.ID, s.acct, sent, sent)
	s.exec("INSERT INTO send_messages (send_id, user_id, email, state, sent_at) VALUES (?, ?, 'bob@example.org', 2, ?)", ss.ID, s.acct, sent)
	s.exec("INSERT INTO send_messages (send_id, user_id, email, state, error) VALUES (?, ?, 'cy@example.org', 3, '550 5.1.1 no such user')", ss.ID, s.acct)

	r = c.get("/single-sends/" + ss.Utr)
	if first(r.doc, `#send-downloads form[action$="/recipients-export"] button`) == nil || first(r.doc, `#send-downloads a[href$="/statistics.csv"]`) == nil {
		t.Fatal("no download links on a completed send")
	}
	r = c.get("/single-sends/" + ss.Utr + "/recipients.csv")
	wantStatus(t, r, http.StatusOK)
	rows = readCSV(t, r.body)
	got := map[string]string{}
	for _, row := range rows[1:] {
		got[row[0]] = row[3] + "|" + row[1] + "|" + row[10]
	}
	want := map[string]string{"ann@example.com": "opened|'=cmd|", "bob@example.org": "delivered||", "cy@example.org": "bounced||550 5.1.1 no such user"}
	if len(rows) != 4 || rows[0][3] != "outcome" {
		t.Fatalf("recipients CSV: %v", rows)
	}
	for k, v := range want {
		if got[k] != v {
			t.Fatalf("%s: %q, want %q", k, got[k], v)
		}
	}
	r = c.get("/single-sends/" + ss.Utr + "/statistics.csv")
	stats := map[string]string{}
	for _, row := range readCSV(t, r.body) {
		stats[row[0]] = row[1]
	}
	if stats["recipients"] != "3" || stats["delivered"] != "2" || stats["total opens"] != "2" || stats["bounces"] != "1" || stats["clicks on https://shop.example.com/sale"] != "0" {
		t.Fatalf("statistics CSV: %v", stats)
	}
	wantStatus(t, other.get("/single-sends/"+ss.Utr+"/recipients.csv"), http.StatusNotFound)
	wantStatus(t, other.get("/single-sends/"+ss.Utr+"/statistics.csv"), http.StatusNotFound)
}

// The console's Export CSV buttons start background exports: the Exports
// page lists them, polls while one waits or runs, and once the runner has
// written them offers a file equal to the streamed download; another
// account sees none of it; a fourth export under way is refused with its
// reason.
func TestConsoleBackgroundExports(t *testing.T) {
	t.Parallel()
	s := newSendSetup(t)
	c := s.c
	other, _ := s.a.account("Bob", "bob@example.com")
	ss := s.create("Exported")
	s.exec("UPDATE single_sends SET status = 3, resolved = 1 WHERE id = ?", ss.ID)
	s.exec("INSERT INTO send_messages (send_id, user_id, email, first_name, state) VALUES (?, ?, 'ann@example.com', '=cmd', 2)", ss.ID, s.acct)

	c.get("/contacts?type=" + itoa(s.ctype)) // the form's token
	r := c.post("/exports/contacts", url.Values{"contact_type_id": {itoa(s.ctype)}})
	wantRedirect(t, r, "/exports")
	r = c.get("/exports")
	wantStatus(t, r, http.StatusOK)
	list := first(r.doc, "#exports-list")
	if list == nil || attr(list, "hx-trigger") != "every 1s" || attr(list, "hx-get") != "/exports" {
		t.Fatal("a queued export's list does not poll")
	}
	row := first(r.doc, "#exports tbody tr")
	if attr(row, "data-state") != "queued" || !strings.Contains(text(row), "Contacts of the type Customers") {
		t.Fatalf("queued row: %q", text(row))
	}
	if first(r.doc, `nav a[href="/exports"][aria-current="page"]`) == nil {
		t.Fatal("the Exports entry of the navigation is not current")
	}
	// Another account: not found, not listed, not downloadable.
	other.get("/exports") // its form token
	wantStatus(t, other.post("/exports/contacts", url.Values{"contact_type_id": {itoa(s.ctype)}}), http.StatusNotFound)
	wantStatus(t, other.post("/single-sends/"+ss.Utr+"/recipients-export", nil), http.StatusNotFound)

	r = c.post("/single-sends/"+ss.Utr+"/recipients-export", nil)
	wantRedirect(t, r, "/exports")
	if n, err := s.a.svc.Exports.RunDue(context.Background()); err != nil || n != 2 {
		t.Fatalf("RunDue: %d, %v", n, err)
	}
	r = c.hxGet("/exports")
	if first(r.doc, "#exports-list") == nil || first(r.doc, "nav") != nil {
		t.Fatal("htmx's poll did not get the list alone")
	}
	if attr(first(r.doc, "#exports-list"), "hx-trigger") != "" {
		t.Fatal("the list still polls with no export under way")
	}
	links := all(r.doc, "a.export-download")
	if len(links) != 2 || first(r.doc, "#exports progress") == nil {
		t.Fatalf("%d download links", len(links))
	}
	streamed := map[string]string{
		"contacts-type-" + itoa(s.ctype) + ".csv": c.get("/contacts/export.csv?contact_type_id=" + itoa(s.ctype)).body,
		"send-" + ss.Utr + "-recipients.csv":      c.get("/single-sends/" + ss.Utr + "/recipients.csv").body,
	}
	for _, a := range links {
		href := attr(a, "href")
		d := c.get(href)
		wantStatus(t, d, http.StatusOK)
		name := strings.TrimSpace(text(a))
		if d.header.Get("Content-Length") != strconv.Itoa(len(d.body)) {
			t.Fatalf("%s: Content-Length %q for %d bytes", href, d.header.Get("Content-Length"), len(d.body))
		}
		if want, ok := streamed[name]; !ok || d.body != want || !strings.Contains(d.header.Get("Content-Disposition"), name) {
			t.Fatalf("%s (%s): %q", href, name, d.body)
		}
		wantStatus(t, other.get(href), http.StatusNotFound)
	}
	if r := other.get("/exports"); first(r.doc, "#exports") != nil {
		t.Fatal("another account lists the exports")
	}

	// The cap: three under way, the fourth refused with its reason.
	for i := 0; i < service.MaxActiveExports; i++ {
		wantRedirect(t, c.post("/exports/contacts", url.Values{"contact_type_id": {itoa(s.ctype)}}), "/exports")
	}
	r = c.post("/exports/contacts", url.Values{"segment_id": {itoa(s.segment)}})
	wantStatus(t, r, http.StatusConflict)
	if got := text(first(r.doc, "#export-refused")); got != service.ErrTooManyExports.Message {
		t.Fatalf("refusal: %q", got)
	}
}
