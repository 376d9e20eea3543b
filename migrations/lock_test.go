package migrations

import (
	"crypto/rand"
	"database/sql"
	"encoding/hex"
	"net/url"
	"os"
	"testing"

	_ "github.com/jackc/pgx/v5/stdlib"
)

// openSchema opens a connection pool working in a fresh schema of the
// PostgreSQL server named by HERALD_TEST_DATABASE.
func openSchema(t *testing.T, base string) (*sql.DB, string) {
	t.Helper()
	b := make([]byte, 6)
	_, _ = rand.Read(b)
	schema := "t_" + hex.EncodeToString(b)
	admin, err := sql.Open("pgx", base)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { admin.Close() })
	if _, err := admin.Exec("CREATE SCHEMA " + schema); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { admin.Exec("DROP SCHEMA " + schema + " CASCADE") })
	u, err := url.Parse(base)
	if err != nil {
		t.Fatal(err)
	}
	q := u.Query()
	q.Set("search_path", schema)
	u.RawQuery = q.Encode()
	db, err := sql.Open("pgx", u.String())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	return db, schema
}

// Two herald instances in separate schemas of one database take separate
// migration locks (they do not wait for each other), and two processes of
// one instance take the same.
func TestMigrationLockIsPerSchema(t *testing.T) {
	base := os.Getenv("HERALD_TEST_DATABASE")
	if base == "" {
		// The SQLite pass of make test; the PostgreSQL pass runs it.
		t.Skip("the migration lock is PostgreSQL's: this runs when HERALD_TEST_DATABASE names a PostgreSQL database")
	}
	a, _ := openSchema(t, base)
	b, _ := openSchema(t, base)
	idA, err := lockID(a)
	if err != nil {
		t.Fatal(err)
	}
	idB, err := lockID(b)
	if err != nil {
		t.Fatal(err)
	}
	if idA == idB {
		t.Fatalf("two schemas share the migration lock %d", idA)
	}
	// Holding schema a's lock leaves schema b's free.
	conn, err := a.Conn(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	var ok bool
	if err := conn.QueryRowContext(t.Context(), "SELECT pg_try_advisory_lock($1)", idA).Scan(&ok); err != nil || !ok {
		t.Fatalf("lock a: %v %v", ok, err)
	}
	if err := Up(t.Context(), b, "postgres"); err != nil {
		t.Fatalf("migrating schema b while a's lock is held: %v", err)
	}
	again, err := lockID(b)
	if err != nil || again != idB {
		t.Fatalf("a second process of schema b: lock %d, want %d (%v)", again, idB, err)
	}
}
