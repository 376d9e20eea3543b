package deliverability

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/netip"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/miekg/dns"
)

// Resolver asks one DNS server (HERALD_DNS_SERVER) or the system's
// (/etc/resolv.conf) for the records the domain checks read: TXT, A/AAAA
// and MX. It is a real client on the wire, so that tests point it at a DNS
// server they start (dnstest) instead of the world.
type Resolver struct {
	servers []string // host:port, tried in order
	udp     *dns.Client
	tcp     *dns.Client
}

// ErrDNSTemporary is wrapped by a lookup that got no answer (a timeout,
// SERVFAIL, a refusal): the record may exist; the check says "try again"
// rather than "missing".
var ErrDNSTemporary = errors.New("the DNS server gave no answer")

// NewResolver asks server ("host:port") when set, else the name servers
// of /etc/resolv.conf. Errors: an unreadable resolv.conf with no server.
func NewResolver(server string) (*Resolver, error) {
	r := &Resolver{
		udp: &dns.Client{Net: "udp", Timeout: 3 * time.Second},
		tcp: &dns.Client{Net: "tcp", Timeout: 5 * time.Second},
	}
	if server != "" {
		if _, _, err := net.SplitHostPort(server); err != nil {
			return nil, fmt.Errorf("DNS server %q: want host:port (e.g. 127.0.0.1:53)", server)
		}
		r.servers = []string{server}
		return r, nil
	}
	cc, err := dns.ClientConfigFromFile("/etc/resolv.conf")
	if err != nil {
		return nil, fmt.Errorf("system resolver: %w", err)
	}
	for _, s := range cc.Servers {
		r.servers = append(r.servers, net.JoinHostPort(s, cc.Port))
	}
	if len(r.servers) == 0 {
		return nil, errors.New("system resolver: /etc/resolv.conf names no nameserver")
	}
	return r, nil
}

// query asks for name's records of type t. No such name (NXDOMAIN) and
// no records of the type are both an empty answer, not an error.
func (r *Resolver) query(ctx context.Context, name string, t uint16) ([]dns.RR, error) {
	m := new(dns.Msg)
	m.SetQuestion(dns.Fqdn(name), t)
	m.RecursionDesired = true
	m.SetEdns0(4096, false)
	var last error
	for _, srv := range r.servers {
		in, _, err := r.udp.ExchangeContext(ctx, m, srv)
		if err == nil && in.Truncated {
			in, _, err = r.tcp.ExchangeContext(ctx, m, srv)
		}
		if err != nil {
			last = err
			if ctx.Err() != nil {
				break
			}
			continue
		}
		switch in.Rcode {
		case dns.RcodeSuccess, dns.RcodeNameError:
			var out []dns.RR
			for _, rr := range in.Answer {
				if rr.Header().Rrtype == t {
					out = append(out, rr)
				}
			}
			return out, nil
		default:
			last = fmt.Errorf("%s", dns.RcodeToString[in.Rcode])
		}
	}
	return nil, fmt.Errorf("%w (%s %s: %v)", ErrDNSTemporary, dns.TypeToString[t], strings.TrimSuffix(name, "."), last)
}

// TXT returns name's TXT records, each one's strings joined (RFC 7208
// 3.3: a long value is split into several strings of one record).
func (r *Resolver) TXT(ctx context.Context, name string) ([]string, error) {
	rrs, err := r.query(ctx, name, dns.TypeTXT)
	if err != nil {
		return nil, err
	}
	out := make([]string, 0, len(rrs))
	for _, rr := range rrs {
		out = append(out, strings.Join(rr.(*dns.TXT).Txt, ""))
	}
	return out, nil
}

// IPs returns name's A and AAAA addresses.
func (r *Resolver) IPs(ctx context.Context, name string) ([]netip.Addr, error) {
	var out []netip.Addr
	for _, t := range []uint16{dns.TypeA, dns.TypeAAAA} {
		rrs, err := r.query(ctx, name, t)
		if err != nil {
			return nil, err
		}
		for _, rr := range rrs {
			var ip net.IP
			switch v := rr.(type) {
			case *dns.A:
				ip = v.A
			case *dns.AAAA:
				ip = v.AAAA
			}
			if a, ok := netip.AddrFromSlice(ip); ok {
				out = append(out, a.Unmap())
			}
		}
	}
	return out, nil
}

// MX returns name's mail exchangers, lowest preference first, without
// the final dot.
func (r *Resolver) MX(ctx context.Context, name string) ([]string, error) {
	rrs, err := r.query(ctx, name, dns.TypeMX)
	if err != nil {
		return nil, err
	}
	slices.SortStableFunc(rrs, func(a, b dns.RR) int { return int(a.(*dns.MX).Preference) - int(b.(*dns.MX).Preference) })
	out := make([]string, 0, len(rrs))
	for _, rr := range rrs {
		out = append(out, strings.ToLower(strings.TrimSuffix(rr.(*dns.MX).Mx, ".")))
	}
	return out, nil
}

// sharedResolver is the one Resolver of a service, made on first use from
// HERALD_DNS_SERVER: the domain checks and the bounce setup page ask DNS
// through it, so that both see what the same server answers.
type sharedResolver struct {
	server string

	mu   sync.Mutex
	made bool
	r    *Resolver
	err  error
}

func (s *sharedResolver) get() (*Resolver, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if !s.made {
		s.r, s.err = NewResolver(s.server)
		s.made = true
	}
	return s.r, s.err
}
