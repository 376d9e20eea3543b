package deliverability

import (
	"context"
	"errors"
	"fmt"
	"net/netip"
	"strconv"
	"strings"
)

// SPF results (RFC 7208 2.6).
const (
	SPFPass      = "pass"
	SPFFail      = "fail"
	SPFSoftFail  = "softfail"
	SPFNeutral   = "neutral"
	SPFNone      = "none"
	SPFPermError = "permerror"
	SPFTempError = "temperror"
)

// spfLookupLimit is RFC 7208 4.6.4: at most 10 mechanisms and modifiers
// that ask DNS (include, a, mx, ptr, exists, redirect) per evaluation;
// receivers answer permerror beyond it, which fails SPF.
const spfLookupLimit = 10

// spfEval evaluates SPF records for one address with a shared lookup
// count. It understands ip4, ip6, a, mx, include, exists, ptr (counted,
// never matching, as RFC 7208 5.5 discourages it), all and redirect;
// macros (%{…}) are not expanded: a term with one does not match.
type spfEval struct {
	r       *Resolver
	ip      netip.Addr
	lookups int
}

// spfRecords returns the v=spf1 records among a name's TXT records.
func spfRecords(txt []string) []string {
	var out []string
	for _, t := range txt {
		l := strings.ToLower(strings.TrimSpace(t))
		if l == "v=spf1" || strings.HasPrefix(l, "v=spf1 ") {
			out = append(out, strings.TrimSpace(t))
		}
	}
	return out
}

var errSPFLimit = errors.New("more than 10 DNS lookups")

// check is check_host() of RFC 7208 4: the result and, for permerror and
// temperror, why.
func (e *spfEval) check(ctx context.Context, domain string, depth int) (string, error) {
	if depth > 20 {
		return SPFPermError, errors.New("include or redirect loop")
	}
	txt, err := e.r.TXT(ctx, domain)
	if err != nil {
		return SPFTempError, err
	}
	recs := spfRecords(txt)
	switch len(recs) {
	case 0:
		return SPFNone, nil
	case 1:
	default:
		return SPFPermError, fmt.Errorf("%s has %d SPF records", domain, len(recs))
	}
	terms := strings.Fields(recs[0])[1:]
	redirect := ""
	for _, term := range terms {
		lt := strings.ToLower(term)
		if name, val, ok := strings.Cut(lt, "="); ok && !strings.ContainsAny(name, ":/") {
			if name == "redirect" {
				redirect = val
			}
			continue // exp and unknown modifiers are ignored
		}
		qual := SPFPass
		switch lt[0] {
		case '+':
			lt = lt[1:]
		case '-':
			qual, lt = SPFFail, lt[1:]
		case '~':
			qual, lt = SPFSoftFail, lt[1:]
		case '?':
			qual, lt = SPFNeutral, lt[1:]
		}
		match, err := e.mechanism(ctx, domain, lt, depth)
		if err != nil {
			if errors.Is(err, ErrDNSTemporary) {
				return SPFTempError, err
			}
			return SPFPermError, err
		}
		if match {
			return qual, nil
		}
	}
	if redirect != "" {
		if err := e.count(); err != nil {
			return SPFPermError, err
		}
		res, err := e.check(ctx, redirect, depth+1)
		if res == SPFNone {
			return SPFPermError, fmt.Errorf("redirect=%s has no SPF record", redirect)
		}
		return res, err
	}
	return SPFNeutral, nil
}

func (e *spfEval) count() error {
	e.lookups++
	if e.lookups > spfLookupLimit {
		return errSPFLimit
	}
	return nil
}

