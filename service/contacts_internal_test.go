package service

import (
	"encoding/json"
	"fmt"
	"testing"
)

// parseCustom must read what encoding/json reads, fast path or not.
func TestParseCustom(t *testing.T) {
	for _, doc := range []string{
		``, `{}`, `{"a":"1"}`, `{"age": "32", "company": "Acme, Inc."}`, ` { "a" : "x" , "b":"" } `,
		`{"q":"say \\"hi\\""}`, `{"u":"\\u00e9t\\u00e9"}`, `{"n":7}`, `{"a":"1",}`, `{"a":{"b":"c"}}`, `{"é":"ü 😀"}`,
	} {
		want := map[string]string{}
		_ = json.Unmarshal([]byte(doc), &want)
		if got := parseCustom(doc); fmt.Sprint(got) != fmt.Sprint(want) {
			t.Errorf("parseCustom(%q) = %v, want %v", doc, got, want)
		}
	}
}
