// Package migrations holds the versioned SQL schema for each dialect,
// embedded in the binary and applied in order by goose, with the
// migrations written in Go that its caller hands over.
package migrations

import (
	"context"
	"database/sql"
	"embed"
	"fmt"
	"hash/crc32"
	"io/fs"

	"github.com/pressly/goose/v3"
	"github.com/pressly/goose/v3/lock"
)

//go:embed sqlite/*.sql postgres/*.sql
var files embed.FS

// Go is a migration written in Go, for a change SQL cannot say (a repair
// that reads stored rows through code of herald's). Its version shares
// the numbering of the SQL files, and Up (and Down) run inside goose's
// transaction for that version, as an SQL file does: everything it
// writes is applied, or none of it.
type Go struct {
	Version  int64
	Up, Down func(ctx context.Context, tx *sql.Tx) error
}

// Up applies every migration not yet applied, each in its own transaction.
// dialect is "sqlite" or "postgres"; code are the migrations written in
// Go, applied in version order among the SQL files. On PostgreSQL an
// advisory lock makes concurrent starts of several processes apply each
// migration once.
func Up(ctx context.Context, db *sql.DB, dialect string, code ...Go) error {
	p, err := provider(db, dialect, code)
	if err != nil {
		return err
	}
	_, err = p.Up(ctx)
	return err
}

// UpTo applies the migrations up to version (included) and no further:
// tests of a repair migration fill the tables as an older herald left them
// first.
func UpTo(ctx context.Context, db *sql.DB, dialect string, version int64, code ...Go) error {
	p, err := provider(db, dialect, code)
	if err != nil {
		return err
	}
	_, err = p.UpTo(ctx, version)
	return err
}

func provider(db *sql.DB, dialect string, code []Go) (*goose.Provider, error) {
	var (
		gd   goose.Dialect
		opts []goose.ProviderOption
	)
	switch dialect {
	case "sqlite":
		gd = goose.DialectSQLite3
	case "postgres":
		gd = goose.DialectPostgres
		id, err := lockID(db)
		if err != nil {
			return nil, err
		}
		// Probed every second rather than goose's five: a process that
		// waits for another's migrations starts as soon as they are done.
		locker, err := lock.NewPostgresSessionLocker(lock.WithLockID(id), lock.WithLockTimeout(1, 300))
		if err != nil {
			return nil, err
		}
		opts = append(opts, goose.WithSessionLocker(locker))
	default:
		return nil, fmt.Errorf("migrations: unknown dialect %q", dialect)
	}
	sub, err := fs.Sub(files, dialect)
	if err != nil {
		return nil, err
	}
	// Work lands in parallel branches, each with its own migration number:
	// a database that already has a later version still takes an earlier
	// one that arrived after it (each migration only adds its own tables
	// and columns, so their order among themselves does not matter).
	opts = append(opts, goose.WithAllowOutofOrder(true))
	// Only the Go migrations handed over here: none registered globally
	// by an import's init.
	opts = append(opts, goose.WithDisableGlobalRegistry(true))
	for _, m := range code {
		// A nil Down is a step down that changes nothing.
		opts = append(opts, goose.WithGoMigrations(goose.NewGoMigration(m.Version, &goose.GoFunc{RunTx: m.Up}, &goose.GoFunc{RunTx: m.Down})))
	}
	return goose.NewProvider(gd, db, sub, opts...)
}

// lockID names the advisory lock of the schema the connection works in.
// PostgreSQL's advisory locks are per database, not per schema: with one
// fixed id (goose's default), herald instances in separate schemas of one
// database (as the tests run) would wait for each other's migrations.
// Processes sharing one schema share its id and still apply each
// migration once.
func lockID(db *sql.DB) (int64, error) {
	var schema string
	if err := db.QueryRow("SELECT current_schema()").Scan(&schema); err != nil {
		return 0, fmt.Errorf("migrations: current schema: %w", err)
	}
	return int64(crc32.ChecksumIEEE([]byte("herald migrations " + schema))), nil
}
