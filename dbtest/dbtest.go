// Package dbtest opens a real, migrated, empty database for one test: an
// SQLite file in the test's TempDir, or, when HERALD_TEST_DATABASE names a
// PostgreSQL server, a schema of its own on that server, dropped after.
package dbtest

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"net/url"
	"os"
	"path/filepath"
	"testing"

	"golang.org/x/crypto/bcrypt"

	"herald/service"
)

// Strict reports whether tests must not skip for a missing service
// (PostgreSQL, Chromium): .ci/run sets HERALD_TEST_STRICT=1.
func Strict() bool { return os.Getenv("HERALD_TEST_STRICT") == "1" }

// SkipOrFail skips the test with reason, or fails it under Strict.
func SkipOrFail(t testing.TB, reason string) {
	t.Helper()
	if Strict() {
		t.Fatalf("%s (HERALD_TEST_STRICT=1 forbids skipping)", reason)
	}
	t.Skip(reason)
}

// DSN returns a fresh database address for the test: a new SQLite file,
// or a new PostgreSQL schema when HERALD_TEST_DATABASE is set. The schema
// is dropped when the test ends.
func DSN(t testing.TB) string {
	t.Helper()
	base := os.Getenv("HERALD_TEST_DATABASE")
	if base == "" {
		return filepath.Join(t.TempDir(), "herald.db")
	}
	if !service.IsPostgres(base) {
		t.Fatalf("HERALD_TEST_DATABASE must be a postgres:// URL, got %q", base)
	}
	b := make([]byte, 6)
	_, _ = rand.Read(b)
	schema := "t_" + hex.EncodeToString(b)
	admin, err := service.OpenDB(base)
	if err != nil {
		t.Fatalf("open %s: %v", base, err)
	}
	if err := admin.W.Exec("CREATE SCHEMA " + schema).Error; err != nil {
		t.Fatalf("create schema: %v", err)
	}
	t.Cleanup(func() {
		admin.W.Exec("DROP SCHEMA " + schema + " CASCADE")
		admin.Close()
	})
	u, err := url.Parse(base)
	if err != nil {
		t.Fatalf("HERALD_TEST_DATABASE: %v", err)
	}
	q := u.Query()
	q.Set("search_path", schema)
	u.RawQuery = q.Encode()
	return u.String()
}

// Open returns a migrated database for the test, closed when it ends.
func Open(t testing.TB) *service.DB { t.Helper(); return openDSN(t, DSN(t)) }

func openDSN(t testing.TB, dsn string) *service.DB {
	t.Helper()
	db, err := service.OpenDB(dsn)
	if err != nil {
		t.Fatalf("open database: %v", err)
	}
	t.Cleanup(func() { db.Close() })
	if err := db.Migrate(context.Background()); err != nil {
		t.Fatalf("migrate: %v", err)
	}
	return db
}

// Service returns a service over a fresh database, configured by cfg
// (none: the outbox transport, http://localhost:8080).
func Service(t testing.TB, cfg ...service.Config) *service.Service {
	t.Helper()
	return Processes(t, 1, cfg...)[0]
}

// Processes returns n services over one fresh database, each with its own
// connections, as n herald processes sharing it would be.
func Processes(t testing.TB, n int, cfg ...service.Config) []*service.Service {
	t.Helper()
	var c service.Config
	if len(cfg) > 0 {
		c = cfg[0]
	}
	if c.PasswordCost == 0 {
		c.PasswordCost = bcrypt.MinCost // bcrypt's cost is no part of what tests check
	}
	dsn := DSN(t)
	out := make([]*service.Service, n)
	for i := range out {
		svc, err := service.New(openDSN(t, dsn), c)
		if err != nil {
			t.Fatal(err)
		}
		out[i] = svc
	}
	return out
}
