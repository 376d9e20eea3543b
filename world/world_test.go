package world

import (
	"bytes"
	"encoding/json"
	"runtime"
	"strings"
	"sync"
	"testing"
	"time"
)

func TestCounts(t *testing.T) {
	nc, ns, ni := Counts()
	t.Logf("countries %d, states %d, cities %d", nc, ns, ni)
	if nc < 240 || ns < 3000 || ni < 100000 {
		t.Fatalf("counts too low: %d countries, %d states, %d cities", nc, ns, ni)
	}
	if len(Countries()) != nc || len(States(0)) != ns || len(Cities(0, 0)) != ni {
		t.Fatal("list lengths differ from counts")
	}
}

func TestLookupCountry(t *testing.T) {
	cases := map[string]string{
		"us":                        "US",
		"USA":                       "US",
		"United States":             "US",
		"840":                       "US",
		" 840 ":                     "US",
		" germany ":                 "DE",
		"DEU":                       "DE",
		"276":                       "DE",
		"004":                       "AF",
		"4":                         "AF",
		"uk":                        "GB",
		"United  Kingdom":           "GB",
		"Côte d'Ivoire":             "CI",
		"Côte d’Ivoire":             "CI",
		"COTE D'IVOIRE":             "CI",
		"ivory coast":               "CI",
		"Iran":                      "IR",
		"Iran, Islamic Republic of": "IR",
		"russia":                    "RU",
		"Russian Federation":        "RU",
		"Congo":                     "CG",
		"DR Congo":                  "CD",
		"Åland Islands":             "AX",
		"aland islands":             "AX",
		"xk":                        "XK",
		"Kosovo":                    "XK",
	}
	for in, want := range cases {
		c, ok := LookupCountry(in)
		if !ok || c.ISO2 != want {
			t.Errorf("LookupCountry(%q) = %+v, %v; want %s", in, c, ok, want)
		}
	}
	for _, in := range []string{"", "  ", "xx", "Atlantis", "0", "999", "12345678901234567890", "u s", "Korea", "-840", "+840"} {
		if c, ok := LookupCountry(in); ok {
			t.Errorf("LookupCountry(%q) = %+v; want not found", in, c)
		}
	}
	us, ok := CountryByID(840)
	if !ok || us != (Country{ID: 840, Name: "United States", ISO2: "US", ISO3: "USA"}) {
		t.Fatalf("CountryByID(840) = %+v, %v", us, ok)
	}
	if _, ok := CountryByID(0); ok {
		t.Fatal("CountryByID(0) found")
	}
}

func TestCountries(t *testing.T) {
	cs := Countries()
	seen := map[int64]bool{}
	codes := map[string]bool{}
	for i, c := range cs {
		if c.ID <= 0 || seen[c.ID] || len(c.ISO2) != 2 || len(c.ISO3) != 3 || c.Name == "" {
			t.Fatalf("bad or duplicate country %+v", c)
		}
		seen[c.ID] = true
		if codes[c.ISO2] || codes[c.ISO3] {
			t.Fatalf("duplicate code in %+v", c)
		}
		codes[c.ISO2], codes[c.ISO3] = true, true
		if got, ok := CountryByID(c.ID); !ok || got != c {
			t.Fatalf("CountryByID(%d) = %+v", c.ID, got)
		}
		for _, k := range []string{c.Name, c.ISO2, c.ISO3, strings.ToUpper(c.Name)} {
			if got, ok := LookupCountry(k); !ok || got != c {
				t.Fatalf("LookupCountry(%q) = %+v, %v; want %+v", k, got, ok, c)
			}
		}
		if i > 0 && asciiWord(cs[i-1].Name) && asciiWord(c.Name) &&
			strings.ToLower(cs[i-1].Name) > strings.ToLower(c.Name) {
			t.Fatalf("countries not sorted by name: %q before %q", cs[i-1].Name, c.Name)
		}
	}
	if cs[0].Name != "Afghanistan" || cs[1].Name != "Åland Islands" {
		t.Fatalf("first countries %q, %q", cs[0].Name, cs[1].Name)
	}
	cs[0].Name = "changed"
	if Countries()[0].Name != "Afghanistan" {
		t.Fatal("Countries shares its backing array")
	}
}

// asciiWord: letters and spaces only, for which the generator's collation
// agrees with a lower-case byte compare.
func asciiWord(s string) bool {
	for i := 0; i < len(s); i++ {
		c := s[i] | 0x20
		if !(c >= 'a' && c <= 'z' || s[i] == ' ') {
			return false
		}
	}
	return true
}

