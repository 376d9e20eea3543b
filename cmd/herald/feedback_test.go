package main

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestFeedbackParse: `herald feedback parse FILE…` prints one JSON line
// per report with exactly the keys of decisions.md 9, reads mails the way
// the inbound server does (a policy refusal is a block, a mailbox gone a
// hard bounce, a delayed DSN a deferral, an ARF report a complaint), opens
// no database, and reports a file it cannot read after printing the rest.
func TestFeedbackParse(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	dbFile := filepath.Join(dir, "never.db")
	env := envFrom(map[string]string{"HERALD_DATABASE": dbFile, "HERALD_LOG_LEVEL": "error"})
	corpus := filepath.Join("..", "..", "delivery", "testdata")
	files := []string{
		filepath.Join(corpus, "bounces", "samples", "lhost-postfix-11.eml"),  // 553 5.1.8 sender's domain: a block
		filepath.Join(corpus, "bounces", "samples", "lhost-sendmail-36.eml"), // Status 5.1.1, "550 5.7.1 IP address blacklisted": a block
		filepath.Join(corpus, "reports", "dsn-postfix.eml"),                  // user unknown at RCPT: hard
		filepath.Join(corpus, "reports", "dsn-multi.eml"),                    // three recipients, one delayed
		filepath.Join(corpus, "reports", "arf-yahoo.eml"),                    // a complaint
		filepath.Join(corpus, "reports", "out-of-office.eml"),                // nothing
		filepath.Join(corpus, "bounces", "samples", "lhost-gmail-10.eml"),    // no connection until Gmail gave up: soft, never hard
	}
	var out bytes.Buffer
	if err := run(context.Background(), append([]string{"herald", "feedback", "parse"}, files...), env, &out); err != nil {
		t.Fatal(err)
	}
	type line struct {
		File, Recipient, Kind, Reason, Status, Diagnostic string
	}
	var got []line
	for _, l := range strings.Split(strings.TrimSuffix(out.String(), "\n"), "\n") {
		var keys map[string]any
		if err := json.Unmarshal([]byte(l), &keys); err != nil {
			t.Fatalf("not a JSON line: %q", l)
		}
		if len(keys) != 6 {
			t.Fatalf("keys of %q: want file, recipient, kind, reason, status, diagnostic", l)
		}
		var x line
		_ = json.Unmarshal([]byte(l), &x)
		got = append(got, x)
	}
	want := []struct{ file, rcpt, kind, reason string }{
		{"lhost-postfix-11.eml", "kijitora@example.jp", "block", "rejected"},
		{"lhost-postfix-11.eml", "noraneko@example.jp", "block", "rejected"},
		{"lhost-sendmail-36.eml", "kijitora@nyaan.example.com", "block", "blocked"},
		{"dsn-postfix.eml", "bob@example.com", "hard_bounce", "userunknown"},
		{"dsn-multi.eml", "cy@example.org", "hard_bounce", "userunknown"},
		{"dsn-multi.eml", "dee@example.org", "deferral", "networkerror"},
		{"dsn-multi.eml", "fay@example.org", "soft_bounce", "suspend"},
		{"arf-yahoo.eml", "kim@yahoo.example", "complaint", "feedback"},
		{"lhost-gmail-10.eml", "kijitora@6jo.example.co.jp", "soft_bounce", "networkerror"},
	}
	if len(got) != len(want) {
		t.Fatalf("%d lines, want %d:\n%s", len(got), len(want), out.String())
	}
	for i, w := range want {
		g := got[i]
		if filepath.Base(g.File) != w.file || g.Recipient != w.rcpt || g.Kind != w.kind || g.Reason != w.reason {
			t.Errorf("line %d: %+v, want %+v", i, g, w)
		}
	}
	if _, err := os.Stat(dbFile); !os.IsNotExist(err) {
		t.Fatalf("feedback parse touched the database: %v", err)
	}

	// A missing file is an error, after the others were printed.
	out.Reset()
	err := run(context.Background(), []string{"herald", "feedback", "parse", filepath.Join(dir, "nope.eml"), files[2]}, env, &out)
	if err == nil || !strings.Contains(err.Error(), "nope.eml") || !strings.Contains(out.String(), `"bob@example.com"`) {
		t.Fatalf("err %v, out %q", err, out.String())
	}
	// No file at all: the usage.
	if err := run(context.Background(), []string{"herald", "feedback", "parse"}, env, &out); err == nil || !strings.Contains(err.Error(), "usage") {
		t.Fatalf("no file: %v", err)
	}
}
