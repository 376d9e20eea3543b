package delivery

import (
	"context"
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
