package core

import (
	"errors"
	"testing"

	"gorm.io/gorm"
)

// NotFoundOr answers a missing row with ErrNotFound itself and wraps
// any other failure.
func TestNotFoundOr(t *testing.T) {
	if err := NotFoundOr(gorm.ErrRecordNotFound, "segments: segment %d", 4); err != ErrNotFound {
		t.Fatalf("missing row: %v, want ErrNotFound", err)
	}
	db := errors.New("database is locked")
	err := NotFoundOr(db, "segments: segment %d", 4)
	if err.Error() != "segments: segment 4: database is locked" || !errors.Is(err, db) || IsNotFound(err) {
		t.Fatalf("failure: %v", err)
	}
}
