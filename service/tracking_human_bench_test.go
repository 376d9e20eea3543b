package service_test

import (
	"context"
	"testing"
	"time"
)

// BenchmarkTrackOpenPerson records a person's opens (OpenHit with a
// browser's shape): classification, the raw counters and the human ones.
func BenchmarkTrackOpenPerson(b *testing.B) {
	svc, clock, toks := trackBench(b, 100)
	ctx := context.Background()
	i := 0
	for b.Loop() {
		clock.Advance(61 * time.Second / time.Duration(len(toks)))
		if err := svc.Tracking.OpenHit(ctx, toks[i%len(toks)], personHit); err != nil {
			b.Fatal(err)
		}
		i++
	}
}

// BenchmarkTrackClickPerson records a person's clicks (ClickHit),
// alternating the two links.
func BenchmarkTrackClickPerson(b *testing.B) {
	svc, clock, toks := trackBench(b, 100)
	ctx := context.Background()
	i := 0
	for b.Loop() {
		clock.Advance(61 * time.Second / time.Duration(len(toks)))
		if _, err := svc.Tracking.ClickHit(ctx, toks[i%len(toks)], (i/len(toks))%2, personHit); err != nil {
			b.Fatal(err)
		}
		i++
	}
}
