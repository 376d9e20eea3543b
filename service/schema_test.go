package service_test

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"sort"
	"strconv"
	"strings"
	"testing"

	"herald/dbtest"
	"herald/service"
)

// The SQLite and PostgreSQL migration sets are written twice, by hand; the
// tests below keep them from drifting apart: the same numbered files in
// both folders, and, once both are applied, the same tables, columns
// (name, type through normType, nullability), primary keys and indexes
// (name, columns in order, unique, partial or not) and foreign keys
// (columns, referenced table and columns, ON DELETE), and column defaults
// through normDefault.
//
// Not compared: CHECK constraints, and the
// WHERE text of partial indexes (only that an index is partial on both
// sides); each dialect prints those in its own words.

// schemaAllowed lists the deliberate dialect differences, each keyed by
// the difference's text as schemaDiff prints it. Every entry says why.
var schemaAllowed = map[string]string{
	// SQLite has no JSON column type: contacts.custom_fields is TEXT there
	// and JSONB on PostgreSQL, whose queries use its JSON operators.
	"column contacts.custom_fields: type text on sqlite, json on postgres": "JSON column",
}

// normType maps a declared column type to its kind. Booleans are INTEGER
// 0/1 on both sides (no migration uses BOOLEAN), so they need no rule of
// their own; a BOOLEAN on one side only would show up as "bool" against
// "integer" and fail the test, on purpose.
func normType(t string) string {
	t = strings.ToLower(strings.TrimSpace(t))
	if i := strings.IndexByte(t, '('); i >= 0 {
		t = strings.TrimSpace(t[:i])
	}
	switch t {
	case "integer", "bigint", "smallint", "int", "int4", "int8", "int2":
		return "integer"
	case "text", "varchar", "character varying", "char", "character":
		return "text"
	case "datetime", "timestamp", "timestamptz", "timestamp with time zone", "timestamp without time zone":
		return "time"
	case "boolean", "bool":
		return "bool"
	case "blob", "bytea":
		return "bytes"
	case "json", "jsonb":
		return "json"
	case "real", "double precision", "float8", "numeric":
		return "real"
	}
	return "?" + t
}

type schemaColumn struct {
	Type    string // normType's kind
	NotNull bool
	Default string // normDefault's text; "" for none
}

var pgCast = regexp.MustCompile(`::[a-z_ ]+(\(\d+\))?$`)

// normDefault maps a default as the catalog prints it to one text: the
// migrations use plain literals only, which PostgreSQL prints with a cast
// (” as ”::text, -1 as '-1'::integer) and SQLite as written. A number
// quoted for an integer column is unquoted; parentheses around a
// literal go.
func normDefault(d *string, kind string) string {
	if d == nil {
		return ""
	}
	v := strings.TrimSpace(*d)
	for {
		w := strings.TrimSpace(pgCast.ReplaceAllString(v, ""))
		if len(w) >= 2 && w[0] == '(' && w[len(w)-1] == ')' {
			w = strings.TrimSpace(w[1 : len(w)-1])
		}
		if w == v {
			break
		}
		v = w
	}
	if kind == "integer" && len(v) >= 2 && v[0] == '\'' && v[len(v)-1] == '\'' {
		if _, err := strconv.ParseInt(v[1:len(v)-1], 10, 64); err == nil {
			v = v[1 : len(v)-1]
		}
	}
	return v
}

type schemaIndex struct {
	Columns []string // in order; an expression as the database prints it
	Unique  bool
	Partial bool
}

type schemaTable struct {
	Columns    map[string]schemaColumn
	PrimaryKey []string
	// Indexes by name. The indexes behind an inline UNIQUE constraint
	// carry a name each dialect makes up, so they go under
	// "unique(col,...)" instead.
	Indexes map[string]schemaIndex
	// ForeignKeys as "(cols) -> table(cols) ON DELETE action".
	ForeignKeys []string
}

func foreignKey(from []string, table string, to []string, onDelete string) string {
	return fmt.Sprintf("(%s) -> %s(%s) ON DELETE %s", strings.Join(from, ","), table, strings.Join(to, ","), onDelete)
}

