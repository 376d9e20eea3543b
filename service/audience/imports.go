package audience

import (
	"bufio"
	"context"
	"database/sql"
	"encoding/csv"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"path/filepath"
	"runtime/debug"
	"sort"
	"strconv"
	"strings"
	"sync/atomic"
	"time"
	"unicode/utf8"

	"gorm.io/gorm"

	"herald/models"
	"herald/service/core"
	"herald/service/identity"
	"herald/service/internal/record"
)

// Imports runs CSV imports of contacts: streamed, in batches, so memory
// stays flat whatever the size of the file.
type Imports struct {
	db       *core.DB
	segments *Segments
	audit    *identity.Audit
	// OnBatch, when set, is called after each committed batch with the ids
	// of the contacts it created or changed (automations enrol from it).
	OnBatch func(ctx context.Context, accountID, typeID int64, ids []int64)
	// OnDone, when set, is called when an import has ended (done or
	// failed), with its final report (notification mails).
	OnDone func(ctx context.Context, imp *models.Import)
	// runner owns the imports under way (Go, Import, Shutdown).
	runner importRunner
	// erasures tells the addresses erased at the person's request: their
	// rows are skipped.
	erasures *Erasures
}

// importBatch is how many rows go into one upsert statement and one
// transaction: 1000 rows x 16 columns stays under SQLite's bind limit and
// keeps each write short enough for other writers to interleave.
const importBatch = 1000

// maxProblems is how many rejected rows an import keeps with their reason;
// the count of skipped rows is always exact.
const maxProblems = 1000

// sharedParams is how many parameters of the upsert all rows share.
const sharedParams = 4

// customJSON writes custom values as a JSON object with sorted keys.
func customJSON(m map[string]string) string {
	if len(m) == 0 {
		return "{}"
	}
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	b := make([]byte, 0, 64)
	b = append(b, '{')
	for i, k := range keys {
		if i > 0 {
			b = append(b, ',')
		}
		b = appendJSONString(b, k)
		b = append(b, ':')
		b = appendJSONString(b, m[k])
	}
	return string(append(b, '}'))
}

// appendJSONString appends s as a JSON string (s is valid UTF-8).
func appendJSONString(b []byte, s string) []byte {
	const hex = "0123456789abcdef"
	b = append(b, '"')
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch {
		case c == '"' || c == '\\':
			b = append(b, '\\', c)
		case c < 0x20:
			b = append(b, '\\', 'u', '0', '0', hex[c>>4], hex[c&0xf])
		default:
			b = append(b, c)
		}
	}
	return append(b, '"')
}

// importColumns are the contact columns of the upsert, in order.
var importColumns = []string{
	"user_id", "contact_type_id", "first_name", "last_name", "email", "alt_email", "country", "state", "city",
	"address_line1", "address_line2", "state_province_region", "postal_code", "custom_fields", "created_at", "updated_at", "consent",
}

// ImportFile is the upload of contacts/upload-csv.
type ImportFile struct {
	ContactTypeID string
	FileName      string // as sent; only the .csv extension is allowed
	Present       bool   // a file part was sent
	// Columns are the console's choices per column (by position), for
	// Fields.ImportColumns; the API sends none.
	Columns map[int]ImportColumn
}

// CheckImport validates the form fields of an upload before its file is
// read. Errors: validation (keys contact_type_id, file), ErrNotFound.
func (s *Imports) CheckImport(ctx context.Context, accountID int64, in ImportFile) (int64, error) {
	p := core.Problems{}
	p.Required("contact_type_id", in.ContactTypeID)
	if !in.Present {
		p.AddReason("file", core.ReasonRequired, core.MsgRequired("file"))
	} else if !strings.EqualFold(filepath.Ext(in.FileName), ".csv") {
		p.Add("file", "The file must be a file of type: csv.")
	}
	if err := p.Err(); err != nil {
		return 0, err
	}
	typeID, err := core.ParseID(in.ContactTypeID)
	if err != nil {
		return 0, err
	}
	if _, err := contactType(ctx, s.db.R, accountID, typeID); err != nil {
		return 0, err
	}
	return typeID, nil
}

