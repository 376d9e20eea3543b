package core

import (
	"context"
	"database/sql"
	"fmt"
	"regexp"
	"strconv"
	"strings"
	"time"

	"gorm.io/gorm"

	"herald/delivery"
	"herald/migrations"
	"herald/models"
)

// GoMigrations are the migrations written in Go, handed to goose with the
// SQL files (migrations.Go): each runs in goose's transaction for its
// version, with GORM over that transaction.
func (d *DB) GoMigrations() []migrations.Go {
	return []migrations.Go{
		{Version: 36, Up: d.inMigration(repairSuppressions), Down: d.inMigration(unrepairSuppressions)},
	}
}

// inMigration runs fn with GORM over goose's transaction. On SQLite the
// transaction holds the writer's one connection: fn must use tx alone.
func (d *DB) inMigration(fn func(tx *gorm.DB, dl Dialect, now time.Time) error) func(context.Context, *sql.Tx) error {
	return func(ctx context.Context, sqlTx *sql.Tx) error {
		tx := d.W.Session(&gorm.Session{NewDB: true, Context: ctx})
		tx.Statement.ConnPool = sqlTx // as gorm's own Begin does
		return fn(tx, d.SQL(), d.Now())
	}
}

// liftedSuppressionsTable is the table of what the repair lifted, listed
// by the console newest first (user_id, lifted_at, id). The column types
// are the dialect's (dialect.ddl).
var liftedSuppressionsTable = []string{`CREATE TABLE lifted_suppressions (
    id            {id},
    user_id       {bigint} NOT NULL REFERENCES users (id) ON DELETE CASCADE,
    email         TEXT NOT NULL,
    reason        TEXT NOT NULL DEFAULT '',
    send_id       {bigint},
    status_code   TEXT NOT NULL DEFAULT '',
    diagnostic    TEXT NOT NULL DEFAULT '',
    source        TEXT NOT NULL DEFAULT '',
    reason_code   TEXT NOT NULL DEFAULT '',
    kind          TEXT NOT NULL DEFAULT '',
    suppressed_at {time} NOT NULL,
    lifted_at     {time} NOT NULL
)`,
	`CREATE INDEX lifted_suppressions_account ON lifted_suppressions (user_id, lifted_at, id)`,
}

// repairBatch is how many suppressions the repair reads at a time (by id):
// memory stays flat however long the list, and one batch's multi-row
// inserts stay far under SQLite's 32,766 bind variables (13 a row).
const repairBatch = 500

// repairActor is the audit log's author of the repair's lines.
const repairActor = "Herald (bounce rules' repair)"

// storedSuppression is a suppression as the repair reads it: its columns
// named here, not models.Suppression's, which may grow columns later
// migrations add.
type storedSuppression struct {
	ID         int64
	UserID     int64
	Email      string
	Reason     string
	SendID     *int64
	StatusCode string
	Diagnostic string
	Source     string
	CreatedAt  models.Timestamp
}

// repairSuppressions (migration 00036) reads every suppression an older
// herald made through the one verdict rule again, and lifts those it would
// not make: herald used to suppress on failures that did not say the
// mailbox was gone (a policy refusal, a retry window run out, a bounce
// text without a code). Each lifted address gets a line in its account's
// audit log and a row in lifted_suppressions; a suppression that stays
// keeps the rule's reason in reason_code. Suppressions of a shape herald's
// recorders never wrote (an operator's, a later path's) and those of the
// soft-bounce limit, a rule that still holds, stay as they are.
//
// It reads by id in batches, only rows without a reason_code (the rows
// the recorders write since 00035 carry one), so running it over its own
// result changes nothing.
func repairSuppressions(tx *gorm.DB, d Dialect, now time.Time) error {
	for _, q := range liftedSuppressionsTable {
		if err := tx.Exec(d.ddl(q)).Error; err != nil {
			return fmt.Errorf("repair suppressions: create lifted_suppressions: %w", err)
		}
	}
	liftedAt := models.NewTimestamp(now)
	var last int64
	for {
		var rows []storedSuppression
		if err := tx.Raw(`SELECT id, user_id, email, reason, send_id, status_code, diagnostic, source, created_at
			FROM suppressions WHERE id > ? AND reason_code = '' ORDER BY id LIMIT ?`, last, repairBatch).Scan(&rows).Error; err != nil {
			return fmt.Errorf("repair suppressions: read after id %d: %w", last, err)
		}
		if err := repairBatchOf(tx, rows, liftedAt); err != nil {
			return err
		}
		if len(rows) < repairBatch {
			return nil
		}
		last = rows[len(rows)-1].ID
	}
}

