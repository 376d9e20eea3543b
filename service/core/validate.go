package core

import (
	"fmt"
	"net/mail"
	"strconv"
	"strings"
	"unicode"
	"unicode/utf8"
)

// Label is how a field is named in a message, Laravel-style: snake case
// with spaces ("strIds" → "str ids", "email_address" → "email address").
func Label(field string) string {
	var b strings.Builder
	for i, r := range field {
		if unicode.IsUpper(r) {
			if i > 0 && !strings.HasSuffix(b.String(), "_") {
				b.WriteByte(' ')
			}
			r = unicode.ToLower(r)
		}
		if r == '_' {
			r = ' '
		}
		b.WriteRune(r)
	}
	return b.String()
}

// The message texts, in the spec's (Laravel's) wording.
func MsgRequired(field string) string { return "The " + Label(field) + " field is required." }
func MsgEmail(field string) string    { return "The " + Label(field) + " must be a valid email address." }
func MsgMin(field string, n int) string {
	return fmt.Sprintf("The %s must be at least %d characters.", Label(field), n)
}
func MsgMax(field string, n int) string {
	return fmt.Sprintf("The %s may not be greater than %d characters.", Label(field), n)
}
func msgBoolean(field string) string { return "The " + Label(field) + " field must be true or false." }
func MsgInteger(field string) string { return "The " + Label(field) + " must be an integer." }

// InvalidChoice records that field is not one of its choices, or names
// no record of the account's ("The selected x is invalid.").
func (p Problems) InvalidChoice(field string) {
	p.AddReason(field, ReasonInvalidChoice, "The selected "+Label(field)+" is invalid.")
}

// Required records a message when v is blank and reports whether it was present.
func (p Problems) Required(field, v string) bool {
	if strings.TrimSpace(v) == "" {
		p.AddReason(field, ReasonRequired, MsgRequired(field))
		return false
	}
	return true
}

// MaxLen records a message when v is longer than n characters.
func (p Problems) MaxLen(field, v string, n int) {
	if utf8.RuneCountInString(v) > n {
		p.AddReason(field, ReasonMax, MsgMax(field, n))
	}
}

// MinLen records a message when v is shorter than n characters.
func (p Problems) MinLen(field, v string, n int) {
	if utf8.RuneCountInString(strings.TrimSpace(v)) < n {
		p.AddReason(field, ReasonMin, MsgMin(field, n))
	}
}

// NotUTF8 is the validation error of a request field whose text is not
// valid UTF-8 (decisions.md 8: such text is refused, never stored). field
// is the parameter's name, made printable.
func NotUTF8(field string) *Error {
	field = strings.ToValidUTF8(field, "\uFFFD")
	if field == "" {
		return &Error{Code: CodeValidation, Message: "The request must be valid UTF-8."}
	}
	return InvalidBecause(field, ReasonUTF8, "The "+Label(field)+" must be valid UTF-8.")
}

// ValidText reports whether s can be stored as text on both databases:
// valid UTF-8 without a NUL. U+0000 is valid UTF-8, but PostgreSQL's text
// cannot hold it (an insert or lookup with one fails there, while SQLite
// stores it).
func ValidText(s string) bool { return utf8.ValidString(s) && strings.IndexByte(s, 0) < 0 }

// MsgNUL refuses a NUL in stored text.
func MsgNUL(field string) string { return "The " + Label(field) + " must not contain a NUL character." }

// Text records what stored free text must not be: longer than n
// characters, or holding a NUL (PostgreSQL's text refuses it). Names and
// subjects that become headers use singleLine instead of the NUL check.
func (p Problems) Text(field, v string, n int) {
	p.MaxLen(field, v, n)
	p.NoNUL(field, v)
}

// NoNUL records msgNUL when v holds a NUL (see ValidText).
func (p Problems) NoNUL(field, v string) {
	if strings.IndexByte(v, 0) >= 0 {
		p.AddReason(field, ReasonNUL, MsgNUL(field))
	}
}

// FindNotUTF8 returns the first key whose name or value is not valid UTF-8
// among the pairs each walk visits (a request's query, its form body).
func FindNotUTF8(walks ...func(visit func(k, v []byte))) (key string, found bool) {
	for _, walk := range walks {
		walk(func(k, v []byte) {
			if !found && (!utf8.Valid(k) || !utf8.Valid(v)) {
				key, found = string(k), true
			}
		})
		if found {
			return key, true
		}
	}
	return "", false
}

// MsgLineBreak is decisions.md 8's refusal of a header-bound value with a
// control character.
func MsgLineBreak(field string) string {
	return "The " + Label(field) + " must not contain line breaks."
}

// HasControl reports whether s holds a character that must never reach a
// mail header: a C0 or C1 control (CR, LF, TAB, NUL, DEL …) or a Unicode
// line or paragraph separator.
func HasControl(s string) bool {
	for _, r := range s {
		if unicode.IsControl(r) || r == '\u2028' || r == '\u2029' {
			return true
		}
	}
	return false
}

// SingleLine records msgLineBreak when v holds a control character: every
// name and subject that becomes a header (decisions.md 8).
func (p Problems) SingleLine(field, v string) {
	if HasControl(v) {
		p.AddReason(field, ReasonLineBreak, MsgLineBreak(field))
	}
}