// Start records a new running import of a file of size bytes (-1 unknown).
func (s *Imports) Start(ctx context.Context, accountID, typeID int64, fileName string, size int64) (*models.Import, error) {
	now := models.NewTimestamp(s.db.Now())
	imp := &models.Import{
		UserID: accountID, ContactTypeID: typeID, FileName: filepath.Base(fileName), Status: "running",
		BytesTotal: size, Problems: models.ImportProblems{}, CreatedAt: now, UpdatedAt: now,
	}
	if err := s.db.W.WithContext(ctx).Create(imp).Error; err != nil {
		return nil, fmt.Errorf("imports: save a new import: %w", err)
	}
	return imp, s.audit.Record(ctx, accountID, core.AuditImportStarted, imp.FileName, fmt.Sprintf("import %d into contact type %d", imp.ID, typeID))
}

// Get returns an import of the account (progress or report). Errors: ErrNotFound.
func (s *Imports) Get(ctx context.Context, accountID, id int64) (*models.Import, error) {
	var imp models.Import
	if err := s.db.R.WithContext(ctx).Where("user_id = ? AND id = ?", accountID, id).First(&imp).Error; err != nil {
		return nil, core.NotFoundOr(err, "imports: import %d", id)
	}
	return &imp, nil
}

// Recent returns the account's latest imports, newest first.
func (s *Imports) Recent(ctx context.Context, accountID int64, n int) ([]models.Import, error) {
	var out []models.Import
	if err := s.db.R.WithContext(ctx).Where("user_id = ?", accountID).Order("id DESC").Limit(n).Find(&out).Error; err != nil {
		return nil, fmt.Errorf("imports: recent imports of account %d: %w", accountID, err)
	}
	return out, nil
}

// countingReader counts the bytes read, for progress.
type countingReader struct {
	r io.Reader
	n atomic.Int64
}

func (c *countingReader) Read(p []byte) (int, error) {
	n, err := c.r.Read(p)
	c.n.Add(int64(n))
	return n, err
}

// errNoEmail marks a file that cannot be imported at all; the import is
// recorded as failed.
var errNoEmail = core.Invalid("file", "The file must have a header row with an email column.")

// Run reads the CSV from r into the import's contact type: existing
// contacts (same email) are updated with the columns the file has, new
// ones created; rows with errors are skipped and reported by line. It
// records progress on imp as it goes and its report at the end: done,
// or failed with a message; never left running.
// Errors: validation (key file: empty file, no email column, a quote
// that never closes, after the rows before it are written); others are
// failures of the database or of the upload, or errImportPanic for a
// bug (logged), and leave the import marked failed.
func (s *Imports) Run(ctx context.Context, imp *models.Import, r io.Reader) error {
	err := s.runGuarded(ctx, imp, r)
	imp.Status = "done"
	if err != nil {
		imp.Status = "failed"
		var se *core.Error
		if errors.As(err, &se) && len(se.Fields) > 0 {
			imp.Message = strings.Join(se.Fields["file"], " ")
		} else if errors.Is(context.Cause(ctx), errImportShutdown) {
			imp.Message = "The import stopped: " + errImportShutdown.Error()
		} else {
			imp.Message = "The import stopped: " + importCause(err).Error()
		}
	}
	now := models.NewTimestamp(s.db.Now())
	imp.FinishedAt, imp.UpdatedAt = &now, now
	if uerr := s.db.W.WithContext(context.WithoutCancel(ctx)).Model(&models.Import{}).Where("id = ?", imp.ID).Updates(map[string]any{
		"status": imp.Status, "message": imp.Message, "bytes_read": imp.BytesRead, "rows_read": imp.RowsRead,
		"created": imp.Created, "updated": imp.Updated, "skipped": imp.Skipped, "problems": imp.Problems,
		"finished_at": now, "updated_at": now,
	}).Error; uerr != nil && err == nil {
		err = fmt.Errorf("imports: record the end of import %d: %w", imp.ID, uerr)
	}
	if s.OnDone != nil {
		s.OnDone(context.WithoutCancel(ctx), imp)
	}
	return err
}

// importError is a failure of an import's work on the database, with the
// step it happened in: the log and the caller read both. The import's
// report keeps the failure's own text (importCause), as it always has.
type importError struct {
	step string
	err  error
}

