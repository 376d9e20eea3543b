package audience

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"log/slog"
	"strconv"
	"strings"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/stdlib"
	"gorm.io/gorm"

	"herald/models"
)

// pgImportBatch is how many rows one COPY and one merge take on
// PostgreSQL: COPY costs little per row, the per-batch round trips and
// the commit are what a larger batch spreads.
const pgImportBatch = 5000

// pgStageColumns are the columns of the staging table, in COPY order:
// the contact values of a row, its custom values as a JSON object.
var pgStageColumns = []string{
	"first_name", "last_name", "email", "alt_email", "country", "state", "city",
	"address_line1", "address_line2", "state_province_region", "postal_code", "custom_fields",
}

// pgImport writes an import on PostgreSQL: each batch is copied (COPY,
// pgx CopyFrom) into a temporary staging table of the import's own
// connection, then merged into contacts by one INSERT … SELECT … ON
// CONFLICT DO UPDATE with the same rules as the SQLite upsert (upsertSet),
// and the segments of the type are refreshed for the batch's contacts
// set-wise. One transaction per batch: the staging table empties itself
// at each commit.
type pgImport struct {
	s      *Imports
	imp    *models.Import
	conn   *sql.Conn // held for the whole import: the staging table lives on it
	merge  *sql.Stmt // the merge, prepared once on conn
	inTx   bool
	broken bool  // a rollback failed: the connection is not used again
	wrote  int64 // contacts created or updated so far
}

// pgAnalyzeRows is how many contacts an import writes before it brings
// the planner's statistics of contacts up to date at its end. Without
// them (autovacuum may not have run yet, or be off) a segment over the
// new contacts is planned as if the type held a handful, and walks the
// whole email index instead of scanning the table once.
const pgAnalyzeRows = 10_000

func newPGImport(ctx context.Context, s *Imports, imp *models.Import, cols headerMap) (*pgImport, error) {
	sqlDB, err := s.db.W.DB()
	if err != nil {
		return nil, importFailed("reach the database", err)
	}
	conn, err := sqlDB.Conn(ctx)
	if err != nil {
		return nil, importFailed("take a connection", err)
	}
	p := &pgImport{s: s, imp: imp, conn: conn}
	defs := make([]string, len(pgStageColumns))
	for i, c := range pgStageColumns {
		defs[i] = c + " TEXT"
	}
	// A connection of the pool may hold the table of an earlier import
	// that could not drop it: start afresh.
	if _, err := conn.ExecContext(ctx, "DROP TABLE IF EXISTS pg_temp.import_stage"); err != nil {
		p.close()
		return nil, importFailed("drop an old staging table", err)
	}
	if _, err := conn.ExecContext(ctx, "CREATE TEMPORARY TABLE import_stage ("+strings.Join(defs, ", ")+") ON COMMIT DELETE ROWS"); err != nil {
		p.close()
		return nil, importFailed("create the staging table", err)
	}
	vals := make([]string, 0, len(pgStageColumns))
	for _, c := range pgStageColumns {
		if c == "custom_fields" {
			c = "CAST(custom_fields AS JSONB)"
		}
		vals = append(vals, c)
	}
	q := "INSERT INTO contacts (" + strings.Join(importColumns, ", ") + ") SELECT $1, $2, " + strings.Join(vals, ", ") +
		", $3, $3, $4 FROM import_stage" + upsertSet(cols, "contacts.custom_fields || excluded.custom_fields")
	if p.merge, err = conn.PrepareContext(ctx, q); err != nil {
		p.close()
		return nil, importFailed("prepare the merge", err)
	}
	if stmtPrepared != nil {
		stmtPrepared(p.merge)
	}
	return p, nil
}

func (p *pgImport) batchRows() int { return pgImportBatch }
func (p *pgImport) txBatches() int { return 1 }

// begin opens a transaction on the import's connection with a plain
// BEGIN (database/sql's own transactions cannot reach pgx's COPY), and
// returns a gorm handle on that connection for the segment refresh.
//
// The batch's commit does not wait for its WAL to reach the disk
// (synchronous_commit off, for this transaction only): a crash may lose
// the last batches committed, never part of one, and nothing that
// depends on them is lost without them: the WAL is flushed in order, so
// the import's final report, its progress and the automations' enrolment
// of its contacts (later, synchronous commits) are durable only once
// every batch before them is. An import cut short by a crash is marked
// failed (FailAbandoned) and importing the file again completes it.
func (p *pgImport) begin(ctx context.Context, _ int) (*gorm.DB, error) {
	p.inTx = true // before: a failure halfway still rolls back (ROLLBACK outside a transaction is harmless)
	if _, err := p.conn.ExecContext(ctx, "BEGIN; SET LOCAL synchronous_commit = off"); err != nil {
		return nil, importFailed("begin a transaction", err)
	}
	g := p.s.db.W.Session(&gorm.Session{Context: ctx, NewDB: true})
	g.Statement.ConnPool = p.conn
	return g, nil
}

func (p *pgImport) commit(tx *gorm.DB) error {
	_, err := p.conn.ExecContext(tx.Statement.Context, "COMMIT")
	p.inTx = false
	if err != nil {
		return importFailed("commit", err)
	}
	return nil
}

