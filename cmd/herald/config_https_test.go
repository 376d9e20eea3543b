package main

import (
	"bufio"
	"context"
	"encoding/json"
	"io"
	"os"
	"strings"
	"testing"
	"time"

	"herald/dbtest"
)

// serveLog starts `herald serve` with env until it logs that it serves,
// stops it, and returns the JSON log lines it wrote on stderr.
func serveLog(t *testing.T, env map[string]string) []map[string]any {
	t.Helper()
	r, w, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	// run logs to the os.Stderr of its start; no other test runs beside
	// this one (its tests are not parallel, and parallel tests start only
	// after every sequential one has ended).
	stderr := os.Stderr
	os.Stderr = w
	defer func() { os.Stderr = stderr }()

	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	done := make(chan error, 1)
	go func() { done <- run(ctx, []string{"herald", "serve"}, envFrom(env), io.Discard) }()
	lines := make(chan map[string]any)
	go func() {
		defer close(lines)
		sc := bufio.NewScanner(r)
		for sc.Scan() {
			var l map[string]any
			if json.Unmarshal(sc.Bytes(), &l) == nil {
				lines <- l
			}
		}
	}()
	var out []map[string]any
	timeout := time.After(20 * time.Second)
	for serving := false; !serving; {
		select {
		case l := <-lines:
			out = append(out, l)
			serving = l["msg"] == "herald serving"
		case err := <-done:
			t.Fatalf("serve stopped: %v", err)
		case <-timeout:
			t.Fatalf("herald did not say it serves; logged %v", out)
		}
	}
	cancel()
	go func() {
		for range lines { // keep the pipe drained while herald stops
		}
	}()
	if err := <-done; err != nil {
		t.Fatalf("serve: %v", err)
	}
	w.Close()
	r.Close()
	return out
}

// A public address over plain http on a host that is not this machine
// gets a warning at start: RFC 8058 one-click unsubscribe needs https.
func TestPlainHTTPBaseURLWarnsAtStart(t *testing.T) {
	for _, c := range []struct {
		base string
		warn bool
	}{
		{"http://herald.example.com", true},
		{"https://herald.example.com", false},
		{"http://localhost:8080", false},
	} {
		t.Run(c.base, func(t *testing.T) {
			addr := freeAddr(t)
			lines := serveLog(t, map[string]string{"HERALD_DATABASE": dbtest.DSN(t), "HERALD_ADDR": addr, "HERALD_BASE_URL": c.base, "HERALD_LOG_LEVEL": "info"})
			warned := false
			for _, l := range lines {
				if msg, _ := l["msg"].(string); l["level"] == "WARN" && strings.Contains(msg, "RFC 8058 one-click unsubscribe needs an https link") {
					warned = true
				}
			}
			if warned != c.warn {
				t.Fatalf("HERALD_BASE_URL=%s: warned %v, want %v; log %v", c.base, warned, c.warn, lines)
			}
		})
	}
}
