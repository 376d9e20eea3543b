package main

import (
	"net/netip"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"herald/world"
)

// TestConfigGeoIP: HERALD_GEOIP and HERALD_GEOIP_V6 default to Debian's
// geoip-database (loaded when installed); a missing file or "off" leaves
// countries out without failing; a file that is not a country database
// stops the start with the variable's name.
func TestConfigGeoIP(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	cfg, err := loadConfig(envFrom(map[string]string{"HERALD_GEOIP": filepath.Join(dir, "none.dat"), "HERALD_GEOIP_V6": "off"}))
	if err != nil || cfg.Countries.Loaded() {
		t.Fatalf("missing file: %v %v", cfg.Countries, err)
	}
	bad := filepath.Join(dir, "city.dat")
	if err := os.WriteFile(bad, []byte{1, 2, 3, 0xFF, 0xFF, 0xFF, 6}, 0o600); err != nil {
		t.Fatal(err)
	}
	if _, err := loadConfig(envFrom(map[string]string{"HERALD_GEOIP": bad})); err == nil || !strings.Contains(err.Error(), "HERALD_GEOIP") {
		t.Fatalf("a city database: %v", err)
	}
	if _, err := os.Stat(world.DebianGeoIP); err != nil {
		t.Skip("Debian's geoip-database is not installed (" + world.DebianGeoIP + "): the default is not checked")
	}
	cfg, err = loadConfig(envFrom(map[string]string{}))
	if err != nil || cfg.Countries.Country(netip.MustParseAddr("8.8.8.8")) != "US" {
		t.Fatalf("default: %v", err)
	}
}