// TestMigrationFilesMatch: both folders hold the same numbered files.
func TestMigrationFilesMatch(t *testing.T) {
	t.Parallel()
	names := func(dialect string) []string {
		entries, err := os.ReadDir(filepath.Join("..", "migrations", dialect))
		if err != nil {
			t.Fatal(err)
		}
		var out []string
		for _, e := range entries {
			if strings.HasSuffix(e.Name(), ".sql") {
				out = append(out, e.Name())
			}
		}
		return out
	}
	lite, pg := names("sqlite"), names("postgres")
	var diffs []string
	for _, n := range lite {
		if !slices.Contains(pg, n) {
			diffs = append(diffs, "migrations/sqlite/"+n+" has no migrations/postgres twin")
		}
	}
	for _, n := range pg {
		if !slices.Contains(lite, n) {
			diffs = append(diffs, "migrations/postgres/"+n+" has no migrations/sqlite twin")
		}
	}
	if len(lite) == 0 {
		diffs = append(diffs, "no migrations found")
	}
	if len(diffs) > 0 {
		t.Fatalf("migration files differ:\n  %s", strings.Join(diffs, "\n  "))
	}
}

// TestMigratedSchemasMatch migrates a fresh SQLite file and a fresh
// PostgreSQL schema and compares their catalogs; the failure lists every
// difference not in schemaAllowed.
func TestMigratedSchemasMatch(t *testing.T) {
	t.Parallel()
	if os.Getenv("HERALD_TEST_DATABASE") == "" {
		// The SQLite pass of make test; CI's PostgreSQL pass runs it (as
		// the several-process tests do).
		t.Skip("comparing the SQLite schema with PostgreSQL's runs when HERALD_TEST_DATABASE names a PostgreSQL database")
	}
	ctx := context.Background()
	open := func(dsn string) *service.DB {
		db, err := service.OpenDB(dsn)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { db.Close() })
		if err := db.Migrate(ctx); err != nil {
			t.Fatalf("migrate %s: %v", db.Dialect, err)
		}
		return db
	}
	lite := sqliteSchema(t, open(filepath.Join(t.TempDir(), "herald.db")))
	pg := postgresSchema(t, open(dbtest.DSN(t)))
	if len(lite) < 10 || len(pg) < 10 {
		t.Fatalf("catalogs read %d SQLite and %d PostgreSQL tables: the catalog queries are wrong", len(lite), len(pg))
	}

	count := func(s map[string]schemaTable) (cols, idxs, fks int) {
		for _, st := range s {
			cols += len(st.Columns)
			idxs += len(st.Indexes)
			fks += len(st.ForeignKeys)
		}
		return
	}
	lc, li, lf := count(lite)
	pc, pi, pf := count(pg)
	t.Logf("sqlite: %d tables, %d columns, %d indexes, %d foreign keys; postgres: %d tables, %d columns, %d indexes, %d foreign keys",
		len(lite), lc, li, lf, len(pg), pc, pi, pf)

	var diffs, allowedSeen []string
	for _, d := range schemaDiff(lite, pg) {
		if _, ok := schemaAllowed[d]; ok {
			allowedSeen = append(allowedSeen, d)
			continue
		}
		diffs = append(diffs, d)
	}
	// An allowlist entry that no longer matches anything is stale: it would
	// hide the next difference of that name.
	for d := range schemaAllowed {
		if !slices.Contains(allowedSeen, d) {
			diffs = append(diffs, "stale schemaAllowed entry (no such difference any more): "+d)
		}
	}
	sort.Strings(diffs)
	if len(diffs) > 0 {
		t.Fatalf("the SQLite and PostgreSQL migrations give different schemas (%d differences):\n  %s",
			len(diffs), strings.Join(diffs, "\n  "))
	}
}