func (e *importError) Error() string { return "imports: " + e.step + ": " + e.err.Error() }
func (e *importError) Unwrap() error { return e.err }

// importFailed wraps err, a failure of the database during an import,
// with the step it happened in.
func importFailed(step string, err error) error { return &importError{step: step, err: err} }

// importCause is err without the steps importFailed named around it.
func importCause(err error) error {
	for {
		ie, ok := err.(*importError)
		if !ok {
			return err
		}
		err = ie.err
	}
}

// errImportPanic is what an import that met a bug (a panic, logged with
// its stack) is marked failed with, rather than left running.
var errImportPanic = errors.New("herald met an internal error (its log has the details). Import the file again: rows already imported are updated, not duplicated.")

// recoverImport, deferred, turns a panic of an import's stage into
// errImportPanic in *err, and logs it.
func recoverImport(imp *models.Import, stage string, err *error) {
	if p := recover(); p != nil {
		slog.Error("import panicked", "import", imp.ID, "stage", stage, "panic", p, "stack", string(debug.Stack()))
		*err = errImportPanic
	}
}

// runGuarded is run; a panic that escapes the stages' own guards still
// ends the import as failed.
func (s *Imports) runGuarded(ctx context.Context, imp *models.Import, r io.Reader) (err error) {
	defer recoverImport(imp, "run", &err)
	return s.run(ctx, imp, r)
}

func (s *Imports) run(ctx context.Context, imp *models.Import, r io.Reader) error {
	cr := &countingReader{r: r}
	rows := newCSVRows(bufio.NewReaderSize(cr, 256<<10))
	header, err := rows.header()
	if err != nil {
		return err
	}
	applyColumns(header, imp.Columns)
	imp.Consent = importConsent(imp, s.db.Now())
	if err := s.erasures.ready(ctx); err != nil {
		return importFailed("read the erasure key", err)
	}
	customs, err := customFields(ctx, s.db.R, imp.UserID)
	if err != nil {
		return importFailed("read the custom fields", err)
	}
	cols, notes := mapHeader(header, customs)
	if cols.email < 0 {
		return errNoEmail
	}
	imp.Problems = append(imp.Problems, notes...)

	// Two stages on two cores: this goroutine parses and validates rows
	// into batches; the writer upserts them. A few batches in flight at
	// most, so memory stays flat.
	wctx, cancel := context.WithCancel(ctx)
	defer cancel()
	up, err := newImportWriter(wctx, s, imp, cols)
	if err != nil {
		return err
	}
	defer up.close() // after the writer has ended: every return below waits for it
	batchRows := up.batchRows()
	batches := make(chan importWork, 2)
	werr := make(chan error, 1)
	go func() {
		err := s.writeGuarded(wctx, imp, up, batches)
		if err != nil {
			cancel()
		}
		werr <- err
	}()
	send := func(w importWork) bool {
		select {
		case batches <- w:
			return true
		case <-wctx.Done():
			return false
		}
	}

	batch := make([]importRow, 0, batchRows)
	index := make(map[string]int, batchRows)
	reject := func(line int64, reason string) {
		imp.Skipped++
		if len(imp.Problems) < maxProblems {
			imp.Problems = append(imp.Problems, models.ImportProblem{Line: line, Reason: reason})
		}
	}
	// readAll reads the rows into batches until the end of the file or an
	// error. keep says whether the rows of the batch under way are written
	// all the same: they are when the file breaks off at a line, not when
	// the upload or a bug cut the reading short.
	readAll := func() (keep bool, err error) {
		defer recoverImport(imp, "read", &err)
		for {
			rec, line, reason, rerr := rows.next()
			if rerr == io.EOF {
				return true, nil
			}
			var broken *csvBroken
			if errors.As(rerr, &broken) {
				return true, core.Invalid("file", broken.Error()+" The rows before it were imported: close the quote and import the file again.")
			}
			if rerr != nil {
				return false, rerr
			}
			imp.RowsRead++
			if reason != "" {
				reject(int64(line), "The row cannot be read: "+reason+".")
				continue
			}
			row, reason := cols.row(rec, customs)
			if reason != "" {
				reject(int64(line), reason)
				continue
			}
			row.line = int64(line)
			if i, dup := index[row.c.Email]; dup {
				batch[i] = mergeRows(batch[i], row) // the later row of a file wins
				continue
			}
			index[row.c.Email] = len(batch)
			batch = append(batch, row)
			if len(batch) == batchRows {
				if batch, err = s.dropErased(ctx, imp, batch, reject); err != nil {
					return false, err
				}
				if !send(importWork{rows: batch, rowsRead: imp.RowsRead, skipped: imp.Skipped, bytesRead: cr.n.Load()}) {
					return false, nil // the writer stopped: its error is the import's
				}
				batch = make([]importRow, 0, batchRows)
				clear(index)
			}
		}
	}
	keep, readErr := readAll()
	if keep && len(batch) > 0 {
		var err error
		if batch, err = s.dropErased(ctx, imp, batch, reject); err != nil {
			keep, readErr = false, err
		}
	}
	if keep && len(batch) > 0 {
		send(importWork{rows: batch, rowsRead: imp.RowsRead, skipped: imp.Skipped, bytesRead: cr.n.Load()})
	}
	close(batches)
	if err := <-werr; err != nil {
		return err
	}
	imp.BytesRead = cr.n.Load()
	if readErr != nil {
		return readErr
	}
	if err := ctx.Err(); err != nil {
		return err
	}
	if imp.RowsRead == 0 && imp.Skipped == 0 {
		imp.Problems = append(imp.Problems, models.ImportProblem{Line: 0, Reason: "The file has a header row but no contacts."})
	}
	return nil
}

