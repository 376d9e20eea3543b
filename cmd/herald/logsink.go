package main

import (
	"bufio"
	"context"
	"io"
	"log/slog"
	"sync"
	"time"
)

// logSink gathers log lines and writes them out in batches: at most
// flushEvery after the first line of a batch, when its buffer fills, at
// once after a warning or an error, and on Close. A busy server writes one
// line per request; one write(2) each was a tenth of a small request's
// cost. A process killed outright loses at most flushEvery of info lines;
// warnings and errors are out before the call that logged them returns.
type logSink struct {
	mu    sync.Mutex
	w     *bufio.Writer
	armed bool // a flush is due
	every time.Duration
}

const logFlushEvery = 200 * time.Millisecond

func newLogSink(out io.Writer, every time.Duration) *logSink {
	return &logSink{w: bufio.NewWriterSize(out, 64<<10), every: every}
}

// Write keeps p (one log line, as slog writes it) for the next flush.
func (s *logSink) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	n, err := s.w.Write(p)
	if !s.armed {
		s.armed = true
		time.AfterFunc(s.every, s.Flush)
	}
	return n, err
}

// Flush writes out what is kept.
func (s *logSink) Flush() {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.armed = false
	_ = s.w.Flush()
}

// Close writes out what is kept; later lines are written at once.
func (s *logSink) Close() { s.Flush() }

// urgentHandler writes a warning or an error out at once: the lines an
// operator looks for after a crash are never left in the buffer.
type urgentHandler struct {
	slog.Handler
	sink *logSink
}

func (h urgentHandler) Handle(ctx context.Context, r slog.Record) error {
	err := h.Handler.Handle(ctx, r)
	if r.Level >= slog.LevelWarn {
		h.sink.Flush()
	}
	return err
}

func (h urgentHandler) WithAttrs(as []slog.Attr) slog.Handler {
	return urgentHandler{h.Handler.WithAttrs(as), h.sink}
}

func (h urgentHandler) WithGroup(name string) slog.Handler {
	return urgentHandler{h.Handler.WithGroup(name), h.sink}
}
