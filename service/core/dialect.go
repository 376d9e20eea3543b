package core

import (
	"context"
	"fmt"
	"log/slog"
	"strings"
	"time"

	"gorm.io/gorm"
)

// Dialect is every difference between SQLite and PostgreSQL that herald's
// statements meet, in one place.
type Dialect struct {
	Postgres bool
}

func (db *DB) SQL() Dialect { return Dialect{Postgres: db.Dialect == "postgres"} }

// SkipLocked is the lock clause of a queue's claim: PostgreSQL lets
// concurrent claimers pass each other's rows; SQLite has one writer.
func (d Dialect) SkipLocked() string {
	if d.Postgres {
		return " FOR UPDATE SKIP LOCKED"
	}
	return ""
}

// FreshStats analyzes those of tables whose PostgreSQL statistics lag far
// behind their rows. Right after a large import autovacuum has not
// analyzed yet, and the planner, taking the contacts table for nearly
// empty, read every contact of the type for each chunk of an audience's
// resolution (measured at 100,000 contacts: 14 ms per 5,000-row chunk
// instead of 1.7 ms, and growing with the square of the audience). A
// failure only costs speed: it is logged. SQLite needs nothing.
func (d Dialect) FreshStats(ctx context.Context, db *DB, log *slog.Logger, tables ...string) {
	if !d.Postgres {
		return
	}
	for _, t := range tables {
		var stale bool
		err := db.W.WithContext(ctx).Raw(`SELECT COALESCE((SELECT n_mod_since_analyze > 1000 + n_live_tup / 10
			FROM pg_stat_user_tables WHERE relid = ?::regclass), false)`, t).Scan(&stale).Error
		if err == nil && stale {
			err = db.W.WithContext(ctx).Exec("ANALYZE " + t).Error
		}
		if err != nil && ctx.Err() == nil {
			log.Warn("analyze before a large read", "table", t, "err", err)
		}
	}
}

// ForUpdate is the row lock of a read-then-write in a transaction:
// SQLite's transactions hold the one write lock from their start
// (_txlock=immediate).
func (d Dialect) ForUpdate() string {
	if d.Postgres {
		return " FOR UPDATE"
	}
	return ""
}

// LockAccount takes the account row's lock inside tx, so that concurrent
// transactions of one account run one after the other (PostgreSQL; SQLite
// has one writer).
func (d Dialect) LockAccount(tx *gorm.DB, accountID int64) error {
	if !d.Postgres {
		return nil
	}
	var locked int64
	if err := tx.Raw("SELECT id FROM users WHERE id = ? FOR UPDATE", accountID).Scan(&locked).Error; err != nil {
		return fmt.Errorf("lock account %d: %w", accountID, err)
	}
	return nil
}

// DataModifyingCTE reports whether a WITH clause may hold an UPDATE …
// RETURNING (PostgreSQL), so that several writes take one round trip.
func (d Dialect) DataModifyingCTE() bool { return d.Postgres }

// TimesAsText selects timestamp columns as text: models.Timestamp parses
// SQLite's stored text by hand, several times faster than the driver's
// general date parsing; PostgreSQL's driver hands over times already.
func (d Dialect) TimesAsText(cols ...string) string {
	if d.Postgres {
		return strings.Join(cols, ", ")
	}
	out := make([]string, len(cols))
	for i, c := range cols {
		out[i] = "CAST(" + c + " AS TEXT)"
	}
	return strings.Join(out, ", ")
}

// DropCustomField removes a custom field's value from every contact of
// the account.
func (d Dialect) DropCustomField(tx *gorm.DB, accountID int64, name string) error {
	if d.Postgres {
		return tx.Exec("UPDATE contacts SET custom_fields = custom_fields - ? WHERE user_id = ? AND jsonb_exists(custom_fields, ?)",
			name, accountID, name).Error
	}
	return tx.Exec("UPDATE contacts SET custom_fields = json_remove(custom_fields, ?) WHERE user_id = ? AND json_type(custom_fields, ?) IS NOT NULL",
		jsonPath(name), accountID, jsonPath(name)).Error
}

