package views_test

import (
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"testing"

	"herald/i18n"
	"herald/views"
)

// concatLiteral finds a string literal on either side of a + (or +=) in a
// .templ file: the mark of a value built by joining strings.
var concatLiteral = regexp.MustCompile("(\"(?:[^\"\\\\\\n]|\\\\.)*\"|`[^`]*`)\\s*\\+|\\+=?\\s*(\"(?:[^\"\\\\\\n]|\\\\.)*\"|`[^`]*`)")

// notText are the pieces a template may join with +, because what they
// build is no text a person reads: each with its reason. Anything else
// joined with + is a sentence built from pieces, which a translator cannot
// reorder; it belongs in the console catalogue as one message.
var notText = []struct {
	piece  *regexp.Regexp
	reason string
}{
	{regexp.MustCompile(`^[a-z][a-z0-9-]*-$`), "the prefix of an element id or CSS class (\"contact-\" + id, \"flash-\" + kind)"},
	{regexp.MustCompile(`^-[a-z][a-z0-9-]*$`), "the suffix of an element id derived from another (id + \"-help\")"},
	{regexp.MustCompile(`^[a-z][a-z0-9_]*_$`), "the prefix of a form field's name (\"area_\" + area), sent back to the server"},
	{regexp.MustCompile(`^#$`), "a CSS selector of an element id (hx-target, data-insert-into)"},
	{regexp.MustCompile(`^/[A-Za-z0-9_./-]*$`), "a URL path"},
	{regexp.MustCompile(`^\?[a-z_]+=[a-z]*$`), "a URL query"},
	{regexp.MustCompile(`^:(asc|desc)$`), "the value of a sort option (key:dir), sent back to the server"},
	{regexp.MustCompile(`^(\(\(|\)\))$`), "the (( )) delimiters of a merge placeholder a user inserts into a subject: syntax, not words"},
	{regexp.MustCompile(`^[A-Z_]+=[a-z]+@$`), "an environment setting shown as code (HERALD_BOUNCE_ADDRESS=bounces@domain), typed as is in every language"},
	{regexp.MustCompile(`^(confirm\.|_title)$`), "a message id of the public catalogue picked by state, not text"},
}

