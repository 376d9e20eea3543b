package service_test

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/miekg/dns"

	"herald/dnstest"
	"herald/service"
)

func TestResolver(t *testing.T) {
	t.Parallel()
	srv := dnstest.Start(t)
	long := "v=DKIM1; k=rsa; p=" + strings.Repeat("A", 400)
	srv.TXT(t, "h1._domainkey.shop.example.com", long)
	srv.Add(t, `shop.example.com. 300 IN MX 20 mx2.example.net.`, `shop.example.com. 300 IN MX 10 MX1.example.net.`,
		`shop.example.com. 300 IN A 192.0.2.10`, `shop.example.com. 300 IN AAAA 2001:db8::10`)
	for i := range 40 { // ~4 KB of TXT: more than the UDP answer takes, so the client retries over TCP
		srv.TXT(t, "big.example.com", "v=x "+strings.Repeat(string(rune('a'+i%26)), 120))
	}
	srv.Fail("broken.example.com", dns.RcodeServerFailure)
	r, err := service.NewResolver(srv.Addr)
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()

	txt, err := r.TXT(ctx, "H1._domainkey.shop.example.com")
	if err != nil || len(txt) != 1 || txt[0] != long {
		t.Fatalf("TXT of a split value: %q %v", txt, err)
	}
	mx, err := r.MX(ctx, "shop.example.com")
	if err != nil || len(mx) != 2 || mx[0] != "mx1.example.net" || mx[1] != "mx2.example.net" {
		t.Fatalf("MX = %q %v, want mx1 then mx2", mx, err)
	}
	ips, err := r.IPs(ctx, "shop.example.com")
	if err != nil || len(ips) != 2 || ips[0].String() != "192.0.2.10" || ips[1].String() != "2001:db8::10" {
		t.Fatalf("IPs = %v %v", ips, err)
	}
	if txt, err := r.TXT(ctx, "nothing.example.com"); err != nil || len(txt) != 0 {
		t.Fatalf("NXDOMAIN: %q %v, want empty and no error", txt, err)
	}
	if txt, err := r.TXT(ctx, "shop.example.com"); err != nil || len(txt) != 0 {
		t.Fatalf("no TXT of an existing name: %q %v", txt, err)
	}
	if txt, err := r.TXT(ctx, "big.example.com"); err != nil || len(txt) != 40 {
		t.Fatalf("truncated answer over TCP: %d records, %v; want 40", len(txt), err)
	}
	if _, err := r.TXT(ctx, "broken.example.com"); !errors.Is(err, service.ErrDNSTemporary) {
		t.Fatalf("SERVFAIL: %v, want ErrDNSTemporary", err)
	}
	if _, err := service.NewResolver("no-port"); err == nil {
		t.Fatal("a server without port accepted")
	}
}
