package apibench

import (
	"testing"
	"time"
)

// A wrk --latency output as wrk 4.2 prints it.
const wrkOutput = `Running 8s test @ http://127.0.0.1:4000/
  2 threads and 64 connections
  Thread Stats   Avg      Stdev     Max   +/- Stdev
    Latency     1.53ms    2.10ms  40.11ms   91.20%
    Req/Sec    21.10k     2.31k   27.01k    70.00%
  Latency Distribution
     50%    0.98ms
     75%    1.61ms
     90%    3.02ms
     99%   10.45ms
  336321 requests in 8.00s, 40.11MB read
Requests/sec:  42038.77
Transfer/sec:      5.01MB
`

func TestParseWrk(t *testing.T) {
	s, err := parseWrk(wrkOutput)
	if err != nil {
		t.Fatal(err)
	}
	if s.rps != 42038.77 || s.requests != 336321 || s.p99 != 10450*time.Microsecond {
		t.Fatalf("parsed %+v", s)
	}
	if _, err := parseWrk(wrkOutput + "  Non-2xx or 3xx responses: 12\n"); err == nil {
		t.Fatal("non-2xx answers were not refused")
	}
}
