package views

import (
	"strings"
	"time"

	"herald/i18n"
)

// Translator is the language a public page speaks to its recipient
// (herald/i18n's Locale is one; the handler picks it). The console stays
// English and takes none: its words come from T and N below. Templates get their words from it by message id
// and never build a sentence from pieces: word order differs between
// languages.
type Translator interface {
	Lang() string // BCP 47 tag, for <html lang>
	Dir() string  // "ltr" or "rtl", for <html dir>
	// T is the message id, its placeholders filled from name, value pairs:
	// T("prefs.lead", "Email", e).
	T(id string, args ...any) string
	// N is the plural message id in the form the language uses for count.
	N(id string, count int, args ...any) string
	Date(t time.Time) string
	Number(n int64) string
}

// mark stands in for a value that the page wraps in markup.
const mark = "\uE000"

// Around splits message id around the placeholder name, so that a page can
// wrap the value in markup (<strong>) without building the sentence from
// pieces: Around(t, "prefs.lead", "Email") gives "Choose what " and
// " receives." in English, "" and " に届くメールを…" in Japanese. The value
// is left to the template, which escapes it.
func Around(t Translator, id, name string, args ...any) (before, after string) {
	s := t.T(id, append(args, name, mark)...)
	before, after, ok := strings.Cut(s, mark)
	if !ok {
		return s, ""
	}
	return before, after
}

// The console speaks English only for now, but its words are whole
// messages of a catalogue (herald/i18n's console/en.json), never sentences
// joined from pieces in a template: a translator can reorder the words
// around the placeholders, and plurals follow the language's plural rules.

// T is the console message id, its {{.Placeholders}} filled from name,
// value pairs: T("designs.delete_confirm", "Name", d.Name).
func T(id string, args ...any) string { return i18n.Console().T(id, args...) }

// N is the console's plural message id in the form English uses for
// count; {{.Count}} is count with thousands separators (12,345).
func N[C ~int | ~int64](id string, count C, args ...any) string {
	return i18n.Console().N(id, int(count), args...)
}

// AroundN splits the console's plural message id around its {{.Count}},
// so that a page can wrap the number in markup (<strong>) while the
// sentence stays whole: the number itself is Count(count).
func AroundN[C ~int | ~int64](id string, count C, args ...any) (before, after string) {
	s := i18n.Console().NMarked(id, int(count), mark, args...)
	before, after, ok := strings.Cut(s, mark)
	if !ok {
		return s, ""
	}
	return before, after
}
