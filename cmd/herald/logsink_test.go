package main

import (
	"bytes"
	"log/slog"
	"strings"
	"sync"
	"testing"
	"time"

	"herald/eventually"
)

// lockedBuffer is a buffer the sink writes to and the test reads.
type lockedBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (l *lockedBuffer) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Write(p)
}

func (l *lockedBuffer) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.String()
}

// TestLogSink: info lines wait for the batch (written together after the
// flush interval), a warning goes out at once with what came before it,
// and Close writes out the rest.
func TestLogSink(t *testing.T) {
	t.Parallel()
	out := &lockedBuffer{}
	sink := newLogSink(out, time.Hour) // no timed flush in this part
	log := slog.New(urgentHandler{slog.NewJSONHandler(sink, nil), sink})
	log.Info("request", "path", "/a")
	log.Info("request", "path", "/b")
	if got := out.String(); got != "" {
		t.Fatalf("info lines written before their batch: %q", got)
	}
	log.Warn("relay paused")
	if got := out.String(); !strings.Contains(got, `"/a"`) || !strings.Contains(got, `"/b"`) || !strings.Contains(got, "relay paused") {
		t.Fatalf("after a warning: %q, want every line so far", got)
	}
	log.Info("request", "path", "/c")
	sink.Close()
	if got := out.String(); !strings.Contains(got, `"/c"`) {
		t.Fatalf("after Close: %q", got)
	}

	timed := &lockedBuffer{}
	sink = newLogSink(timed, 20*time.Millisecond)
	slog.New(slog.NewJSONHandler(sink, nil)).Info("request", "path", "/d")
	eventually.True(t, 5*time.Second, "the batch written after its interval", func() bool { return strings.Contains(timed.String(), `"/d"`) })
}
