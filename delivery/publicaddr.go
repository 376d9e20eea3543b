package delivery

import "net/netip"

// SpecialRange is a block of addresses that is not a host on the public
// internet, with what it is.
type SpecialRange struct {
	Prefix netip.Prefix
	Name   string
}

// specialRanges are the addresses an account's event webhook may not
// reach (EventPoster.PublicOnly, checked at save and at dial through
// PublicAddr): every entry of the IANA IPv4 and IPv6 Special-Purpose
// Address Registries that is not globally reachable, multicast, and every
// IPv6 block that embeds an IPv4 address (NAT64, 6to4, Teredo, IPv4-mapped
// and -compatible), since a translator or relay would carry the
// connection on to that IPv4 address, private or not. A few globally
// reachable anycast entries inside 192.0.0.0/24 and 2001::/23 go with their
// blocks: no webhook receiver lives at them.
var specialRanges = []SpecialRange{
	// IPv4 (IANA IPv4 Special-Purpose Address Registry).
	{netip.MustParsePrefix("0.0.0.0/8"), `"this network" (RFC 791)`},
	{netip.MustParsePrefix("10.0.0.0/8"), "private use (RFC 1918)"},
	{netip.MustParsePrefix("100.64.0.0/10"), "shared address space, CGNAT (RFC 6598)"},
	{netip.MustParsePrefix("127.0.0.0/8"), "loopback (RFC 1122)"},
	{netip.MustParsePrefix("169.254.0.0/16"), "link local, cloud metadata services (RFC 3927)"},
	{netip.MustParsePrefix("172.16.0.0/12"), "private use (RFC 1918)"},
	{netip.MustParsePrefix("192.0.0.0/24"), "IETF protocol assignments, DS-Lite, NAT64 discovery (RFC 6890, 6333, 7050)"},
	{netip.MustParsePrefix("192.0.2.0/24"), "documentation, TEST-NET-1 (RFC 5737)"},
	{netip.MustParsePrefix("192.88.99.0/24"), "deprecated 6to4 relay anycast (RFC 7526)"},
	{netip.MustParsePrefix("192.168.0.0/16"), "private use (RFC 1918)"},
	{netip.MustParsePrefix("198.18.0.0/15"), "benchmarking (RFC 2544)"},
	{netip.MustParsePrefix("198.51.100.0/24"), "documentation, TEST-NET-2 (RFC 5737)"},
	{netip.MustParsePrefix("203.0.113.0/24"), "documentation, TEST-NET-3 (RFC 5737)"},
	{netip.MustParsePrefix("224.0.0.0/4"), "multicast (RFC 5771)"},
	{netip.MustParsePrefix("240.0.0.0/4"), "reserved (RFC 1112)"},
	{netip.MustParsePrefix("255.255.255.255/32"), "limited broadcast (RFC 919)"},

	// IPv6 (IANA IPv6 Special-Purpose Address Registry).
	{netip.MustParsePrefix("::/128"), "unspecified (RFC 4291)"},
	{netip.MustParsePrefix("::1/128"), "loopback (RFC 4291)"},
	{netip.MustParsePrefix("::/96"), "IPv4-compatible, deprecated (RFC 4291)"},
	{netip.MustParsePrefix("::ffff:0:0/96"), "IPv4-mapped (RFC 4291)"},
	{netip.MustParsePrefix("64:ff9b::/96"), "IPv4/IPv6 translation, NAT64 (RFC 6052)"},
	{netip.MustParsePrefix("64:ff9b:1::/48"), "local-use IPv4/IPv6 translation (RFC 8215)"},
	{netip.MustParsePrefix("100::/64"), "discard only (RFC 6666)"},
	{netip.MustParsePrefix("100:0:0:1::/64"), "dummy IPv6 prefix (RFC 9780)"},
	{netip.MustParsePrefix("2001::/23"), "IETF protocol assignments (RFC 2928)"},
	{netip.MustParsePrefix("2001::/32"), "Teredo (RFC 4380)"},
	{netip.MustParsePrefix("2001:2::/48"), "benchmarking (RFC 5180)"},
	{netip.MustParsePrefix("2001:10::/28"), "deprecated ORCHID (RFC 4843)"},
	{netip.MustParsePrefix("2001:db8::/32"), "documentation (RFC 3849)"},
	{netip.MustParsePrefix("2002::/16"), "6to4 (RFC 3056)"},
	{netip.MustParsePrefix("3fff::/20"), "documentation (RFC 9637)"},
	{netip.MustParsePrefix("5f00::/16"), "segment routing SIDs (RFC 9602)"},
	{netip.MustParsePrefix("fc00::/7"), "unique local (RFC 4193)"},
	{netip.MustParsePrefix("fe80::/10"), "link local (RFC 4291)"},
	{netip.MustParsePrefix("ff00::/8"), "multicast (RFC 4291)"},
	// IANA IPv6 Address Space: only 2000::/3 is allocated as global
	// unicast; the rest is reserved by the IETF (fec0::/10, the
	// deprecated site-local, among it).
	{netip.MustParsePrefix("::/3"), "IPv6 reserved by the IETF, outside global unicast 2000::/3"},
	{netip.MustParsePrefix("4000::/2"), "IPv6 reserved by the IETF, outside global unicast 2000::/3"},
	{netip.MustParsePrefix("8000::/1"), "IPv6 reserved by the IETF, outside global unicast 2000::/3"},
}

// SpecialRanges returns a copy of the blocks PublicAddr refuses.
func SpecialRanges() []SpecialRange {
	return append([]SpecialRange(nil), specialRanges...)
}

// PublicAddr reports whether ip is an address on the public internet: in
// none of the special ranges, and without a zone (an address with one is
// scoped to a link or site).
func PublicAddr(ip netip.Addr) bool {
	if !ip.IsValid() || ip.Zone() != "" {
		return false
	}
	for _, r := range specialRanges {
		if r.Prefix.Contains(ip) {
			return false
		}
	}
	return true
}
