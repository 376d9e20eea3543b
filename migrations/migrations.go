// Package migrations holds the versioned SQL schema for each dialect,
// embedded in the binary and applied in order by goose.
package migrations

import (
	"context"
	"database/sql"
	"embed"
	"fmt"
	"io/fs"

	"github.com/pressly/goose/v3"
	"github.com/pressly/goose/v3/lock"
)

//go:embed sqlite/*.sql postgres/*.sql
var files embed.FS

// Up applies every migration not yet applied, each in its own transaction.
// dialect is "sqlite" or "postgres". On PostgreSQL an advisory lock makes
// concurrent starts of several processes apply each migration once.
func Up(ctx context.Context, db *sql.DB, dialect string) error {
	p, err := provider(db, dialect)
	if err != nil {
		return err
	}
	_, err = p.Up(ctx)
	return err
}

// UpTo applies the migrations up to version (included) and no further:
// tests of a repair migration fill the tables as an older herald left them
// first.
func UpTo(ctx context.Context, db *sql.DB, dialect string, version int64) error {
	p, err := provider(db, dialect)
	if err != nil {
		return err
	}
	_, err = p.UpTo(ctx, version)
	return err
}

func provider(db *sql.DB, dialect string) (*goose.Provider, error) {
	var (
		gd   goose.Dialect
		opts []goose.ProviderOption
	)
	switch dialect {
	case "sqlite":
		gd = goose.DialectSQLite3
	case "postgres":
		gd = goose.DialectPostgres
		locker, err := lock.NewPostgresSessionLocker()
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
	return goose.NewProvider(gd, db, sub, opts...)
}
