// Package dnstest starts a DNS server on 127.0.0.1 (UDP and TCP on one
// port) that answers with the records a test gives it, authoritatively:
// a name it does not hold is NXDOMAIN, a name without records of the type
// asked is an empty answer. Service tests point service.NewResolver at
// Addr, so the domain checks run against real DNS on the wire.
package dnstest

import (
	"net"
	"strings"
	"sync"
	"testing"

	"github.com/miekg/dns"
)

// Server is a running DNS server; Add and Remove change its records at
// any time.
type Server struct {
	Addr string // 127.0.0.1:port, for UDP and TCP

	mu      sync.Mutex
	records map[string][]dns.RR // lower-case FQDN → records
	fail    map[string]int      // lower-case FQDN → Rcode answered instead
	queries int
	asked   map[string]int // lower-case FQDN → questions about it
}

// Start starts a server for the test's lifetime.
func Start(t testing.TB) *Server {
	t.Helper()
	s := &Server{records: map[string][]dns.RR{}, fail: map[string]int{}, asked: map[string]int{}}
	var udp net.PacketConn
	var tcp net.Listener
	for i := 0; ; i++ {
		pc, err := net.ListenPacket("udp", "127.0.0.1:0")
		if err != nil {
			t.Fatal(err)
		}
		ln, err := net.Listen("tcp", pc.LocalAddr().String())
		if err == nil {
			udp, tcp = pc, ln
			break
		}
		pc.Close()
		if i == 20 {
			t.Fatal("dnstest: no port free for both UDP and TCP:", err)
		}
	}
	s.Addr = udp.LocalAddr().String()
	us := &dns.Server{PacketConn: udp, Handler: s}
	ts := &dns.Server{Listener: tcp, Handler: s}
	var wg sync.WaitGroup
	started := make(chan struct{}, 2)
	us.NotifyStartedFunc = func() { started <- struct{}{} }
	ts.NotifyStartedFunc = func() { started <- struct{}{} }
	wg.Go(func() { _ = us.ActivateAndServe() })
	wg.Go(func() { _ = ts.ActivateAndServe() })
	<-started
	<-started
	t.Cleanup(func() {
		_ = us.Shutdown()
		_ = ts.Shutdown()
		wg.Wait()
	})
	return s
}

// Add adds records written as zone-file lines, e.g.
// `example.com. 300 IN TXT "v=spf1 -all"`; the TTL and class may be left
// out. A malformed line fails the test.
func (s *Server) Add(t testing.TB, lines ...string) {
	t.Helper()
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, l := range lines {
		rr, err := dns.NewRR(l)
		if err != nil || rr == nil {
			t.Fatalf("dnstest: record %q: %v", l, err)
		}
		n := strings.ToLower(rr.Header().Name)
		s.records[n] = append(s.records[n], rr)
	}
}

// TXT adds one TXT record at name whose value is split into strings of
// at most 255 bytes, as a DNS operator publishes a long DKIM key.
func (s *Server) TXT(t testing.TB, name, value string) {
	t.Helper()
	rr := &dns.TXT{Hdr: dns.RR_Header{Name: dns.Fqdn(strings.ToLower(name)), Rrtype: dns.TypeTXT, Class: dns.ClassINET, Ttl: 300}}
	for len(value) > 255 {
		rr.Txt = append(rr.Txt, value[:255])
		value = value[255:]
	}
	rr.Txt = append(rr.Txt, value)
	s.mu.Lock()
	s.records[rr.Hdr.Name] = append(s.records[rr.Hdr.Name], rr)
	s.mu.Unlock()
}

// Remove deletes every record of name.
func (s *Server) Remove(name string) {
	s.mu.Lock()
	delete(s.records, dns.Fqdn(strings.ToLower(name)))
	s.mu.Unlock()
}

// Fail makes every question about name answered with rcode (e.g.
// dns.RcodeServerFailure).
func (s *Server) Fail(name string, rcode int) {
	s.mu.Lock()
	s.fail[dns.Fqdn(strings.ToLower(name))] = rcode
	s.mu.Unlock()
}

// Queries is the number of questions answered so far.
func (s *Server) Queries() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.queries
}

// Asked is the number of questions (of any type) about name so far.
func (s *Server) Asked(name string) int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.asked[dns.Fqdn(strings.ToLower(name))]
}

// ServeDNS answers one question from the records.
func (s *Server) ServeDNS(w dns.ResponseWriter, req *dns.Msg) {
	m := new(dns.Msg)
	m.SetReply(req)
	m.Authoritative = true
	s.mu.Lock()
	s.queries++
	if len(req.Question) == 1 {
		q := req.Question[0]
		n := strings.ToLower(q.Name)
		s.asked[n]++
		rrs, ok := s.records[n]
		switch rc, failing := s.fail[n]; {
		case failing:
			m.Rcode = rc
		case !ok:
			m.Rcode = dns.RcodeNameError
		default:
			for _, rr := range rrs {
				if rr.Header().Rrtype == q.Qtype {
					m.Answer = append(m.Answer, dns.Copy(rr))
				}
			}
		}
	}
	s.mu.Unlock()
	if _, isUDP := w.RemoteAddr().(*net.UDPAddr); isUDP {
		m.Truncate(dnsSize(req))
	}
	_ = w.WriteMsg(m)
}

// dnsSize is the largest UDP answer the asker takes.
func dnsSize(req *dns.Msg) int {
	if o := req.IsEdns0(); o != nil {
		return int(o.UDPSize())
	}
	return dns.MinMsgSize
}
