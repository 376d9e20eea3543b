package audience

import "herald/world"

// Lookup answers the shipped world data (countries, states, cities) for
// forms; the lists are shared, not per account.
type Lookup struct{}

// Countries returns every country, sorted by name.
func (Lookup) Countries() []world.Country { return world.Countries() }

// States returns the states of a country (0: all).
func (Lookup) States(countryID int64) []world.State { return world.States(countryID) }

// Cities returns the cities of a country and state (0: no narrowing).
func (Lookup) Cities(countryID, stateID int64) []world.City { return world.Cities(countryID, stateID) }

// Country returns a country by id, alpha-2/alpha-3 code or name.
func (Lookup) Country(s string) (world.Country, bool) { return world.LookupCountry(s) }
