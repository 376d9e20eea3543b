package web_test

import (
	"context"
	"net/http"
	"testing"
	"time"

	"herald/models"
)

// The calendar shows a month in the account's time zone: a send
// scheduled at 23:30 UTC falls on the next day in Tokyo; previous and
// next link the neighbouring months; sends link to their pages.
func TestSendsCalendarMonth(t *testing.T) {
	t.Parallel()
	s := newSendSetup(t)
	c := s.c
	if err := s.a.svc.Accounts.SetTimeZone(context.Background(), s.acct, "Asia/Tokyo"); err != nil {
		t.Fatal(err)
	}
	later := s.create("Late one")
	s.exec("UPDATE single_sends SET status = 1, armed = 1, schedule_type = 1, send_after = ? WHERE id = ?",
		models.NewTimestamp(time.Date(2031, 4, 30, 23, 30, 0, 0, time.UTC)), later.ID) // May 1, 08:30 in Tokyo
	done := s.create("Done one")
	s.exec("UPDATE single_sends SET status = 3, sent_at = ? WHERE id = ?", models.DateTime{Time: time.Date(2031, 5, 14, 1, 0, 0, 0, time.UTC)}, done.ID)

	r := c.get("/single-sends")
	if a := first(r.doc, `a#sends-calendar[href="/single-sends/calendar"]`); a == nil {
		t.Fatal("no link to the calendar from the list")
	}
	r = c.get("/single-sends/calendar?month=2031-05")
	wantStatus(t, r, http.StatusOK)
	if text(first(r.doc, "#cal-title")) != "May 2031" || attr(first(r.doc, "#cal-prev"), "href") != "/single-sends/calendar?month=2031-04" ||
		attr(first(r.doc, "#cal-next"), "href") != "/single-sends/calendar?month=2031-06" {
		t.Fatalf("month header:\n%.3000s", r.body)
	}
	day := first(r.doc, `li.cal-day[data-date="2031-05-01"]`)
	a := first(day, `a.cal-send.is-scheduled`)
	if a == nil || attr(a, "href") != "/single-sends/"+later.Utr || text(first(a, "time")) != "08:30" {
		t.Fatalf("May 1 in Tokyo:\n%.4000s", r.body)
	}
	day = first(r.doc, `li.cal-day[data-date="2031-05-14"]`)
	if a := first(day, `a.cal-send.is-sent`); a == nil || attr(a, "href") != "/single-sends/"+done.Utr || text(first(a, "time")) != "10:00" {
		t.Fatal("the sent send is not on May 14")
	}
	// Whole weeks from Monday: May 2031 starts on a Thursday, so three
	// days of April lead and the grid has 35 days.
	if n := len(all(r.doc, "ol.cal-grid li.cal-day")); n != 35 {
		t.Fatalf("%d days in the grid", n)
	}
	if n := len(all(r.doc, "li.cal-out")); n != 4 { // Apr 28-30 and Jun 1
		t.Fatalf("%d days outside the month", n)
	}
	// April holds nothing: the send at 23:30 UTC on April 30 is in May.
	r = c.get("/single-sends/calendar?month=2031-04")
	if first(r.doc, "#cal-empty") == nil || first(r.doc, "a.cal-send") != nil {
		t.Fatalf("April:\n%.3000s", r.body)
	}
	// A month that cannot be read shows the current one.
	r = c.get("/single-sends/calendar?month=nonsense")
	wantStatus(t, r, http.StatusOK)
	tokyo, _ := time.LoadLocation("Asia/Tokyo")
	if got, want := text(first(r.doc, "#cal-title")), time.Now().In(tokyo).Format("January 2006"); got != want {
		t.Fatalf("default month %q, want %q", got, want)
	}
	if first(r.doc, "li.cal-day.is-today") == nil {
		t.Fatal("today is not marked")
	}
}
