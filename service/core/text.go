package core

// Text helpers every area uses: truncation, one-line flattening, LIKE
// escaping, CSV cell neutralising, JSON paths of custom fields.

import (
	"regexp"
	"strings"
)

// Clip keeps a logged text to 500 characters.
func Clip(s string) string {
	r := []rune(s)
	if len(r) > 500 {
		return string(r[:500]) + "…"
	}
	return s
}

// SQLiteTimeLayout is how the SQLite driver (mattn/go-sqlite3) writes a
// time.Time bind value, the form created_at is stored in.
const SQLiteTimeLayout = "2006-01-02 15:04:05.999999999-07:00"

func LikeEscape(s string) string {
	r := strings.NewReplacer(`\`, `\\`, `%`, `\%`, `_`, `\_`)
	return r.Replace(s)
}

// SafeCell neutralises a CSV cell that a spreadsheet would read as a
// formula (OWASP "CSV injection"): one starting with =, +, - or @ gets a
// leading apostrophe (decisions.md 9). A tab or carriage return first is
// treated the same, as some spreadsheets strip it and then read the rest.
func SafeCell(v string) string {
	if v == "" {
		return v
	}
	switch v[0] {
	case '=', '+', '-', '@', '\t', '\r':
		return "'" + v
	}
	return v
}

var FieldNameRE = regexp.MustCompile(`^[A-Za-z0-9_]+$`)

// jsonPath is the SQLite JSON path of a custom field (names are [A-Za-z0-9_]).
func jsonPath(name string) string { return `$."` + name + `"` }

// SenderPlaceholders are the placeholders filled from the send itself.
var SenderPlaceholders = []string{"sender_name", "sender_address", "unsubscribe_preferences"}

// FlatLine joins a multi-line reply into one line.
func FlatLine(s string) string { return strings.Join(strings.Fields(s), " ") }

func Truncate(s string, n int) string {
	r := []rune(s)
	if len(r) <= n {
		return s
	}
	return string(r[:n])
}
