// Package models holds the GORM structs whose JSON matches spec/api.md.
package models

import (
	"database/sql/driver"
	"fmt"
	"strings"
	"time"
)

// TimestampLayout is the wire form of created_at, updated_at and deleted_at:
// UTC with microseconds and a trailing Z (decisions.md section 2).
const TimestampLayout = "2006-01-02T15:04:05.000000Z"

// DateTimeLayout is the wire form of sent_at, live_at and send_at.
const DateTimeLayout = "2006-01-02 15:04:05"

// Stored is t as the databases keep it: UTC, truncated to microseconds so
// that SQLite and PostgreSQL hold and answer the same value.
func Stored(t time.Time) time.Time { return t.UTC().Truncate(time.Microsecond) }

// Now is the current time as stored.
func Now() time.Time { return Stored(time.Now()) }

// Timestamp is a time stored in the database and written as TimestampLayout.
type Timestamp struct{ time.Time }

// NewTimestamp wraps t (converted to UTC, microsecond precision).
func NewTimestamp(t time.Time) Timestamp {
	return Timestamp{Stored(t)}
}

// MarshalJSON writes the spec's timestamp form.
func (t Timestamp) MarshalJSON() ([]byte, error) {
	if t.IsZero() {
		return []byte("null"), nil
	}
	return t.AppendJSON(make([]byte, 0, 29)), nil
}

// AppendJSON appends the quoted wire form to b (no allocation beyond b).
// It formats by hand: time.AppendFormat costs ten times more, and a list
// of 100,000 contacts writes 400,000 timestamps.
func (t Timestamp) AppendJSON(b []byte) []byte {
	u := t.UTC()
	year, month, day := u.Date()
	hour, min, sec := u.Clock()
	if year < 0 || year > 9999 {
		b = append(b, '"')
		b = u.AppendFormat(b, TimestampLayout)
		return append(b, '"')
	}
	b = append(b, '"')
	b = appendDigits(b, year, 4)
	b = append(b, '-')
	b = appendDigits(b, int(month), 2)
	b = append(b, '-')
	b = appendDigits(b, day, 2)
	b = append(b, 'T')
	b = appendDigits(b, hour, 2)
	b = append(b, ':')
	b = appendDigits(b, min, 2)
	b = append(b, ':')
	b = appendDigits(b, sec, 2)
	b = append(b, '.')
	b = appendDigits(b, u.Nanosecond()/1000, 6)
	return append(b, 'Z', '"')
}

// appendDigits appends n in base 10 with exactly width digits.
func appendDigits(b []byte, n, width int) []byte {
	var tmp [9]byte
	for i := width - 1; i >= 0; i-- {
		tmp[i] = byte('0' + n%10)
		n /= 10
	}
	return append(b, tmp[:width]...)
}

// Scan reads a time from either driver (time.Time) or from text.
func (t *Timestamp) Scan(src any) error {
	v, err := scanTime(src)
	t.Time = v
	return err
}

// Value stores the UTC time.
func (t Timestamp) Value() (driver.Value, error) {
	if t.IsZero() {
		return nil, nil
	}
	return t.UTC(), nil
}

// GormDataType lets GORM treat the field as a time column.
func (Timestamp) GormDataType() string { return "time" }

// DateTime is a time written as DateTimeLayout (`YYYY-MM-DD HH:MM:SS`).
type DateTime struct{ time.Time }

// MarshalJSON writes the spec's datetime form, or null when unset.
func (t DateTime) MarshalJSON() ([]byte, error) {
	if t.IsZero() {
		return []byte("null"), nil
	}
	b := append(make([]byte, 0, 21), '"')
	b = t.UTC().AppendFormat(b, DateTimeLayout)
	return append(b, '"'), nil
}

// Scan reads a time from either driver.
func (t *DateTime) Scan(src any) error {
	v, err := scanTime(src)
	t.Time = v
	return err
}

// Value stores the UTC time, or NULL when unset.
func (t DateTime) Value() (driver.Value, error) {
	if t.IsZero() {
		return nil, nil
	}
	return t.UTC(), nil
}

// GormDataType lets GORM treat the field as a time column.
func (DateTime) GormDataType() string { return "time" }

var textLayouts = []string{
	"2006-01-02 15:04:05.999999999-07:00",
	"2006-01-02T15:04:05.999999999-07:00",
	"2006-01-02 15:04:05.999999999",
	"2006-01-02T15:04:05.999999999",
	"2006-01-02 15:04:05",
	time.RFC3339Nano,
}

func scanTime(src any) (time.Time, error) {
	switch v := src.(type) {
	case nil:
		return time.Time{}, nil
	case time.Time:
		return v.UTC(), nil
	case string:
		return parseTimeText(v)
	case []byte:
		return parseTimeText(string(v))
	}
	return time.Time{}, fmt.Errorf("models: cannot scan %T into a time", src)
}

func parseTimeText(s string) (time.Time, error) {
	if t, ok := parseStored(s); ok {
		return t, nil
	}
	for _, l := range textLayouts {
		if t, err := time.Parse(l, s); err == nil {
			return t.UTC(), nil
		}
	}
	return time.Time{}, fmt.Errorf("models: unreadable time %q", s)
}

// parseStored reads by hand the form the SQLite driver stores times in,
// `2006-01-02 15:04:05.999999+00:00` (UTC, up to 9 fraction digits), and
// reports false for anything else.
func parseStored(s string) (time.Time, bool) {
	if len(s) < 25 || s[4] != '-' || s[7] != '-' || s[10] != ' ' || s[13] != ':' || s[16] != ':' || !strings.HasSuffix(s, "+00:00") {
		return time.Time{}, false
	}
	num := func(a, b int) (int, bool) {
		n := 0
		for i := a; i < b; i++ {
			c := s[i]
			if c < '0' || c > '9' {
				return 0, false
			}
			n = n*10 + int(c-'0')
		}
		return n, true
	}
	year, ok1 := num(0, 4)
	month, ok2 := num(5, 7)
	day, ok3 := num(8, 10)
	hour, ok4 := num(11, 13)
	minute, ok5 := num(14, 16)
	sec, ok6 := num(17, 19)
	if !(ok1 && ok2 && ok3 && ok4 && ok5 && ok6) {
		return time.Time{}, false
	}
	nsec := 0
	rest := s[19 : len(s)-6]
	if rest != "" {
		if rest[0] != '.' || len(rest) < 2 || len(rest) > 10 {
			return time.Time{}, false
		}
		f, ok := num(20, 19+len(rest))
		if !ok {
			return time.Time{}, false
		}
		for i := len(rest) - 1; i < 9; i++ {
			f *= 10
		}
		nsec = f
	}
	return time.Date(year, time.Month(month), day, hour, minute, sec, nsec, time.UTC), true
}
