package delivery

import (
	"fmt"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"time"
)

// RelayConfig is one relay of HERALD_SMTP_URL: how to reach it (SMTP) and
// what it carries.
type RelayConfig struct {
	// Name identifies the relay in the console, on the ledger and in the
	// shared rate table: name=, else host:port.
	Name string
	SMTP SMTPConfig
	// Weight is the relay's share of the mail among the relays that may
	// carry it (weight=, default 1).
	Weight int
	// MaxConns is the relay's connections (max_conns=); 0: the
	// HERALD_SMTP_MAX_CONNS of the installation.
	MaxConns int
	// Limits bound the messages handed to the relay (rate=14/s,1000/m),
	// for the whole installation when the rate store is shared.
	Limits []RateLimit
	// FromDomains, when set, are the only From domains whose mail the
	// relay carries, and mail of those domains goes only to such relays
	// (from_domains=a.com|b.com, lower case).
	FromDomains []string
}

// RateLimit is N messages per calendar window of length Per (a second, a
// minute or a day, counted from the Unix epoch: a day is a UTC day).
type RateLimit struct {
	N   int
	Per time.Duration
}

// String is the limit as written: "14/s".
func (l RateLimit) String() string {
	unit := map[time.Duration]string{time.Second: "s", time.Minute: "m", time.Hour: "h", 24 * time.Hour: "d"}[l.Per]
	return fmt.Sprintf("%d/%s", l.N, unit)
}

// relayParams are the parameters of a relay's URL that say what it
// carries rather than how to reach it; ParseSMTPURL refuses them.
var relayParams = []string{"name", "weight", "max_conns", "rate", "from_domains"}

// Plain reports whether the relay uses none of the parameters of several
// relays: a single plain relay is the SMTP pool as it always was.
func (c RelayConfig) plain() bool {
	return c.Weight == 1 && c.MaxConns == 0 && len(c.Limits) == 0 && len(c.FromDomains) == 0 && c.Name == c.SMTP.Addr()
}

// ParseRelays reads HERALD_SMTP_URL: one or more relay URLs separated by
// spaces, each as ParseSMTPURL reads it plus name=, weight=N, max_conns=N,
// rate=N/s,N/m,N/d and from_domains=a.com|b.com. Names must differ (a name
// defaults to host:port, so two relays on one server need names), and at
// least one relay must be without from_domains, to carry the mail of the
// other domains. An error names the relay and the parameter.
func ParseRelays(raw string) ([]RelayConfig, error) {
	fields := strings.Fields(raw)
	if len(fields) == 0 {
		return nil, fmt.Errorf("delivery: HERALD_SMTP_URL: no relay")
	}
	var out []RelayConfig
	names := map[string]int{}
	general := false
	for i, f := range fields {
		c, err := parseRelay(f)
		which := fmt.Sprintf("relay %d", i+1)
		if c.Name != "" {
			which += fmt.Sprintf(" (%s)", c.Name)
		}
		if err != nil {
			if len(fields) == 1 {
				return nil, err
			}
			return nil, fmt.Errorf("delivery: HERALD_SMTP_URL: %s: %s", which, strings.TrimPrefix(err.Error(), "delivery: HERALD_SMTP_URL: "))
		}
		if j, ok := names[c.Name]; ok {
			return nil, fmt.Errorf("delivery: HERALD_SMTP_URL: %s: name %q is also relay %d's (give each relay its own name=)", which, c.Name, j+1)
		}
		names[c.Name] = i
		general = general || len(c.FromDomains) == 0
		out = append(out, c)
	}
	if !general {
		return nil, fmt.Errorf("delivery: HERALD_SMTP_URL: every relay has from_domains=: at least one must be without, for the mail of other domains")
	}
	return out, nil
}

// parseRelay reads one relay URL.
func parseRelay(raw string) (RelayConfig, error) {
	c := RelayConfig{Weight: 1}
	bad := func(format string, args ...any) (RelayConfig, error) {
		return c, fmt.Errorf("delivery: HERALD_SMTP_URL: "+format, args...)
	}
	u, err := url.Parse(raw)
	if err != nil {
		return bad("%v", err)
	}
	q, err := url.ParseQuery(u.RawQuery)
	if err != nil {
		return bad("%v", err)
	}
	// The name first, so that the errors below can name the relay.
	if v, ok := q["name"]; ok {
		c.Name = strings.TrimSpace(v[len(v)-1])
		if !validRelayName(c.Name) {
			n := c.Name
			c.Name = ""
			return bad("name=%q: letters, digits, '.', '-', '_' and ':', at most 64", n)
		}
	}
	for _, key := range relayParams {
		vals, ok := q[key]
		if !ok {
			continue
		}
		v := strings.TrimSpace(vals[len(vals)-1])
		q.Del(key)
		switch key {
		case "weight":
			n, err := strconv.Atoi(v)
			if err != nil || n < 1 || n > 1000 {
				return bad("weight=%q: a whole number from 1 to 1000", v)
			}
			c.Weight = n
		case "max_conns":
			n, err := strconv.Atoi(v)
			if err != nil || n < 1 || n > 1000 {
				return bad("max_conns=%q: a whole number from 1 to 1000", v)
			}
			c.MaxConns = n
		case "rate":
			if c.Limits, err = parseLimits(v); err != nil {
				return bad("rate=%q: %v", v, err)
			}
		case "from_domains":
			for _, d := range strings.Split(v, "|") {
				d = strings.ToLower(strings.TrimSpace(d))
				if d == "" || !ValidHeloName(d) || strings.HasPrefix(d, "[") {
					return bad("from_domains=%q: domains separated by |, such as a.com|b.com", v)
				}
				if !slices.Contains(c.FromDomains, d) {
					c.FromDomains = append(c.FromDomains, d)
				}
			}
		}
	}
	u.RawQuery = q.Encode()
	if c.SMTP, err = ParseSMTPURL(u.String()); err != nil {
		return c, err
	}
	if c.Name == "" {
		c.Name = c.SMTP.Addr()
	}
	return c, nil
}

// parseLimits reads "14/s,1000/m,50000/d".
func parseLimits(v string) ([]RateLimit, error) {
	units := map[string]time.Duration{"s": time.Second, "m": time.Minute, "h": time.Hour, "d": 24 * time.Hour}
	var out []RateLimit
	for _, part := range strings.Split(v, ",") {
		n, unit, ok := strings.Cut(strings.TrimSpace(part), "/")
		per, known := units[strings.ToLower(unit)]
		count, err := strconv.Atoi(n)
		if !ok || !known || err != nil || count < 1 {
			return nil, fmt.Errorf("limits such as 14/s, 1000/m, 50000/d joined by ','")
		}
		for _, l := range out {
			if l.Per == per {
				return nil, fmt.Errorf("two limits per %s", unit)
			}
		}
		out = append(out, RateLimit{N: count, Per: per})
	}
	slices.SortFunc(out, func(a, b RateLimit) int { return int(a.Per - b.Per) })
	return out, nil
}

func validRelayName(s string) bool {
	if s == "" || len(s) > 64 {
		return false
	}
	for _, r := range s {
		if !(r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || r == '.' || r == '-' || r == '_' || r == ':') {
			return false
		}
	}
	return true
}