// concatenations lists the pieces of text joined with + in the .templ
// files under dir, as "file:line: piece".
func concatenations(t *testing.T, dir string) []string {
	t.Helper()
	var out []string
	err := filepath.WalkDir(dir, func(path string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() || !strings.HasSuffix(path, ".templ") {
			return err
		}
		src, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		for _, m := range concatLiteral.FindAllSubmatchIndex(src, -1) {
			lo, hi := m[2], m[3]
			if lo < 0 {
				lo, hi = m[4], m[5]
			}
			lit := string(src[lo:hi])
			piece, err := strconv.Unquote(lit)
			if err != nil {
				piece = lit
			}
			if allowed(piece) {
				continue
			}
			line := 1 + strings.Count(string(src[:lo]), "\n")
			out = append(out, path+":"+strconv.Itoa(line)+": "+strconv.Quote(piece))
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return out
}

func allowed(piece string) bool {
	for _, a := range notText {
		if a.piece.MatchString(piece) {
			return true
		}
	}
	return false
}

// No template builds text a person reads by joining strings: a sentence is
// one message of the catalogue with placeholders (views.T, views.N).
func TestTemplatesBuildNoTextByConcatenation(t *testing.T) {
	for _, c := range concatenations(t, ".") {
		t.Errorf("%s is joined to other text with +: make the sentence one message (views.T / views.N)", c)
	}
}

// The scanner sees the concatenations it is meant to refuse, and lets
// through those that build ids and addresses.
func TestConcatenationScanner(t *testing.T) {
	dir := t.TempDir()
	src := "package x\n" +
		"templ a(n string, id int64) {\n" +
		"\t<button aria-label={ \"Delete \" + n + \"?\" } id={ \"row-\" + n } hx-target={ \"#\" + n }></button>\n" +
		"\t<a href={ templ.SafeURL(\"/contacts/\" + n + \"/edit\") } title={ n + ` copies` }>{ \"Sent to \" + n }</a>\n" +
		"}\n"
	if err := os.WriteFile(filepath.Join(dir, "a.templ"), []byte(src), 0o600); err != nil {
		t.Fatal(err)
	}
	got := concatenations(t, dir)
	want := []string{`"Delete "`, `"?"`, `" copies"`, `"Sent to "`}
	if len(got) != len(want) {
		t.Fatalf("found %q, want the pieces %q", got, want)
	}
	for i, w := range want {
		if !strings.HasSuffix(got[i], w) {
			t.Errorf("finding %d = %q, want the piece %s", i, got[i], w)
		}
	}
}

// messageUse finds the console message ids the code asks for: views.T("id",
// views.N("id", views.AroundN("id" (and the same calls inside package views).
var quoted = regexp.MustCompile(`"([a-z_]+\.[a-z_.]+)"`)

var messageUse = regexp.MustCompile(`(?:^|[^\w.]|views\.)(T|N|AroundN)\(\s*"([^"]+)"`)

// Every console message the templates and handlers ask for is in the
// English catalogue, a plural one with the forms English needs (one,
// other) and a plain one as a plain text; and the catalogue holds no
// message nobody asks for.
func TestConsoleMessagesHaveTheirEnglishForm(t *testing.T) {
	cat, err := i18n.ConsoleCatalogue()
	if err != nil {
		t.Fatal(err)
	}
	used := map[string]string{} // id → "T" or "N"
	mentioned := map[string]bool{}
	for _, dir := range []string{".", "../web"} {
		err := filepath.WalkDir(dir, func(path string, d fs.DirEntry, err error) error {
			if err != nil || d.IsDir() {
				return err
			}
			if !strings.HasSuffix(path, ".templ") && (!strings.HasSuffix(path, ".go") || strings.HasSuffix(path, "_templ.go") || strings.HasSuffix(path, "_test.go")) {
				return nil
			}
			src, err := os.ReadFile(path)
			if err != nil {
				return err
			}
			var code strings.Builder // the source without its comment lines
			for _, l := range strings.Split(string(src), "\n") {
				if !strings.HasPrefix(strings.TrimSpace(l), "//") {
					code.WriteString(l + "\n")
				}
			}
			// A message id passed on to a helper (countOf("chart.opens", n))
			// is in use too: its kind is checked where the helper asks for it.
			for _, m := range quoted.FindAllStringSubmatch(code.String(), -1) {
				mentioned[m[1]] = true
			}
			for _, m := range messageUse.FindAllStringSubmatch(code.String(), -1) {
				kind := "T"
				if m[1] != "T" {
					kind = "N"
				}
				if k, ok := used[m[2]]; ok && k != kind {
					t.Errorf("%s: message %q is asked for both plain and plural", path, m[2])
				}
				used[m[2]] = kind
			}
			return nil
		})
		if err != nil {
			t.Fatal(err)
		}
	}
	if len(used) == 0 {
		t.Fatal("found no console message in use: the pattern is broken")
	}
	ids := make([]string, 0, len(used))
	for id := range used {
		ids = append(ids, id)
	}
	sort.Strings(ids)
	for _, id := range ids {
		forms, ok := cat[id]
		switch {
		case !ok:
			t.Errorf("message %q has no English form in i18n/console/en.json", id)
		case used[id] == "N":
			for _, f := range []string{"one", "other"} {
				if strings.TrimSpace(forms[f]) == "" {
					t.Errorf("plural message %q lacks its English %q form", id, f)
				}
			}
		default:
			if len(forms) != 1 || strings.TrimSpace(forms["other"]) == "" {
				t.Errorf("message %q is asked for as plain text but is %v", id, forms)
			}
		}
	}
	for id := range cat {
		if _, ok := used[id]; !ok && !mentioned[id] {
			t.Errorf("message %q of i18n/console/en.json is asked for by no template or handler", id)
		}
	}
}

// The helpers fill placeholders, pick the plural form by the count, write
// the count with thousands separators, and cut a message around its count.
func TestConsoleMessages(t *testing.T) {
	if got := views.T("action.delete_confirm", "Name", "ann@example.com"); got != "Delete ann@example.com?" {
		t.Errorf("T = %q", got)
	}
	for n, want := range map[int64]string{0: "0 rows", 1: "1 row", 2: "2 rows", 12345: "12,345 rows"} {
		if got := views.N("pager.rows", n); got != want {
			t.Errorf("N(%d) = %q, want %q", n, got, want)
		}
	}
	before, after := views.AroundN("setup.untied_reports", 1, "Days", "30")
	if before != "" || after != " report not tied to a message in the last 30 days." {
		t.Errorf("AroundN = %q, %q", before, after)
	}
	// A value with markup stays text: the page escapes it, the catalogue
	// does not interpret it.
	if got := views.T("action.delete_confirm", "Name", "<b>{{.X}}</b>"); got != "Delete <b>{{.X}}</b>?" {
		t.Errorf("T with markup = %q", got)
	}
}
