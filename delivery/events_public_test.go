package delivery

import (
	"context"
	"errors"
	"net/http"
	"net/http/httptest"
	"net/netip"
	"strings"
	"sync/atomic"
	"testing"
	"time"
)

// An account's endpoint may not make herald reach into its own network:
// with PublicOnly the connection to a loopback receiver is refused before
// anything is sent, and the attempt says why.
func TestEventPosterPublicOnly(t *testing.T) {
	t.Parallel()
	var hits atomic.Int32
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { hits.Add(1) }))
	defer srv.Close()
	ev := []Event{{Event: "delivered", EventID: "1", Timestamp: 1, Email: "ann@example.com"}}

	a := (&EventPoster{PublicOnly: true}).Post(context.Background(), srv.URL+"/in", "s", ev, time.Now())
	if a.OK() || !strings.Contains(a.Err, "not public") || hits.Load() != 0 {
		t.Fatalf("public only, to loopback: %+v, %d hits", a, hits.Load())
	}
	// A name that resolves to loopback is refused the same way.
	a = (&EventPoster{PublicOnly: true}).Post(context.Background(), strings.Replace(srv.URL, "127.0.0.1", "localhost", 1)+"/in", "s", ev, time.Now())
	if a.OK() || !strings.Contains(a.Err, "not public") || hits.Load() != 0 {
		t.Fatalf("public only, to localhost: %+v, %d hits", a, hits.Load())
	}
	a = (&EventPoster{}).Post(context.Background(), srv.URL+"/in", "s", ev, time.Now())
	if !a.OK() || hits.Load() != 1 {
		t.Fatalf("private allowed: %+v, %d hits", a, hits.Load())
	}
}

func TestPublicAddr(t *testing.T) {
	t.Parallel()
	for addr, want := range map[string]bool{
		"8.8.8.8": true, "2001:4860:4860::8888": true, "93.184.216.34": true,
		"127.0.0.1": false, "10.1.2.3": false, "172.16.0.1": false, "192.168.1.1": false, "169.254.169.254": false,
		"100.64.0.1": false, "0.0.0.0": false, "224.0.0.1": false, "255.255.255.255": false,
		"::1": false, "::": false, "fd00::1": false, "fe80::1": false, "::ffff:127.0.0.1": false, "::ffff:10.0.0.1": false, "ff02::1": false,
	} {
		if got := PublicAddr(netip.MustParseAddr(addr)); got != want {
			t.Errorf("PublicAddr(%s) = %v, want %v", addr, got, want)
		}
	}
}

// lastAddr is the last address of p.
func lastAddr(p netip.Prefix) netip.Addr {
	p = p.Masked()
	b := p.Addr().AsSlice()
	for i := p.Bits(); i < len(b)*8; i++ {
		b[i/8] |= 0x80 >> (i % 8)
	}
	a, _ := netip.AddrFromSlice(b)
	return a
}

// Every special range is refused by its first and its last address, at
// save (PublicAddr) and at dial (the dialer's Control), written as it is
// and, for IPv4, mapped into IPv6; the public neighbours of the ranges
// stay public. The ranges named in the hardening rules are checked by
// name, so that none of them can leave the table unnoticed.
func TestSpecialRanges(t *testing.T) {
	t.Parallel()
	refused := func(t *testing.T, a netip.Addr) {
		t.Helper()
		if PublicAddr(a) {
			t.Errorf("PublicAddr(%s) = true", a)
		}
		if err := refuseNonPublic("tcp", netip.AddrPortFrom(a, 443).String(), nil); !errors.Is(err, ErrNonPublicAddress) {
			t.Errorf("dial %s: %v, want ErrNonPublicAddress", a, err)
		}
	}
	ranges := SpecialRanges()
	for _, r := range ranges {
		t.Run(r.Prefix.String(), func(t *testing.T) {
			for _, a := range []netip.Addr{r.Prefix.Addr(), lastAddr(r.Prefix)} {
				refused(t, a)
				if a.Is4() {
					refused(t, netip.AddrFrom16(a.As16()))
				}
			}
		})
	}
	named := []string{
		"64:ff9b::/96", "64:ff9b:1::/48", "2002::/16", "::/96", "::ffff:0:0/96", "2001::/32", "198.18.0.0/15", "0.0.0.0/8",
		"100.64.0.0/10", "192.0.0.0/24", "192.0.2.0/24", "198.51.100.0/24", "203.0.113.0/24", "240.0.0.0/4", "255.255.255.255/32",
		"2001:db8::/32", "fc00::/7", "fe80::/10", "224.0.0.0/4", "ff00::/8",
		// The rest of the two registries' entries that are not globally
		// reachable.
		"0.0.0.0/32", "10.0.0.0/8", "127.0.0.0/8", "169.254.0.0/16", "172.16.0.0/12", "192.0.0.0/29", "192.0.0.8/32",
		"192.0.0.170/32", "192.0.0.171/32", "192.168.0.0/16", "::1/128", "::/128", "100::/64", "100:0:0:1::/64", "2001::/23",
		"2001:2::/48", "2001:10::/28", "3fff::/20", "5f00::/16",
	}
	for _, s := range named {
		p := netip.MustParsePrefix(s)
		for _, a := range []netip.Addr{p.Addr(), lastAddr(p)} {
			covered := false
			for _, r := range ranges {
				covered = covered || r.Prefix.Contains(a)
			}
			if !covered {
				t.Errorf("%s (of %s) is in no special range", a, s)
			}
			refused(t, a)
		}
	}
	// Zoned addresses are scoped to a link: never public.
	for _, s := range []string{"fe80::1%eth0", "2001:4860:4860::8888%eth0"} {
		if PublicAddr(netip.MustParseAddr(s)) {
			t.Errorf("PublicAddr(%s) = true", s)
		}
	}
	for _, s := range []string{
		"1.0.0.0", "9.255.255.255", "11.0.0.0", "100.63.255.255", "100.128.0.0", "126.255.255.255", "128.0.0.0",
		"169.253.255.255", "169.255.0.0", "172.15.255.255", "172.32.0.0", "191.255.255.255", "192.0.1.0", "192.0.3.0",
		"192.31.196.1", "192.88.98.255", "192.88.100.0", "192.167.255.255", "192.169.0.0", "198.17.255.255", "198.20.0.0",
		"198.51.99.255", "198.51.101.0", "203.0.112.255", "203.0.114.0", "223.255.255.255",
		"2000::", "2001:200::", "2001:db7:ffff:ffff:ffff:ffff:ffff:ffff", "2001:db9::", "2001:4860:4860::8888",
		"2003::", "2620:4f:8000::1", "3ffe:ffff:ffff:ffff:ffff:ffff:ffff:ffff", "3fff:1000::",
	} {
		a := netip.MustParseAddr(s)
		if !PublicAddr(a) {
			t.Errorf("PublicAddr(%s) = false, want true", s)
		}
		if err := refuseNonPublic("tcp", netip.AddrPortFrom(a, 443).String(), nil); err != nil {
			t.Errorf("dial %s: %v", s, err)
		}
	}
}
