package delivery

import (
	"slices"
	"strings"
	"testing"
)

func TestRender(t *testing.T) {
	t.Parallel()
	values := map[string]string{
		"first_name":  "Zoë",
		"last_name":   "O'Brien",
		"sender_name": "Café",
		"x1":          "<b>",
	}
	lookup := func(name string) string { return values[name] } // unknown: ""
	tests := []struct {
		name, tmpl, want string
		names            []string
	}{
		{"no placeholder", "Hello there", "Hello there", nil},
		{"one", "Hello ((first_name))!", "Hello Zoë!", []string{"first_name"}},
		{"adjacent", "((first_name))((last_name))", "ZoëO'Brien", []string{"first_name", "last_name"}},
		{"repeated", "((x1))-((x1))", "<b>-<b>", []string{"x1"}},
		{"unknown is empty", "Hi ((nickname)).", "Hi .", []string{"nickname"}},
		{"whole text", "((sender_name))", "Café", []string{"sender_name"}},
		{"spaces are literal", "(( first_name ))", "(( first_name ))", nil},
		{"dash is literal", "((first-name))", "((first-name))", nil},
		{"empty name is literal", "(())", "(())", nil},
		{"unclosed", "((first_name)", "((first_name)", nil},
		{"single parens", "(first_name)", "(first_name)", nil},
		{"extra open paren", "(((first_name))", "(Zoë", []string{"first_name"}},
		{"extra close paren", "((first_name)))", "Zoë)", []string{"first_name"}},
		{"link in text", "Unsubscribe (((x1)))", "Unsubscribe (<b>)", []string{"x1"}},
		{"non-ASCII name is literal", "((prénom))", "((prénom))", nil},
		{"non-ASCII around", "¡Hola ((first_name))! ☀️", "¡Hola Zoë! ☀️", []string{"first_name"}},
		{"empty template", "", "", nil},
		{"open at end", "abc((", "abc((", nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			tmpl := Compile(tt.tmpl)
			if got := tmpl.Render(lookup); got != tt.want {
				t.Errorf("Render = %q, want %q", got, tt.want)
			}
			if got := tmpl.Names(); !slices.Equal(got, tt.names) {
				t.Errorf("Names = %q, want %q", got, tt.names)
			}
			var b strings.Builder
			b.WriteString(">")
			tmpl.Execute(&b, lookup)
			if b.String() != ">"+tt.want {
				t.Errorf("Execute appended %q", b.String())
			}
		})
	}
}

func TestHTMLEscaped(t *testing.T) {
	t.Parallel()
	tmpl := Compile(`<p>((name))</p><a href="((link))">x</a>`)
	got := tmpl.Render(HTMLEscaped(func(name string) string {
		return map[string]string{"name": `<script>"x"</script>`, "link": "https://x.example/?a=1&b=2"}[name]
	}))
	want := `<p>&lt;script&gt;&#34;x&#34;&lt;/script&gt;</p><a href="https://x.example/?a=1&amp;b=2">x</a>`
	if got != want {
		t.Fatalf("got %q\nwant %q", got, want)
	}
}

func TestRenderLookupCalledPerPlaceholder(t *testing.T) {
	t.Parallel()
	tmpl := Compile("((a)) ((b)) ((a))")
	var calls []string
	tmpl.Render(func(name string) string { calls = append(calls, name); return "" })
	if !slices.Equal(calls, []string{"a", "b", "a"}) {
		t.Fatalf("calls %q", calls)
	}
}

func FuzzRender(f *testing.F) {
	for _, s := range []string{"", "Hello ((first_name))!", "(((a)))", "((a))((b))", "((", "))((x", "(( a ))", "((é))", "((a_1))((", "\x00((\xff))"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		tmpl := Compile(s)
		empty := tmpl.Render(func(string) string { return "" })
		if !strings.Contains(s, "((") && empty != s {
			t.Fatalf("text without (( changed: %q -> %q", s, empty)
		}
		// A lookup giving back the placeholder itself reproduces the input.
		if back := tmpl.Render(func(name string) string { return "((" + name + "))" }); back != s {
			t.Fatalf("round trip: %q -> %q", s, back)
		}
		for _, name := range tmpl.Names() {
			if name == "" || strings.IndexFunc(name, func(r rune) bool { return r > 127 || !isNameByte(byte(r)) }) >= 0 {
				t.Fatalf("bad name %q from %q", name, s)
			}
			if !strings.Contains(s, "(("+name+"))") {
				t.Fatalf("name %q not in %q", name, s)
			}
		}
		if len(empty) > len(s) {
			t.Fatalf("empty values made it longer: %q -> %q", s, empty)
		}
	})
}
