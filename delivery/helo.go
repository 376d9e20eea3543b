package delivery

import (
	"net/netip"
	"net/url"
	"strings"
)

// HeloName is the name herald gives in EHLO for host (HERALD_HELO_NAME,
// else the host of HERALD_BASE_URL): a domain as it is, an IP address as
// the address literal RFC 5321 asks for ("[192.0.2.1]", "[IPv6:…]").
func HeloName(host string) string {
	host = strings.Trim(strings.TrimSpace(host), "[]")
	if a, err := netip.ParseAddr(host); err == nil {
		if a.Is4() || a.Is4In6() {
			return "[" + a.Unmap().String() + "]"
		}
		return "[IPv6:" + a.String() + "]"
	}
	return host
}

// ValidHeloName reports whether name can be said in EHLO: a domain of
// letters, digits, hyphens and dots, or an address literal. Nothing
// that could break the command line (spaces, CR, LF) passes.
func ValidHeloName(name string) bool {
	if strings.HasPrefix(name, "[") && strings.HasSuffix(name, "]") {
		_, err := netip.ParseAddr(strings.TrimPrefix(name[1:len(name)-1], "IPv6:"))
		return err == nil
	}
	if name == "" || len(name) > 255 {
		return false
	}
	for _, label := range strings.Split(name, ".") {
		if label == "" || len(label) > 63 {
			return false
		}
		for _, c := range label {
			if !(c == '-' || '0' <= c && c <= '9' || 'a' <= c && c <= 'z' || 'A' <= c && c <= 'Z') {
				return false
			}
		}
	}
	return true
}

// WithHelo returns the relay URL smtpURL with helo=name, unless it names
// its own helo= (that one wins) or is empty (the outbox says no EHLO).
func WithHelo(smtpURL, name string) string {
	if smtpURL == "" || name == "" {
		return smtpURL
	}
	u, err := url.Parse(smtpURL)
	if err != nil {
		return smtpURL // ParseSMTPURL reports it
	}
	q := u.Query()
	if q.Has("helo") {
		return smtpURL
	}
	q.Set("helo", name)
	u.RawQuery = q.Encode()
	return u.String()
}
