package main

import (
	"net/netip"
	"strings"
	"testing"
)

// TestConfigMachineRanges: HERALD_MACHINE_RANGES is read as IPs and CIDR
// prefixes; anything else stops the start with the variable's name.
func TestConfigMachineRanges(t *testing.T) {
	t.Parallel()
	cfg, err := loadConfig(envFrom(map[string]string{}))
	if err != nil || len(cfg.MachineRanges) != 0 {
		t.Fatalf("default: %v %v", cfg.MachineRanges, err)
	}
	cfg, err = loadConfig(envFrom(map[string]string{"HERALD_MACHINE_RANGES": "198.51.100.0/24, 2001:db8::/32,192.0.2.7"}))
	want := []netip.Prefix{netip.MustParsePrefix("198.51.100.0/24"), netip.MustParsePrefix("2001:db8::/32"), netip.MustParsePrefix("192.0.2.7/32")}
	if err != nil || len(cfg.MachineRanges) != len(want) {
		t.Fatalf("parsed: %v %v", cfg.MachineRanges, err)
	}
	for i, p := range want {
		if cfg.MachineRanges[i] != p {
			t.Fatalf("range %d: %v, want %v", i, cfg.MachineRanges[i], p)
		}
	}
	if _, err := loadConfig(envFrom(map[string]string{"HERALD_MACHINE_RANGES": "198.51.100.0/24, scanner.example.com"})); err == nil || !strings.Contains(err.Error(), "HERALD_MACHINE_RANGES") {
		t.Fatalf("a host name: %v", err)
	}
}