// mechanism reports whether one mechanism (qualifier removed) matches.
func (e *spfEval) mechanism(ctx context.Context, domain, m string, depth int) (bool, error) {
	name, arg, _ := strings.Cut(m, ":")
	cidr := ""
	if i := strings.IndexByte(name, '/'); i >= 0 { // "a/24", "mx//64"
		name, cidr = name[:i], name[i:]
	} else if name == "a" || name == "mx" || name == "ip4" || name == "ip6" {
		if i := strings.IndexByte(arg, '/'); i >= 0 {
			arg, cidr = arg[:i], arg[i:]
		}
	}
	target := domain
	if arg != "" && name != "ip4" && name != "ip6" {
		target = arg
	}
	if strings.Contains(target, "%") {
		if name == "include" || name == "a" || name == "mx" || name == "exists" {
			return false, e.count()
		}
		return false, nil
	}
	switch name {
	case "all":
		return true, nil
	case "ip4", "ip6":
		s := arg + cidr
		if !strings.Contains(s, "/") {
			if a, err := netip.ParseAddr(arg); err == nil {
				return a == e.ip, nil
			}
			return false, fmt.Errorf("%s:%s is not an address", name, arg)
		}
		p, err := netip.ParsePrefix(s)
		if err != nil {
			return false, fmt.Errorf("%s:%s is not an address range", name, s)
		}
		return p.Contains(e.ip), nil
	case "include":
		if arg == "" {
			return false, errors.New("include without a domain")
		}
		if err := e.count(); err != nil {
			return false, err
		}
		res, err := e.check(ctx, arg, depth+1)
		switch res {
		case SPFPass:
			return true, nil
		case SPFTempError:
			return false, err
		case SPFPermError:
			return false, err
		case SPFNone:
			return false, fmt.Errorf("include:%s has no SPF record", arg)
		}
		return false, nil
	case "a":
		if err := e.count(); err != nil {
			return false, err
		}
		return e.hostMatches(ctx, target, cidr)
	case "mx":
		if err := e.count(); err != nil {
			return false, err
		}
		hosts, err := e.r.MX(ctx, target)
		if err != nil {
			return false, err
		}
		for i, h := range hosts {
			if i == 10 {
				return false, fmt.Errorf("mx of %s names more than 10 hosts", target)
			}
			if ok, err := e.hostMatches(ctx, h, cidr); ok || err != nil {
				return ok, err
			}
		}
		return false, nil
	case "exists":
		if err := e.count(); err != nil {
			return false, err
		}
		ips, err := e.r.IPs(ctx, target)
		return len(ips) > 0, err
	case "ptr":
		return false, e.count()
	}
	return false, fmt.Errorf("unknown mechanism %q", m)
}

// hostMatches reports whether host's addresses, widened to cidr ("/24",
// "//64" or "/24//64"), hold the address.
func (e *spfEval) hostMatches(ctx context.Context, host, cidr string) (bool, error) {
	ips, err := e.r.IPs(ctx, host)
	if err != nil {
		return false, err
	}
	bits4, bits6 := 32, 128
	if cidr != "" {
		v4, v6, _ := strings.Cut(strings.TrimPrefix(cidr, "/"), "//")
		if strings.HasPrefix(cidr, "//") {
			v4, v6 = "", strings.TrimPrefix(cidr, "//")
		}
		if v4 != "" {
			if bits4, err = strconv.Atoi(v4); err != nil || bits4 < 0 || bits4 > 32 {
				return false, fmt.Errorf("bad prefix length %q", cidr)
			}
		}
		if v6 != "" {
			if bits6, err = strconv.Atoi(v6); err != nil || bits6 < 0 || bits6 > 128 {
				return false, fmt.Errorf("bad prefix length %q", cidr)
			}
		}
	}
	for _, a := range ips {
		bits := bits6
		if a.Is4() {
			bits = bits4
		}
		if a.Is4() != e.ip.Is4() {
			continue
		}
		if p, err := a.Prefix(bits); err == nil && p.Contains(e.ip) {
			return true, nil
		}
	}
	return false, nil
}

// SPFCheck evaluates domain's SPF policy for ip: the result, the DNS
// lookups it took and, for permerror and temperror, why.
func SPFCheck(ctx context.Context, r *Resolver, domain string, ip netip.Addr) (result string, lookups int, err error) {
	e := &spfEval{r: r, ip: ip.Unmap()}
	res, err := e.check(ctx, domain, 0)
	return res, e.lookups, err
}

// mergeSPF adds include:relay (or the terms given) to an existing SPF
// record before its all or redirect, or proposes a new record ending in
// ~all when there is none.
func mergeSPF(existing string, add ...string) string {
	if existing == "" {
		return "v=spf1 " + strings.Join(append(add, "~all"), " ")
	}
	terms := strings.Fields(existing)
	have := map[string]bool{}
	for _, t := range terms {
		have[strings.ToLower(strings.TrimLeft(t, "+"))] = true
	}
	var missing []string
	for _, a := range add {
		if !have[strings.ToLower(a)] {
			missing = append(missing, a)
		}
	}
	at := len(terms)
	for i, t := range terms[1:] {
		lt := strings.ToLower(strings.TrimLeft(t, "+-~?"))
		if lt == "all" || strings.HasPrefix(lt, "redirect=") {
			at = i + 1
			break
		}
	}
	out := append([]string{}, terms[:at]...)
	out = append(out, missing...)
	return strings.Join(append(out, terms[at:]...), " ")
}
