package world

import (
	"strconv"

	"herald/jsonw"
)

// The Append*JSON functions write the same bytes as encoding/json.Marshal
// (field order, HTML-safe escaping of <, > and &, U+2028/U+2029 escaped,
// invalid UTF-8 replaced by U+FFFD) without reflection, so an API can stream
// all ~171k cities quickly.

// AppendCountryJSON appends c as a JSON object.
func AppendCountryJSON(b []byte, c *Country) []byte {
	b = append(b, `{"id":`...)
	b = strconv.AppendInt(b, c.ID, 10)
	b = append(b, `,"name":`...)
	b = jsonw.AppendString(b, c.Name)
	b = append(b, `,"iso2":`...)
	b = jsonw.AppendString(b, c.ISO2)
	b = append(b, `,"iso3":`...)
	b = jsonw.AppendString(b, c.ISO3)
	return append(b, '}')
}

// AppendStateJSON appends s as a JSON object.
func AppendStateJSON(b []byte, s *State) []byte {
	b = append(b, `{"id":`...)
	b = strconv.AppendInt(b, s.ID, 10)
	b = append(b, `,"country_id":`...)
	b = strconv.AppendInt(b, s.CountryID, 10)
	b = append(b, `,"code":`...)
	b = jsonw.AppendString(b, s.Code)
	b = append(b, `,"name":`...)
	b = jsonw.AppendString(b, s.Name)
	return append(b, '}')
}

// AppendCityJSON appends c as a JSON object.
func AppendCityJSON(b []byte, c *City) []byte {
	b = append(b, `{"id":`...)
	b = strconv.AppendInt(b, c.ID, 10)
	b = append(b, `,"country_id":`...)
	b = strconv.AppendInt(b, c.CountryID, 10)
	b = append(b, `,"state_id":`...)
	b = strconv.AppendInt(b, c.StateID, 10)
	b = append(b, `,"name":`...)
	b = jsonw.AppendString(b, c.Name)
	return append(b, '}')
}

// AppendCountriesJSON appends the JSON array of Countries().
func AppendCountriesJSON(b []byte) []byte {
	d := get()
	b = append(b, '[')
	for i := range d.countries {
		if i > 0 {
			b = append(b, ',')
		}
		b = AppendCountryJSON(b, &d.countries[i])
	}
	return append(b, ']')
}

// AppendStatesJSON appends the JSON array of States(countryID), without
// copying the states.
func AppendStatesJSON(b []byte, countryID int64) []byte {
	d := get()
	sp, _ := d.stateSpan(countryID)
	b = append(b, '[')
	for i := sp.lo; i < sp.hi; i++ {
		if i > sp.lo {
			b = append(b, ',')
		}
		b = AppendStateJSON(b, &d.states[i])
	}
	return append(b, ']')
}

// AppendCitiesJSON appends the JSON array of Cities(countryID, stateID),
// without copying the cities. All cities make about 11 MB of JSON.
func AppendCitiesJSON(b []byte, countryID, stateID int64) []byte {
	d := get()
	sp := d.citySpan(countryID, stateID)
	b = append(b, '[')
	for i := sp.lo; i < sp.hi; i++ {
		if i > sp.lo {
			b = append(b, ',')
		}
		b = AppendCityJSON(b, &d.cities[i])
	}
	return append(b, ']')
}
