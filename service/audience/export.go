package audience

import (
	"context"
	"database/sql"
	"encoding/csv"
	"fmt"
	"io"
	"strconv"
	"strings"

	"gorm.io/gorm"

	"herald/models"
	"herald/service/core"
	"herald/service/internal/record"
)

// ExportInput names what a contacts export reads: one contact type or one
// segment (decisions.md 9), as given in the query string.
type ExportInput struct {
	ContactTypeID string
	SegmentID     string
}

// Export is a checked contacts export, ready to be written.
type Export struct {
	db        *core.DB
	accountID int64
	typeID    int64 // one of typeID and segmentID is set
	segmentID int64
	customs   []models.Field
}

// exportBatch is how many rows one query of an export reads: the export
// holds one batch at a time, so memory stays flat whatever the audience.
const exportBatch = 1000

// ExportColumns are the reserved columns of an export, in the order of the
// CSV sample and of decisions.md 9 (email first); the account's custom
// fields follow by name. The file imports back as it is.
var ExportColumns = []string{"email", "first_name", "last_name", "alt_email", "country", "state", "city",
	"address_line1", "address_line2", "state_province_region", "postal_code"}

// ConsentColumns end an export's header, after the custom fields (the
// columns before keep their place): the contact's status and how it came
// (decisions.md 10). An address added to a segment by hand has no
// contact, so they are empty on its row. An import of the file notes them
// as ignored columns: consent is what happened in this account, never
// taken from a file.
var ConsentColumns = []string{"status", "consent_source", "consent_id", "consent_basis", "consent_at", "consent_ip", "consent_confirmed_at"}

// consentCells writes the ConsentColumns of a contact into rec.
func consentCells(rec []string, status string, doc models.JSONText) {
	for i := range rec {
		rec[i] = ""
	}
	rec[0] = status
	if doc == "" {
		return
	}
	var c models.Consent
	if err := c.Scan(string(doc)); err != nil {
		return // a document herald did not write: the rest stays empty
	}
	rec[1], rec[3], rec[5] = c.Source, c.Basis, c.IP
	switch {
	case c.FormID > 0:
		rec[2] = formatID(c.FormID)
	case c.ImportID > 0:
		rec[2] = formatID(c.ImportID)
	}
	if c.At != nil {
		rec[4] = c.At.UTC().Format(models.TimestampLayout)
	}
	if c.ConfirmedAt != nil {
		rec[6] = c.ConfirmedAt.UTC().Format(models.TimestampLayout)
	}
}

// Export checks an export of the account's contacts of one contact type or
// one segment. Errors: validation (neither or both given), ErrNotFound (a
// missing, malformed or another account's type or segment).
func (s *Contacts) Export(ctx context.Context, accountID int64, in ExportInput) (*Export, error) {
	typ, seg := strings.TrimSpace(in.ContactTypeID), strings.TrimSpace(in.SegmentID)
	switch {
	case typ == "" && seg == "":
		p := core.Problems{}
		p.AddReason("contact_type_id", core.ReasonRequired, "The contact type id field is required when segment id is not present.")
		p.AddReason("segment_id", core.ReasonRequired, "The segment id field is required when contact type id is not present.")
		return nil, p.Err()
	case typ != "" && seg != "":
		p := core.Problems{}
		p.Add("contact_type_id", "The contact type id field prohibits segment id from being present.")
		return nil, p.Err()
	}
	e := &Export{db: s.db, accountID: accountID}
	if typ != "" {
		id, err := core.ParseID(typ)
		if err != nil {
			return nil, err
		}
		ct, err := contactType(ctx, s.db.R, accountID, id)
		if err != nil {
			return nil, err
		}
		e.typeID = ct.ID
	} else {
		id, err := core.ParseID(seg)
		if err != nil {
			return nil, err
		}
		sg, err := segment(ctx, s.db.R, accountID, id)
		if err != nil {
			return nil, err
		}
		e.segmentID = sg.ID
	}
	customs, err := customFields(ctx, s.db.R, accountID)
	if err != nil {
		return nil, fmt.Errorf("exports: custom fields of account %d: %w", accountID, err)
	}
	e.customs = customs
	return e, nil
}

// Header is the export's first row: ExportColumns, the custom fields,
// then ConsentColumns.
func (e *Export) Header() []string {
	h := append([]string{}, ExportColumns...)
	for _, f := range e.customs {
		h = append(h, f.FieldName)
	}
	return append(h, ConsentColumns...)
}

// WriteCSV writes the header and every contact of the export, read by
// keyset batches in id order. Cells that a spreadsheet would run as a
// formula are neutralised (SafeCell). An error cuts the file short.
func (e *Export) WriteCSV(ctx context.Context, w io.Writer) error {
	return e.writeCSV(ctx, w, nil)
}

