package audience

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os"
	"time"

	"gorm.io/gorm"

	"herald/models"
	"herald/service/core"
	"herald/service/identity"
)

// ExportKind is what a background export writes.
type ExportKind string

// The kinds of background export.
const (
	ExportContactsType    ExportKind = "contacts_type"    // the contacts of one contact type
	ExportContactsSegment ExportKind = "contacts_segment" // the contacts of one segment
	ExportSendRecipients  ExportKind = "send_recipients"  // a send's recipients and what became of each mail
)

// The states of a background export.
const (
	ExportQueued  = "queued"
	ExportRunning = "running"
	ExportDone    = "done"
	ExportFailed  = "failed"
)

const (
	// MaxActiveExports is how many exports an account may have queued or
	// running at once: an export reads the whole audience, so a few at a
	// time keep one account from filling the runner's queue.
	MaxActiveExports = 3
	// ExportKeep is how long a finished export's file is kept.
	ExportKeep = 7 * 24 * time.Hour
	// exportPartSize is the size of one stored part of a file: the
	// writer and the download each hold one part at a time.
	exportPartSize = 1 << 20
	// exportLease is how long a claim holds an export; the writer renews
	// it with each progress update, so only a dead process lets it lapse.
	exportLease = time.Minute
	// exportProgressEvery spaces the progress updates: one write per
	// batch of 1,000 rows would cost a durable commit each on PostgreSQL.
	exportProgressEvery = 250 * time.Millisecond
	// ExportsShown is how many exports the Exports page lists.
	ExportsShown = 50
)

// ErrTooManyExports refuses an export while the account already has
// MaxActiveExports queued or running.
var ErrTooManyExports = &core.Error{Code: core.CodeConflict,
	Message: fmt.Sprintf("You already have %d exports under way. Wait for one to finish, then start this one again.", MaxActiveExports)}

// errExportLost stops a writer whose export another process took over
// (its lease had run out): what it wrote is not the file any more.
var errExportLost = errors.New("export taken over by another process")

// exportProgressHook, when set (tests), is called with each rows_done a
// writer records.
var exportProgressHook func(jobID, rowsDone int64)

// SendRecipients is what an export of a send's recipients needs of the
// sends: the send, and its recipients written as CSV with progress.
type SendRecipients interface {
	Get(ctx context.Context, accountID int64, utr string) (*models.SingleSend, error)
	WriteRecipientsCSVProgress(ctx context.Context, accountID int64, ss *models.SingleSend, w io.Writer, progress func(rows int) error) error
}

// Exports runs the exports that are too large for one request: a job is
// started by a person (Start…), claimed by a runner in any herald process
// (Run, RunDue), written by the same CSV writers as the streamed exports
// into parts of about 1 MB stored in the database, and downloaded from
// any process (Download) until it expires.
type Exports struct {
	db       *core.DB
	contacts *Contacts
	sends    SendRecipients
	audit    *identity.Audit
	now      func() time.Time
	worker   string // this process's name in the claims
	log      *slog.Logger
	wake     chan struct{}

	progressEvery time.Duration
	lastExpire    time.Time
}

func NewExports(db *core.DB, contacts *Contacts, sends SendRecipients, audit *identity.Audit, now func() time.Time) *Exports {
	host, _ := os.Hostname()
	b := make([]byte, 4)
	_, _ = rand.Read(b)
	return &Exports{db: db, contacts: contacts, sends: sends, audit: audit, now: now,
		worker: fmt.Sprintf("%s:%d:%s", host, os.Getpid(), hex.EncodeToString(b)),
		log:    slog.Default(), wake: make(chan struct{}, 1), progressEvery: exportProgressEvery}
}

// StartContacts queues an export of the account's contacts of one contact
// type or one segment, checked as the streamed export is. Errors: as
// Contacts.Export's (validation, ErrNotFound for another account's type
// or segment), ErrTooManyExports.
func (x *Exports) StartContacts(ctx context.Context, accountID int64, in ExportInput) (*models.ExportJob, error) {
	exp, err := x.contacts.Export(ctx, accountID, in)
	if err != nil {
		return nil, err
	}
	job := &models.ExportJob{FileName: exp.FileName()}
	if exp.typeID > 0 {
		ct, err := contactType(ctx, x.db.R, accountID, exp.typeID)
		if err != nil {
			return nil, err
		}
		job.Kind, job.TargetID, job.Name = string(ExportContactsType), ct.ID, "Contacts of the type "+ct.Name
	} else {
		sg, err := segment(ctx, x.db.R, accountID, exp.segmentID)
		if err != nil {
			return nil, err
		}
		job.Kind, job.TargetID, job.Name = string(ExportContactsSegment), sg.ID, "Contacts of the segment "+sg.SegmentName
	}
	return x.start(ctx, accountID, job)
}