// repairBatchOf applies the readings of one batch: reason codes by
// reason, a ledger row's reply where it kept none, the lifted rows and
// their audit lines in one statement each, then their deletion.
func repairBatchOf(tx *gorm.DB, rows []storedSuppression, liftedAt models.Timestamp) error {
	keep := map[string][]int64{} // reason code → ids
	var lifted []storedSuppression
	var readings []suppressionReading
	for _, s := range rows {
		r, ok := readSuppression(s)
		switch {
		case !ok:
			continue
		case r.kind == delivery.ReportHardBounce || r.softLimit:
			if r.reply != "" && s.StatusCode == "" && s.Diagnostic == "" {
				if err := tx.Exec("UPDATE suppressions SET reason_code = ?, status_code = ?, diagnostic = ? WHERE id = ?",
					r.reason, Truncate(r.status, 16), Truncate(r.reply, 1000), s.ID).Error; err != nil {
					return fmt.Errorf("repair suppressions: keep %d: %w", s.ID, err)
				}
				continue
			}
			keep[r.reason] = append(keep[r.reason], s.ID)
		default:
			lifted = append(lifted, s)
			readings = append(readings, r)
		}
	}
	for reason, ids := range keep {
		if err := tx.Exec("UPDATE suppressions SET reason_code = ? WHERE id IN ?", reason, ids).Error; err != nil {
			return fmt.Errorf("repair suppressions: reason %s: %w", reason, err)
		}
	}
	if len(lifted) == 0 {
		return nil
	}
	var (
		rowsSQL, auditSQL   strings.Builder
		rowsArgs, auditArgs []any
		ids                 []int64
	)
	rowsSQL.WriteString(`INSERT INTO lifted_suppressions (user_id, email, reason, send_id, status_code, diagnostic, source,
		reason_code, kind, suppressed_at, lifted_at) VALUES `)
	auditSQL.WriteString("INSERT INTO audit_log (user_id, member_id, actor, action, target, detail, created_at) VALUES ")
	for i, s := range lifted {
		r := readings[i]
		if i > 0 {
			rowsSQL.WriteString(", ")
			auditSQL.WriteString(", ")
		}
		rowsSQL.WriteString("(?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)")
		rowsArgs = append(rowsArgs, s.UserID, s.Email, s.Reason, s.SendID, s.StatusCode, s.Diagnostic, s.Source,
			r.reason, r.kind.String(), s.CreatedAt, liftedAt)
		auditSQL.WriteString("(?, 0, ?, ?, ?, ?, ?)")
		auditArgs = append(auditArgs, s.UserID, repairActor, string(AuditSuppressionLifted), Clip(s.Email),
			Clip("was: "+ReadRefusal(s.Reason).String()+"; now read as "+r.reason+" ("+kindWords(r.kind)+")"), liftedAt.UnixMilli())
		ids = append(ids, s.ID)
	}
	if err := tx.Exec(rowsSQL.String(), rowsArgs...).Error; err != nil {
		return fmt.Errorf("repair suppressions: keep %d lifted: %w", len(lifted), err)
	}
	if err := tx.Exec(auditSQL.String(), auditArgs...).Error; err != nil {
		return fmt.Errorf("repair suppressions: audit %d lifted: %w", len(lifted), err)
	}
	if err := tx.Exec("DELETE FROM suppressions WHERE id IN ?", ids).Error; err != nil {
		return fmt.Errorf("repair suppressions: lift %d: %w", len(ids), err)
	}
	return nil
}

// unrepairSuppressions steps 00036 down: the lifted addresses are
// suppressed again (an address suppressed since keeps its newer row), and
// the table goes. The audit lines stay: they tell what happened. (WHERE
// TRUE: SQLite would read the ON of ON CONFLICT as a join's after a bare
// SELECT … FROM.)
func unrepairSuppressions(tx *gorm.DB, _ Dialect, _ time.Time) error {
	if err := tx.Exec(`INSERT INTO suppressions (user_id, email, reason, send_id, status_code, diagnostic, source, created_at)
		SELECT user_id, email, reason, send_id, status_code, diagnostic, source, suppressed_at FROM lifted_suppressions WHERE TRUE ORDER BY id
		ON CONFLICT (user_id, email) DO NOTHING`).Error; err != nil {
		return fmt.Errorf("repair suppressions: suppress again: %w", err)
	}
	if err := tx.Exec("DROP TABLE lifted_suppressions").Error; err != nil {
		return fmt.Errorf("repair suppressions: drop lifted_suppressions: %w", err)
	}
	return nil
}

