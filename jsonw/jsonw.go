// Package jsonw appends JSON without reflection, byte for byte as
// encoding/json.Marshal would write it (HTML-safe escaping of <, > and &,
// U+2028/U+2029 escaped, invalid UTF-8 replaced by U+FFFD), for the lists
// that are written row by row.
package jsonw

import "unicode/utf8"

const hexDigits = "0123456789abcdef"

// safe[c] is true for ASCII bytes written as they are inside a JSON string
// by encoding/json; logSafe[c] by log/slog's JSON handler, which leaves
// <, > and & as they are.
var safe, logSafe = func() (t, l [utf8.RuneSelf]bool) {
	for c := 0x20; c < utf8.RuneSelf; c++ {
		l[c] = c != '"' && c != '\\'
		t[c] = l[c] && c != '<' && c != '>' && c != '&'
	}
	return
}()

// AppendString appends s as a JSON string, byte for byte as
// encoding/json.Marshal writes it.
func AppendString(b []byte, s string) []byte { return appendString(b, s, &safe, true) }

// AppendLogString appends s as a JSON string, byte for byte as log/slog's
// JSON handler writes it: <, > and & kept, \b and \f as \u0008 and \u000c.
func AppendLogString(b []byte, s string) []byte { return appendString(b, s, &logSafe, false) }

// appendString appends s quoted: the ASCII bytes that safe marks as they
// are, the others escaped (\b and \f by name when named); invalid UTF-8
// as U+FFFD, U+2028 and U+2029 escaped.
func appendString(b []byte, s string, safe *[utf8.RuneSelf]bool, named bool) []byte {
	b = append(b, '"')
	start := 0
	for i := 0; i < len(s); {
		c := s[i]
		if c < utf8.RuneSelf {
			if safe[c] {
				i++
				continue
			}
			b = append(b, s[start:i]...)
			switch {
			case c == '"' || c == '\\':
				b = append(b, '\\', c)
			case c == '\n':
				b = append(b, '\\', 'n')
			case c == '\r':
				b = append(b, '\\', 'r')
			case c == '\t':
				b = append(b, '\\', 't')
			case c == '\b' && named:
				b = append(b, '\\', 'b')
			case c == '\f' && named:
				b = append(b, '\\', 'f')
			default: // other control characters, and <, > and & for encoding/json
				b = append(b, '\\', 'u', '0', '0', hexDigits[c>>4], hexDigits[c&0xf])
			}
			i++
			start = i
			continue
		}
		r, size := utf8.DecodeRuneInString(s[i:])
		if r == utf8.RuneError && size == 1 {
			b = append(b, s[start:i]...)
			b = append(b, `\ufffd`...)
			i += size
			start = i
			continue
		}
		if r == '\u2028' || r == '\u2029' {
			b = append(b, s[start:i]...)
			b = append(b, '\\', 'u', '2', '0', '2', hexDigits[r&0xf])
			i += size
			start = i
			continue
		}
		i += size
	}
	b = append(b, s[start:]...)
	return append(b, '"')
}
