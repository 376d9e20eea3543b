package core

import "testing"

func TestHasControl(t *testing.T) {
	t.Parallel()
	for s, want := range map[string]bool{
		"Ann Lee": false, "Zoë – café ✓": false, "": false,
		"a\r\nb": true, "a\nb": true, "a\rb": true, "tab\there": true, "nul\x00": true,
		"del\x7f": true, "nel\u0085": true, "ls\u2028": true, "ps\u2029": true,
	} {
		if got := HasControl(s); got != want {
			t.Errorf("HasControl(%q) = %v, want %v", s, got, want)
		}
	}
}