func schemaDiff(lite, pg map[string]schemaTable) []string {
	var out []string
	for _, name := range sortedKeys(lite, pg) {
		a, inA := lite[name]
		b, inB := pg[name]
		switch {
		case !inB:
			out = append(out, fmt.Sprintf("table %s: only on sqlite", name))
			continue
		case !inA:
			out = append(out, fmt.Sprintf("table %s: only on postgres", name))
			continue
		}
		for _, c := range sortedKeys(a.Columns, b.Columns) {
			ca, inA := a.Columns[c]
			cb, inB := b.Columns[c]
			switch {
			case !inB:
				out = append(out, fmt.Sprintf("column %s.%s: only on sqlite", name, c))
			case !inA:
				out = append(out, fmt.Sprintf("column %s.%s: only on postgres", name, c))
			default:
				if ca.Type != cb.Type {
					out = append(out, fmt.Sprintf("column %s.%s: type %s on sqlite, %s on postgres", name, c, ca.Type, cb.Type))
				}
				if ca.Default != cb.Default {
					out = append(out, fmt.Sprintf("column %s.%s: default %q on sqlite, %q on postgres", name, c, ca.Default, cb.Default))
				}
				if ca.NotNull != cb.NotNull {
					out = append(out, fmt.Sprintf("column %s.%s: NOT NULL %v on sqlite, %v on postgres", name, c, ca.NotNull, cb.NotNull))
				}
			}
		}
		if !slices.Equal(a.PrimaryKey, b.PrimaryKey) {
			out = append(out, fmt.Sprintf("table %s: primary key (%s) on sqlite, (%s) on postgres",
				name, strings.Join(a.PrimaryKey, ","), strings.Join(b.PrimaryKey, ",")))
		}
		for _, fk := range a.ForeignKeys {
			if !slices.Contains(b.ForeignKeys, fk) {
				out = append(out, fmt.Sprintf("foreign key %s %s: only on sqlite", name, fk))
			}
		}
		for _, fk := range b.ForeignKeys {
			if !slices.Contains(a.ForeignKeys, fk) {
				out = append(out, fmt.Sprintf("foreign key %s %s: only on postgres", name, fk))
			}
		}
		for _, i := range sortedKeys(a.Indexes, b.Indexes) {
			ia, inA := a.Indexes[i]
			ib, inB := b.Indexes[i]
			switch {
			case !inB:
				out = append(out, fmt.Sprintf("index %s.%s: only on sqlite", name, i))
			case !inA:
				out = append(out, fmt.Sprintf("index %s.%s: only on postgres", name, i))
			default:
				if !slices.Equal(ia.Columns, ib.Columns) {
					out = append(out, fmt.Sprintf("index %s.%s: columns (%s) on sqlite, (%s) on postgres",
						name, i, strings.Join(ia.Columns, ","), strings.Join(ib.Columns, ",")))
				}
				if ia.Unique != ib.Unique {
					out = append(out, fmt.Sprintf("index %s.%s: unique %v on sqlite, %v on postgres", name, i, ia.Unique, ib.Unique))
				}
				if ia.Partial != ib.Partial {
					out = append(out, fmt.Sprintf("index %s.%s: partial %v on sqlite, %v on postgres", name, i, ia.Partial, ib.Partial))
				}
			}
		}
	}
	return out
}

