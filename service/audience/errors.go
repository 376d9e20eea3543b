package audience

import (
	"errors"
	"fmt"

	"gorm.io/gorm"

	"herald/service/core"
)

// notFound is core.NotFound for a lookup of one row: a missing row is
// core.ErrNotFound as it is, any other failure of the database is wrapped
// with what was being looked up (format and args, as fmt.Sprintf).
func notFound(err error, format string, args ...any) error {
	if errors.Is(err, gorm.ErrRecordNotFound) {
		return core.ErrNotFound
	}
	return fmt.Errorf(format+": %w", append(args, err)...)
}

// wrapDB wraps err, a failure of the database, with what was being done
// (format and args, as fmt.Sprintf). The service's own errors (*core.Error:
// validation, not found, conflict...) leave as they are, unwrapped: they
// are already worded for the caller, and callers take them by type. nil
// stays nil.
func wrapDB(err error, format string, args ...any) error {
	var e *core.Error
	if err == nil || errors.As(err, &e) {
		return err
	}
	return fmt.Errorf(format+": %w", append(args, err)...)
}
