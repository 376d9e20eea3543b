// Package i18n speaks the recipient's language on the public pages and in
// the mail herald writes to recipients (decisions.md 10, "The recipient's
// language"). The console stays English, but its words are a catalogue
// too (console/en.json, see Console), ready for translation.
//
// One message catalogue per language lives in locales/<tag>.json (go-i18n's
// JSON format, embedded). English (en.json) is the source: every other file
// has exactly its keys and the same {{.Placeholders}} (i18n_test.go checks).
// A handler picks a Locale with Pick (the contact's language, else the
// form's, else Accept-Language, else English) and hands it to the templates,
// which see it as views.Translator.
package i18n

import (
	"embed"
	"encoding/json"
	"fmt"
	"io/fs"
	"log/slog"
	"path"
	"sort"
	"strings"
	"time"

	goi18n "github.com/nicksnyder/go-i18n/v2/i18n"
	"golang.org/x/text/language"
	"golang.org/x/text/message"
	"golang.org/x/text/number"
)

//go:embed locales/*.json
var files embed.FS

// Source is the language every catalogue is translated from, and the one
// spoken when nothing else matches.
var Source = language.English

var (
	bundle    *goi18n.Bundle
	supported []language.Tag // Source first: the matcher's fallback
	matcher   language.Matcher
	locales   = map[language.Tag]*Locale{}
)

func init() {
	b, tags, err := load(files)
	if err != nil {
		panic("i18n: " + err.Error())
	}
	bundle, supported = b, tags
	matcher = language.NewMatcher(supported)
	for _, t := range supported {
		locales[t] = newLocale(t)
	}
}

// load reads every catalogue of fsys into a bundle; the tags it returns
// start with Source and follow in the files' order.
func load(fsys fs.FS) (*goi18n.Bundle, []language.Tag, error) {
	b := goi18n.NewBundle(Source)
	b.RegisterUnmarshalFunc("json", json.Unmarshal)
	names, err := fs.Glob(fsys, "locales/*.json")
	if err != nil {
		return nil, nil, err
	}
	tags := []language.Tag{Source}
	for _, name := range names {
		f, err := b.LoadMessageFileFS(fsys, name)
		if err != nil {
			return nil, nil, fmt.Errorf("catalogue %s: %w", path.Base(name), err)
		}
		if f.Tag != Source {
			tags = append(tags, f.Tag)
		}
	}
	return b, tags, nil
}

// Supported are the languages herald speaks, English first.
func Supported() []string {
	out := make([]string, len(supported))
	for i, t := range supported {
		out[i] = t.String()
	}
	return out
}

// Match returns the supported language an IETF tag (such as "de" or
// "pt-BR") is spoken in, and false when the tag is malformed or herald
// speaks no language close to it. A form's language setting can be checked
// with it.
func Match(tag string) (*Locale, bool) {
	tag = strings.TrimSpace(tag)
	if tag == "" || len(tag) > 35 {
		return nil, false
	}
	t, err := language.Parse(tag)
	if err != nil {
		return nil, false
	}
	return best(t)
}

// best matches tags (in order of preference) against the supported
// languages; a match weaker than High (a related language, not a variant
// of the same one) is no match.
func best(tags ...language.Tag) (*Locale, bool) {
	_, i, conf := matcher.Match(tags...)
	if conf < language.High {
		return nil, false
	}
	return locales[supported[i]], true
}

// Pick is the language a recipient is spoken to in: the contact's language
// (contact, "" for none or no contact), else the form's (form, "" outside
// a form), else the browser's Accept-Language header (acceptLanguage, ""
// for a mail), else English. A tag herald does not speak is passed over.
func Pick(contact, form, acceptLanguage string) *Locale {
	for _, t := range []string{contact, form} {
		if l, ok := Match(t); ok {
			return l
		}
	}
	if acceptLanguage != "" && len(acceptLanguage) <= 512 {
		if tags, _, err := language.ParseAcceptLanguage(acceptLanguage); err == nil && len(tags) > 0 {
			if l, ok := best(tags...); ok {
				return l
			}
		}
	}
	return English()
}

// English is the source language's locale.
func English() *Locale { return locales[Source] }

