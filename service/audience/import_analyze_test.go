package audience_test

import (
	"context"
	"fmt"
	"strings"
	"testing"

	"herald/dbtest"
	"herald/models"
	"herald/service"
)

// TestImportAnalyzesWhenLargeBesideTheStatistics (PostgreSQL): an import
// of 10,000 rows or more refreshes the statistics of contacts when the
// table was never analyzed or the import adds at least a tenth of the
// rows they know, and leaves them as they are otherwise.
func TestImportAnalyzesWhenLargeBesideTheStatistics(t *testing.T) {
	ctx := context.Background()
	svc := dbtest.Service(t)
	if svc.DB.Dialect != "postgres" {
		t.Skip("statistics of PostgreSQL only (HERALD_TEST_DATABASE)")
	}
	u, _, err := svc.Accounts.Create(ctx, service.AccountInput{Name: "Big", Email: "big@example.com", Password: "test-passphrase-9"})
	if err != nil {
		t.Fatal(err)
	}
	known := func() float64 {
		t.Helper()
		var n float64
		if err := svc.DB.R.Raw("SELECT reltuples FROM pg_class WHERE oid = CAST('contacts' AS regclass)").Row().Scan(&n); err != nil {
			t.Fatal(err)
		}
		return n
	}
	imported := 0
	importRows := func(n int) {
		t.Helper()
		ct, err := svc.ContactTypes.Create(ctx, u.ID, fmt.Sprintf("Import of %d", imported))
		if err != nil {
			t.Fatal(err)
		}
		var b strings.Builder
		b.WriteString("email\n")
		for i := range n {
			fmt.Fprintf(&b, "i%d@example.com\n", imported+i)
		}
		imported += n
		imp, err := svc.Imports.Start(ctx, u.ID, ct.ID, "list.csv", -1)
		if err != nil {
			t.Fatal(err)
		}
		if err := svc.Imports.Import(ctx, imp, strings.NewReader(b.String())); err != nil || imp.Created != int64(n) {
			t.Fatalf("import of %d: %v, created %d", n, err, imp.Created)
		}
	}

	importRows(10_000) // never analyzed before: analyzed
	if n := known(); n < 10_000 {
		t.Fatalf("after a first import of 10,000 rows the statistics know %.0f rows", n)
	}
	ct, err := svc.ContactTypes.Create(ctx, u.ID, "Bulk")
	if err != nil {
		t.Fatal(err)
	}
	now := models.NewTimestamp(models.Now())
	if err := svc.DB.W.Exec(`INSERT INTO contacts (user_id, contact_type_id, email, created_at, updated_at)
		SELECT ?, ?, 'b' || i || '@example.com', ?, ? FROM generate_series(1, 140000) AS i`, u.ID, ct.ID, now, now).Error; err != nil {
		t.Fatal(err)
	}
	if err := svc.DB.W.Exec("ANALYZE contacts").Error; err != nil {
		t.Fatal(err)
	}
	before := known()
	importRows(10_000) // under a tenth of 150,000: left as they are
	if n := known(); n != before {
		t.Fatalf("an import of 10,000 rows beside %.0f known changed the statistics to %.0f", before, n)
	}
	importRows(20_000) // over a tenth: refreshed (170,000 rows now)
	if n := known(); n <= before {
		t.Fatalf("an import of 20,000 rows beside %.0f known left the statistics at %.0f", before, n)
	}
}