// importWork is one batch of valid rows and the reader's counts after it.
type importWork struct {
	rows                         []importRow
	rowsRead, skipped, bytesRead int64
}

// headerMap is where each contact value is in a CSV record (-1: absent).
type headerMap struct {
	email, first, last, alt, country, state, city, addr1, addr2, region, postal int
	custom                                                                      map[string]int // field name → column
	tags                                                                        int            // the tags column (tags.go), -1 absent
	present                                                                     []string       // contact columns the file sets
}

// slots are the columns a file may name besides the custom fields, each
// with the index it is read from.
func (h *headerMap) slots() map[string]*int {
	return map[string]*int{
		"email": &h.email, "first_name": &h.first, "last_name": &h.last, "alt_email": &h.alt, "country": &h.country,
		"state": &h.state, "city": &h.city, "address_line1": &h.addr1, "address_line2": &h.addr2,
		"state_province_region": &h.region, "postal_code": &h.postal,
	}
}

// isImportSlot reports whether a file's column may be named name besides
// the custom fields.
func isImportSlot(name string) bool {
	_, ok := (&headerMap{}).slots()[name]
	return ok
}

func mapHeader(header []string, customs []models.Field) (headerMap, models.ImportProblems) {
	h := headerMap{email: -1, first: -1, last: -1, alt: -1, country: -1, state: -1, city: -1, addr1: -1, addr2: -1, region: -1, postal: -1, custom: map[string]int{}, tags: -1}
	var notes models.ImportProblems
	slots := h.slots()
	seen := map[string]bool{}
	for i, raw := range header {
		name := strings.ToLower(strings.Join(strings.Fields(strings.TrimSpace(raw)), "_"))
		if name == "" {
			continue
		}
		if seen[name] {
			notes = append(notes, models.ImportProblem{Line: 1, Reason: fmt.Sprintf("column %q appears twice; the first one is used", raw)})
			continue
		}
		seen[name] = true
		if name == "tags" {
			h.tags = i // added to the contact's tags, not a column of contacts
			continue
		}
		if slot, ok := slots[name]; ok {
			*slot = i
			if name != "email" {
				h.present = append(h.present, name)
			}
			continue
		}
		found := false
		for _, f := range customs {
			if strings.EqualFold(f.FieldName, name) {
				h.custom[f.FieldName] = i
				found = true
				break
			}
		}
		if !found {
			notes = append(notes, models.ImportProblem{Line: 1, Reason: fmt.Sprintf("column %q ignored: no field has that name", raw)})
		}
	}
	return h, notes
}

type importRow struct {
	line   int64
	c      models.Contact
	custom map[string]string // non-empty custom values given
	tags   []string          // tags to add (normalised)
}

