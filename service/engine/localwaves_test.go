package engine

import (
	"testing"
	"time"
)

// The zone of a contact: the custom field when it names a zone, else the
// city (in its state), the state, the country, else the account's.
func TestLocalZoneOrder(t *testing.T) {
	t.Parallel()
	lw := &localWaves{fallback: "America/Sao_Paulo", zoneOf: map[zoneKey]string{}, releaseOf: map[string]int64{}, locations: map[string]*time.Location{}}
	for _, tc := range []struct {
		k    zoneKey
		want string
	}{
		{zoneKey{field: "Asia/Tokyo", country: "250"}, "Asia/Tokyo"},
		{zoneKey{field: " Asia/Tokyo ", country: "250"}, "Asia/Tokyo"},
		{zoneKey{field: "Mars/Base", country: "250"}, "Europe/Paris"},
		{zoneKey{field: "Local", country: "250"}, "Europe/Paris"},
		{zoneKey{field: "../../etc/passwd", country: "250"}, "Europe/Paris"},
		{zoneKey{country: "840", state: "FL", city: "Pensacola"}, "America/Chicago"},
		{zoneKey{country: "840", state: "Florida", city: "Miami"}, "America/New_York"},
		{zoneKey{country: "840", state: "CA"}, "America/Los_Angeles"},
		{zoneKey{country: "840", state: "CA", city: "Nowhere Town"}, "America/Los_Angeles"},
		{zoneKey{country: "840", state: "TX", city: "El Paso"}, "America/Denver"},
		{zoneKey{country: "840", city: "El Paso"}, "America/Chicago"}, // no state: the first El Paso, in Illinois
		{zoneKey{country: "392"}, "Asia/Tokyo"},
		{zoneKey{country: "France"}, "America/Sao_Paulo"}, // stored countries are ids: text is unknown
		{zoneKey{}, "America/Sao_Paulo"},
	} {
		if got := lw.zone(tc.k); got != tc.want {
			t.Errorf("zone(%+v) = %q, want %q", tc.k, got, tc.want)
		}
	}
}

// The release time is the first moment at or after the start when the
// zone's clock shows the local time: a zone past it gets the next day's.
func TestLocalRelease(t *testing.T) {
	t.Parallel()
	start := time.Date(2030, 5, 1, 10, 0, 0, 0, time.UTC)
	lw := &localWaves{base: start, hour: 9, fallback: "UTC", releaseOf: map[string]int64{}, locations: map[string]*time.Location{}}
	for zone, want := range map[string]time.Time{
		"America/New_York":    time.Date(2030, 5, 1, 13, 0, 0, 0, time.UTC), // 06:00 there: today
		"Europe/London":       time.Date(2030, 5, 2, 8, 0, 0, 0, time.UTC),  // 11:00 BST there: tomorrow
		"Europe/Paris":        time.Date(2030, 5, 2, 7, 0, 0, 0, time.UTC),  // 12:00 there: tomorrow
		"Asia/Tokyo":          time.Date(2030, 5, 2, 0, 0, 0, 0, time.UTC),  // 19:00 there: tomorrow
		"Atlantic/Cape_Verde": start,                                        // 09:00 there, exactly: now
		"UTC":                 time.Date(2030, 5, 2, 9, 0, 0, 0, time.UTC),
	} {
		if got := time.UnixMilli(lw.release(zone)).UTC(); !got.Equal(want) {
			t.Errorf("release(%s) = %v, want %v", zone, got, want)
		}
	}
}
