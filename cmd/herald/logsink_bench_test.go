package main

import (
	"context"
	"io"
	"log/slog"
	"testing"
	"time"
)

// BenchmarkRequestLine is the cost of one request's info line into the
// batching log sink, from as many goroutines as GOMAXPROCS: through slog's
// JSON handler (as every other line) and by the access log.
func BenchmarkRequestLine(b *testing.B) {
	r := request{method: "GET", path: "/api/unsubscribes-groups", route: "/api/unsubscribes-groups", status: 200,
		duration: 123456 * time.Nanosecond, account: 12, hasAccount: true}
	b.Run("slog", func(b *testing.B) {
		sink := newLogSink(io.Discard, logFlushEvery)
		l := slog.New(urgentHandler{slog.NewJSONHandler(sink, &slog.HandlerOptions{Level: slog.LevelInfo}), sink})
		b.ReportAllocs()
		b.RunParallel(func(pb *testing.PB) {
			ctx := context.Background()
			for pb.Next() {
				l.LogAttrs(ctx, slog.LevelInfo, "request",
					slog.String("method", r.method), slog.String("path", r.path), slog.String("route", r.route),
					slog.Int("status", r.status), slog.Duration("duration", r.duration), slog.Int64("account", r.account))
			}
		})
	})
	b.Run("access-log", func(b *testing.B) {
		a := newAccessLog(newLogSink(io.Discard, logFlushEvery), slog.LevelInfo)
		b.ReportAllocs()
		b.RunParallel(func(pb *testing.PB) {
			ctx := context.Background()
			for pb.Next() {
				a.log(ctx, r)
			}
		})
	})
}