// writeCSV is WriteCSV, calling progress (when not nil) with the rows of
// each batch once they are written to w: the background export's
// progress and lease (export_jobs.go) go with the same writer.
func (e *Export) writeCSV(ctx context.Context, w io.Writer, progress func(rows int) error) error {
	cw := csv.NewWriter(w)
	if err := cw.Write(e.Header()); err != nil {
		return err
	}
	rec := make([]string, len(ExportColumns)+len(e.customs)+len(ConsentColumns))
	consent := rec[len(ExportColumns)+len(e.customs):]
	var last int64
	for {
		n, err := e.batch(ctx, last, func(id int64, cols []sql.NullString, custom models.JSONText, status string, doc models.JSONText) error {
			last = id
			for i, c := range cols {
				rec[i] = core.SafeCell(c.String)
			}
			rec[4] = core.SafeCell(record.CountryName(cols[4].String))
			stored := record.ParseCustom(string(custom))
			for i, f := range e.customs {
				rec[len(ExportColumns)+i] = core.SafeCell(stored[f.FieldName])
			}
			consentCells(consent, status, doc)
			for i := range consent {
				consent[i] = core.SafeCell(consent[i])
			}
			return cw.Write(rec)
		})
		if err != nil {
			return err
		}
		cw.Flush()
		if err := cw.Error(); err != nil {
			return err
		}
		if progress != nil {
			if err := progress(n); err != nil {
				return err
			}
		}
		if n < exportBatch {
			return nil
		}
	}
}

// batch reads up to exportBatch rows after id last and calls fn for each
// (the row's id, its ExportColumns in order, its custom values, its status
// and consent document: empty for an address without a contact). It
// returns how many rows it read. The rows are read with the query closed
// before the next batch, so no connection is held between batches.
func (e *Export) batch(ctx context.Context, last int64, fn func(int64, []sql.NullString, models.JSONText, string, models.JSONText) error) (int, error) {
	var q *gorm.DB
	if e.typeID > 0 {
		// contacts_user_type (user_id, contact_type_id, id) serves it.
		q = e.db.R.WithContext(ctx).Table("contacts").
			Select("id, email, first_name, last_name, alt_email, country, state, city, address_line1, address_line2, state_province_region, postal_code, custom_fields, status, consent").
			Where("user_id = ? AND contact_type_id = ? AND deleted_at IS NULL AND id > ?", e.accountID, e.typeID, last).
			Order("id").Limit(exportBatch)
	} else {
		// segment_emails_segment (segment_id, id) serves it; an address
		// added by hand has no contact: its names and address only.
		q = e.db.R.WithContext(ctx).Table("segment_emails e").
			Select(`e.id, COALESCE(c.email, e.email), COALESCE(c.first_name, e.first_name), COALESCE(c.last_name, e.last_name),
				c.alt_email, c.country, c.state, c.city, c.address_line1, c.address_line2, c.state_province_region, c.postal_code, c.custom_fields, c.status, c.consent`).
			Joins("LEFT JOIN contacts c ON c.id = e.contact_id").
			Where("e.segment_id = ? AND e.user_id = ? AND e.id > ?", e.segmentID, e.accountID, last).
			Order("e.id").Limit(exportBatch)
	}
	rows, err := q.Rows()
	if err != nil {
		return 0, fmt.Errorf("exports: read contacts after id %d: %w", last, err)
	}
	type row struct {
		id     int64
		cols   [11]sql.NullString
		custom models.JSONText
		status sql.NullString
		doc    sql.NullString
	}
	// The batch is read whole before fn runs: on SQLite's small reader
	// pool a writer of the CSV that blocks on a slow client must not hold
	// the connection.
	batch := make([]row, 0, exportBatch)
	for rows.Next() {
		var r row
		dst := []any{&r.id}
		for i := range r.cols {
			dst = append(dst, &r.cols[i])
		}
		dst = append(dst, &r.custom, &r.status, &r.doc)
		if err := rows.Scan(dst...); err != nil {
			rows.Close()
			return 0, fmt.Errorf("exports: read contacts after id %d: %w", last, err)
		}
		batch = append(batch, r)
	}
	err = rows.Err()
	rows.Close()
	if err != nil {
		return 0, fmt.Errorf("exports: read contacts after id %d: %w", last, err)
	}
	for i := range batch {
		if err := fn(batch[i].id, batch[i].cols[:], batch[i].custom, batch[i].status.String, models.JSONText(batch[i].doc.String)); err != nil {
			return 0, err
		}
	}
	return len(batch), nil
}

// formatID is an id as text (for logs and file names).
func formatID(id int64) string { return strconv.FormatInt(id, 10) }

// FileName is a name for the export's file: contacts-type-<id>.csv or
// contacts-segment-<id>.csv.
func (e *Export) FileName() string {
	if e.typeID > 0 {
		return "contacts-type-" + formatID(e.typeID) + ".csv"
	}
	return "contacts-segment-" + formatID(e.segmentID) + ".csv"
}
