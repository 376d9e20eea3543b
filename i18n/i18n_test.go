package i18n

import (
	"io/fs"
	"path"
	"regexp"
	"slices"
	"sort"
	"strings"
	"testing"
	"time"
)

// languages are the ten languages decisions.md 10 asks for at least.
var languages = []string{"en", "de", "fr", "es", "it", "nl", "pt", "pl", "sv", "ja"}

// pluralForms are the CLDR plural categories of each language's cardinal
// numbers: a plural message must give exactly these forms.
var pluralForms = map[string][]string{
	"en": {"one", "other"}, "de": {"one", "other"}, "nl": {"one", "other"}, "sv": {"one", "other"},
	"fr": {"many", "one", "other"}, "es": {"many", "one", "other"}, "it": {"many", "one", "other"}, "pt": {"many", "one", "other"},
	"pl": {"few", "many", "one", "other"},
	"ja": {"other"},
}

// formatPlaceholders are the messages that are patterns rather than text:
// a language may use any of the named placeholders (Japanese writes the
// month as a number), and need not use all.
var formatPlaceholders = map[string][]string{
	"date": {"Day", "Month", "MonthNumber", "Year"},
}

var placeholder = regexp.MustCompile(`{{\s*\.([A-Za-z0-9_]+)\s*}}`)