// suppressionReading is how the one verdict rule reads a stored
// suppression.
type suppressionReading struct {
	reason string              // delivery.Reason… constant
	kind   delivery.ReportKind // ReportHardBounce: the suppression stands
	// softLimit: made by the soft-bounce limit, which still holds: it
	// stays, whatever its last report reads as.
	softLimit bool
	// status and reply: for a suppression the ledger made, its enhanced
	// status code (else the reply code) and the relay's reply, which it
	// kept only inside its reason.
	status, reply string
}

// Shapes of the reasons older recorders stored.
var (
	// The ledger: SendError.Error(), "delivery: permanent failure at
	// rcpt: 550 5.1.1 User unknown"; before 00013 without the enhanced
	// code; "temporary" when the retry window ran out; no code when there
	// was no answer.
	ledgerReason = regexp.MustCompile(`(?s)^delivery: (permanent|temporary) failure at ([a-z]+): (.*)$`)
	ledgerReply  = regexp.MustCompile(`(?s)^([2-5][0-9][0-9])(?: ([245])\.([0-9]{1,3})\.([0-9]{1,3}))?(?:[ \n](.*))?$`)
	// The soft-bounce limit: "3 soft bounces within 30 days; the last: …".
	softLimitReason = regexp.MustCompile(`^[0-9]+ soft bounces within [0-9]+ days; the last: `)
)

// ledgerStages are the stages a SendError names.
var ledgerStages = map[string]bool{
	delivery.StageEnvelope: true, delivery.StageConnect: true, delivery.StageAuth: true, delivery.StageMail: true,
	delivery.StageRcpt: true, delivery.StageData: true, delivery.StageStore: true,
}

// reportSources are the sources of the reports a feedback recorder
// suppressed on; their status code and diagnostic are kept in columns of
// their own.
var reportSources = map[string]bool{
	delivery.SourceDSN: true, delivery.SourceText: true, delivery.SourceARF: true, delivery.SourceSES: true,
	delivery.SourceSendGrid: true, delivery.SourcePostmark: true, delivery.SourceMailgun: true,
}

// readSuppression reads a stored suppression again; ok is false for a
// shape no recorder of herald's wrote (it is left alone).
func readSuppression(s storedSuppression) (r suppressionReading, ok bool) {
	switch {
	case s.Source == "soft" || softLimitReason.MatchString(s.Reason):
		j := delivery.Judge(delivery.Failure{Status: s.StatusCode, Diagnostic: s.Diagnostic})
		return suppressionReading{reason: j.Reason, kind: j.Kind, softLimit: true}, true
	case strings.HasPrefix(s.Reason, "delivery: ") && (s.Source == "" || s.Source == "smtp"):
		return readLedgerReason(s.Reason)
	case reportSources[s.Source]:
		j := delivery.Judge(delivery.Failure{Status: s.StatusCode, Diagnostic: s.Diagnostic})
		return suppressionReading{reason: j.Reason, kind: j.Kind}, true
	}
	return r, false
}

// readLedgerReason reads the ledger's reason text as the ledger reads the
// relay's answer today: delivery.ClassifyError (a suppression only for
// VerdictBounce; at the end of the retry window, Exhausted), with
// delivery.Judge's reason. The kind follows the verdict where they differ
// (a policy code is a block, whatever the words).
func readLedgerReason(reason string) (suppressionReading, bool) {
	m := ledgerReason.FindStringSubmatch(reason)
	if m == nil || !ledgerStages[m[2]] {
		return suppressionReading{}, false
	}
	se := &delivery.SendError{Temporary: m[1] == "temporary", Stage: m[2], Message: m[3]}
	if p := ledgerReply.FindStringSubmatch(m[3]); p != nil {
		se.Code, _ = strconv.Atoi(p[1])
		if p[2] != "" {
			for i := range 3 {
				se.Enhanced[i], _ = strconv.Atoi(p[2+i])
			}
		}
		se.Message = p[5]
	}
	v := delivery.ClassifyError(se, se.Temporary)
	j := delivery.Judge(delivery.Failure{Stage: se.Stage, Code: se.Code, Status: se.Enhanced.String(), Diagnostic: se.Message, Temporary: se.Temporary})
	r := suppressionReading{reason: j.Reason, kind: j.Kind, status: j.Status}
	switch {
	case v == delivery.VerdictBounce:
		r.kind = delivery.ReportHardBounce
	case v == delivery.VerdictBlock:
		r.kind = delivery.ReportBlock
	case r.kind == delivery.ReportHardBounce:
		r.kind = delivery.ReportSoftBounce
	}
	if r.status == "" && se.Code != 0 {
		r.status = strconv.Itoa(se.Code)
	}
	r.reply = se.Reply()
	return r, true
}

// kindWords is a report kind in words: "soft bounce".
func kindWords(k delivery.ReportKind) string { return strings.ReplaceAll(k.String(), "_", " ") }