func (p *pgImport) rollback(*gorm.DB) {
	if !p.inTx {
		return
	}
	p.inTx = false
	if _, err := p.conn.ExecContext(context.Background(), "ROLLBACK"); err != nil {
		// The connection is broken (a cancelled statement closes it) or
		// still in a transaction: the pool discards it when it is handed
		// back, and its session's staging table with it.
		p.broken = true
		slog.Warn("import: rollback", "import", p.imp.ID, "error", err)
	}
}

func (p *pgImport) write(ctx context.Context, tx *gorm.DB, batch []importRow) ([]int64, int64, error) {
	err := p.conn.Raw(func(dc any) error {
		c, ok := dc.(*stdlib.Conn)
		if !ok {
			return fmt.Errorf("import: the PostgreSQL driver connection is a %T, not pgx's", dc)
		}
		n, err := c.Conn().CopyFrom(ctx, pgx.Identifier{"import_stage"}, pgStageColumns, pgx.CopyFromSlice(len(batch), func(i int) ([]any, error) {
			r := &batch[i]
			ct := &r.c
			var alt any
			if ct.AltEmail != nil {
				alt = *ct.AltEmail
			}
			return []any{ct.FirstName, ct.LastName, ct.Email, alt, ct.Country, ct.State, ct.City,
				ct.AddressLine1, ct.AddressLine2, ct.StateProvinceRegion, ct.PostalCode, customJSON(r.custom)}, nil
		}))
		if err == nil && n != int64(len(batch)) {
			err = fmt.Errorf("import: COPY took %d rows of %d", n, len(batch))
		}
		return err
	})
	if err != nil {
		return nil, 0, importFailed("copy a batch", err)
	}
	rows, err := p.merge.QueryContext(ctx, p.imp.UserID, p.imp.ContactTypeID, p.s.db.Now(), consentJSON(p.imp))
	if err != nil {
		return nil, 0, importFailed("merge a batch", err)
	}
	ids := make([]int64, 0, len(batch))
	var created int64
	if err := scanIDs(rows, &ids, &created); err != nil {
		return nil, 0, err
	}
	if err := importTags(ctx, tx, p.imp, batch); err != nil {
		return nil, 0, importFailed("add the tags", err)
	}
	if len(ids) > 0 {
		if err := p.s.segments.refreshSet(ctx, tx, p.imp.UserID, p.imp.ContactTypeID, pgIDSet(ids)); err != nil {
			return nil, 0, importFailed("refresh the segments", err)
		}
	}
	p.wrote += int64(len(ids))
	return ids, created, nil
}

// pgAnalyzeShare is the share of the rows the statistics of contacts
// know (pg_class.reltuples) an import must write for finish to refresh
// them: autovacuum's own threshold (autovacuum_analyze_scale_factor). Below
// it the statistics still describe the table as autovacuum would leave
// them, and ANALYZE (seconds on a large table) is spared.
const pgAnalyzeShare = 0.1

// finish refreshes the statistics of contacts after a large import
// (ANALYZE reads a sample of bounded size, whatever the table's), unless
// the import is small beside what the statistics already know.
func (p *pgImport) finish(ctx context.Context) error {
	if p.wrote < pgAnalyzeRows {
		return nil
	}
	// reltuples is -1 for a table never analyzed, 0 for an empty one.
	var known float64
	if err := p.conn.QueryRowContext(ctx, "SELECT reltuples FROM pg_class WHERE oid = CAST('contacts' AS regclass)").Scan(&known); err != nil {
		return importFailed("read the statistics of contacts", err)
	}
	if known > 0 && float64(p.wrote) < pgAnalyzeShare*known {
		return nil
	}
	if _, err := p.conn.ExecContext(ctx, "ANALYZE contacts"); err != nil {
		return importFailed("analyze contacts", err)
	}
	return nil
}

// pgIDSet is a set of contacts as one BIGINT[] parameter.
func pgIDSet(ids []int64) contactSet {
	b := make([]byte, 0, 8*len(ids)+2)
	b = append(b, '{')
	for i, id := range ids {
		if i > 0 {
			b = append(b, ',')
		}
		b = strconv.AppendInt(b, id, 10)
	}
	return contactSet{test: "= ANY(CAST(? AS BIGINT[]))", arg: string(append(b, '}'))}
}

// close drops the staging table and hands the connection back.
func (p *pgImport) close() {
	ctx := context.Background()
	p.rollback(nil)
	if p.merge != nil {
		if err := p.merge.Close(); err != nil {
			slog.Warn("import: closing the prepared merge", "import", p.imp.ID, "error", err)
		}
		p.merge = nil
	}
	if p.conn == nil {
		return
	}
	if p.broken {
		_ = p.conn.Close()
		p.conn = nil
		return
	}
	if _, err := p.conn.ExecContext(ctx, "DROP TABLE IF EXISTS pg_temp.import_stage"); err != nil && !errors.Is(err, sql.ErrConnDone) {
		slog.Warn("import: dropping the staging table", "import", p.imp.ID, "error", err)
	}
	if err := p.conn.Close(); err != nil {
		slog.Warn("import: releasing the connection", "import", p.imp.ID, "error", err)
	}
	p.conn = nil
}
