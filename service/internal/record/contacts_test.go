package record

import (
	"encoding/json"
	"fmt"
	"testing"
)

// ParseCustom must read what encoding/json reads, fast path or not.
func TestParseCustom(t *testing.T) {
	t.Parallel()
	for _, doc := range []string{
		``, `{}`, `{"a":"1"}`, `{"age": "32", "company": "Acme, Inc."}`, ` { "a" : "x" , "b":"" } `,
		`{"q":"say \\"hi\\""}`, `{"u":"\\u00e9t\\u00e9"}`, `{"n":7}`, `{"a":"1",}`, `{"a":{"b":"c"}}`, `{"é":"ü 😀"}`,
	} {
		want := map[string]string{}
		_ = json.Unmarshal([]byte(doc), &want)
		if got := ParseCustom(doc); fmt.Sprint(got) != fmt.Sprint(want) {
			t.Errorf("ParseCustom(%q) = %v, want %v", doc, got, want)
		}
	}
}
