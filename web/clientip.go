package web

import (
	"fmt"
	"net/netip"
	"strings"

	"github.com/gofiber/fiber/v2"
)

// ParseTrustedProxies reads HERALD_TRUSTED_PROXIES: IP addresses or CIDR
// prefixes separated by commas (spaces allowed). Empty means none.
func ParseTrustedProxies(s string) ([]netip.Prefix, error) {
	var out []netip.Prefix
	for _, f := range strings.Split(s, ",") {
		f = strings.TrimSpace(f)
		if f == "" {
			continue
		}
		if strings.Contains(f, "/") {
			p, err := netip.ParsePrefix(f)
			if err != nil {
				return nil, fmt.Errorf("%q is not an IP address or CIDR prefix", f)
			}
			if p.Addr().Is4In6() {
				p = netip.PrefixFrom(p.Addr().Unmap(), max(p.Bits()-96, 0))
			}
			out = append(out, p.Masked())
			continue
		}
		a, err := netip.ParseAddr(f)
		if err != nil {
			return nil, fmt.Errorf("%q is not an IP address or CIDR prefix", f)
		}
		a = a.Unmap()
		out = append(out, netip.PrefixFrom(a, a.BitLen()))
	}
	return out, nil
}

// trusted reports whether a is one of the trusted proxies.
func trusted(a netip.Addr, proxies []netip.Prefix) bool {
	for _, p := range proxies {
		if p.Contains(a) {
			return true
		}
	}
	return false
}

// clientAddr is the client of a request that came from peer with the
// X-Forwarded-For values xff (each header line in order). The header is
// believed only when peer is a trusted proxy; then the client is the
// right-most address that is not itself a trusted proxy: every proxy
// appends the address it was reached from, so everything left of that is
// what the client wrote and may be forged. An entry that is not an
// address stops the walk at the last trusted hop.
func clientAddr(peer netip.Addr, xff []string, proxies []netip.Prefix) netip.Addr {
	peer = peer.Unmap()
	if !trusted(peer, proxies) {
		return peer
	}
	var hops []string
	for _, line := range xff {
		hops = append(hops, strings.Split(line, ",")...)
	}
	client := peer
	for i := len(hops) - 1; i >= 0; i-- {
		a, ok := parseHop(hops[i])
		if !ok {
			break
		}
		client = a
		if !trusted(a, proxies) {
			break
		}
	}
	return client
}

// parseHop reads one X-Forwarded-For entry: an address, possibly with a
// port ("192.0.2.1:5000", "[2001:db8::1]:5000").
func parseHop(s string) (netip.Addr, bool) {
	s = strings.TrimSpace(s)
	if a, err := netip.ParseAddr(s); err == nil {
		return a.Unmap(), true
	}
	if ap, err := netip.ParseAddrPort(s); err == nil {
		return ap.Addr().Unmap(), true
	}
	return netip.Addr{}, false
}

// clientIP is the request's client address (see clientAddr), as text.
func (w *Web) clientIP(c *fiber.Ctx) string {
	peer, _ := netip.AddrFromSlice(c.Context().RemoteIP())
	var xff []string
	if len(w.opt.TrustedProxies) > 0 {
		for _, v := range c.Request().Header.PeekAll(fiber.HeaderXForwardedFor) {
			xff = append(xff, string(v))
		}
	}
	return clientAddr(peer, xff, w.opt.TrustedProxies).String()
}