func TestStates(t *testing.T) {
	all := States(0)
	for i, s := range all {
		if s.ID != int64(i+1) {
			t.Fatalf("state ids not sequential at %d: %+v", i, s)
		}
		if _, ok := CountryByID(s.CountryID); !ok || s.Code == "" || s.Name == "" {
			t.Fatalf("bad state %+v", s)
		}
		if got, ok := StateByID(s.ID); !ok || got != s {
			t.Fatalf("StateByID(%d) = %+v", s.ID, got)
		}
	}
	us := States(840)
	if len(us) < 50 {
		t.Fatalf("States(840) has %d", len(us))
	}
	var ca *State
	for i, s := range us {
		if s.CountryID != 840 {
			t.Fatalf("States(840) holds %+v", s)
		}
		if s.Name == "California" {
			ca = &us[i]
		}
		if i > 0 && asciiWord(us[i-1].Name) && asciiWord(s.Name) && us[i-1].Name > s.Name {
			t.Fatalf("states not sorted: %q before %q", us[i-1].Name, s.Name)
		}
	}
	if ca == nil || ca.Code != "CA" {
		t.Fatalf("States(840) lacks California: %+v", ca)
	}
	if got := States(999999); got == nil || len(got) != 0 {
		t.Fatalf("States(unknown) = %#v", got)
	}
	for _, id := range []int64{0, -1, int64(len(all) + 1)} {
		if _, ok := StateByID(id); ok {
			t.Fatalf("StateByID(%d) found", id)
		}
	}
}

func TestCities(t *testing.T) {
	all := Cities(0, 0)
	for i, c := range all {
		if c.ID != int64(i+1) || c.Name == "" {
			t.Fatalf("bad city at %d: %+v", i, c)
		}
		if _, ok := CountryByID(c.CountryID); !ok {
			t.Fatalf("city with unknown country %+v", c)
		}
		if c.StateID != 0 {
			s, ok := StateByID(c.StateID)
			if !ok || s.CountryID != c.CountryID {
				t.Fatalf("city %+v in state %+v", c, s)
			}
		}
	}
	if got, ok := CityByID(all[1000].ID); !ok || got != all[1000] {
		t.Fatalf("CityByID = %+v", got)
	}
	for _, id := range []int64{0, -5, int64(len(all) + 1)} {
		if _, ok := CityByID(id); ok {
			t.Fatalf("CityByID(%d) found", id)
		}
	}

	// Every state's list holds only its cities, sorted by name; with the
	// stateless ones they add up to the country's list.
	perCountry := map[int64]int{}
	for _, s := range States(0) {
		cs := Cities(0, s.ID)
		if len(Cities(s.CountryID, s.ID)) != len(cs) {
			t.Fatalf("state %d: narrowing by its own country changed the list", s.ID)
		}
		for i, c := range cs {
			if c.StateID != s.ID || c.CountryID != s.CountryID {
				t.Fatalf("Cities(0, %d) holds %+v", s.ID, c)
			}
			if i > 0 && asciiWord(cs[i-1].Name) && asciiWord(c.Name) &&
				strings.ToLower(cs[i-1].Name) > strings.ToLower(c.Name) {
				t.Fatalf("state %d not sorted: %q before %q", s.ID, cs[i-1].Name, c.Name)
			}
		}
		perCountry[s.CountryID] += len(cs)
	}
	for _, c := range all {
		if c.StateID == 0 {
			perCountry[c.CountryID]++
		}
	}
	for _, co := range Countries() {
		cs := Cities(co.ID, 0)
		if len(cs) != perCountry[co.ID] {
			t.Fatalf("country %d: %d cities, states add up to %d", co.ID, len(cs), perCountry[co.ID])
		}
		for _, c := range cs {
			if c.CountryID != co.ID {
				t.Fatalf("Cities(%d, 0) holds %+v", co.ID, c)
			}
		}
	}

	ca := findState(t, 840, "California")
	la := false
	for _, c := range Cities(840, ca.ID) {
		la = la || c.Name == "Los Angeles"
	}
	if !la {
		t.Fatal("California lacks Los Angeles")
	}
	if got := Cities(276, ca.ID); got == nil || len(got) != 0 {
		t.Fatalf("Cities(Germany, California) = %d cities", len(got))
	}
	if got := Cities(0, 1<<40); len(got) != 0 {
		t.Fatal("unknown state gave cities")
	}
	if got := Cities(123456, 0); got == nil || len(got) != 0 {
		t.Fatal("unknown country gave cities")
	}
}

func findState(t *testing.T, countryID int64, name string) State {
	t.Helper()
	for _, s := range States(countryID) {
		if s.Name == name {
			return s
		}
	}
	t.Fatalf("no state %q in %d", name, countryID)
	return State{}
}

