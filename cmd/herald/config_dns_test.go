package main

import (
	"strings"
	"testing"
)

// HERALD_DNS_SERVER, the relay's host and the inbound listener reach the
// domain checks; a server without a port stops herald at start.
func TestConfigDomainChecks(t *testing.T) {
	t.Parallel()
	cfg, err := loadConfig(envFrom(map[string]string{"HERALD_DNS_SERVER": "127.0.0.1:5353",
		"HERALD_SMTP_URL": "smtp://user:pass@relay.example.net:587?tls=starttls", "HERALD_INBOUND_ADDR": "127.0.0.1:2525"}))
	if err != nil {
		t.Fatal(err)
	}
	if dc := cfg.domainChecks(); dc.DNSServer != "127.0.0.1:5353" || dc.RelayHost != "relay.example.net" || !dc.Inbound || dc.InboundHost != "127.0.0.1" {
		t.Fatalf("domain checks config %+v", dc)
	}
	// A listener on every address names no host of herald's.
	for _, addr := range []string{":2525", "0.0.0.0:25", "[::]:25"} {
		cfg, err := loadConfig(envFrom(map[string]string{"HERALD_INBOUND_ADDR": addr}))
		if err != nil {
			t.Fatal(err)
		}
		if dc := cfg.domainChecks(); !dc.Inbound || dc.InboundHost != "" {
			t.Fatalf("%s: %+v", addr, dc)
		}
	}
	cfg, err = loadConfig(envFrom(nil))
	if err != nil {
		t.Fatal(err)
	}
	if dc := cfg.domainChecks(); dc.DNSServer != "" || dc.RelayHost != "" || dc.Inbound {
		t.Fatalf("defaults %+v", dc)
	}
	if _, err := loadConfig(envFrom(map[string]string{"HERALD_DNS_SERVER": "127.0.0.1"})); err == nil || !strings.Contains(err.Error(), "HERALD_DNS_SERVER") {
		t.Fatalf("a server without port: %v", err)
	}
}
