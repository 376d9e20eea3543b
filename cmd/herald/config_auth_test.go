package main

import (
	"net/netip"
	"testing"
)

func TestConfigTrustedProxies(t *testing.T) {
	t.Parallel()
	cfg, err := loadConfig(envFrom(map[string]string{}))
	if err != nil || len(cfg.TrustedProxies) != 0 {
		t.Fatalf("default: %v %v", cfg.TrustedProxies, err)
	}
	cfg, err = loadConfig(envFrom(map[string]string{"HERALD_TRUSTED_PROXIES": "10.0.0.1, 172.16.0.0/12,::1"}))
	want := []netip.Prefix{netip.MustParsePrefix("10.0.0.1/32"), netip.MustParsePrefix("172.16.0.0/12"), netip.MustParsePrefix("::1/128")}
	if err != nil || len(cfg.TrustedProxies) != len(want) {
		t.Fatalf("parsed: %v %v", cfg.TrustedProxies, err)
	}
	for i, p := range want {
		if cfg.TrustedProxies[i] != p {
			t.Fatalf("proxy %d: %v, want %v", i, cfg.TrustedProxies[i], p)
		}
	}
	if _, err := loadConfig(envFrom(map[string]string{"HERALD_TRUSTED_PROXIES": "10.0.0.1, proxy.example.com"})); err == nil {
		t.Fatal("a host name was accepted")
	}
}