func cell(rec []string, i int) string {
	if i < 0 || i >= len(rec) {
		return ""
	}
	return rec[i]
}

// row validates one record. It returns the reason when the row is rejected.
func (h headerMap) row(rec []string, customs []models.Field) (importRow, string) {
	for _, v := range rec {
		if !utf8.ValidString(v) {
			return importRow{}, "invalid UTF-8"
		}
	}
	in := ContactInput{
		Email: cell(rec, h.email), FirstName: cell(rec, h.first), LastName: cell(rec, h.last), AltEmail: cell(rec, h.alt),
		Country: cell(rec, h.country), State: cell(rec, h.state), City: cell(rec, h.city),
		AddressLine1: cell(rec, h.addr1), AddressLine2: cell(rec, h.addr2), StateProvinceRegion: cell(rec, h.region), PostalCode: cell(rec, h.postal),
	}
	if len(h.custom) > 0 {
		in.Custom = make(map[string]string, len(h.custom))
		for name, i := range h.custom {
			if v := strings.TrimSpace(cell(rec, i)); v != "" {
				in.Custom[name] = v // an empty cell leaves a stored value as it is
			}
		}
	}
	p := core.Problems{}
	c, values := cleanContact(in, customs, false, p)
	if len(p) > 0 {
		var msgs []string
		for _, k := range []string{"email", "alt_email", "country"} {
			msgs = append(msgs, p.Messages(k)...)
			delete(p, k)
		}
		for k := range p {
			msgs = append(msgs, p.Messages(k)...)
		}
		return importRow{}, strings.Join(msgs, " ")
	}
	tags, reason := rowTags(cell(rec, h.tags))
	if reason != "" {
		return importRow{}, reason
	}
	return importRow{c: c, custom: values, tags: tags}, ""
}

// mergeRows applies a later row of the same address onto an earlier one.
func mergeRows(old, new importRow) importRow {
	for k, v := range old.custom {
		if _, ok := new.custom[k]; !ok {
			if new.custom == nil {
				new.custom = map[string]string{}
			}
			new.custom[k] = v
		}
	}
	new.tags = mergeTags(old.tags, new.tags)
	return new
}

// importWriter writes the batches of one import: the SQLite upserter
// (multi-row upserts) or, on PostgreSQL, pgImport (COPY into a staging
// table and one merge per batch). newImportWriter picks it once, by
// dialect.
type importWriter interface {
	// batchRows is how many distinct rows a batch holds at most;
	// txBatches how many batches share a transaction at most.
	batchRows() int
	txBatches() int
	// begin opens a transaction for a first batch of n rows; commit and
	// rollback end it.
	begin(ctx context.Context, n int) (*gorm.DB, error)
	commit(tx *gorm.DB) error
	rollback(tx *gorm.DB)
	// write upserts one batch in tx and brings the segments of the type
	// up to date for its contacts. It returns the contacts' ids and how
	// many of them it created.
	write(ctx context.Context, tx *gorm.DB, batch []importRow) (ids []int64, created int64, err error)
	// finish runs once every batch is committed.
	finish(ctx context.Context) error
	// close releases what the writer holds, once it has ended.
	close()
}

// upsertSet is the DO UPDATE of an import's upsert: the columns the file
// has, the custom values merged over the stored ones with mergeCustom
// (the dialect's JSON object merge of contacts.custom_fields and
// excluded.custom_fields), updated_at. It ends with RETURNING id and
// whether the row was created: created_at = updated_at only on rows the
// statement inserted (updated rows keep their created_at, and duplicates
// of a batch were merged beforehand).
func upsertSet(cols headerMap, mergeCustom string) string {
	var b strings.Builder
	b.WriteString(" ON CONFLICT (contact_type_id, email) WHERE deleted_at IS NULL DO UPDATE SET ")
	for _, c := range cols.present {
		b.WriteString(c + " = excluded." + c + ", ")
	}
	if len(cols.custom) > 0 {
		b.WriteString("custom_fields = " + mergeCustom + ", ")
	}
	b.WriteString("updated_at = excluded.updated_at RETURNING id, created_at = updated_at")
	return b.String()
}

