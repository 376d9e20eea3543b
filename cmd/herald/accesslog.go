package main

import (
	"context"
	"io"
	"log/slog"
	"strconv"
	"sync"
	"time"

	"herald/jsonw"
)

// accessLog writes the line every request leaves at info level. The line
// is the one slog's JSON handler writes for the same record, byte for
// byte (TestAccessLogLineIsSlogs), but it is appended by hand into a
// pooled buffer and handed to the log sink in one call: slog's generic
// record and attribute handling, its handler's own lock and the sink's
// lock cost a tenth of a small API request's CPU at the default level.
// Lines of 5xx answers go through slog (level error), so they are
// written out at once like every other error.
//
// A nil *accessLog logs every request through slog.
type accessLog struct {
	out   io.Writer // the log sink: one Write per line
	level slog.Leveler
	bufs  sync.Pool
}

func newAccessLog(out io.Writer, level slog.Leveler) *accessLog {
	return &accessLog{out: out, level: level, bufs: sync.Pool{New: func() any { b := make([]byte, 0, 256); return &b }}}
}

// request is what one request's line says.
type request struct {
	method, path, route string
	status              int
	duration            time.Duration
	account             int64
	hasAccount          bool // the request was made with an account's key or session
}

// log writes r's line, if its level is enabled.
func (a *accessLog) log(ctx context.Context, r request) {
	level := slog.LevelInfo
	if r.status >= 500 {
		level = slog.LevelError
	}
	if a == nil || level != slog.LevelInfo {
		if !slog.Default().Enabled(ctx, level) {
			return
		}
		attrs := []slog.Attr{
			slog.String("method", r.method), slog.String("path", r.path), slog.String("route", r.route),
			slog.Int("status", r.status), slog.Duration("duration", r.duration),
		}
		if r.hasAccount {
			attrs = append(attrs, slog.Int64("account", r.account))
		}
		slog.LogAttrs(ctx, level, "request", attrs...)
		return
	}
	if a.level.Level() > slog.LevelInfo {
		return
	}
	bp := a.bufs.Get().(*[]byte)
	b := appendRequestLine((*bp)[:0], time.Now(), r)
	_, _ = a.out.Write(b)
	*bp = b
	a.bufs.Put(bp)
}

// appendRequestLine appends r's info line as slog's JSON handler writes it.
func appendRequestLine(b []byte, now time.Time, r request) []byte {
	b = append(b, `{"time":"`...)
	b = now.AppendFormat(b, time.RFC3339Nano)
	b = append(b, `","level":"INFO","msg":"request","method":`...)
	b = jsonw.AppendLogString(b, r.method)
	b = append(b, `,"path":`...)
	b = jsonw.AppendLogString(b, r.path)
	b = append(b, `,"route":`...)
	b = jsonw.AppendLogString(b, r.route)
	b = append(b, `,"status":`...)
	b = strconv.AppendInt(b, int64(r.status), 10)
	b = append(b, `,"duration":`...)
	b = strconv.AppendInt(b, int64(r.duration), 10)
	if r.hasAccount {
		b = append(b, `,"account":`...)
		b = strconv.AppendInt(b, r.account, 10)
	}
	return append(b, "}\n"...)
}