// Flag parses a boolean-like value (1, 0, true, false, on, off) into 0 or 1.
func (p Problems) Flag(field, v string) int {
	switch strings.ToLower(strings.TrimSpace(v)) {
	case "1", "true", "on", "yes":
		return 1
	case "0", "false", "off", "no":
		return 0
	}
	p.AddReason(field, ReasonBoolean, msgBoolean(field))
	return 0
}

// NormalizeEmail trims and lower-cases an address and reports whether it is
// a plain valid address (local@domain, no display name, a dot in the domain).
func NormalizeEmail(s string) (string, bool) {
	s = strings.ToLower(strings.TrimSpace(s))
	if s == "" || len(s) > 254 || strings.ContainsAny(s, " \t\r\n<>\"") {
		return s, false
	}
	// Plain ASCII addresses (nearly all) are checked here; anything else
	// goes through net/mail's full RFC 5322 parser.
	if !plainAddress(s) {
		a, err := mail.ParseAddress(s)
		if err != nil || a.Address != s {
			return s, false
		}
	}
	at := strings.LastIndexByte(s, '@')
	if at < 1 || at > 64 {
		return s, false
	}
	domain := s[at+1:]
	if !strings.Contains(domain, ".") || strings.HasPrefix(domain, ".") || strings.HasSuffix(domain, ".") || strings.Contains(domain, "..") {
		return s, false
	}
	return s, true
}

// plainAddress reports whether s is dot-atom@domain in plain ASCII: the
// local part's atext characters with single dots between atoms, and a
// domain of letters, digits, hyphens and dots.
func plainAddress(s string) bool {
	at := strings.IndexByte(s, '@')
	if at <= 0 || at != strings.LastIndexByte(s, '@') {
		return false
	}
	prevDot := true // no leading dot
	for i := 0; i < at; i++ {
		c := s[i]
		switch {
		case c == '.':
			if prevDot {
				return false
			}
			prevDot = true
			continue
		case c >= 'a' && c <= 'z', c >= '0' && c <= '9', strings.IndexByte("!#$%&'*+/=?^_`{|}~-", c) >= 0:
		default:
			return false
		}
		prevDot = false
	}
	if prevDot { // trailing dot
		return false
	}
	for i := at + 1; i < len(s); i++ {
		c := s[i]
		if !(c >= 'a' && c <= 'z' || c >= '0' && c <= '9' || c == '-' || c == '.') {
			return false
		}
	}
	return true
}

// SplitEmails splits a list of addresses separated by commas (semicolons,
// spaces and new lines are accepted too), lower-cases them and drops
// repeats. bad holds the items that are not valid addresses.
func SplitEmails(s string) (good, bad []string) {
	seen := map[string]bool{}
	for _, part := range strings.FieldsFunc(s, func(r rune) bool {
		return r == ',' || r == ';' || unicode.IsSpace(r)
	}) {
		e, ok := NormalizeEmail(part)
		if !ok {
			bad = append(bad, strings.TrimSpace(part))
			continue
		}
		if !seen[e] {
			seen[e] = true
			good = append(good, e)
		}
	}
	return good, bad
}

// ParseID reads a positive integer id; anything else is ErrNotFound, since
// a malformed id names no record (decisions.md section 2).
func ParseID(s string) (int64, error) {
	id, err := strconv.ParseInt(strings.TrimSpace(s), 10, 64)
	if err != nil || id <= 0 {
		return 0, ErrNotFound
	}
	return id, nil
}

// MaxBulkIDs is how many ids (or utrs) one bulk operation takes
// (decisions.md 8); the queries behind it take them bulkChunk at a time.
const MaxBulkIDs = 10000

// TooManyItems is the validation error of a list holding more than max
// items (`The str ids may not have more than 10000 items.`). The edges
// answer it while a body is still being read (api's form reader), so it is
// worded in one place for them and for the service's own checks.
func TooManyItems(field string, max int) *Error {
	return InvalidBecause(field, ReasonMax, fmt.Sprintf("The %s may not have more than %d items.", Label(field), max))
}

// BulkKeys checks the items of a bulk operation: at least one, at most
// MaxBulkIDs (`The str ids may not have more than 10000 items.`).
func BulkKeys(field string, items []string) ([]string, error) {
	if len(items) == 0 {
		return nil, InvalidBecause(field, ReasonRequired, MsgRequired(field))
	}
	if len(items) > MaxBulkIDs {
		return nil, TooManyItems(field, MaxBulkIDs)
	}
	return items, nil
}

// TooMany refuses a bulk operation of more than MaxBulkIDs items, whatever
// edge it came from (the edges check first, with BulkKeys).
func TooMany(n int) error {
	if n > MaxBulkIDs {
		return TooManyItems("strIds", MaxBulkIDs)
	}
	return nil
}

// ParseIDs reads every id of a bulk operation; one bad id fails them all.
// Errors: validation (none, or more than MaxBulkIDs), ErrNotFound.
func ParseIDs(field string, items []string) ([]int64, error) {
	if _, err := BulkKeys(field, items); err != nil {
		return nil, err
	}
	seen := make(map[int64]bool, len(items))
	ids := make([]int64, 0, len(items))
	for _, s := range items {
		id, err := ParseID(s)
		if err != nil {
			return nil, err
		}
		if !seen[id] {
			seen[id] = true
			ids = append(ids, id)
		}
	}
	return ids, nil
}
