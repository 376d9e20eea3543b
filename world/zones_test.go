package world

import (
	"testing"
	"time"
)

// cityIn finds a city by name in a state named by code in a country named
// by its alpha-2 code.
func cityIn(t *testing.T, iso2, state, name string) City {
	t.Helper()
	ct, ok := LookupCountry(iso2)
	if !ok {
		t.Fatalf("country %s missing", iso2)
	}
	var sid int64
	if state != "" {
		st, ok := LookupState(ct.ID, state)
		if !ok {
			t.Fatalf("state %s/%s missing", iso2, state)
		}
		sid = st.ID
	}
	c, ok := LookupCity(ct.ID, sid, name)
	if !ok {
		t.Fatalf("city %s/%s/%s missing", iso2, state, name)
	}
	return c
}

func TestCountryZone(t *testing.T) {
	for _, tc := range []struct{ iso2, want string }{
		{"FR", "Europe/Paris"}, {"JP", "Asia/Tokyo"}, {"DE", "Europe/Berlin"},
		{"IN", "Asia/Kolkata"}, {"GB", "Europe/London"}, {"RU", "Europe/Moscow"},
	} {
		ct, _ := LookupCountry(tc.iso2)
		if got, ok := CountryZone(ct.ID); !ok || got != tc.want {
			t.Errorf("CountryZone(%s) = %q, %v; want %q", tc.iso2, got, ok, tc.want)
		}
	}
	if _, ok := CountryZone(12345); ok {
		t.Error("CountryZone of an unknown id found one")
	}
}

func TestStateZone(t *testing.T) {
	us, _ := LookupCountry("US")
	for _, tc := range []struct{ code, want string }{
		{"CA", "America/Los_Angeles"}, {"NY", "America/New_York"}, {"IL", "America/Chicago"},
		{"CO", "America/Denver"}, {"AZ", "America/Phoenix"}, {"HI", "Pacific/Honolulu"},
	} {
		st, ok := LookupState(us.ID, tc.code)
		if !ok {
			t.Fatalf("LookupState(US, %s) found none", tc.code)
		}
		if got, ok := StateZone(st.ID); !ok || got != tc.want {
			t.Errorf("StateZone(US-%s) = %q, %v; want %q", tc.code, got, ok, tc.want)
		}
	}
	// By name too, any case.
	if st, ok := LookupState(us.ID, " california "); !ok || st.Code != "CA" {
		t.Errorf("LookupState(US, california) = %+v, %v", st, ok)
	}
	// A state of a one-zone country answers the country's zone.
	fr, _ := LookupCountry("FR")
	st := States(fr.ID)[0]
	if got, _ := StateZone(st.ID); got != "Europe/Paris" {
		t.Errorf("StateZone(%s) = %q; want Europe/Paris", st.Name, got)
	}
	if _, ok := StateZone(0); ok {
		t.Error("StateZone(0) found one")
	}
}

func TestCityZone(t *testing.T) {
	for _, tc := range []struct{ iso2, state, city, want string }{
		{"US", "NY", "New York City", "America/New_York"},
		{"US", "CA", "Los Angeles", "America/Los_Angeles"},
		{"US", "IL", "Chicago", "America/Chicago"},
		// Cities whose zone is not their state's: the Florida panhandle
		// keeps Central time, El Paso Mountain time.
		{"US", "FL", "Pensacola", "America/Chicago"},
		{"US", "TX", "El Paso", "America/Denver"},
		{"FR", "", "Paris", "Europe/Paris"},
		{"JP", "", "Tokyo", "Asia/Tokyo"},
		{"RU", "", "Vladivostok", "Asia/Vladivostok"},
		{"BR", "", "Manaus", "America/Manaus"},
		{"AU", "Western Australia", "Perth", "Australia/Perth"},
	} {
		c := cityIn(t, tc.iso2, tc.state, tc.city)
		if got, ok := CityZone(c.ID); !ok || got != tc.want {
			t.Errorf("CityZone(%s) = %q, %v; want %q", tc.city, got, ok, tc.want)
		}
	}
	if _, ok := CityZone(0); ok {
		t.Error("CityZone(0) found one")
	}
}

// Every zone in the data is one Go's time package knows (the binary embeds
// time/tzdata), and every city has one.
func TestEveryZoneLoads(t *testing.T) {
	z := getZones()
	for _, n := range z.names {
		if _, err := time.LoadLocation(n); err != nil {
			t.Errorf("zone %q: %v", n, err)
		}
	}
	_, _, cities := Counts()
	missing := 0
	for id := int64(1); id <= int64(cities); id++ {
		if _, ok := CityZone(id); !ok {
			missing++
		}
	}
	if missing > 0 {
		t.Errorf("%d cities without a zone", missing)
	}
}