// CustomField is the text of the custom field name (names are
// [A-Za-z0-9_]) of the JSON column col.
func (d Dialect) CustomField(col, name string) string {
	if d.Postgres {
		return "(" + col + "->>'" + name + "')"
	}
	return "json_extract(" + col + ", '" + jsonPath(name) + "')"
}

// Number casts a text expression to a floating-point number.
func (d Dialect) Number(expr string) string {
	if d.Postgres {
		return "CAST(" + expr + " AS DOUBLE PRECISION)"
	}
	return "CAST(" + expr + " AS REAL)"
}

// TimeValue is a time as the driver writes a time bind value, so that it
// compares with stored times: the SQLite driver as text in its first
// layout, PostgreSQL as RFC 3339 read back as timestamptz.
func (d Dialect) TimeValue(t time.Time) string {
	if d.Postgres {
		return t.UTC().Format(time.RFC3339Nano)
	}
	return t.UTC().Format(SQLiteTimeLayout)
}

// JSONArrayItems is a subquery of the items of a JSON array bound as one
// parameter, read as kind (text, number or created_at).
func (d Dialect) JSONArrayItems(kind string) string {
	if !d.Postgres {
		return "SELECT value FROM json_each(?)"
	}
	elem := "jsonb_array_elements_text(CAST(? AS jsonb))"
	switch kind {
	case "number":
		elem = "CAST(" + elem + " AS DOUBLE PRECISION)"
	case "created_at":
		elem = "CAST(" + elem + " AS TIMESTAMPTZ)"
	}
	return "SELECT " + elem
}

// DriverPlaceholders writes a statement of one ? placeholder for the
// driver itself (below GORM, which rewrites them): PostgreSQL's are $1.
func (d Dialect) DriverPlaceholders(q string) string {
	if d.Postgres {
		return strings.Replace(q, "?", "$1", 1)
	}
	return q
}

// ddl writes the column types of a CREATE TABLE made in Go (a Go
// migration): {id} the primary key the database numbers, {bigint} an id
// or a count, {time} a timestamp, as the SQL migrations of each dialect
// spell them.
func (d Dialect) ddl(q string) string {
	if d.Postgres {
		return strings.NewReplacer("{id}", "BIGINT GENERATED BY DEFAULT AS IDENTITY PRIMARY KEY", "{bigint}", "BIGINT",
			"{time}", "TIMESTAMPTZ(6)").Replace(q)
	}
	return strings.NewReplacer("{id}", "INTEGER PRIMARY KEY", "{bigint}", "INTEGER", "{time}", "DATETIME").Replace(q)
}

// Recorders is how many of the engine's group commits run at once
// (delivery.EngineConfig.Recorders). The outcomes of the in-flight slots
// wait for the commit; on PostgreSQL two at once overlap one's round
// trips with the other's (their commits are relaxed: DB.Relaxed).
// SQLite has one writer.
func (d Dialect) Recorders() int {
	if d.Postgres {
		return 2
	}
	return 1
}

// ServerStarted is the query that answers when the database server last
// started (PostgreSQL): a change tells a process that relaxed commits may
// have been lost. "" on SQLite, which has no server.
func (d Dialect) ServerStarted() string {
	if d.Postgres {
		return "SELECT CAST(EXTRACT(EPOCH FROM pg_postmaster_start_time()) * 1000 AS BIGINT)"
	}
	return ""
}

// AddDaily is the upsert that adds to columns of an account's day in
// account_daily (user_id, day, the columns' values…). SQLite (3.24+) and
// PostgreSQL spell it the same; it lives here with the other statements
// whose form depends on the database.
func (d Dialect) AddDaily(cols []string) string {
	var b strings.Builder
	b.WriteString("INSERT INTO account_daily (user_id, day")
	for _, c := range cols {
		b.WriteString(", " + c)
	}
	b.WriteString(") VALUES (?, ?" + strings.Repeat(", ?", len(cols)) + ") ON CONFLICT (user_id, day) DO UPDATE SET ")
	for i, c := range cols {
		if i > 0 {
			b.WriteString(", ")
		}
		b.WriteString(c + " = account_daily." + c + " + excluded." + c)
	}
	return b.String()
}