// upserter writes batches of rows with one multi-row upsert each (SQLite).
type upserter struct {
	s     *Imports
	imp   *models.Import
	cols  headerMap
	sql   map[int]string // statement by row count
	full  *sql.Stmt      // the statement of a full batch, prepared once
	ready bool
}

func (u *upserter) batchRows() int { return importBatch }
func (u *upserter) txBatches() int { return txBatches }

// close releases the prepared statement, once the writer has ended.
func (u *upserter) close() {
	if u.full != nil {
		if err := u.full.Close(); err != nil {
			slog.Warn("import: closing the prepared upsert", "import", u.imp.ID, "error", err)
		}
		u.full = nil
	}
}

// stmtPrepared, when set (tests), is called with each statement an
// import prepares.
var stmtPrepared func(*sql.Stmt)

func (u *upserter) statement(n int) string {
	if q, ok := u.sql[n]; ok {
		return q
	}
	var b strings.Builder
	b.WriteString("INSERT INTO contacts (" + strings.Join(importColumns, ", ") + ") VALUES ")
	// Parameters 1-3 (account, type, time) are shared by every row and
	// bound once; each row binds its own 12 values after them.
	p := func(n int) string { return "?" + strconv.Itoa(n) }
	arg := sharedParams
	for i := 0; i < n; i++ {
		if i > 0 {
			b.WriteByte(',')
		}
		b.WriteString("(" + p(1) + "," + p(2))
		for j := 2; j < len(importColumns)-3; j++ {
			arg++
			b.WriteString("," + p(arg))
		}
		b.WriteString("," + p(3) + "," + p(3) + "," + p(4) + ")")
	}
	b.WriteString(upsertSet(u.cols, "json_patch(contacts.custom_fields, excluded.custom_fields)"))
	if u.sql == nil {
		u.sql = map[int]string{}
	}
	u.sql[n] = b.String()
	return u.sql[n]
}

// txBatches is how many batches share a transaction at most: fewer
// commits, while a transaction still holds the writer for well under a
// second. A transaction is also committed whenever no batch is waiting.
const txBatches = 5

func (u *upserter) begin(ctx context.Context, n int) (*gorm.DB, error) {
	if n == importBatch && !u.ready {
		// Preparing a 15,000-parameter statement costs about as much as
		// running it: do it once per import, outside a transaction (the
		// writer is one connection; database/sql then re-uses the
		// statement in each transaction on it).
		u.ready = true
		sqlDB, err := u.s.db.W.DB()
		if err != nil {
			return nil, importFailed("reach the database", err)
		}
		if u.full, err = sqlDB.PrepareContext(ctx, u.statement(importBatch)); err != nil {
			return nil, importFailed("prepare the upsert", err)
		}
		if stmtPrepared != nil {
			stmtPrepared(u.full)
		}
	}
	tx := u.s.db.W.WithContext(ctx).Begin()
	if tx.Error != nil {
		return tx, importFailed("begin a transaction", tx.Error)
	}
	return tx, nil
}

func (u *upserter) commit(tx *gorm.DB) error {
	if err := tx.Commit().Error; err != nil {
		return importFailed("commit", err)
	}
	return nil
}

func (u *upserter) finish(context.Context) error { return nil }
func (u *upserter) rollback(tx *gorm.DB)         { tx.Rollback() }

// writeGuarded is writeAll; a panic (a bug) ends the writer with
// errImportPanic once its open transaction is rolled back.
func (s *Imports) writeGuarded(ctx context.Context, imp *models.Import, u importWriter, batches <-chan importWork) (err error) {
	defer recoverImport(imp, "write", &err)
	return s.writeAll(ctx, imp, u, batches)
}