func placeholders(forms map[string]string) []string {
	set := map[string]bool{}
	for _, s := range forms {
		for _, m := range placeholder.FindAllStringSubmatch(s, -1) {
			set[m[1]] = true
		}
	}
	out := make([]string, 0, len(set))
	for k := range set {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}

func catalogues(t *testing.T) map[string]map[string]map[string]string {
	t.Helper()
	names, err := fs.Glob(files, "locales/*.json")
	if err != nil {
		t.Fatal(err)
	}
	out := map[string]map[string]map[string]string{}
	for _, name := range names {
		c, err := readCatalogue(files, name)
		if err != nil {
			t.Fatal(err)
		}
		out[strings.TrimSuffix(path.Base(name), ".json")] = c
	}
	return out
}

func TestEveryLanguageHasACatalogue(t *testing.T) {
	t.Parallel()
	cats := catalogues(t)
	for _, l := range languages {
		if _, ok := cats[l]; !ok {
			t.Errorf("no catalogue locales/%s.json", l)
		}
	}
	got := Supported()
	if got[0] != "en" || len(got) != len(cats) {
		t.Errorf("Supported() = %v, want en first and %d languages", got, len(cats))
	}
}

// TestCataloguesMatchTheSource: every key of en.json is in every
// catalogue and no catalogue has a key en.json lacks; placeholders and
// plural forms match; no translation is the English text copied.
func TestCataloguesMatchTheSource(t *testing.T) {
	t.Parallel()
	cats := catalogues(t)
	src := cats["en"]
	if len(src) == 0 {
		t.Fatal("en.json is empty")
	}
	for lang, cat := range cats {
		for id, forms := range src {
			tr, ok := cat[id]
			if !ok {
				t.Errorf("%s.json: missing %q", lang, id)
				continue
			}
			if want, ok := formatPlaceholders[id]; ok {
				for _, p := range placeholders(tr) {
					if !slices.Contains(want, p) {
						t.Errorf("%s.json %q: placeholder %q is not one of %v", lang, id, p, want)
					}
				}
			} else if got, want := placeholders(tr), placeholders(forms); !slices.Equal(got, want) {
				t.Errorf("%s.json %q: placeholders %v, the source has %v", lang, id, got, want)
			}
			if len(forms) > 1 || forms["one"] != "" { // a plural message
				var got []string
				for f := range tr {
					got = append(got, f)
				}
				sort.Strings(got)
				if want := pluralForms[lang]; want != nil && !slices.Equal(got, want) {
					t.Errorf("%s.json %q: plural forms %v, %s has %v", lang, id, got, lang, want)
				}
			}
			for f, s := range tr {
				if strings.TrimSpace(s) == "" {
					t.Errorf("%s.json %q (%s): empty", lang, id, f)
				}
				if lang != "en" && s == forms[f] && len(placeholder.ReplaceAllString(s, "")) > 12 {
					t.Errorf("%s.json %q: the English text copied: %q", lang, id, s)
				}
			}
		}
		for id := range cat {
			if _, ok := src[id]; !ok {
				t.Errorf("%s.json: %q is not in en.json", lang, id)
			}
		}
	}
}

// TestEveryMessageRendersInEveryLanguage localizes each message in each
// language, plural ones with counts that reach every plural form.
func TestEveryMessageRendersInEveryLanguage(t *testing.T) {
	t.Parallel()
	src := catalogues(t)["en"]
	for _, lang := range Supported() {
		l, ok := Match(lang)
		if !ok || l.Lang() != lang {
			t.Fatalf("Match(%q) = %v, %v", lang, l, ok)
		}
		for id, forms := range src {
			args := []any{"Email", "a@example.com", "Form", "Weekly news", "Status", "404", "Day", 5, "Month", "x", "MonthNumber", 1, "Year", 2027, "Name", "Shop"}
			if len(forms) > 1 {
				for _, n := range []int{0, 1, 2, 3, 5, 12, 21, 22, 25, 101, 1000000} {
					if s := l.N(id, n, args...); s == id || strings.Contains(s, "<no value>") || !strings.Contains(s, l.Number(int64(n))) && lang != "ja" {
						t.Errorf("%s: N(%q, %d) = %q", lang, id, n, s)
					}
				}
				continue
			}
			if s := l.T(id, args...); s == id || s == "" || strings.Contains(s, "<no value>") {
				t.Errorf("%s: T(%q) = %q", lang, id, s)
			}
		}
	}
}

func TestPick(t *testing.T) {
	t.Parallel()
	cases := []struct{ contact, form, accept, want string }{
		{"de", "fr", "es", "de"},
		{"pt-BR", "", "", "pt"},
		{"de-AT", "", "", "de"},
		{"", "fr", "es", "fr"},
		{"", "", "fr-CH, fr;q=0.9, en;q=0.8", "fr"},
		{"", "", "zh-CN, ja;q=0.5", "ja"},
		{"xx-invalid-tag-!!", "", "pl", "pl"},
		{"zh", "", "sv", "sv"},         // a language herald does not speak: the next source
		{"", "", "zh, ko;q=0.5", "en"}, // nothing spoken: English
		{"", "", "", "en"},
		{"", "", "garbage;;;q=x", "en"},
		{"nb", "", "", "en"}, // Norwegian is close to Swedish, but not Swedish
	}
	for _, c := range cases {
		if got := Pick(c.contact, c.form, c.accept).Lang(); got != c.want {
			t.Errorf("Pick(%q, %q, %q) = %s, want %s", c.contact, c.form, c.accept, got, c.want)
		}
	}
}

func TestFormats(t *testing.T) {
	t.Parallel()
	day := time.Date(2027, time.January, 5, 12, 0, 0, 0, time.UTC)
	cases := []struct{ lang, date, number string }{
		{"en", "January 5, 2027", "1,234,567"},
		{"de", "5. Januar 2027", "1.234.567"},
		{"fr", "5 janvier 2027", "1\u00a0234\u00a0567"},
		{"es", "5 de enero de 2027", "1.234.567"},
		{"it", "5 gennaio 2027", "1.234.567"},
		{"nl", "5 januari 2027", "1.234.567"},
		{"pt", "5 de janeiro de 2027", "1.234.567"},
		{"pl", "5 stycznia 2027", "1\u00a0234\u00a0567"},
		{"sv", "5 januari 2027", "1\u00a0234\u00a0567"},
		{"ja", "2027年1月5日", "1,234,567"},
	}
	for _, c := range cases {
		l, _ := Match(c.lang)
		if got := l.Date(day); got != c.date {
			t.Errorf("%s: Date = %q, want %q", c.lang, got, c.date)
		}
		if got := l.Number(1234567); got != c.number {
			t.Errorf("%s: Number = %q, want %q", c.lang, got, c.number)
		}
		if l.Dir() != "ltr" {
			t.Errorf("%s: Dir = %s", c.lang, l.Dir())
		}
	}
	if got := English().N("prefs.receiving", 1); got != "You still receive mail from 1 list." {
		t.Errorf("en one: %q", got)
	}
	pl, _ := Match("pl")
	for n, want := range map[int]string{1: "1 listy.", 3: "3 list.", 5: "5 list.", 22: "22 list."} {
		if got := pl.N("prefs.receiving", n); !strings.HasSuffix(got, want) {
			t.Errorf("pl %d: %q, want … %s", n, got, want)
		}
	}
}
