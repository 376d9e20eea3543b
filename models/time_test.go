package models

import (
	"testing"
	"time"
)

func TestTimestampJSON(t *testing.T) {
	for _, tm := range []time.Time{
		time.Date(2026, 11, 22, 5, 10, 1, 123456789, time.UTC),
		time.Date(2026, 1, 2, 3, 4, 5, 0, time.FixedZone("x", 3600)),
		time.Date(999, 12, 31, 23, 59, 59, 1000, time.UTC),
	} {
		ts := Timestamp{tm}
		want := `"` + tm.UTC().Format(TimestampLayout) + `"`
		if got := string(ts.AppendJSON(nil)); got != want {
			t.Errorf("AppendJSON(%v) = %s, want %s", tm, got, want)
		}
	}
}

func TestParseStored(t *testing.T) {
	for _, s := range []string{
		"2026-11-22 05:10:01.123456+00:00", "2026-11-22 05:10:01+00:00", "2026-11-22 05:10:01.5+00:00",
		"2026-11-22 05:10:01.123456789+00:00",
	} {
		want, err := time.Parse("2006-01-02 15:04:05.999999999-07:00", s)
		if err != nil {
			t.Fatal(err)
		}
		got, ok := parseStored(s)
		if !ok || !got.Equal(want) {
			t.Errorf("parseStored(%q) = %v %v, want %v", s, got, ok, want)
		}
	}
	for _, s := range []string{"2026-11-22 05:10:01.123456+02:00", "2026-11-22T05:10:01Z", "x"} {
		if _, ok := parseStored(s); ok {
			t.Errorf("parseStored(%q) accepted", s)
		}
	}
}