// StartRecipients queues an export of the recipients of the account's
// send utr. Errors: ErrNotFound, ErrTooManyExports.
func (x *Exports) StartRecipients(ctx context.Context, accountID int64, utr string) (*models.ExportJob, error) {
	ss, err := x.sends.Get(ctx, accountID, utr)
	if err != nil {
		return nil, err
	}
	job := &models.ExportJob{Kind: string(ExportSendRecipients), TargetID: ss.ID,
		Name: "Recipients of the send " + ss.SingleSendName, FileName: "send-" + ss.Utr + "-recipients.csv"}
	return x.start(ctx, accountID, job)
}

// start writes the queued job under the account's cap and logs it.
func (x *Exports) start(ctx context.Context, accountID int64, job *models.ExportJob) (*models.ExportJob, error) {
	job.UserID, job.State, job.CreatedAt = accountID, ExportQueued, x.now().UnixMilli()
	if who, ok := core.ActorOf(ctx); ok {
		job.MemberID = who.MemberID
	}
	err := x.db.W.WithContext(ctx).Transaction(func(tx *gorm.DB) error {
		if err := x.db.SQL().LockAccount(tx, accountID); err != nil {
			return err
		}
		var active int64
		// export_jobs_user (user_id, id) serves it: an account's rows are few.
		if err := tx.Model(&models.ExportJob{}).Where("user_id = ? AND state IN ?", accountID, []string{ExportQueued, ExportRunning}).
			Count(&active).Error; err != nil {
			return fmt.Errorf("exports: count the active exports of account %d: %w", accountID, err)
		}
		if active >= MaxActiveExports {
			return ErrTooManyExports
		}
		return tx.Create(job).Error
	})
	if err != nil {
		// ErrTooManyExports leaves as it is: the console asserts its type.
		return nil, core.Wrapf(err, "exports: queue an export of account %d", accountID)
	}
	if err := x.audit.Record(ctx, accountID, core.AuditExportStarted, job.Name, job.FileName); err != nil {
		x.log.Warn("audit log: export started", "export", job.ID, "err", err)
	}
	select {
	case x.wake <- struct{}{}:
	default:
	}
	return job, nil
}

// List returns the account's latest ExportsShown exports, newest first,
// and whether one of them is still queued or running.
func (x *Exports) List(ctx context.Context, accountID int64) ([]models.ExportJob, bool, error) {
	var jobs []models.ExportJob
	err := x.db.R.WithContext(ctx).Where("user_id = ?", accountID).Order("id DESC").Limit(ExportsShown).Find(&jobs).Error
	if err != nil {
		return nil, false, fmt.Errorf("exports: list of account %d: %w", accountID, err)
	}
	active := false
	for _, j := range jobs {
		if j.State == ExportQueued || j.State == ExportRunning {
			active = true
		}
	}
	return jobs, active, nil
}

// Get returns the account's export id. Errors: ErrNotFound.
func (x *Exports) Get(ctx context.Context, accountID, id int64) (*models.ExportJob, error) {
	var job models.ExportJob
	if err := x.db.R.WithContext(ctx).Where("id = ? AND user_id = ?", id, accountID).First(&job).Error; err != nil {
		return nil, core.NotFoundOr(err, "exports: export %d", id)
	}
	return &job, nil
}

// Download returns the account's finished export id and a writer of its
// file, which reads the parts one at a time in order (memory flat). An
// export not finished, failed, expired or of another account is
// ErrNotFound. An error while writing (the export expired meanwhile) cuts
// the file short.
func (x *Exports) Download(ctx context.Context, accountID, id int64) (*models.ExportJob, func(context.Context, io.Writer) error, error) {
	job, err := x.Get(ctx, accountID, id)
	if err != nil {
		return nil, nil, err
	}
	if job.State != ExportDone {
		return nil, nil, core.ErrNotFound
	}
	write := func(ctx context.Context, w io.Writer) error {
		for seq := int64(0); seq < job.Parts; seq++ {
			var data []byte
			// The primary key (export_id, seq) serves it.
			row := x.db.R.WithContext(ctx).Raw("SELECT data FROM export_parts WHERE export_id = ? AND seq = ?", job.ID, seq).Row()
			if err := row.Scan(&data); err != nil {
				return fmt.Errorf("export %d part %d: %w", job.ID, seq, err)
			}
			if _, err := w.Write(data); err != nil {
				return err
			}
		}
		return nil
	}
	return job, write, nil
}

