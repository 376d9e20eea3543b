package web_test

import (
	"encoding/csv"
	"net/http"
	"strings"
	"testing"
	"time"

	"herald/models"
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
// are not found (issue 15, part 4).
func TestConsoleExports(t *testing.T) {
	s := newSendSetup(t)
	c := s.c
	other, _ := s.a.account("Bob", "bob@example.com")

	r := c.get("/contacts?type=" + itoa(s.ctype))
	if got := attr(first(r.doc, "#export-contacts"), "href"); got != "/contacts/export.csv?contact_type_id="+itoa(s.ctype) {
		t.Fatalf("export link %q", got)
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
	if first(r.doc, `#send-downloads a[href$="/recipients.csv"]`) == nil || first(r.doc, `#send-downloads a[href$="/statistics.csv"]`) == nil {
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
