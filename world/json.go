package world

import (
	"strconv"
	"unicode/utf8"
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
	b = appendString(b, c.Name)
	b = append(b, `,"iso2":`...)
	b = appendString(b, c.ISO2)
	b = append(b, `,"iso3":`...)
	b = appendString(b, c.ISO3)
	return append(b, '}')
}

// AppendStateJSON appends s as a JSON object.
func AppendStateJSON(b []byte, s *State) []byte {
	b = append(b, `{"id":`...)
	b = strconv.AppendInt(b, s.ID, 10)
	b = append(b, `,"country_id":`...)
	b = strconv.AppendInt(b, s.CountryID, 10)
	b = append(b, `,"code":`...)
	b = appendString(b, s.Code)
	b = append(b, `,"name":`...)
	b = appendString(b, s.Name)
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
	b = appendString(b, c.Name)
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

const hexDigits = "0123456789abcdef"

// safe[c] is true for ASCII bytes written as they are inside a JSON string.
var safe = func() (t [utf8.RuneSelf]bool) {
	for c := 0x20; c < utf8.RuneSelf; c++ {
		t[c] = c != '"' && c != '\\' && c != '<' && c != '>' && c != '&'
	}
	return
}()

// appendString appends s as a JSON string, escaped as encoding/json does.
func appendString(b []byte, s string) []byte {
	b = append(b, '"')
	start := 0
	for i := 0; i < len(s); {
		c := s[i]
		if c < utf8.RuneSelf {
			if safe[c] {
				i++
				continue
			}
			b = append(b, s[start:i]...)
			switch c {
			case '"', '\\':
				b = append(b, '\\', c)
			case '\b':
				b = append(b, '\\', 'b')
			case '\f':
				b = append(b, '\\', 'f')
			case '\n':
				b = append(b, '\\', 'n')
			case '\r':
				b = append(b, '\\', 'r')
			case '\t':
				b = append(b, '\\', 't')
			default: // other control characters and <, >, &
				b = append(b, '\\', 'u', '0', '0', hexDigits[c>>4], hexDigits[c&0xf])
			}
			i++
			start = i
			continue
		}
		r, size := utf8.DecodeRuneInString(s[i:])
		if r == utf8.RuneError && size == 1 {
			b = append(b, s[start:i]...)
			b = append(b, `\ufffd`...)
			i += size
			start = i
			continue
		}
		if r == '\u2028' || r == '\u2029' {
			b = append(b, s[start:i]...)
			b = append(b, '\\', 'u', '2', '0', '2', hexDigits[r&0xf])
			i += size
			start = i
			continue
		}
		i += size
	}
	b = append(b, s[start:]...)
	return append(b, '"')
}
