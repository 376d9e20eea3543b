package core

import (
	"context"
	"fmt"
	"net/url"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"time"

	"gorm.io/driver/postgres"
	"gorm.io/driver/sqlite"
	"gorm.io/gorm"
	"gorm.io/gorm/logger"

	"herald/migrations"
	"herald/models"
)

// DB is the storage: W takes every write (and reads inside a write), R
// serves plain reads. On SQLite W is one connection with immediate
// transactions, the only writer SQLite allows, and R is a pool of read
// connections (WAL lets them read while W writes). On PostgreSQL both are
// the same pool.
type DB struct {
	W, R *gorm.DB
	// Relaxed takes the writes whose commit need not wait for the disk:
	// the send engine's group commits of outcomes. On PostgreSQL it is a
	// small pool of its own whose sessions run with synchronous_commit
	// off (a commit returns before its WAL flush, which follows within
	// three of the WAL writer's delays, 600 ms by default): only a crash
	// of the database server itself can lose such a commit, never a crash
	// of herald. A pool rather than SET LOCAL in a transaction, so that a
	// one-statement write stays one autocommit statement, which the
	// server finishes even if the process stalls before its answer. On
	// SQLite it is W (commits there wait for no flush of their own:
	// synchronous=NORMAL in WAL mode).
	Relaxed *gorm.DB
	Dialect string // "sqlite" or "postgres"
	// clock is the time of the rows written (GORM's NowFunc, the same
	// function): models.Now as opened, the service's clock once New has
	// taken the database (withClock).
	clock func() time.Time
}

// Now is the time as stored (UTC, microseconds), by the database's clock.
func (d *DB) Now() time.Time { return d.clock() }

// WithClock returns the database with now as its clock, both of the
// service's code and of GORM's own timestamps (created_at, updated_at):
// the same connections, new sessions.
func (d *DB) WithClock(now func() time.Time) *DB {
	c := *d
	c.clock = now
	c.W = d.W.Session(&gorm.Session{NewDB: true, NowFunc: now})
	c.R = c.W
	if d.R != d.W {
		c.R = d.R.Session(&gorm.Session{NewDB: true, NowFunc: now})
	}
	c.Relaxed = c.W
	if d.Relaxed != nil && d.Relaxed != d.W {
		c.Relaxed = d.Relaxed.Session(&gorm.Session{NewDB: true, NowFunc: now})
	}
	return &c
}

// StoredClock is now as stored: UTC, truncated to microseconds so that
// SQLite and PostgreSQL hold and answer the same value (models.Now).
func StoredClock(now func() time.Time) func() time.Time {
	return func() time.Time { return models.Stored(now()) }
}

// IsPostgres reports whether dsn selects PostgreSQL rather than an SQLite file.
func IsPostgres(dsn string) bool {
	return strings.HasPrefix(dsn, "postgres://") || strings.HasPrefix(dsn, "postgresql://")
}

// OpenDB opens dsn: a postgres:// URL or the path of an SQLite file (created,
// with its folder, when absent). It does not migrate; call Migrate.
func OpenDB(dsn string) (*DB, error) {
	cfg := func() *gorm.Config {
		return &gorm.Config{
			SkipDefaultTransaction: true,
			NowFunc:                models.Now,
			Logger:                 logger.Discard,
			TranslateError:         false,
		}
	}
	if IsPostgres(dsn) {
		g, err := gorm.Open(postgres.Open(dsn), cfg())
		if err != nil {
			return nil, fmt.Errorf("open postgres: %w", err)
		}
		sqlDB, err := g.DB()
		if err != nil {
			return nil, fmt.Errorf("open postgres: %w", err)
		}
		sqlDB.SetMaxOpenConns(20)
		sqlDB.SetMaxIdleConns(20)
		sqlDB.SetConnMaxIdleTime(5 * time.Minute)
		u, err := url.Parse(dsn)
		if err != nil {
			return nil, fmt.Errorf("open postgres: %w", err)
		}
		q := u.Query()
		q.Set("synchronous_commit", "off") // a run-time parameter of every session of the pool
		u.RawQuery = q.Encode()
		rg, err := gorm.Open(postgres.Open(u.String()), cfg())
		if err != nil {
			return nil, fmt.Errorf("open postgres (relaxed pool): %w", err)
		}
		rdb, err := rg.DB()
		if err != nil {
			return nil, fmt.Errorf("open postgres (relaxed pool): %w", err)
		}
		rdb.SetMaxOpenConns(4)
		rdb.SetMaxIdleConns(4)
		rdb.SetConnMaxIdleTime(5 * time.Minute)
		return &DB{W: g, R: g, Relaxed: rg, Dialect: "postgres", clock: models.Now}, nil
	}

	path := strings.TrimPrefix(dsn, "sqlite://")
	if dir := filepath.Dir(path); dir != "." {
		if err := os.MkdirAll(dir, 0o755); err != nil {
			return nil, fmt.Errorf("create database folder: %w", err)
		}
	}
	// Pragmas go in the DSN so that every pooled connection gets them.
	base := "file:" + path + "?_busy_timeout=10000&_journal_mode=WAL&_synchronous=NORMAL&_foreign_keys=on"
	w, err := gorm.Open(sqlite.Open(base+"&_txlock=immediate"), cfg())
	if err != nil {
		return nil, fmt.Errorf("open sqlite writer: %w", err)
	}
	wdb, err := w.DB()
	if err != nil {
		return nil, fmt.Errorf("open sqlite writer: %w", err)
	}
	wdb.SetMaxOpenConns(1)
	wdb.SetMaxIdleConns(1)
	wdb.SetConnMaxLifetime(0)
	if err := wdb.Ping(); err != nil {
		return nil, fmt.Errorf("open sqlite writer: %w", err)
	}
	r, err := gorm.Open(sqlite.Open(base+"&_query_only=1"), cfg())
	if err != nil {
		return nil, fmt.Errorf("open sqlite readers: %w", err)
	}
	rdb, err := r.DB()
	if err != nil {
		return nil, fmt.Errorf("open sqlite readers: %w", err)
	}
	n := max(4, 2*runtime.NumCPU())
	rdb.SetMaxOpenConns(n)
	rdb.SetMaxIdleConns(n)
	return &DB{W: w, R: r, Relaxed: w, Dialect: "sqlite", clock: models.Now}, nil
}

// Migrate applies the embedded migrations of the dialect, with those
// written in Go (goMigrations).
func (d *DB) Migrate(ctx context.Context) error {
	sqlDB, err := d.W.DB()
	if err != nil {
		return fmt.Errorf("database: writer pool: %w", err)
	}
	return migrations.Up(ctx, sqlDB, d.Dialect, d.GoMigrations()...)
}

// Ping checks that the database answers.
func (d *DB) Ping(ctx context.Context) error {
	sqlDB, err := d.R.DB()
	if err != nil {
		return fmt.Errorf("database: ping: %w", err)
	}
	if err := sqlDB.PingContext(ctx); err != nil {
		return fmt.Errorf("database: ping: %w", err)
	}
	return nil
}

// Close closes every pool.
func (d *DB) Close() error {
	var first error
	pools := []*gorm.DB{d.W}
	if d.R != d.W {
		pools = append(pools, d.R)
	}
	if d.Relaxed != nil && d.Relaxed != d.W {
		pools = append(pools, d.Relaxed)
	}
	for _, g := range pools {
		sqlDB, err := g.DB()
		if err == nil {
			err = sqlDB.Close()
		}
		if err != nil && first == nil && !strings.Contains(err.Error(), "closed") {
			first = err
		}
	}
	return first
}
