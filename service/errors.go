package service

import (
	"errors"
	"fmt"
	"sort"
	"strings"
	"time"

	"gorm.io/gorm"
)

// Code classifies a service error; each edge maps codes to its own statuses.
type Code string

// The error codes.
const (
	CodeNotFound     Code = "not_found"
	CodeValidation   Code = "validation"
	CodeConflict     Code = "conflict"
	CodeUnauthorized Code = "unauthorized"
	CodeRateLimited  Code = "rate_limited"
	CodeUnavailable  Code = "unavailable" // a service we depend on (the mail relay) failed: try again later
	CodeInternal     Code = "internal"
)

// Error is the one error type service methods return for expected failures.
// Fields holds, for validation, a list of messages per input field.
// RetryAfter, when set on a rate-limited error, is how long until the
// request may succeed (the edges send it as Retry-After).
type Error struct {
	Code       Code
	Message    string
	Fields     map[string][]string
	RetryAfter time.Duration
}

func (e *Error) Error() string {
	if len(e.Fields) == 0 {
		return string(e.Code) + ": " + e.Message
	}
	keys := make([]string, 0, len(e.Fields))
	for k := range e.Fields {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	var b strings.Builder
	b.WriteString(string(e.Code))
	for _, k := range keys {
		fmt.Fprintf(&b, " %s: %s;", k, strings.Join(e.Fields[k], " "))
	}
	return b.String()
}

// ErrNotFound is answered for any record that does not exist or is not the caller's.
var ErrNotFound = &Error{Code: CodeNotFound, Message: "Record Not Found"}

// ErrUnauthorized is answered for wrong credentials.
var ErrUnauthorized = &Error{Code: CodeUnauthorized, Message: "Invalid PublicKey or SecretKey."}

// ErrorCode returns the code of err, CodeInternal for anything unexpected.
func ErrorCode(err error) Code {
	var e *Error
	if errors.As(err, &e) {
		return e.Code
	}
	return CodeInternal
}

// IsNotFound reports whether err is a not-found error.
func IsNotFound(err error) bool { return ErrorCode(err) == CodeNotFound }

// Invalid builds a validation error for one field.
func Invalid(field, message string) *Error {
	return &Error{Code: CodeValidation, Fields: map[string][]string{field: {message}}}
}

// Problems collects validation messages per field, in the order added.
type Problems map[string][]string

// Add records message for field.
func (p Problems) Add(field, message string) { p[field] = append(p[field], message) }

// Has reports whether field already has a message.
func (p Problems) Has(field string) bool { return len(p[field]) > 0 }

// Err returns nil when empty, else a validation *Error.
func (p Problems) Err() error {
	if len(p) == 0 {
		return nil
	}
	return &Error{Code: CodeValidation, Message: "The given data was invalid.", Fields: p}
}

// notFound turns gorm.ErrRecordNotFound into ErrNotFound and leaves other errors.
func notFound(err error) error {
	if errors.Is(err, gorm.ErrRecordNotFound) {
		return ErrNotFound
	}
	return err
}
