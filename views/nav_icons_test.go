package views

import (
	"bytes"
	"context"
	"regexp"
	"testing"
)

// TestSidebarIconsAreDistinct: every entry of the sidebar draws an icon
// of its own (repeated icons made two entries look alike).
func TestSidebarIconsAreDistinct(t *testing.T) {
	t.Parallel()
	shape := regexp.MustCompile(`<(path|rect|circle)`)
	seen := map[string]string{}
	for _, sec := range navSections {
		for _, it := range sec.Items {
			if other, ok := seen[it.Icon]; ok {
				t.Errorf("%q and %q share the icon %q", other, it.Label, it.Icon)
			}
			seen[it.Icon] = it.Label
			var b bytes.Buffer
			if err := Icon(it.Icon).Render(context.Background(), &b); err != nil {
				t.Fatal(err)
			}
			if !shape.Match(b.Bytes()) {
				t.Errorf("%q: the icon %q draws nothing", it.Label, it.Icon)
			}
		}
	}
}
