package jsonw

import (
	"bytes"
	"context"
	"encoding/json"
	"log/slog"
	"strings"
	"testing"
	"time"
)

var hard = []string{"", "plain", `q"b\s`, "\n\r\t\b\f\x00\x1f\x7f", "<a href='x'>&amp;</a>", "bad\xff\xfe", "\xe2\x80", "sep\u2028\u2029",
	"ünïcødé 日本", strings.Repeat("ab<", 100)}

// TestAppendStringIsEncodingJSON: AppendString writes what
// encoding/json.Marshal writes for the same string.
func TestAppendStringIsEncodingJSON(t *testing.T) {
	for _, s := range hard {
		want, err := json.Marshal(s)
		if err != nil {
			t.Fatal(err)
		}
		if got := AppendString(nil, s); !bytes.Equal(got, want) {
			t.Errorf("%q: got %s, want %s", s, got, want)
		}
	}
}

// TestAppendLogStringIsSlogs: AppendLogString writes what log/slog's JSON
// handler writes for the same string value.
func TestAppendLogStringIsSlogs(t *testing.T) {
	for _, s := range hard {
		var out bytes.Buffer
		rec := slog.NewRecord(time.Time{}, slog.LevelInfo, "", 0)
		rec.AddAttrs(slog.String("v", s))
		if err := slog.NewJSONHandler(&out, nil).Handle(context.Background(), rec); err != nil {
			t.Fatal(err)
		}
		line := strings.TrimSuffix(out.String(), "\n")
		want := line[strings.Index(line, `"v":`)+4 : len(line)-1]
		if got := string(AppendLogString(nil, s)); got != want {
			t.Errorf("%q: got %s, want %s", s, got, want)
		}
	}
}
