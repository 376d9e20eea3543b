package engine

import (
	"testing"
	"time"
)

// TestDateOccurrence: which local days a date field's value falls on, and
// the occurrence each is.
func TestDateOccurrence(t *testing.T) {
	t.Parallel()
	day := func(s string) time.Time {
		d, err := time.Parse("2006-01-02", s)
		if err != nil {
			t.Fatal(err)
		}
		return d
	}
	for _, c := range []struct {
		value, today string
		offset       int
		yearly       bool
		occ          int64
		ok           bool
	}{
		{"1990-03-10T08:30:00", "2027-03-10", 0, true, 2027, true},
		{"1990-03-10", "2027-03-03", -7, true, 2027, true},
		{"1990-03-10", "2027-03-17", 7, true, 2027, true},
		{"1990-03-10", "2027-03-11", 0, true, 0, false},
		{"1990-03-10 08:30", "2027-03-10", 0, true, 2027, true},
		{"2000-02-29", "2027-02-28", 0, true, 2027, true}, // not a leap year: the 28th
		{"2000-02-29", "2028-02-28", 0, true, 0, false},   // a leap year: the 29th
		{"2000-02-29", "2028-02-29", 0, true, 2028, true},
		{"2000-02-29", "2027-02-21", -7, true, 2027, true},
		{"2000-02-28", "2028-02-28", 0, true, 2028, true},
		{"2026-12-30", "2027-01-02", 3, true, 2026, true}, // across the new year: the anniversary of 2026
		{"2026-01-02", "2025-12-30", -3, true, 2026, true},
		{"2029-05-01", "2027-05-01", 0, true, 0, false}, // yearly from the date's own year on
		{"2027-05-01", "2027-05-03", 2, false, 20270501, true},
		{"2027-05-01", "2028-05-03", 2, false, 0, false}, // once
		{"soon", "2027-05-01", 0, true, 0, false},
		{"", "2027-05-01", 0, true, 0, false},
		{"2027-02-30", "2027-03-02", 0, true, 0, false},
		{"2027-05-01x", "2027-05-01", 0, false, 0, false},
	} {
		occ, ok := dateOccurrence(c.value, day(c.today), c.offset, c.yearly)
		if ok != c.ok || ok && occ != c.occ {
			t.Errorf("%q on %s (offset %d, yearly %v): %d %v, want %d %v", c.value, c.today, c.offset, c.yearly, occ, ok, c.occ, c.ok)
		}
	}
}
