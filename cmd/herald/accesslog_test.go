package main

import (
	"bytes"
	"context"
	"log/slog"
	"strings"
	"testing"
	"time"
)

// slogLine is the line slog's JSON handler writes for r at now.
func slogLine(t *testing.T, now time.Time, r request) string {
	t.Helper()
	var out bytes.Buffer
	rec := slog.NewRecord(now, slog.LevelInfo, "request", 0)
	rec.AddAttrs(slog.String("method", r.method), slog.String("path", r.path), slog.String("route", r.route),
		slog.Int("status", r.status), slog.Duration("duration", r.duration))
	if r.hasAccount {
		rec.AddAttrs(slog.Int64("account", r.account))
	}
	if err := slog.NewJSONHandler(&out, nil).Handle(context.Background(), rec); err != nil {
		t.Fatal(err)
	}
	return out.String()
}

// TestAccessLogLineIsSlogs: the hand-written request line is byte for byte
// the one slog's JSON handler writes, for the paths a client may send
// (quotes, backslashes, control bytes, invalid UTF-8, line separators,
// HTML characters), with and without an account.
func TestAccessLogLineIsSlogs(t *testing.T) {
	t.Parallel()
	paths := []string{
		"/api/unsubscribes-groups", "", `/a"b\c`, "/new\nline\r\tx", "/\x00\x01\x1f\x7f\b\f", "/bad\xff\xfeutf8",
		"/sep\u2028and\u2029", "/<script>&amp;", "/ünïcødé/日本", "/\xe2\x80", strings.Repeat("/x", 300),
	}
	zones := []*time.Location{time.UTC, time.FixedZone("X", 5*3600+30*60)}
	for i, p := range paths {
		now := time.Date(2026, 12, 7, 12, 35, 32, 123456789-i*1000, zones[i%2])
		r := request{method: "GET", path: p, route: "/api/:id", status: 200 + i, duration: time.Duration(i) * 123457 * time.Nanosecond,
			account: int64(i * 7), hasAccount: i%2 == 0}
		if got, want := string(appendRequestLine(nil, now, r)), slogLine(t, now, r); got != want {
			t.Errorf("path %q:\n got %s\nwant %s", p, got, want)
		}
	}
}

// TestAccessLogLevels: info lines go to the sink only when the level lets
// them; nothing is written above info.
func TestAccessLogLevels(t *testing.T) {
	t.Parallel()
	out := &lockedBuffer{}
	newAccessLog(out, slog.LevelError).log(context.Background(), request{method: "GET", path: "/quiet", status: 200})
	newAccessLog(out, slog.LevelInfo).log(context.Background(), request{method: "GET", path: "/heard", status: 204})
	got := out.String()
	if strings.Contains(got, "/quiet") || !strings.Contains(got, `"path":"/heard","route":"","status":204`) {
		t.Fatalf("written: %q", got)
	}
}
