package main

import (
	"context"
	"io"
	"log/slog"
	"strconv"
	"sync"
	"time"
	"unicode/utf8"
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
	b = appendJSONString(b, r.method)
	b = append(b, `,"path":`...)
	b = appendJSONString(b, r.path)
	b = append(b, `,"route":`...)
	b = appendJSONString(b, r.route)
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

// appendJSONString appends s as a JSON string with slog's escaping: quote,
// backslash and control bytes escaped, invalid UTF-8 as U+FFFD, U+2028 and
// U+2029 escaped; <, > and & kept. A request's path is the client's text:
// nothing in it can break the line or forge another.
func appendJSONString(b []byte, s string) []byte {
	const hex = "0123456789abcdef"
	b = append(b, '"')
	start := 0
	for i := 0; i < len(s); {
		c := s[i]
		if c >= 0x20 && c != '"' && c != '\\' && c < utf8.RuneSelf {
			i++
			continue
		}
		if c < utf8.RuneSelf {
			b = append(b, s[start:i]...)
			switch c {
			case '"', '\\':
				b = append(b, '\\', c)
			case '\n':
				b = append(b, '\\', 'n')
			case '\r':
				b = append(b, '\\', 'r')
			case '\t':
				b = append(b, '\\', 't')
			default:
				b = append(b, '\\', 'u', '0', '0', hex[c>>4], hex[c&0xF])
			}
			i++
			start = i
			continue
		}
		r, size := utf8.DecodeRuneInString(s[i:])
		switch {
		case r == utf8.RuneError && size == 1:
			b = append(b, s[start:i]...)
			b = append(b, `\ufffd`...)
		case r == '\u2028' || r == '\u2029':
			b = append(b, s[start:i]...)
			b = append(b, '\\', 'u', '2', '0', '2', hex[r&0xF])
		default:
			i += size
			continue
		}
		i += size
		start = i
	}
	b = append(b, s[start:]...)
	return append(b, '"')
}