// Run claims and writes due exports until ctx ends: every tick, at once
// when this process started one, and it drops expired exports once a
// minute. Started by `herald serve`.
func (x *Exports) Run(ctx context.Context, tick time.Duration) {
	t := time.NewTicker(tick)
	defer t.Stop()
	for {
		if _, err := x.RunDue(ctx); err != nil && ctx.Err() == nil {
			x.log.Error("exports", "err", err)
		}
		if now := x.now(); now.Sub(x.lastExpire) >= time.Minute {
			if _, err := x.Expire(ctx); err != nil && ctx.Err() == nil {
				x.log.Error("exports: expiry", "err", err)
			}
			x.lastExpire = now
		}
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		case <-x.wake:
		}
	}
}

// RunDue claims due exports one at a time (queued ones, and running ones
// whose process died: their lease ran out) and writes each; it returns
// how many it finished (done or failed). Processes on one PostgreSQL
// database pass each other's claims (SKIP LOCKED). When ctx ends, the
// export being written is handed back to the queue.
func (x *Exports) RunDue(ctx context.Context) (int, error) {
	finished := 0
	for ctx.Err() == nil {
		job, err := x.claim(ctx)
		if err != nil || job == nil {
			return finished, err
		}
		ended, err := x.runJob(ctx, job)
		if err != nil {
			return finished, err
		}
		if ended {
			finished++
		}
	}
	return finished, ctx.Err()
}

