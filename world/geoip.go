package world

import (
	"errors"
	"fmt"
	"net/netip"
	"os"
)

// The Debian package geoip-database installs MaxMind's last GeoLite
// Country databases in the legacy format (CC-BY-SA-4.0; the data are of
// December 2019): one for IPv4 addresses, one for IPv6.
const (
	DebianGeoIP   = "/usr/share/GeoIP/GeoIP.dat"
	DebianGeoIPv6 = "/usr/share/GeoIP/GeoIPv6.dat"
)

// GeoIP answers the country of an IP address from the legacy GeoIP
// Country databases. A nil *GeoIP answers "" for every address. Safe for
// concurrent use (read-only after Open).
type GeoIP struct {
	v4, v6 []byte // the databases' search trees (nil: none loaded)
}

// The legacy format: a binary tree of 6-byte nodes (two 3-byte little
// endian records), walked bit by bit from the address's most significant
// bit; a record at or above countryBegin is a leaf, the country's index.
const (
	countryBegin   = 16776960
	geoIPCountry   = 1  // GEOIP_COUNTRY_EDITION
	geoIPCountryV6 = 12 // GEOIP_COUNTRY_EDITION_V6
)

// geoIPCodes are the countries of the leaves, by index, as libgeoip 1.6
// lists them ("--" none; AP and EU regions; A1, A2, O1 anonymous proxy,
// satellite provider, other).
var geoIPCodes = [...]string{
	"--", "AP", "EU", "AD", "AE", "AF", "AG", "AI", "AL", "AM", "CW", "AO", "AQ", "AR", "AS", "AT", "AU", "AW", "AZ", "BA",
	"BB", "BD", "BE", "BF", "BG", "BH", "BI", "BJ", "BM", "BN", "BO", "BR", "BS", "BT", "BV", "BW", "BY", "BZ", "CA", "CC",
	"CD", "CF", "CG", "CH", "CI", "CK", "CL", "CM", "CN", "CO", "CR", "CU", "CV", "CX", "CY", "CZ", "DE", "DJ", "DK", "DM",
	"DO", "DZ", "EC", "EE", "EG", "EH", "ER", "ES", "ET", "FI", "FJ", "FK", "FM", "FO", "FR", "SX", "GA", "GB", "GD", "GE",
	"GF", "GH", "GI", "GL", "GM", "GN", "GP", "GQ", "GR", "GS", "GT", "GU", "GW", "GY", "HK", "HM", "HN", "HR", "HT", "HU",
	"ID", "IE", "IL", "IN", "IO", "IQ", "IR", "IS", "IT", "JM", "JO", "JP", "KE", "KG", "KH", "KI", "KM", "KN", "KP", "KR",
	"KW", "KY", "KZ", "LA", "LB", "LC", "LI", "LK", "LR", "LS", "LT", "LU", "LV", "LY", "MA", "MC", "MD", "MG", "MH", "MK",
	"ML", "MM", "MN", "MO", "MP", "MQ", "MR", "MS", "MT", "MU", "MV", "MW", "MX", "MY", "MZ", "NA", "NC", "NE", "NF", "NG",
	"NI", "NL", "NO", "NP", "NR", "NU", "NZ", "OM", "PA", "PE", "PF", "PG", "PH", "PK", "PL", "PM", "PN", "PR", "PS", "PT",
	"PW", "PY", "QA", "RE", "RO", "RU", "RW", "SA", "SB", "SC", "SD", "SE", "SG", "SH", "SI", "SJ", "SK", "SL", "SM", "SN",
	"SO", "SR", "ST", "SV", "SY", "SZ", "TC", "TD", "TF", "TG", "TH", "TJ", "TK", "TM", "TN", "TO", "TL", "TR", "TT", "TV",
	"TW", "TZ", "UA", "UG", "UM", "US", "UY", "UZ", "VA", "VC", "VE", "VG", "VI", "VN", "VU", "WF", "WS", "YE", "YT", "RS",
	"ZA", "ZM", "ME", "ZW", "A1", "A2", "O1", "AX", "GG", "IM", "JE", "BL", "MF", "BQ", "SS", "O1",
}

// OpenGeoIP loads the IPv4 and IPv6 country databases at v4 and v6 (either
// may be ""). A file that does not exist is left out (its addresses answer
// ""); both absent gives a nil *GeoIP and no error. Errors: a file that
// exists but cannot be read or is not a country database.
func OpenGeoIP(v4, v6 string) (*GeoIP, error) {
	g := &GeoIP{}
	var err error
	if g.v4, err = loadGeoIP(v4, geoIPCountry); err != nil {
		return nil, err
	}
	if g.v6, err = loadGeoIP(v6, geoIPCountryV6); err != nil {
		return nil, err
	}
	if g.v4 == nil && g.v6 == nil {
		return nil, nil
	}
	return g, nil
}

func loadGeoIP(path string, want int) ([]byte, error) {
	if path == "" {
		return nil, nil
	}
	b, err := os.ReadFile(path)
	if errors.Is(err, os.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("geoip: %w", err)
	}
	// The edition is named at the end of the file: three 0xFF bytes and
	// a type byte, within its last 20 bytes (libgeoip's _setup_segments).
	kind := geoIPCountry
	for i := len(b) - 3; i >= 0 && i >= len(b)-3-20; i-- {
		if b[i] == 0xFF && b[i+1] == 0xFF && b[i+2] == 0xFF && i+3 < len(b) {
			kind = int(b[i+3])
			if kind >= 106 {
				kind -= 105 // the old numbering of some editions
			}
			break
		}
	}
	if kind != want {
		return nil, fmt.Errorf("geoip: %s: edition %d, not a country database (%d)", path, kind, want)
	}
	return b, nil
}

// Loaded reports whether a database answers at least one address family.
func (g *GeoIP) Loaded() bool { return g != nil && (g.v4 != nil || g.v6 != nil) }

// Country is the ISO 3166-1 alpha-2 code of the country addr is in, or ""
// when it is unknown (no database for its family, a private or reserved
// address, a region such as "EU" or an anonymous proxy).
func (g *GeoIP) Country(addr netip.Addr) string {
	if g == nil || !addr.IsValid() {
		return ""
	}
	addr = addr.Unmap()
	var tree []byte
	var bits []byte
	if addr.Is4() {
		a := addr.As4()
		tree, bits = g.v4, a[:]
	} else {
		a := addr.As16()
		tree, bits = g.v6, a[:]
	}
	if tree == nil {
		return ""
	}
	offset := 0
	for depth := 0; depth < len(bits)*8; depth++ {
		at := offset * 6
		if at+6 > len(tree) {
			return "" // a damaged file
		}
		if bits[depth/8]&(0x80>>(depth%8)) != 0 {
			at += 3
		}
		x := int(tree[at]) | int(tree[at+1])<<8 | int(tree[at+2])<<16
		if x >= countryBegin {
			i := x - countryBegin
			if i <= 0 || i >= len(geoIPCodes) {
				return ""
			}
			switch c := geoIPCodes[i]; c {
			case "AP", "EU", "A1", "A2", "O1":
				return ""
			default:
				return c
			}
		}
		offset = x
	}
	return ""
}
