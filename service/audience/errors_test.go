package audience

import (
	"errors"
	"fmt"
	"testing"
)

// An import's report keeps the database's own text of a failure, while
// the error the caller logs names the steps, and errors.Is still finds
// the cause.
func TestImportCauseKeepsTheReportText(t *testing.T) {
	db := errors.New("database is locked")
	inner := fmt.Errorf("segments: drop contacts leaving segment 3: %w", db)
	err := importFailed("upsert a batch", importFailed("refresh the segments", inner))
	if got := importCause(err); got != inner {
		t.Fatalf("cause %q, want %q", got, inner)
	}
	if got := importCause(db); got != db {
		t.Fatalf("cause of a bare error %q, want it as it is", got)
	}
	if want := "imports: upsert a batch: imports: refresh the segments: segments: drop contacts leaving segment 3: database is locked"; err.Error() != want {
		t.Fatalf("error %q, want %q", err, want)
	}
	if !errors.Is(err, db) {
		t.Fatal("errors.Is does not reach the cause")
	}
}
