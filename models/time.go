// Package models holds the GORM structs whose JSON matches spec/api.md.
package models

import (
	"database/sql/driver"
	"fmt"
	"time"
)

// TimestampLayout is the wire form of created_at, updated_at and deleted_at:
// UTC with microseconds and a trailing Z (decisions.md section 2).
const TimestampLayout = "2006-01-02T15:04:05.000000Z"

// DateTimeLayout is the wire form of sent_at, live_at and send_at.
const DateTimeLayout = "2006-01-02 15:04:05"

// Now is the current time as stored: UTC, truncated to microseconds so that
// SQLite and PostgreSQL hold and answer the same value.
func Now() time.Time { return time.Now().UTC().Truncate(time.Microsecond) }

// Timestamp is a time stored in the database and written as TimestampLayout.
type Timestamp struct{ time.Time }

// NewTimestamp wraps t (converted to UTC, microsecond precision).
func NewTimestamp(t time.Time) Timestamp {
	return Timestamp{t.UTC().Truncate(time.Microsecond)}
}

// MarshalJSON writes the spec's timestamp form.
func (t Timestamp) MarshalJSON() ([]byte, error) {
	if t.IsZero() {
		return []byte("null"), nil
	}
	return t.AppendJSON(make([]byte, 0, 29)), nil
}

// AppendJSON appends the quoted wire form to b (no allocation beyond b).
func (t Timestamp) AppendJSON(b []byte) []byte {
	b = append(b, '"')
	b = t.UTC().AppendFormat(b, TimestampLayout)
	return append(b, '"')
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
	for _, l := range textLayouts {
		if t, err := time.Parse(l, s); err == nil {
			return t.UTC(), nil
		}
	}
	return time.Time{}, fmt.Errorf("models: unreadable time %q", s)
}
