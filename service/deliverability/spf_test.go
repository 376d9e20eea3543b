package deliverability_test

import (
	"context"
	"fmt"
	"net/netip"
	"strings"
	"testing"

	"github.com/miekg/dns"

	"herald/dnstest"
	"herald/service/deliverability"
)

func TestSPFCheck(t *testing.T) {
	t.Parallel()
	srv := dnstest.Start(t)
	srv.Add(t,
		`ip.example.com. TXT "v=spf1 ip4:192.0.2.0/24 ip6:2001:db8::/32 -all"`,
		`inc.example.com. TXT "v=spf1 include:_spf.relay.example.net ~all"`,
		`_spf.relay.example.net. TXT "v=spf1 ip4:198.51.100.7 -all"`,
		`red.example.com. TXT "v=spf1 redirect=_spf.relay.example.net"`,
		`redmissing.example.com. TXT "v=spf1 redirect=nothing.example.net"`,
		`amx.example.com. TXT "v=spf1 a mx/24 -all"`,
		`amx.example.com. A 203.0.113.5`,
		`amx.example.com. MX 10 mail.amx.example.com.`,
		`mail.amx.example.com. A 203.0.113.200`,
		`two.example.com. TXT "v=spf1 -all"`,
		`two.example.com. TXT "v=spf1 +all"`,
		`incnone.example.com. TXT "v=spf1 include:nospf.example.com -all"`,
		`nospf.example.com. TXT "hello"`,
		`loop.example.com. TXT "v=spf1 include:loop.example.com -all"`,
		`tmp.example.com. TXT "v=spf1 include:broken.example.com -all"`,
		`ptr.example.com. TXT "v=spf1 ptr ?all"`,
	)
	srv.Fail("broken.example.com", dns.RcodeServerFailure)
	// A chain of includes: chainN includes chainN+1 … the last names the address.
	for i := 1; i <= 11; i++ {
		srv.Add(t, fmt.Sprintf(`chain%d.example.org. TXT "v=spf1 include:chain%d.example.org -all"`, i, i+1))
	}
	srv.Add(t, `chain12.example.org. TXT "v=spf1 ip4:192.0.2.1 -all"`)
	// Ten includes in one record: the limit exactly; eleven: over it.
	var ten, eleven []string
	for i := 1; i <= 11; i++ {
		srv.Add(t, fmt.Sprintf(`n%d.example.org. TXT "v=spf1 ip4:10.0.0.%d -all"`, i, i))
		if i <= 10 {
			ten = append(ten, fmt.Sprintf("include:n%d.example.org", i))
		}
		eleven = append(eleven, fmt.Sprintf("include:n%d.example.org", i))
	}
	srv.Add(t, `ten.example.org. TXT "v=spf1 `+strings.Join(ten, " ")+` -all"`, `eleven.example.org. TXT "v=spf1 `+strings.Join(eleven, " ")+` -all"`)

	r, err := deliverability.NewResolver(srv.Addr)
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		domain, ip, want string
		lookups          int
	}{
		{"ip.example.com", "192.0.2.77", deliverability.SPFPass, 0},
		{"ip.example.com", "2001:db8::1", deliverability.SPFPass, 0},
		{"ip.example.com", "198.51.100.7", deliverability.SPFFail, 0},
		{"inc.example.com", "198.51.100.7", deliverability.SPFPass, 1},
		{"inc.example.com", "198.51.100.8", deliverability.SPFSoftFail, 1},
		{"red.example.com", "198.51.100.7", deliverability.SPFPass, 1},
		{"red.example.com", "198.51.100.9", deliverability.SPFFail, 1},
		{"redmissing.example.com", "198.51.100.9", deliverability.SPFPermError, 1},
		{"amx.example.com", "203.0.113.5", deliverability.SPFPass, 1},
		{"amx.example.com", "203.0.113.17", deliverability.SPFPass, 2}, // mx/24
		{"amx.example.com", "198.51.100.1", deliverability.SPFFail, 2},
		{"two.example.com", "192.0.2.1", deliverability.SPFPermError, 0},
		{"nothing.example.com", "192.0.2.1", deliverability.SPFNone, 0},
		{"incnone.example.com", "192.0.2.1", deliverability.SPFPermError, 1},
		{"loop.example.com", "192.0.2.1", deliverability.SPFPermError, 11},
		{"tmp.example.com", "192.0.2.1", deliverability.SPFTempError, 1},
		{"ptr.example.com", "192.0.2.1", deliverability.SPFNeutral, 1},
		{"ten.example.org", "10.0.0.10", deliverability.SPFPass, 10},
		{"eleven.example.org", "10.0.0.11", deliverability.SPFPermError, 11},
		{"eleven.example.org", "10.0.0.1", deliverability.SPFPass, 1}, // evaluation stops at the first match
		{"chain2.example.org", "192.0.2.1", deliverability.SPFPass, 10},
		{"chain1.example.org", "192.0.2.1", deliverability.SPFPermError, 11},
	} {
		t.Run(c.domain+"/"+c.ip, func(t *testing.T) {
			res, n, err := deliverability.SPFCheck(context.Background(), r, c.domain, netip.MustParseAddr(c.ip))
			if res != c.want || n != c.lookups {
				t.Fatalf("= %s after %d lookups (%v), want %s after %d", res, n, err, c.want, c.lookups)
			}
		})
	}
}

func TestMergeSPF(t *testing.T) {
	t.Parallel()
	for _, c := range []struct{ existing, want string }{
		{"", "v=spf1 include:relay.example.net ~all"},
		{"v=spf1 mx -all", "v=spf1 mx include:relay.example.net -all"},
		{"v=spf1 ip4:192.0.2.1 redirect=_spf.example.com", "v=spf1 ip4:192.0.2.1 include:relay.example.net redirect=_spf.example.com"},
		{"v=spf1 include:relay.example.net ~all", "v=spf1 include:relay.example.net ~all"},
		{"v=spf1 a", "v=spf1 a include:relay.example.net"},
	} {
		if got := deliverability.MergeSPF(c.existing, "include:relay.example.net"); got != c.want {
			t.Errorf("MergeSPF(%q) = %q, want %q", c.existing, got, c.want)
		}
	}
}
