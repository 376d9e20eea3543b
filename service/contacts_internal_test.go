package service

import (
	"encoding/json"
	"fmt"
	"testing"

	"herald/service/core"
	"herald/service/internal/record"
)

// parseCustom must read what encoding/json reads, fast path or not.
func TestParseCustom(t *testing.T) {
	t.Parallel()
	for _, doc := range []string{
		``, `{}`, `{"a":"1"}`, `{"age": "32", "company": "Acme, Inc."}`, ` { "a" : "x" , "b":"" } `,
		`{"q":"say \\"hi\\""}`, `{"u":"\\u00e9t\\u00e9"}`, `{"n":7}`, `{"a":"1",}`, `{"a":{"b":"c"}}`, `{"é":"ü 😀"}`,
	} {
		want := map[string]string{}
		_ = json.Unmarshal([]byte(doc), &want)
		if got := record.ParseCustom(doc); fmt.Sprint(got) != fmt.Sprint(want) {
			t.Errorf("parseCustom(%q) = %v, want %v", doc, got, want)
		}
	}
}

func TestHasControl(t *testing.T) {
	t.Parallel()
	for s, want := range map[string]bool{
		"Ann Lee": false, "Zoë – café ✓": false, "": false,
		"a\r\nb": true, "a\nb": true, "a\rb": true, "tab\there": true, "nul\x00": true,
		"del\x7f": true, "nel\u0085": true, "ls\u2028": true, "ps\u2029": true,
	} {
		if got := core.HasControl(s); got != want {
			t.Errorf("HasControl(%q) = %v, want %v", s, got, want)
		}
	}
}
