package world

import (
	"fmt"
	"sort"
	"strconv"
	"strings"
	"sync"
)

// The time zones of countries, states and cities (data/zones.tsv.gz, made
// by the generator from the cities' coordinates: see README.md). They load
// on first use, apart from the rest of the data, into a few hundred KB.

type zoneRun struct{ lo, hi, zone int32 } // city indexes [lo, hi)

type zoneSet struct {
	names   []string
	country map[int64]int32
	state   []int32 // by state id; -1: the country's
	runs    []zoneRun
}

var (
	zonesOnce sync.Once
	zones     *zoneSet
)

func getZones() *zoneSet {
	zonesOnce.Do(func() {
		z, err := loadZones()
		if err != nil {
			panic("world: embedded zones: " + err.Error())
		}
		zones = z
	})
	return zones
}

func loadZones() (*zoneSet, error) {
	text, err := readData("zones.tsv.gz", true)
	if err != nil {
		return nil, err
	}
	d := get()
	z := &zoneSet{country: map[int64]int32{}, state: make([]int32, len(d.states)+1)}
	for i := range z.state {
		z.state[i] = -1
	}
	num := func(s string) (int64, error) { return strconv.ParseInt(s, 10, 64) }
	for line := range strings.Lines(text) {
		f := strings.Split(strings.TrimSuffix(line, "\n"), "\t")
		bad := fmt.Errorf("zones.tsv: bad line %q", line)
		if f[0] == "z" && len(f) == 2 {
			z.names = append(z.names, f[1])
			continue
		}
		if len(f) < 3 {
			return nil, bad
		}
		var v [3]int64
		for i := 1; i < len(f) && i <= 3; i++ {
			if v[i-1], err = num(f[i]); err != nil {
				return nil, bad
			}
		}
		zi := v[len(f)-2]
		if zi < 0 || zi >= int64(len(z.names)) {
			return nil, bad
		}
		switch {
		case f[0] == "c" && len(f) == 3:
			z.country[v[0]] = int32(zi)
		case f[0] == "s" && len(f) == 3 && v[0] >= 1 && v[0] < int64(len(z.state)):
			z.state[v[0]] = int32(zi)
		case f[0] == "t" && len(f) == 4 && v[0] >= 1 && v[1] >= 1 && v[0]+v[1]-1 <= int64(len(d.cities)):
			z.runs = append(z.runs, zoneRun{int32(v[0] - 1), int32(v[0] - 1 + v[1]), int32(zi)})
		default:
			return nil, bad
		}
	}
	if !sort.SliceIsSorted(z.runs, func(i, j int) bool { return z.runs[i].lo < z.runs[j].lo }) {
		return nil, fmt.Errorf("zones.tsv: city runs out of order")
	}
	return z, nil
}

// CountryZone returns the IANA time zone name of a country (the zone of
// most of its cities), or false when the data has none for it.
func CountryZone(countryID int64) (string, bool) {
	z := getZones()
	i, ok := z.country[countryID]
	if !ok {
		return "", false
	}
	return z.names[i], true
}

// StateZone returns the IANA time zone name of a state (the zone of most
// of its cities, else its country's), or false for an unknown state or one
// whose country has no zone.
func StateZone(stateID int64) (string, bool) {
	st, ok := StateByID(stateID)
	if !ok {
		return "", false
	}
	if i := getZones().state[stateID]; i >= 0 {
		return getZones().names[i], true
	}
	return CountryZone(st.CountryID)
}

// CityZone returns the IANA time zone name at a city's coordinates, else
// its state's, else its country's; false for an unknown city or one with
// no zone at all.
func CityZone(cityID int64) (string, bool) {
	c, ok := CityByID(cityID)
	if !ok {
		return "", false
	}
	z := getZones()
	i := int32(cityID - 1)
	k := sort.Search(len(z.runs), func(k int) bool { return z.runs[k].hi > i })
	if k < len(z.runs) && z.runs[k].lo <= i {
		return z.names[z.runs[k].zone], true
	}
	if c.StateID != 0 {
		return StateZone(c.StateID)
	}
	return CountryZone(c.CountryID)
}

// LookupState finds a state of a country by its code ("CA") or its name,
// ignoring case and surrounding spaces.
func LookupState(countryID int64, s string) (State, bool) {
	s = strings.TrimSpace(s)
	if s == "" || countryID == 0 {
		return State{}, false
	}
	d := get()
	sp, ok := d.statesOf[countryID]
	if !ok {
		return State{}, false
	}
	for _, st := range d.states[sp.lo:sp.hi] {
		if strings.EqualFold(st.Code, s) || strings.EqualFold(st.Name, s) {
			return st, true
		}
	}
	return State{}, false
}

// LookupCity finds a city by name (ignoring case and surrounding spaces)
// in a state (stateID not 0) or else in a country; when several share the
// name, the first in id order. It scans the state's or country's cities:
// callers that look up many contacts keep what they found.
func LookupCity(countryID, stateID int64, s string) (City, bool) {
	s = strings.TrimSpace(s)
	if s == "" || countryID == 0 && stateID == 0 {
		return City{}, false
	}
	d := get()
	sp := d.citySpan(countryID, stateID)
	for _, c := range d.cities[sp.lo:sp.hi] {
		if strings.EqualFold(c.Name, s) {
			return c, true
		}
	}
	return City{}, false
}
