package world

import (
	"net/netip"
	"os"
	"path/filepath"
	"testing"
)

// TestGeoIPDebian reads the countries of a few well-known addresses from
// Debian's geoip-database, as geoiplookup and geoiplookup6 answer them.
func TestGeoIPDebian(t *testing.T) {
	if _, err := os.Stat(DebianGeoIP); err != nil {
		t.Skip("Debian's geoip-database is not installed (" + DebianGeoIP + "): apt-get install geoip-database")
	}
	g, err := OpenGeoIP(DebianGeoIP, DebianGeoIPv6)
	if err != nil {
		t.Fatal(err)
	}
	if !g.Loaded() {
		t.Fatal("not loaded")
	}
	for addr, want := range map[string]string{
		"8.8.8.8":                  "US",
		"81.2.69.160":              "GB",
		"193.99.144.80":            "DE",
		"::ffff:8.8.8.8":           "US",
		"10.1.2.3":                 "",
		"127.0.0.1":                "",
		"2a00:1450:4001:81b::200e": "DE",
		"::1":                      "",
	} {
		if got := g.Country(netip.MustParseAddr(addr)); got != want {
			t.Errorf("Country(%s) = %q, want %q", addr, got, want)
		}
	}
}

func TestGeoIPAbsentAndWrong(t *testing.T) {
	dir := t.TempDir()
	g, err := OpenGeoIP(filepath.Join(dir, "none.dat"), "")
	if err != nil || g != nil || g.Loaded() || g.Country(netip.MustParseAddr("8.8.8.8")) != "" {
		t.Fatalf("absent file: %v, %v", g, err)
	}
	bad := filepath.Join(dir, "bad.dat")
	if err := os.WriteFile(bad, []byte{0, 0, 0, 0xFF, 0xFF, 0xFF, 7}, 0o600); err != nil {
		t.Fatal(err)
	}
	if _, err := OpenGeoIP(bad, ""); err == nil {
		t.Fatal("a city database was taken for a country one")
	}
}
