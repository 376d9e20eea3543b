package main

import (
	"strings"
	"testing"
	"time"
	"unsafe"

	"github.com/prometheus/client_golang/prometheus"
	dto "github.com/prometheus/client_model/go"
)

// count is a counter's value.
func count(t *testing.T, c prometheus.Counter) float64 {
	t.Helper()
	var m dto.Metric
	if err := c.Write(&m); err != nil {
		t.Fatal(err)
	}
	return m.GetCounter().GetValue()
}

// TestMetricsSeriesKept checks httpMetrics.observe's table of series: a
// request's count lands in its own method, route and status, a method
// given as bytes fasthttp reuses is copied before it is kept, and past
// maxSeries the vectors still count.
func TestMetricsSeriesKept(t *testing.T) {
	t.Parallel()
	reg := prometheus.NewRegistry()
	m := newHTTPMetrics(reg)
	buf := []byte("GET")
	method := unsafe.String(&buf[0], len(buf)) // as fiber's c.Method() gives it
	for range 3 {
		m.observe(method, "/api/global-unsubscribes", 200, time.Millisecond)
	}
	copy(buf, "PUT") // fasthttp reuses the request's bytes
	m.observe(method, "/api/global-unsubscribes", 200, time.Millisecond)
	m.observe("GET", "/api/global-unsubscribes", 401, time.Millisecond)
	for _, c := range []struct {
		method, status string
		want           float64
	}{{"GET", "200", 3}, {"PUT", "200", 1}, {"GET", "401", 1}} {
		if got := count(t, m.requests.WithLabelValues(c.method, "/api/global-unsubscribes", c.status)); got != c.want {
			t.Errorf("%s %s: %v requests, want %v", c.method, c.status, got, c.want)
		}
	}
	ch := make(chan prometheus.Metric, 16)
	m.latency.Collect(ch)
	if n := len(ch); n != 3 {
		t.Errorf("%d latency series, want 3", n)
	}

	for i := range maxSeries + 10 {
		m.observe("X"+strings.Repeat("Y", i%7)+string(rune('a'+i%26)), "/r", i, time.Millisecond)
	}
	if len(m.series) > maxSeries {
		t.Fatalf("%d series kept, want at most %d", len(m.series), maxSeries)
	}
	m.observe("GET", "/api/global-unsubscribes", 200, time.Millisecond) // kept before the table filled
	m.observe("LATE", "/late", 200, time.Millisecond)                   // not kept, still counted
	m.observe("LATE", "/late", 200, time.Millisecond)
	if got := count(t, m.requests.WithLabelValues("GET", "/api/global-unsubscribes", "200")); got != 4 {
		t.Errorf("GET 200 after the table filled: %v requests, want 4", got)
	}
	if got := count(t, m.requests.WithLabelValues("LATE", "/late", "200")); got != 2 {
		t.Errorf("a series beyond the table: %v requests, want 2", got)
	}
}
