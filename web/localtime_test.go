package web_test

import (
	"context"
	"net/http"
	"strings"
	"testing"
	"time"

	"herald/service"
)

// The compose page's local-time option and the waves on the
// send's page.
func TestSingleSendLocalTime(t *testing.T) {
	t.Parallel()
	s := newSendSetup(t)
	c := s.c
	if _, err := s.a.svc.Fields.Create(context.Background(), s.acct, service.FieldInput{FieldName: "tz", FieldType: "text"}); err != nil {
		t.Fatal(err)
	}
	r := c.get("/single-sends/new")
	wantStatus(t, r, http.StatusOK)
	if first(r.doc, `#send-local input#send-local-on[type="checkbox"][name="local_on"]`) == nil || first(r.doc, `#send-local-on[checked]`) != nil ||
		first(r.doc, `input#send-local-time[type="time"][name="local_time"]`) == nil ||
		first(r.doc, `select#send-local-field[name="local_zone_field"] option[value="tz"]`) == nil {
		t.Fatalf("no local-time option:\n%s", text(first(r.doc, "#send-form")))
	}

	// On without a time: the error is beside the time.
	form := s.form("Morning")
	form.Set("local_on", "1")
	r = c.post("/single-sends", form)
	wantStatus(t, r, http.StatusUnprocessableEntity)
	if got := text(first(r.doc, "#send-local-time-error")); !strings.Contains(got, "Choose the local time.") {
		t.Fatalf("local time error %q", got)
	}
	if first(r.doc, `#send-local-on[checked]`) == nil {
		t.Fatal("the option is not kept checked")
	}

	form.Set("local_time", "09:00")
	form.Set("local_zone_field", "tz")
	r = c.post("/single-sends", form)
	wantRedirect(t, r, "/single-sends/")
	utr := strings.TrimPrefix(r.location(), "/single-sends/")
	ss := s.get(utr)
	if ss.LocalTime != "09:00" || ss.LocalZoneField != "tz" {
		t.Fatalf("stored local time %q field %q", ss.LocalTime, ss.LocalZoneField)
	}
	// Before it starts, the page says the waves come later.
	r = c.get("/single-sends/" + utr)
	if !strings.Contains(text(first(r.doc, "#send-waves")), "once the send starts") {
		t.Fatalf("waves before the start:\n%s", text(first(r.doc, "#send-waves")))
	}
	// Its edit form shows the option as saved.
	s.exec("UPDATE single_sends SET armed = 0 WHERE id = ?", ss.ID)
	r = c.get("/single-sends/" + utr + "/edit")
	if first(r.doc, `#send-local-on[checked]`) == nil || value(r.doc, "#send-local-time") != "09:00" ||
		first(r.doc, `#send-local-field option[value="tz"][selected]`) == nil {
		t.Fatalf("edit form:\n%s", text(first(r.doc, "#send-local")))
	}

	// Waves as the resolution writes them: two zones at one time, one later.
	ny := time.Date(2030, 5, 1, 13, 0, 0, 0, time.UTC).UnixMilli()
	paris := time.Date(2030, 5, 2, 7, 0, 0, 0, time.UTC).UnixMilli()
	s.exec("UPDATE single_sends SET status = 2, resolved = 1, triggered = 6 WHERE id = ?", ss.ID)
	s.exec("INSERT INTO send_waves (send_id, zone, user_id, release_at, recipients) VALUES (?, 'America/New_York', ?, ?, 3), (?, 'America/Toronto', ?, ?, 1), (?, 'Europe/Paris', ?, ?, 2)",
		ss.ID, s.acct, ny, ss.ID, s.acct, ny, ss.ID, s.acct, paris)
	r = c.get("/single-sends/" + utr)
	wantStatus(t, r, http.StatusOK)
	rows := all(r.doc, "#send-waves tr.wave")
	if len(rows) != 2 {
		t.Fatalf("%d wave rows:\n%s", len(rows), text(first(r.doc, "#send-waves")))
	}
	for i, want := range [][3]string{{"America/New_York, America/Toronto", "4", "0"}, {"Europe/Paris", "2", "0"}} {
		if got := [3]string{text(first(rows[i], ".wave-zones")), text(first(rows[i], ".wave-recipients")), text(first(rows[i], ".wave-sent"))}; got != want {
			t.Errorf("wave %d: %v, want %v", i, got, want)
		}
	}
	if attr(first(rows[0], "time"), "datetime") != "2030-05-01T13:00:00Z" {
		t.Errorf("first wave's time %q", attr(first(rows[0], "time"), "datetime"))
	}
}