// claim takes the oldest due export for this process: a taken-over one
// starts again from the start, its parts deleted.
func (x *Exports) claim(ctx context.Context) (*models.ExportJob, error) {
	now := x.now().UnixMilli()
	var job *models.ExportJob
	err := x.db.W.WithContext(ctx).Transaction(func(tx *gorm.DB) error {
		var ids []int64
		// export_jobs_due (lease_until) WHERE state IN (queued, running) serves it.
		if err := tx.Raw(`SELECT id FROM export_jobs WHERE state IN ('queued', 'running') AND lease_until <= ?
			ORDER BY id LIMIT 1`+x.db.SQL().SkipLocked(), now).Scan(&ids).Error; err != nil {
			return fmt.Errorf("exports: find a queued export: %w", err)
		}
		if len(ids) == 0 {
			return nil
		}
		if err := tx.Exec(`UPDATE export_jobs SET state = ?, worker = ?, lease_until = ?, attempts = attempts + 1,
			rows_done = 0, rows_total = 0, bytes = 0, parts = 0, error = '' WHERE id = ?`,
			ExportRunning, x.worker, now+exportLease.Milliseconds(), ids[0]).Error; err != nil {
			return fmt.Errorf("exports: claim export %d: %w", ids[0], err)
		}
		if err := tx.Exec("DELETE FROM export_parts WHERE export_id = ?", ids[0]).Error; err != nil {
			return fmt.Errorf("exports: clear the parts of export %d: %w", ids[0], err)
		}
		job = &models.ExportJob{}
		if err := tx.Where("id = ?", ids[0]).First(job).Error; err != nil {
			return fmt.Errorf("exports: read claimed export %d: %w", ids[0], err)
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	return job, nil
}

// runJob writes the claimed job and records its end: done, failed (its
// error kept for the page), or handed back to the queue when ctx ended.
// ended reports done or failed; err is only an error of the database
// that kept it from recording.
func (x *Exports) runJob(ctx context.Context, job *models.ExportJob) (ended bool, err error) {
	pw := &partWriter{ctx: ctx, x: x, job: job, buf: make([]byte, 0, exportPartSize)}
	err = x.write(ctx, job, pw)
	if err == nil {
		err = pw.finish(ctx)
	}
	switch {
	case err == nil:
		return true, nil
	case errors.Is(err, errExportLost):
		x.log.Warn("export taken over by another process", "export", job.ID)
		return false, nil
	case ctx.Err() != nil:
		// Shutdown: another process (or this one restarted) starts it again.
		if err := x.db.W.WithContext(context.WithoutCancel(ctx)).Exec(
			"UPDATE export_jobs SET state = ?, worker = '', lease_until = 0 WHERE id = ? AND worker = ? AND state = ?",
			ExportQueued, job.ID, x.worker, ExportRunning).Error; err != nil {
			return false, fmt.Errorf("exports: hand export %d back to the queue: %w", job.ID, err)
		}
		return false, nil
	}
	msg := "The export failed. Start it again; if it fails again, tell your administrator."
	if core.IsNotFound(err) {
		msg = "What this export was to write no longer exists (it was deleted)."
	}
	x.log.Error("export failed", "export", job.ID, "err", err)
	now := x.now()
	err = x.db.W.WithContext(ctx).Transaction(func(tx *gorm.DB) error {
		res := tx.Exec(`UPDATE export_jobs SET state = ?, error = ?, worker = '', lease_until = 0, finished_at = ?, expires_at = ?
			WHERE id = ? AND worker = ? AND state = ?`, ExportFailed, msg, now.UnixMilli(), now.Add(ExportKeep).UnixMilli(), job.ID, x.worker, ExportRunning)
		if res.Error != nil || res.RowsAffected == 0 {
			return res.Error
		}
		return tx.Exec("DELETE FROM export_parts WHERE export_id = ?", job.ID).Error
	})
	if err != nil {
		return true, fmt.Errorf("exports: record the failure of export %d: %w", job.ID, err)
	}
	return true, nil
}

// write counts the job's rows and writes its CSV into pw through the
// writer of the streamed export of the same kind.
func (x *Exports) write(ctx context.Context, job *models.ExportJob, pw *partWriter) error {
	r := x.db.R.WithContext(ctx)
	var total int64
	switch ExportKind(job.Kind) {
	case ExportContactsType, ExportContactsSegment:
		in := ExportInput{ContactTypeID: formatID(job.TargetID)}
		count := r.Table("contacts").Where("user_id = ? AND contact_type_id = ? AND deleted_at IS NULL", job.UserID, job.TargetID)
		if job.Kind == string(ExportContactsSegment) {
			in = ExportInput{SegmentID: formatID(job.TargetID)}
			count = r.Table("segment_emails").Where("segment_id = ? AND user_id = ?", job.TargetID, job.UserID)
		}
		exp, err := x.contacts.Export(ctx, job.UserID, in)
		if err != nil {
			return err
		}
		if err := count.Count(&total).Error; err != nil {
			return fmt.Errorf("exports: count the rows of export %d: %w", job.ID, err)
		}
		if err := pw.begin(ctx, total); err != nil {
			return err
		}
		return exp.writeCSV(ctx, pw, pw.progress)
	case ExportSendRecipients:
		var ss models.SingleSend
		if err := r.Where("id = ? AND user_id = ? AND deleted_at IS NULL", job.TargetID, job.UserID).First(&ss).Error; err != nil {
			return core.NotFoundOr(err, "exports: send %d of export %d", job.TargetID, job.ID)
		}
		if err := r.Table("send_messages").Where("send_id = ? AND user_id = ?", ss.ID, job.UserID).Count(&total).Error; err != nil {
			return fmt.Errorf("exports: count the rows of export %d: %w", job.ID, err)
		}
		if err := pw.begin(ctx, total); err != nil {
			return err
		}
		return x.sends.WriteRecipientsCSVProgress(ctx, job.UserID, &ss, pw, pw.progress)
	}
	return fmt.Errorf("export %d: unknown kind %q", job.ID, job.Kind)
}

// Expire deletes the exports (and their files) whose time is up, a
// hundred at a time; it returns how many it deleted.
func (x *Exports) Expire(ctx context.Context) (int, error) {
	deleted := 0
	for {
		var ids []int64
		// export_jobs_expires (expires_at) WHERE state IN (done, failed) serves it.
		if err := x.db.R.WithContext(ctx).Raw(`SELECT id FROM export_jobs WHERE state IN ('done', 'failed') AND expires_at <= ?
			ORDER BY expires_at LIMIT 100`, x.now().UnixMilli()).Scan(&ids).Error; err != nil {
			return deleted, fmt.Errorf("exports: find expired exports: %w", err)
		}
		if len(ids) == 0 {
			return deleted, nil
		}
		err := x.db.W.WithContext(ctx).Transaction(func(tx *gorm.DB) error {
			if err := tx.Exec("DELETE FROM export_parts WHERE export_id IN ?", ids).Error; err != nil {
				return fmt.Errorf("exports: drop the parts of expired exports: %w", err)
			}
			return tx.Exec("DELETE FROM export_jobs WHERE id IN ?", ids).Error
		})
		if err != nil {
			return deleted, fmt.Errorf("exports: drop %d expired exports: %w", len(ids), err)
		}
		deleted += len(ids)
	}
}

// partWriter stores what an export's writer writes as parts of
// exportPartSize, and its progress. Every write to the database is
// guarded by the claim (worker, state running): once another process
// took the export over, the next write fails with errExportLost. A part
// is stored in the same transaction as the guard, so on PostgreSQL the
// job row stays locked until the part is in, and a takeover waits for it
// and then sees the renewed lease.
type partWriter struct {
	ctx      context.Context
	x        *Exports
	job      *models.ExportJob
	buf      []byte
	seq      int64
	bytes    int64
	rows     int64
	recorded time.Time
}

func (p *partWriter) Write(b []byte) (int, error) {
	n := len(b)
	for len(b) > 0 {
		k := min(exportPartSize-len(p.buf), len(b))
		p.buf = append(p.buf, b[:k]...)
		b = b[k:]
		if len(p.buf) == exportPartSize {
			if err := p.flush(p.ctx); err != nil {
				return 0, err
			}
		}
	}
	return n, nil
}

// guard renews the claim and records the progress in tx; errExportLost
// when the export is no longer this writer's.
func (p *partWriter) guard(tx *gorm.DB, extra string, args ...any) error {
	now := p.x.now()
	q := "UPDATE export_jobs SET lease_until = ?, rows_done = ?, bytes = ?, parts = ?" + extra + " WHERE id = ? AND worker = ? AND state = ?"
	all := append([]any{now.Add(exportLease).UnixMilli(), p.rows, p.bytes, p.seq}, args...)
	all = append(all, p.job.ID, p.x.worker, ExportRunning)
	res := tx.Exec(q, all...)
	if res.Error != nil {
		return fmt.Errorf("exports: renew the claim on export %d: %w", p.job.ID, res.Error)
	}
	if res.RowsAffected == 0 {
		return errExportLost
	}
	if exportProgressHook != nil {
		exportProgressHook(p.job.ID, p.rows)
	}
	return nil
}

// begin records the rows the export will write.
func (p *partWriter) begin(ctx context.Context, total int64) error {
	return p.guard(p.x.db.W.WithContext(ctx), ", rows_total = ?", total)
}

// progress counts the rows of a written batch and records them (and
// renews the lease) at most every progressEvery.
func (p *partWriter) progress(n int) error {
	p.rows += int64(n)
	if time.Since(p.recorded) < p.x.progressEvery {
		return nil
	}
	p.recorded = time.Now()
	return p.guard(p.x.db.W.WithContext(p.ctx), "")
}

// flush stores the buffered bytes as the next part.
func (p *partWriter) flush(ctx context.Context) error {
	if len(p.buf) == 0 {
		return nil
	}
	return p.x.db.W.WithContext(ctx).Transaction(func(tx *gorm.DB) error {
		p.seq++
		p.bytes += int64(len(p.buf))
		if err := p.guard(tx, ""); err != nil {
			return err
		}
		if err := tx.Exec("INSERT INTO export_parts (export_id, seq, data) VALUES (?, ?, ?)", p.job.ID, p.seq-1, p.buf).Error; err != nil {
			return fmt.Errorf("exports: store part %d of export %d: %w", p.seq-1, p.job.ID, err)
		}
		p.buf = p.buf[:0]
		return nil
	})
}

// finish stores the last part and marks the export done.
func (p *partWriter) finish(ctx context.Context) error {
	if err := p.flush(ctx); err != nil {
		return err
	}
	now := p.x.now()
	res := p.x.db.W.WithContext(ctx).Exec(`UPDATE export_jobs SET state = ?, worker = '', lease_until = 0, rows_done = ?, bytes = ?, parts = ?,
		finished_at = ?, expires_at = ? WHERE id = ? AND worker = ? AND state = ?`,
		ExportDone, p.rows, p.bytes, p.seq, now.UnixMilli(), now.Add(ExportKeep).UnixMilli(), p.job.ID, p.x.worker, ExportRunning)
	if res.Error != nil {
		return fmt.Errorf("exports: mark export %d done: %w", p.job.ID, res.Error)
	}
	if res.RowsAffected == 0 {
		return errExportLost
	}
	if exportProgressHook != nil {
		exportProgressHook(p.job.ID, p.rows)
	}
	return nil
}