func TestAppendJSONMatchesEncodingJSON(t *testing.T) {
	tricky := []string{
		`Say "hi"`, `back\slash`, "tab\there", "new\nline", "cr\r", "bell\a", "\b\f\x00\x1f",
		"<script>&amp;</script>", "São Paulo", "Zürich", "東京", "😀 emoji", "line\u2028sep\u2029",
		"bad\xffutf8", "\xc3", "", "'single'", "/slash",
	}
	for i, name := range tricky {
		c := City{ID: int64(i + 1), CountryID: 840, StateID: 3, Name: name}
		got := AppendCityJSON(nil, &c)
		want, _ := json.Marshal(c)
		if !bytes.Equal(got, want) {
			t.Errorf("AppendCityJSON(%q) = %s; json.Marshal = %s", name, got, want)
		}
		var back City
		if err := json.Unmarshal(got, &back); err != nil {
			t.Fatalf("%s: %v", got, err)
		}
		if strings.ToValidUTF8(name, "\uFFFD") != back.Name || back.ID != c.ID || back.StateID != 3 {
			t.Errorf("round trip of %q gave %+v", name, back)
		}
		s := State{ID: 7, CountryID: 4, Code: name, Name: name}
		if got, want := AppendStateJSON(nil, &s), must(json.Marshal(s)); !bytes.Equal(got, want) {
			t.Errorf("AppendStateJSON = %s; want %s", got, want)
		}
		co := Country{ID: 9, Name: name, ISO2: "XX", ISO3: name}
		if got, want := AppendCountryJSON(nil, &co), must(json.Marshal(co)); !bytes.Equal(got, want) {
			t.Errorf("AppendCountryJSON = %s; want %s", got, want)
		}
	}

	// The shipped lists, whole and narrowed.
	if got, want := AppendCountriesJSON(nil), must(json.Marshal(Countries())); !bytes.Equal(got, want) {
		t.Error("AppendCountriesJSON differs from json.Marshal")
	}
	for _, id := range []int64{0, 840, 999999} {
		if got, want := AppendStatesJSON(nil, id), must(json.Marshal(States(id))); !bytes.Equal(got, want) {
			t.Errorf("AppendStatesJSON(%d) differs from json.Marshal", id)
		}
	}
	ca := findState(t, 840, "California")
	for _, q := range [][2]int64{{0, 0}, {840, 0}, {0, ca.ID}, {840, ca.ID}, {276, ca.ID}, {123, 0}} {
		if got, want := AppendCitiesJSON(nil, q[0], q[1]), must(json.Marshal(Cities(q[0], q[1]))); !bytes.Equal(got, want) {
			t.Errorf("AppendCitiesJSON(%d, %d) differs from json.Marshal", q[0], q[1])
		}
	}
	var back []City
	if err := json.Unmarshal(AppendCitiesJSON([]byte(nil), 0, 0), &back); err != nil {
		t.Fatal(err)
	}
	all := Cities(0, 0)
	if len(back) != len(all) || back[len(back)-1] != all[len(all)-1] {
		t.Fatal("all-cities JSON does not round-trip")
	}
}

func must(b []byte, err error) []byte {
	if err != nil {
		panic(err)
	}
	return b
}

func TestConcurrentUse(t *testing.T) {
	var wg sync.WaitGroup
	for i := 0; i < 8; i++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			if _, ok := LookupCountry("de"); !ok {
				t.Error("lookup failed")
			}
			_ = AppendStatesJSON(nil, 276)
			_ = Cities(276, 0)
		}()
	}
	wg.Wait()
}

// TestLoadCost reports what loading costs (go test -v -run LoadCost).
func TestLoadCost(t *testing.T) {
	runtime.GC()
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	start := time.Now()
	d, err := load()
	took := time.Since(start)
	if err != nil {
		t.Fatal(err)
	}
	runtime.GC()
	runtime.ReadMemStats(&after)
	t.Logf("load: %v, live heap +%.1f MB (%d countries, %d states, %d cities)",
		took, float64(int64(after.HeapAlloc)-int64(before.HeapAlloc))/1e6,
		len(d.countries), len(d.states), len(d.cities))
	runtime.KeepAlive(d)
}

func BenchmarkAppendAllCitiesJSON(b *testing.B) {
	Load()
	var buf []byte
	for b.Loop() {
		buf = AppendCitiesJSON(buf[:0], 0, 0)
	}
	b.SetBytes(int64(len(buf)))
	b.ReportMetric(float64(len(buf))/1e6, "MB/op-out")
}

func BenchmarkAppendAllCitiesOneByOne(b *testing.B) {
	all := Cities(0, 0)
	var buf []byte
	for b.Loop() {
		buf = append(buf[:0], '[')
		for i := range all {
			if i > 0 {
				buf = append(buf, ',')
			}
			buf = AppendCityJSON(buf, &all[i])
		}
		buf = append(buf, ']')
	}
	b.SetBytes(int64(len(buf)))
}

func BenchmarkMarshalAllCities(b *testing.B) {
	all := Cities(0, 0)
	for b.Loop() {
		_, _ = json.Marshal(all)
	}
}

func BenchmarkLoad(b *testing.B) {
	for b.Loop() {
		if _, err := load(); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkLookupCountry(b *testing.B) {
	Load()
	for b.Loop() {
		LookupCountry(" Germany ")
		LookupCountry("us")
		LookupCountry("840")
	}
}