// writeAll writes the batches as they come, committing every few, and
// records progress after each commit.
func (s *Imports) writeAll(ctx context.Context, imp *models.Import, u importWriter, batches <-chan importWork) error {
	var tx *gorm.DB
	inTx := 0
	var pendingIDs []int64
	var last importWork
	lastProgress := time.Now()
	commit := func() error {
		if tx == nil {
			return nil
		}
		err := u.commit(tx)
		tx, inTx = nil, 0
		if err != nil {
			return err
		}
		if s.OnBatch != nil && len(pendingIDs) > 0 {
			s.OnBatch(ctx, imp.UserID, imp.ContactTypeID, pendingIDs)
		}
		pendingIDs = pendingIDs[:0]
		if time.Since(lastProgress) > 300*time.Millisecond {
			lastProgress = time.Now()
			if err := s.db.W.WithContext(ctx).Model(&models.Import{}).Where("id = ?", imp.ID).Updates(map[string]any{
				"bytes_read": last.bytesRead, "rows_read": last.rowsRead, "created": imp.Created,
				"updated": imp.Updated, "skipped": last.skipped, "updated_at": s.db.Now(),
			}).Error; err != nil {
				return importFailed("record progress", err)
			}
		}
		return nil
	}
	defer func() {
		if tx != nil {
			u.rollback(tx)
		}
	}()
	for {
		var w importWork
		var ok bool
		select {
		case w, ok = <-batches:
		default:
			// Nothing waiting: commit what is written rather than hold the writer.
			if err := commit(); err != nil {
				return err
			}
			w, ok = <-batches
		}
		if !ok {
			if err := commit(); err != nil {
				return err
			}
			return u.finish(ctx)
		}
		if tx == nil {
			var err error
			if tx, err = u.begin(ctx, len(w.rows)); err != nil {
				tx = nil
				return err
			}
		}
		ids, created, err := u.write(ctx, tx, w.rows)
		if err != nil {
			return err
		}
		if err := record.AddDaily(tx, imp.UserID, s.db.Now(), record.Daily{record.DailyContactsAdded: created}); err != nil {
			return importFailed("count the contacts added", err)
		}
		imp.Created += created
		imp.Updated += int64(len(ids)) - created
		pendingIDs = append(pendingIDs, ids...)
		last = w
		if inTx++; inTx >= u.txBatches() {
			if err := commit(); err != nil {
				return err
			}
		}
	}
}

// write upserts one batch in tx and brings the segments of the type up
// to date for its contacts. It returns the contacts' ids.
func (u *upserter) write(ctx context.Context, tx *gorm.DB, batch []importRow) ([]int64, int64, error) {
	imp := u.imp
	now := tx.NowFunc()
	args := make([]any, 0, sharedParams+len(batch)*(len(importColumns)-5))
	args = append(args, imp.UserID, imp.ContactTypeID, now, consentJSON(imp))
	for i := range batch {
		r := &batch[i]
		c := &r.c
		var alt any
		if c.AltEmail != nil {
			alt = *c.AltEmail
		}
		args = append(args, c.FirstName, c.LastName, c.Email, alt, c.Country, c.State, c.City,
			c.AddressLine1, c.AddressLine2, c.StateProvinceRegion, c.PostalCode, customJSON(r.custom))
	}
	var rows *sql.Rows
	var err error
	if sqlTx, ok := tx.Statement.ConnPool.(*sql.Tx); ok && u.full != nil && len(batch) == importBatch {
		rows, err = sqlTx.StmtContext(ctx, u.full).QueryContext(ctx, args...)
	} else {
		rows, err = tx.Statement.ConnPool.QueryContext(ctx, u.statement(len(batch)), args...)
	}
	if err != nil {
		return nil, 0, importFailed("upsert a batch", err)
	}
	ids := make([]int64, 0, len(batch))
	var created int64
	if err := scanIDs(rows, &ids, &created); err != nil {
		return nil, 0, err
	}
	if err := importTags(ctx, tx, imp, batch); err != nil {
		return nil, 0, importFailed("add the tags", err)
	}
	if err := u.s.segments.refreshContacts(ctx, tx, imp.UserID, imp.ContactTypeID, ids); err != nil {
		return nil, 0, importFailed("refresh the segments", err)
	}
	return ids, created, nil
}

func scanIDs(rows *sql.Rows, ids *[]int64, created *int64) error {
	defer rows.Close()
	for rows.Next() {
		var id int64
		var isNew bool
		if err := rows.Scan(&id, &isNew); err != nil {
			return importFailed("read the written ids", err)
		}
		*ids = append(*ids, id)
		if isNew {
			*created++
		}
	}
	if err := rows.Err(); err != nil {
		return importFailed("read the written ids", err)
	}
	return nil
}

