package core

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
	CodeForbidden    Code = "forbidden" // refused whoever asks (sign-up closed on this server), or to a console role (roles.go)
	CodeRateLimited  Code = "rate_limited"
	CodeUnavailable  Code = "unavailable" // a service we depend on (the mail relay) failed: try again later
	CodeInternal     Code = "internal"
)

// Reason says which rule a field's value broke, beside the message that
// words it: an edge that words its messages its own way (the console)
// picks its wording by reason, never by matching the message text. The
// API answers the messages as they are.
type Reason string

// The reasons. A message recorded without one has ReasonOther.
const (
	ReasonOther         Reason = ""
	ReasonRequired      Reason = "required"       // blank: "The x field is required."
	ReasonRequiredIf    Reason = "required_if"    // blank while another field needs it: "The x field is required when …"
	ReasonInvalidChoice Reason = "invalid_choice" // not one of the choices or of the account's records: "The selected x is invalid."
	ReasonNotVerified   Reason = "not_verified"   // a sender not verified yet
	ReasonInteger       Reason = "integer"        // "The x must be an integer."
	ReasonEmail         Reason = "email"          // "The x must be a valid email address."
	ReasonBoolean       Reason = "boolean"        // "The x field must be true or false."
	ReasonMin           Reason = "min"            // too short
	ReasonMax           Reason = "max"            // too long
	ReasonNUL           Reason = "nul"            // holds a NUL character
	ReasonLineBreak     Reason = "line_break"     // a header-bound value with a control character
	ReasonUTF8          Reason = "utf8"           // not valid UTF-8
)

// Error is the one error type service methods return for expected failures.
// Fields holds, for validation, a list of messages per input field, and
// Reasons the reason of each (same field, same position; see Reason).
// RetryAfter, when set on a rate-limited error, is how long until the
// request may succeed (the edges send it as Retry-After).
type Error struct {
	Code    Code
	Message string
	Fields  map[string][]string
	Reasons map[string][]Reason
	// Items names, per list field, the items that were refused (the bad
	// addresses of a comma-separated list), for a caller that shows them;
	// the API answers Fields' message alone.
	Items      map[string][]string
	RetryAfter time.Duration
}

// Problems returns the messages of each field with their reasons
// (ReasonOther where none was recorded); nil when there are none.
func (e *Error) Problems() Problems {
	if len(e.Fields) == 0 {
		return nil
	}
	p := make(Problems, len(e.Fields))
	for field, msgs := range e.Fields {
		reasons := e.Reasons[field]
		for i, m := range msgs {
			r := ReasonOther
			if i < len(reasons) {
				r = reasons[i]
			}
			p[field] = append(p[field], Problem{Reason: r, Message: m})
		}
	}
	return p
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
func Invalid(field, message string) *Error { return InvalidBecause(field, ReasonOther, message) }

// InvalidBecause builds a validation error for one field with its reason.
func InvalidBecause(field string, r Reason, message string) *Error {
	return &Error{Code: CodeValidation, Fields: map[string][]string{field: {message}}, Reasons: map[string][]Reason{field: {r}}}
}

// Problem is one validation message and the reason it words.
type Problem struct {
	Reason  Reason
	Message string
}

// Problems collects validation messages per field, in the order added.
type Problems map[string][]Problem

// Add records message for field, of no particular reason (ReasonOther).
func (p Problems) Add(field, message string) { p.AddReason(field, ReasonOther, message) }

// AddReason records message for field, wording reason r.
func (p Problems) AddReason(field string, r Reason, message string) {
	p[field] = append(p[field], Problem{Reason: r, Message: message})
}

// Has reports whether field already has a message.
func (p Problems) Has(field string) bool { return len(p[field]) > 0 }

// Messages returns the messages of field, in the order added.
func (p Problems) Messages(field string) []string {
	if len(p[field]) == 0 {
		return nil
	}
	out := make([]string, len(p[field]))
	for i, pr := range p[field] {
		out[i] = pr.Message
	}
	return out
}

// Merge records the problems of a validation error e on top of p's: a
// field e names takes e's messages in place of any p has.
func (p Problems) Merge(e *Error) {
	for field, ps := range e.Problems() {
		p[field] = ps
	}
}

// Err returns nil when empty, else a validation *Error.
func (p Problems) Err() error {
	if len(p) == 0 {
		return nil
	}
	e := &Error{Code: CodeValidation, Message: "The given data was invalid.", Fields: make(map[string][]string, len(p)), Reasons: make(map[string][]Reason, len(p))}
	for field, ps := range p {
		msgs, reasons := make([]string, len(ps)), make([]Reason, len(ps))
		for i, pr := range ps {
			msgs[i], reasons[i] = pr.Message, pr.Reason
		}
		e.Fields[field], e.Reasons[field] = msgs, reasons
	}
	return e
}

// NotFound turns gorm.ErrRecordNotFound into ErrNotFound and leaves other errors.
func NotFound(err error) error {
	if errors.Is(err, gorm.ErrRecordNotFound) {
		return ErrNotFound
	}
	return err
}

// TranslateUnique turns a unique-index violation (a concurrent insert on
// PostgreSQL) into the validation message of field.
func TranslateUnique(err error, field string) error {
	if err == nil {
		return nil
	}
	msg := err.Error()
	if strings.Contains(msg, "UNIQUE constraint failed") || strings.Contains(msg, "SQLSTATE 23505") || errors.Is(err, gorm.ErrDuplicatedKey) {
		return Invalid(field, "The "+Label(field)+" has already been taken.")
	}
	return err
}

// Wrap adds what was being done to an unexpected error (one from the
// database), as fmt.Errorf("doing: %w", err). nil and the service's own
// errors (an *Error, also one inside another error, as a rate limit's)
// pass as they are: the edges answer them by their message, and callers
// compare them by identity (err == ErrResetLink) or by type.
func Wrap(err error, doing string) error {
	var e *Error
	if err == nil || errors.As(err, &e) {
		return err
	}
	return fmt.Errorf("%s: %w", doing, err)
}

// Wrapf is Wrap with what was being done as fmt.Sprintf(format, args...).
func Wrapf(err error, format string, args ...any) error {
	var e *Error
	if err == nil || errors.As(err, &e) {
		return err
	}
	return fmt.Errorf(format+": %w", append(args, err)...)
}

// NotFoundOr reads the failure of a lookup of one row: a missing row is
// ErrNotFound itself, answered to the caller as it is; any other failure
// of the database is wrapped with what was being looked up (format and
// args, as fmt.Sprintf). nil stays nil.
func NotFoundOr(err error, format string, args ...any) error {
	if err == nil {
		return nil
	}
	if errors.Is(err, gorm.ErrRecordNotFound) {
		return ErrNotFound
	}
	return fmt.Errorf(format+": %w", append(args, err)...)
}