func sortedKeys[V any](a, b map[string]V) []string {
	seen := map[string]bool{}
	for k := range a {
		seen[k] = true
	}
	for k := range b {
		seen[k] = true
	}
	out := make([]string, 0, len(seen))
	for k := range seen {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}

// ignoredTable: goose's own bookkeeping, not part of herald's schema.
func ignoredTable(name string) bool { return name == "goose_db_version" }

func sqliteSchema(t *testing.T, db *service.DB) map[string]schemaTable {
	t.Helper()
	sqlDB, err := db.W.DB()
	if err != nil {
		t.Fatal(err)
	}
	rows, err := sqlDB.Query(`SELECT name FROM sqlite_master WHERE type = 'table' AND name NOT LIKE 'sqlite_%' ORDER BY name`)
	if err != nil {
		t.Fatal(err)
	}
	var tables []string
	for rows.Next() {
		var n string
		if err := rows.Scan(&n); err != nil {
			t.Fatal(err)
		}
		if !ignoredTable(n) {
			tables = append(tables, n)
		}
	}
	if err := rows.Err(); err != nil {
		t.Fatal(err)
	}
	rows.Close()

	out := map[string]schemaTable{}
	for _, tbl := range tables {
		st := schemaTable{Columns: map[string]schemaColumn{}, Indexes: map[string]schemaIndex{}}
		// pragma table_info: cid, name, type, notnull, dflt_value, pk.
		rows, err := sqlDB.Query(`SELECT name, type, "notnull", dflt_value, pk FROM pragma_table_info(?) ORDER BY cid`, tbl)
		if err != nil {
			t.Fatal(err)
		}
		pk := map[int]string{}
		for rows.Next() {
			var (
				name, typ string
				notNull   bool
				dflt      *string
				pkPos     int
			)
			if err := rows.Scan(&name, &typ, &notNull, &dflt, &pkPos); err != nil {
				t.Fatal(err)
			}
			if pkPos > 0 {
				pk[pkPos] = name
				// A primary key column cannot be NULL on PostgreSQL; an
				// INTEGER PRIMARY KEY is the rowid on SQLite, never NULL.
				notNull = true
			}
			kind := normType(typ)
			st.Columns[name] = schemaColumn{Type: kind, NotNull: notNull, Default: normDefault(dflt, kind)}
		}
		if err := rows.Err(); err != nil {
			t.Fatal(err)
		}
		rows.Close()
		for i := 1; i <= len(pk); i++ {
			st.PrimaryKey = append(st.PrimaryKey, pk[i])
		}

		// pragma index_list: seq, name, unique, origin (c: CREATE INDEX,
		// u: UNIQUE constraint, pk: PRIMARY KEY), partial.
		type idx struct {
			name, origin    string
			unique, partial bool
		}
		var idxs []idx
		rows, err = sqlDB.Query(`SELECT name, "unique", origin, partial FROM pragma_index_list(?)`, tbl)
		if err != nil {
			t.Fatal(err)
		}
		for rows.Next() {
			var x idx
			if err := rows.Scan(&x.name, &x.unique, &x.origin, &x.partial); err != nil {
				t.Fatal(err)
			}
			idxs = append(idxs, x)
		}
		if err := rows.Err(); err != nil {
			t.Fatal(err)
		}
		rows.Close()
		for _, x := range idxs {
			if x.origin == "pk" {
				continue // compared as PrimaryKey
			}
			rows, err := sqlDB.Query(`SELECT name FROM pragma_index_info(?) ORDER BY seqno`, x.name)
			if err != nil {
				t.Fatal(err)
			}
			var cols []string
			for rows.Next() {
				var c *string
				if err := rows.Scan(&c); err != nil {
					t.Fatal(err)
				}
				if c == nil {
					cols = append(cols, "<expression>")
				} else {
					cols = append(cols, *c)
				}
			}
			if err := rows.Err(); err != nil {
				t.Fatal(err)
			}
			rows.Close()
			key := x.name
			if x.origin == "u" {
				key = "unique(" + strings.Join(cols, ",") + ")"
			}
			st.Indexes[key] = schemaIndex{Columns: cols, Unique: x.unique, Partial: x.partial}
		}
		out[tbl] = st
	}

	// pragma foreign_key_list: id, seq, table, from, to, on_update,
	// on_delete, match; one row per column, grouped by id. "to" is NULL
	// when the key names only the table: it then means its primary key.
	for _, tbl := range tables {
		rows, err := sqlDB.Query(`SELECT id, "table", "from", "to", on_delete FROM pragma_foreign_key_list(?) ORDER BY id, seq`, tbl)
		if err != nil {
			t.Fatal(err)
		}
		type fk struct {
			table, onDelete string
			from, to        []string
		}
		var fks []*fk
		last := -1
		for rows.Next() {
			var (
				id        int
				ref, from string
				to        *string
				onDelete  string
			)
			if err := rows.Scan(&id, &ref, &from, &to, &onDelete); err != nil {
				t.Fatal(err)
			}
			if id != last {
				fks = append(fks, &fk{table: ref, onDelete: onDelete})
				last = id
			}
			f := fks[len(fks)-1]
			f.from = append(f.from, from)
			if to != nil && *to != "" {
				f.to = append(f.to, *to)
			}
		}
		if err := rows.Err(); err != nil {
			t.Fatal(err)
		}
		rows.Close()
		st := out[tbl]
		for _, f := range fks {
			if len(f.to) == 0 {
				f.to = out[f.table].PrimaryKey
			}
			st.ForeignKeys = append(st.ForeignKeys, foreignKey(f.from, f.table, f.to, f.onDelete))
		}
		out[tbl] = st
	}
	return out
}

func postgresSchema(t *testing.T, db *service.DB) map[string]schemaTable {
	t.Helper()
	sqlDB, err := db.W.DB()
	if err != nil {
		t.Fatal(err)
	}
	out := map[string]schemaTable{}
	rows, err := sqlDB.Query(`SELECT table_name FROM information_schema.tables
		WHERE table_schema = current_schema() AND table_type = 'BASE TABLE'`)
	if err != nil {
		t.Fatal(err)
	}
	for rows.Next() {
		var n string
		if err := rows.Scan(&n); err != nil {
			t.Fatal(err)
		}
		if !ignoredTable(n) {
			out[n] = schemaTable{Columns: map[string]schemaColumn{}, Indexes: map[string]schemaIndex{}}
		}
	}
	if err := rows.Err(); err != nil {
		t.Fatal(err)
	}
	rows.Close()

	// An identity column's default is its sequence (column_default NULL),
	// as an INTEGER PRIMARY KEY is the rowid on SQLite: no default to compare.
	rows, err = sqlDB.Query(`SELECT table_name, column_name, data_type, is_nullable = 'NO', column_default
		FROM information_schema.columns WHERE table_schema = current_schema()`)
	if err != nil {
		t.Fatal(err)
	}
	for rows.Next() {
		var (
			tbl, name, typ string
			notNull        bool
			dflt           *string
		)
		if err := rows.Scan(&tbl, &name, &typ, &notNull, &dflt); err != nil {
			t.Fatal(err)
		}
		if st, ok := out[tbl]; ok {
			kind := normType(typ)
			st.Columns[name] = schemaColumn{Type: kind, NotNull: notNull, Default: normDefault(dflt, kind)}
		}
	}
	if err := rows.Err(); err != nil {
		t.Fatal(err)
	}
	rows.Close()

	// Every index of the schema's tables, its key columns in order
	// (pg_get_indexdef with a column number prints that column, or the
	// expression), and whether a UNIQUE or PRIMARY KEY constraint of the
	// table stands behind it.
	rows, err = sqlDB.Query(`SELECT t.relname, i.relname, ix.indisunique, ix.indisprimary,
			ix.indpred IS NOT NULL,
			EXISTS (SELECT 1 FROM pg_constraint c WHERE c.conindid = ix.indexrelid
				AND c.conrelid = ix.indrelid AND c.contype = 'u'),
			(SELECT string_agg(pg_get_indexdef(ix.indexrelid, k, true), ',' ORDER BY k)
				FROM generate_series(1, ix.indnkeyatts) AS k)
		FROM pg_index ix
		JOIN pg_class i ON i.oid = ix.indexrelid
		JOIN pg_class t ON t.oid = ix.indrelid
		JOIN pg_namespace n ON n.oid = t.relnamespace
		WHERE n.nspname = current_schema()`)
	if err != nil {
		t.Fatal(err)
	}
	for rows.Next() {
		var (
			tbl, name, cols                      string
			unique, primary, partial, constraint bool
		)
		if err := rows.Scan(&tbl, &name, &unique, &primary, &partial, &constraint, &cols); err != nil {
			t.Fatal(err)
		}
		st, ok := out[tbl]
		if !ok {
			continue
		}
		colList := strings.Split(strings.ReplaceAll(cols, `"`, ""), ",")
		if primary {
			st.PrimaryKey = colList
			out[tbl] = st
			continue
		}
		key := name
		if constraint {
			key = "unique(" + cols + ")"
		}
		st.Indexes[key] = schemaIndex{Columns: colList, Unique: unique, Partial: partial}
	}
	if err := rows.Err(); err != nil {
		t.Fatal(err)
	}
	rows.Close()

	// Foreign keys: the columns on both sides in key order, and
	// confdeltype spelled as SQLite's pragma spells ON DELETE.
	rows, err = sqlDB.Query(`SELECT t.relname, r.relname,
			(SELECT string_agg(a.attname, ',' ORDER BY k.n) FROM unnest(c.conkey) WITH ORDINALITY AS k(attnum, n)
				JOIN pg_attribute a ON a.attrelid = c.conrelid AND a.attnum = k.attnum),
			(SELECT string_agg(a.attname, ',' ORDER BY k.n) FROM unnest(c.confkey) WITH ORDINALITY AS k(attnum, n)
				JOIN pg_attribute a ON a.attrelid = c.confrelid AND a.attnum = k.attnum),
			CASE c.confdeltype WHEN 'a' THEN 'NO ACTION' WHEN 'r' THEN 'RESTRICT' WHEN 'c' THEN 'CASCADE'
				WHEN 'n' THEN 'SET NULL' WHEN 'd' THEN 'SET DEFAULT' END
		FROM pg_constraint c
		JOIN pg_class t ON t.oid = c.conrelid
		JOIN pg_class r ON r.oid = c.confrelid
		JOIN pg_namespace n ON n.oid = t.relnamespace
		WHERE c.contype = 'f' AND n.nspname = current_schema()`)
	if err != nil {
		t.Fatal(err)
	}
	for rows.Next() {
		var tbl, ref, from, to, onDelete string
		if err := rows.Scan(&tbl, &ref, &from, &to, &onDelete); err != nil {
			t.Fatal(err)
		}
		if st, ok := out[tbl]; ok {
			st.ForeignKeys = append(st.ForeignKeys, foreignKey(strings.Split(from, ","), ref, strings.Split(to, ","), onDelete))
			out[tbl] = st
		}
	}
	if err := rows.Err(); err != nil {
		t.Fatal(err)
	}
	rows.Close()
	return out
}