// WriteSample writes the sample CSV of the account: the header row (the
// reserved fields, then the account's custom fields) and one example row.
func (s *Imports) WriteSample(ctx context.Context, accountID int64, w io.Writer) error {
	customs, err := customFields(ctx, s.db.R, accountID)
	if err != nil {
		return fmt.Errorf("imports: custom fields of account %d: %w", accountID, err)
	}
	header := []string{"email", "first_name", "last_name", "alt_email", "country", "state", "city",
		"address_line1", "address_line2", "state_province_region", "postal_code"}
	example := []string{"jane.doe@example.com", "Jane", "Doe", "", "US", "California", "San Francisco",
		"1 Market Street", "Suite 100", "CA", "94105"}
	for _, f := range customs {
		header = append(header, f.FieldName)
		switch f.FieldType {
		case "number":
			example = append(example, "42")
		case "datetime-local":
			example = append(example, "2026-01-31T09:30")
		default:
			example = append(example, "example "+strings.ReplaceAll(f.FieldName, "_", " "))
		}
	}
	cw := csv.NewWriter(w)
	_ = cw.Write(header)
	_ = cw.Write(example)
	cw.Flush()
	return cw.Error()
}

// FailAbandoned marks failed the imports still "running" that no process
// has advanced for longer than idle: their process stopped (a restart, a
// crash). A running import records progress at least every few seconds
// while rows arrive.
func (s *Imports) FailAbandoned(ctx context.Context, idle time.Duration) (int64, error) {
	now := s.db.Now()
	res := s.db.W.WithContext(ctx).Model(&models.Import{}).
		Where("status = ? AND updated_at < ?", "running", now.Add(-idle)).
		Updates(map[string]any{"status": "failed", "message": "The import stopped: herald was restarted before it finished. Import the file again: rows already imported are updated, not duplicated.",
			"finished_at": now, "updated_at": now})
	if res.Error != nil {
		return 0, fmt.Errorf("imports: fail abandoned imports: %w", res.Error)
	}
	return res.RowsAffected, nil
}

// newImportWriter makes the writer of a CSV import: on PostgreSQL COPY into a
// staging table and one set-based merge per batch (imports_pg.go), on
// SQLite a prepared upsert per batch (imports.go).
func newImportWriter(ctx context.Context, s *Imports, imp *models.Import, cols headerMap) (importWriter, error) {
	if s.db.SQL().Postgres {
		return newPGImport(ctx, s, imp, cols)
	}
	return &upserter{s: s, imp: imp, cols: cols}, nil
}

// importConsent is the consent record of an import's new contacts: the
// import, the basis its caller chose (the API's: api), when it started.
func importConsent(imp *models.Import, now time.Time) models.Consent {
	c := imp.Consent
	c.Source, c.ImportID = models.ConsentImport, imp.ID
	if c.Basis = core.Clip(strings.TrimSpace(c.Basis)); c.Basis == "" {
		c.Basis = models.ConsentAPI
	}
	c.IP, c.UserAgent = core.Clip(c.IP), core.Clip(c.UserAgent)
	at := models.NewTimestamp(now)
	c.At = &at
	return c
}

// consentJSON is the import's consent record as stored.
func consentJSON(imp *models.Import) string {
	v, _ := imp.Consent.Value()
	s, _ := v.(string)
	return s
}

// dropErased takes out of a batch the rows of addresses the account
// erased at the person's request: each is rejected with MsgErased.
func (s *Imports) dropErased(ctx context.Context, imp *models.Import, batch []importRow, reject func(int64, string)) ([]importRow, error) {
	if s.erasures == nil || len(batch) == 0 {
		return batch, nil
	}
	emails := make([]string, len(batch))
	for i := range batch {
		emails[i] = batch[i].c.Email
	}
	erased, err := s.erasures.erasedOf(ctx, imp.UserID, emails)
	if err != nil {
		return batch, importFailed("read the erased addresses", err)
	}
	if len(erased) == 0 {
		return batch, nil
	}
	kept := batch[:0]
	for _, r := range batch {
		if erased[r.c.Email] {
			reject(r.line, MsgErased)
			continue
		}
		kept = append(kept, r)
	}
	return kept, nil
}
