package api_test

import (
	"testing"
)

type place struct {
	ID        int64  `json:"id"`
	Name      string `json:"name"`
	CountryID int64  `json:"country_id"`
	StateID   int64  `json:"state_id"`
	ISO2      string `json:"iso2"`
}

func TestCountryStateCity(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	get := func(q string) (countries, states, cities []place) {
		r := e.a.send("GET", "/api/get/country-state-city"+q, nil)
		return list[place](t, r, "countries"), list[place](t, r, "states"), list[place](t, r, "cities")
	}
	countries, states, cities := get("")
	if len(countries) < 240 || len(states) < 3000 || len(cities) < 100000 {
		t.Fatalf("whole lists: %d countries, %d states, %d cities", len(countries), len(states), len(cities))
	}
	_, states, cities = get("?country_id=840")
	var california int64
	for _, s := range states {
		if s.CountryID != 840 {
			t.Fatalf("state of another country: %+v", s)
		}
		if s.Name == "California" {
			california = s.ID
		}
	}
	if california == 0 || len(cities) == 0 {
		t.Fatalf("US: %d states, %d cities, California %d", len(states), len(cities), california)
	}
	_, _, cities = get("?country_id=840&state_id=" + itoa(california))
	found := false
	for _, c := range cities {
		if c.StateID != california {
			t.Fatalf("city of another state: %+v", c)
		}
		found = found || c.Name == "Los Angeles"
	}
	if !found {
		t.Fatal("Los Angeles not among California's cities")
	}
	// Bad narrowing is not an error: unknown ids give empty lists.
	_, states, cities = get("?country_id=abc&state_id=-3")
	if len(states) < 3000 || len(cities) < 100000 {
		t.Fatal("malformed ids should be ignored")
	}
	if r := do(t, e.app, "GET", "/api/get/country-state-city", nil, nil); r.Code != 401 {
		t.Fatalf("no keys: %d", r.Code)
	}
}