// Locale is one supported language: its words, its plural rules and its
// formats of dates and numbers. It implements views.Translator.
type Locale struct {
	tag     language.Tag
	loc     *goi18n.Localizer
	printer *message.Printer
}

func newLocale(t language.Tag) *Locale {
	return &Locale{tag: t, loc: goi18n.NewLocalizer(bundle, t.String()), printer: message.NewPrinter(t)}
}

// Lang is the language's BCP 47 tag, for <html lang> and Content-Language.
func (l *Locale) Lang() string { return l.tag.String() }

// Dir is the writing direction of the language's script, for <html dir>:
// "rtl" for the scripts written right to left, else "ltr".
func (l *Locale) Dir() string {
	s, _ := l.tag.Script()
	switch s.String() {
	case "Arab", "Hebr", "Thaa", "Syrc", "Nkoo", "Adlm", "Rohg", "Mand", "Samr":
		return "rtl"
	}
	return "ltr"
}

// T is the message id in this language. args are name, value pairs that
// fill the message's placeholders: T("prefs.lead", "Email", e) fills
// {{.Email}}. A message missing from every catalogue is logged and shown as
// its id (the catalogue test keeps that from happening).
func (l *Locale) T(id string, args ...any) string {
	return l.localize(id, nil, args)
}

// N is the plural message id for count, in the plural form the language
// uses for it; {{.Count}} is the count in the language's number format.
func (l *Locale) N(id string, count int, args ...any) string {
	return l.localize(id, count, append(args, "Count", l.Number(int64(count))))
}

// NMarked is N with {{.Count}} filled by text rather than the number: a
// page that wraps the number in markup puts a mark there and cuts around it.
func (l *Locale) NMarked(id string, count int, text string, args ...any) string {
	return l.localize(id, count, append(args, "Count", text))
}

func (l *Locale) localize(id string, count any, args []any) string {
	data := make(map[string]any, len(args)/2)
	for i := 0; i+1 < len(args); i += 2 {
		if k, ok := args[i].(string); ok {
			data[k] = args[i+1]
		}
	}
	s, err := l.loc.Localize(&goi18n.LocalizeConfig{MessageID: id, TemplateData: data, PluralCount: count})
	if err != nil {
		slog.Error("i18n: message", "lang", l.Lang(), "id", id, "error", err)
		if s == "" {
			return id
		}
	}
	return s
}

// Number writes n with the language's digit grouping (1,234 in English,
// 1.234 in German, 1 234 in French).
func (l *Locale) Number(n int64) string { return l.printer.Sprint(number.Decimal(n)) }

// Date writes the day of t (in t's location) as the language writes a
// date in running text: "5 January 2027", "5. Januar 2027", "2027年1月5日".
// The pattern and the month names are messages of the catalogue (date and
// month.1 … month.12), in the form the pattern needs (Polish: genitive).
func (l *Locale) Date(t time.Time) string {
	return l.T("date", "Day", t.Day(), "Month", l.T(fmt.Sprintf("month.%d", int(t.Month()))), "MonthNumber", int(t.Month()), "Year", t.Year())
}

// IDs are the message ids of the source catalogue, sorted.
func IDs() []string {
	f, err := readCatalogue(files, "locales/en.json")
	if err != nil {
		return nil
	}
	ids := make([]string, 0, len(f))
	for id := range f {
		ids = append(ids, id)
	}
	sort.Strings(ids)
	return ids
}

// readCatalogue reads one catalogue as id → plural form (or "other" for a
// plain message) → text, for the checks of the tests.
func readCatalogue(fsys fs.FS, name string) (map[string]map[string]string, error) {
	raw, err := fs.ReadFile(fsys, name)
	if err != nil {
		return nil, err
	}
	var m map[string]json.RawMessage
	if err := json.Unmarshal(raw, &m); err != nil {
		return nil, err
	}
	out := make(map[string]map[string]string, len(m))
	for id, v := range m {
		var s string
		if json.Unmarshal(v, &s) == nil {
			out[id] = map[string]string{"other": s}
			continue
		}
		var forms map[string]string
		if err := json.Unmarshal(v, &forms); err != nil {
			return nil, fmt.Errorf("%s: %s: %w", name, id, err)
		}
		delete(forms, "description")
		delete(forms, "hash")
		out[id] = forms
	}
	return out, nil
}
