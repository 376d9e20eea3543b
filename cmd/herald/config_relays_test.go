package main

import (
	"strings"
	"testing"
)

// HERALD_SMTP_URL with several relays: a mistake stops herald at start,
// naming the relay and the parameter; the log and the console show the
// relays without their passwords; the first names the relay the domain
// checks look for.
func TestConfigSeveralRelays(t *testing.T) {
	t.Parallel()
	for url, want := range map[string]string{
		"smtp://a.example?name=ses smtp://b.example?name=backup&rate=10/w": `HERALD_SMTP_URL: delivery: HERALD_SMTP_URL: relay 2 (backup): rate="10/w"`,
		"smtp://a.example smtp://b.example?weight=0":                       `relay 2: weight="0"`,
		"smtp://a.example?from_domains=shop.example":                       "at least one must be without",
	} {
		if _, err := loadConfig(envFrom(map[string]string{"HERALD_SMTP_URL": url})); err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("%s: %v, want %q", url, err, want)
		}
	}
	cfg, err := loadConfig(envFrom(map[string]string{"HERALD_SMTP_URL": "smtp://u:s3cret@relay.example.net:587?name=ses&rate=14/s  smtp://backup.example.net:25?tls=none&name=backup"}))
	if err != nil {
		t.Fatal(err)
	}
	if m := cfg.mail(); strings.Contains(m, "s3cret") || m != "smtp://u@relay.example.net:587?tls=starttls smtp://backup.example.net:25?tls=none" {
		t.Fatalf("mail() = %q", m)
	}
	if dc := cfg.domainChecks(); dc.RelayHost != "relay.example.net" {
		t.Fatalf("relay host %q", dc.RelayHost)
	}
}
