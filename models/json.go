package models

import (
	"database/sql/driver"
	"encoding/json"
	"fmt"
)

// JSONText is a JSON document stored as text (SQLite) or jsonb (PostgreSQL).
type JSONText string

// Scan reads the stored document.
func (j *JSONText) Scan(src any) error {
	switch v := src.(type) {
	case nil:
		*j = "{}"
	case string:
		*j = JSONText(v)
	case []byte:
		*j = JSONText(v)
	default:
		return fmt.Errorf("models: cannot scan %T into JSONText", src)
	}
	return nil
}

// Value stores the document as text.
func (j JSONText) Value() (driver.Value, error) {
	if j == "" {
		return "{}", nil
	}
	return string(j), nil
}

// StringArray is a list of strings stored as a JSON array in a text column.
type StringArray []string

// Scan reads the JSON array.
func (a *StringArray) Scan(src any) error {
	var b []byte
	switch v := src.(type) {
	case nil:
		*a = StringArray{}
		return nil
	case string:
		b = []byte(v)
	case []byte:
		b = v
	default:
		return fmt.Errorf("models: cannot scan %T into StringArray", src)
	}
	var out []string
	if err := json.Unmarshal(b, &out); err != nil {
		return err
	}
	*a = out
	return nil
}

// Value stores the array as JSON text.
func (a StringArray) Value() (driver.Value, error) {
	if a == nil {
		return "[]", nil
	}
	b, err := json.Marshal([]string(a))
	return string(b), err
}

// MarshalJSON writes [] rather than null for an empty list.
func (a StringArray) MarshalJSON() ([]byte, error) {
	if a == nil {
		return []byte("[]"), nil
	}
	return json.Marshal([]string(a))
}

// ImportProblems is the rejected rows of an import, stored as JSON text.
type ImportProblems []ImportProblem

// Scan reads the JSON array.
func (p *ImportProblems) Scan(src any) error {
	var b []byte
	switch v := src.(type) {
	case nil:
		*p = ImportProblems{}
		return nil
	case string:
		b = []byte(v)
	case []byte:
		b = v
	default:
		return fmt.Errorf("models: cannot scan %T into ImportProblems", src)
	}
	return json.Unmarshal(b, (*[]ImportProblem)(p))
}

// Value stores the array as JSON text.
func (p ImportProblems) Value() (driver.Value, error) {
	if p == nil {
		return "[]", nil
	}
	b, err := json.Marshal([]ImportProblem(p))
	return string(b), err
}

// Targets is a list of single send targets stored as a JSON array.
type Targets []Target

// Scan reads the JSON array.
func (t *Targets) Scan(src any) error {
	var b []byte
	switch v := src.(type) {
	case nil:
		*t = Targets{}
		return nil
	case string:
		b = []byte(v)
	case []byte:
		b = v
	default:
		return fmt.Errorf("models: cannot scan %T into Targets", src)
	}
	var out []Target
	if err := json.Unmarshal(b, &out); err != nil {
		return err
	}
	if out == nil {
		out = []Target{}
	}
	*t = out
	return nil
}

// Value stores the list as JSON text.
func (t Targets) Value() (driver.Value, error) {
	if t == nil {
		return "[]", nil
	}
	b, err := json.Marshal([]Target(t))
	return string(b), err
}

// MarshalJSON writes [] rather than null for an empty list.
func (t Targets) MarshalJSON() ([]byte, error) {
	if t == nil {
		return []byte("[]"), nil
	}
	return json.Marshal([]Target(t))
}

// MarshalJSON writes the stored document as it is ({} when empty).
func (j JSONText) MarshalJSON() ([]byte, error) {
	if j == "" || !json.Valid([]byte(j)) {
		return []byte("{}"), nil
	}
	return []byte(j), nil
}
