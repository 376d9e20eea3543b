package audience_test

import (
	"bytes"
	"context"
	"strconv"
	"sync"
	"testing"
	"time"

	"herald/dbtest"
	"herald/models"
	"herald/service"
	"herald/service/audience"
	"herald/service/servicetest"
)

// exportFixture is an account with a contact type of n contacts (with a
// custom field, some values formula-looking), a segment of part of them
// plus an address added by hand, and a send with a ledger of n rows.
type exportFixture struct {
	ctx     context.Context
	svc     *service.Service
	acct    int64
	typeID  int64
	segID   int64
	sendUtr string
	sendID  int64
}

func newExportFixture(t *testing.T, svc *service.Service, email string, n int) *exportFixture {
	t.Helper()
	ctx := context.Background()
	f := &exportFixture{ctx: ctx, svc: svc, acct: servicetest.NewAccount(t, svc, email)}
	ct, err := svc.ContactTypes.Create(ctx, f.acct, "Customers")
	if err != nil {
		t.Fatal(err)
	}
	f.typeID = ct.ID
	if _, err := svc.Fields.Create(ctx, f.acct, audience.FieldInput{FieldName: "company", FieldType: "text"}); err != nil {
		t.Fatal(err)
	}
	now := models.NewTimestamp(models.Now())
	w := svc.DB.W.WithContext(ctx)
	exec := func(q string, args ...any) {
		t.Helper()
		if err := w.Exec(q, args...).Error; err != nil {
			t.Fatalf("%s: %v", q, err)
		}
	}
	// Every third contact's company starts with '=': the file must carry it neutralised.
	custom := `CASE WHEN i % 3 = 0 THEN '{"company":"=cmd|' || i || '"}' ELSE '{"company":"Acme ' || i || '"}' END`
	if svc.DB.Dialect == "postgres" {
		custom = "CAST(" + custom + " AS jsonb)"
	}
	exec(`WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n WHERE i < ?)
		INSERT INTO contacts (user_id, contact_type_id, first_name, last_name, email, city, custom_fields, created_at, updated_at)
		SELECT ?, ?, 'First ' || i, CASE WHEN i % 5 = 0 THEN '+' || i ELSE 'Last, "q"' END, 'c' || i || '@example.com', 'Town',
			`+custom+`, ?, ? FROM n`,
		n, f.acct, ct.ID, now, now)
	seg, err := svc.Segments.Create(ctx, f.acct, audience.SegmentInput{ContactTypeID: strconv.FormatInt(ct.ID, 10), SegmentName: "Some"})
	if err != nil {
		t.Fatal(err)
	}
	f.segID = seg.ID
	exec("DELETE FROM segment_emails WHERE segment_id = ?", seg.ID)
	exec(`INSERT INTO segment_emails (user_id, segment_id, contact_id, first_name, last_name, email, created_at, updated_at)
		SELECT user_id, ?, id, first_name, last_name, email, created_at, updated_at FROM contacts WHERE contact_type_id = ? AND id % 2 = 0`, seg.ID, ct.ID)
	exec(`INSERT INTO segment_emails (user_id, segment_id, first_name, last_name, email, created_at, updated_at)
		VALUES (?, ?, '@hand', 'Added', 'hand@example.com', ?, ?)`, f.acct, seg.ID, now, now)
	f.sendUtr = "utr-" + email
	exec(`INSERT INTO single_sends (user_id, template_id, sender_id, unsubscribe_group_id, single_send_name, status, utr, created_at, updated_at)
		VALUES (?, 1, 1, 1, 'Spring sale', 3, ?, ?, ?)`, f.acct, f.sendUtr, now, now)
	if err := svc.DB.R.Model(&models.SingleSend{}).Select("id").Where("utr = ?", f.sendUtr).Scan(&f.sendID).Error; err != nil {
		t.Fatal(err)
	}
	exec(`INSERT INTO send_messages (send_id, user_id, email, first_name, state, sent_at, error)
		SELECT ?, user_id, email, first_name, CASE WHEN id % 4 = 0 THEN 3 ELSE 2 END, ?, CASE WHEN id % 4 = 0 THEN '-550 no' ELSE '' END
		FROM contacts WHERE contact_type_id = ?`, f.sendID, now, ct.ID)
	return f
}

// streamed is the streamed export of the same data, the reference.
func (f *exportFixture) streamed(t *testing.T, kind audience.ExportKind) []byte {
	t.Helper()
	var b bytes.Buffer
	switch kind {
	case audience.ExportSendRecipients:
		ss, err := f.svc.SingleSends.Get(f.ctx, f.acct, f.sendUtr)
		if err != nil {
			t.Fatal(err)
		}
		if err := f.svc.SingleSends.WriteRecipientsCSV(f.ctx, f.acct, ss, &b); err != nil {
			t.Fatal(err)
		}
	default:
		in := audience.ExportInput{ContactTypeID: strconv.FormatInt(f.typeID, 10)}
		if kind == audience.ExportContactsSegment {
			in = audience.ExportInput{SegmentID: strconv.FormatInt(f.segID, 10)}
		}
		exp, err := f.svc.Contacts.Export(f.ctx, f.acct, in)
		if err != nil {
			t.Fatal(err)
		}
		if err := exp.WriteCSV(f.ctx, &b); err != nil {
			t.Fatal(err)
		}
	}
	return b.Bytes()
}

// start starts an export of kind.
func (f *exportFixture) start(t *testing.T, kind audience.ExportKind) *models.ExportJob {
	t.Helper()
	job, err := f.startErr(kind)
	if err != nil {
		t.Fatal(err)
	}
	return job
}

func (f *exportFixture) startErr(kind audience.ExportKind) (*models.ExportJob, error) {
	switch kind {
	case audience.ExportSendRecipients:
		return f.svc.Exports.StartRecipients(f.ctx, f.acct, f.sendUtr)
	case audience.ExportContactsSegment:
		return f.svc.Exports.StartContacts(f.ctx, f.acct, audience.ExportInput{SegmentID: strconv.FormatInt(f.segID, 10)})
	}
	return f.svc.Exports.StartContacts(f.ctx, f.acct, audience.ExportInput{ContactTypeID: strconv.FormatInt(f.typeID, 10)})
}

// download is the file of the account's finished export id.
func download(t *testing.T, svc *service.Service, acct, id int64) []byte {
	t.Helper()
	_, write, err := svc.Exports.Download(context.Background(), acct, id)
	if err != nil {
		t.Fatalf("download %d: %v", id, err)
	}
	var b bytes.Buffer
	if err := write(context.Background(), &b); err != nil {
		t.Fatal(err)
	}
	return b.Bytes()
}

// A finished background export is byte for byte the streamed export of
// the same data, for each kind; its progress is recorded batch by batch
// and ends at its row count; the file spans several parts; another
// account neither sees nor downloads it.
func TestExportJobsMatchStreamed(t *testing.T) {
	svc := dbtest.Service(t)
	f := newExportFixture(t, svc, "a@example.com", 2500)
	other := servicetest.NewAccount(t, svc, "b@example.com")
	var mu sync.Mutex
	progress := map[int64][]int64{}
	defer audience.ExportProgress(svc.Exports, func(id, rows int64) {
		mu.Lock()
		progress[id] = append(progress[id], rows)
		mu.Unlock()
	})()
	cases := []struct {
		kind               audience.ExportKind
		rows               int64
		wantName, wantFile string
		neutralised        string // a formula-looking cell, as the file must hold it
	}{
		{audience.ExportContactsType, 2500, "Contacts of the type Customers", "contacts-type-" + strconv.FormatInt(f.typeID, 10) + ".csv", "'=cmd|3"},
		{audience.ExportContactsSegment, 1251, "Contacts of the segment Some", "contacts-segment-" + strconv.FormatInt(f.segID, 10) + ".csv", "'@hand"},
		{audience.ExportSendRecipients, 2500, "Recipients of the send Spring sale", "send-" + f.sendUtr + "-recipients.csv", "'-550 no"},
	}
	for _, c := range cases {
		t.Run(string(c.kind), func(t *testing.T) {
			job := f.start(t, c.kind)
			if job.State != audience.ExportQueued || job.Name != c.wantName || job.FileName != c.wantFile {
				t.Fatalf("started: %+v", job)
			}
			if _, _, err := svc.Exports.Download(f.ctx, f.acct, job.ID); !service.IsNotFound(err) {
				t.Fatalf("download of a queued export: %v", err)
			}
			n, err := svc.Exports.RunDue(f.ctx)
			if err != nil || n != 1 {
				t.Fatalf("RunDue: %d, %v", n, err)
			}
			got, err := svc.Exports.Get(f.ctx, f.acct, job.ID)
			if err != nil {
				t.Fatal(err)
			}
			if got.State != audience.ExportDone || got.RowsDone != c.rows || got.RowsTotal != c.rows || got.Attempts != 1 || got.Error != "" {
				t.Fatalf("finished: %+v", got)
			}
			want := f.streamed(t, c.kind)
			file := download(t, svc, f.acct, job.ID)
			if !bytes.Equal(file, want) {
				t.Fatalf("file (%d bytes) differs from the streamed export (%d bytes)", len(file), len(want))
			}
			if got.Bytes != int64(len(want)) || !bytes.Contains(file, []byte(c.neutralised)) {
				t.Fatalf("bytes %d of %d, or a formula not neutralised", got.Bytes, len(want))
			}
			if got.ExpiresAt != got.FinishedAt+audience.ExportKeep.Milliseconds() {
				t.Fatalf("expires %d, finished %d", got.ExpiresAt, got.FinishedAt)
			}
			mu.Lock()
			steps := progress[job.ID]
			mu.Unlock()
			// The start records 0 rows, then each batch of 1,000 its rows
			// (storing a part and the end record the same count again).
			var wantSteps []int64
			for r := int64(0); r < c.rows; r += 1000 {
				wantSteps = append(wantSteps, r)
			}
			wantSteps = append(wantSteps, c.rows)
			if !equalInts(dedupe(steps), wantSteps) {
				t.Fatalf("progress %v, want %v", steps, wantSteps)
			}
			if _, err := svc.Exports.Get(f.ctx, other, job.ID); !service.IsNotFound(err) {
				t.Fatalf("another account's Get: %v", err)
			}
			if _, _, err := svc.Exports.Download(f.ctx, other, job.ID); !service.IsNotFound(err) {
				t.Fatalf("another account's Download: %v", err)
			}
			jobs, active, err := svc.Exports.List(f.ctx, other)
			if err != nil || len(jobs) != 0 || active {
				t.Fatalf("another account's list: %v %v %v", jobs, active, err)
			}
		})
	}
	jobs, active, err := svc.Exports.List(f.ctx, f.acct)
	if err != nil || len(jobs) != 3 || active || jobs[0].Kind != string(audience.ExportSendRecipients) {
		t.Fatalf("list: %d jobs, active %v, %v", len(jobs), active, err)
	}
	entries, _, err := svc.Audit.List(f.ctx, f.acct, 1)
	if err != nil {
		t.Fatal(err)
	}
	started := 0
	for _, e := range entries {
		if e.Action == string(service.AuditExportStarted) {
			started++
		}
	}
	if started != 3 {
		t.Fatalf("audit log: %d export lines", started)
	}
}

// dedupe drops consecutive repeats.
func dedupe(steps []int64) []int64 {
	var out []int64
	for i, s := range steps {
		if i == 0 || s != steps[i-1] {
			out = append(out, s)
		}
	}
	return out
}

func equalInts(a, b []int64) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}

// Starting an export checks as the streamed export does (another
// account's type, segment or send is not found), and an account may have
// MaxActiveExports under way, no more.
func TestExportJobsStartRules(t *testing.T) {
	t.Parallel()
	svc := dbtest.Service(t)
	f := newExportFixture(t, svc, "a@example.com", 10)
	g := newExportFixture(t, svc, "b@example.com", 10)
	ctx := f.ctx
	if _, err := svc.Exports.StartContacts(ctx, f.acct, audience.ExportInput{ContactTypeID: strconv.FormatInt(g.typeID, 10)}); !service.IsNotFound(err) {
		t.Fatalf("another account's type: %v", err)
	}
	if _, err := svc.Exports.StartContacts(ctx, f.acct, audience.ExportInput{SegmentID: strconv.FormatInt(g.segID, 10)}); !service.IsNotFound(err) {
		t.Fatalf("another account's segment: %v", err)
	}
	if _, err := svc.Exports.StartRecipients(ctx, f.acct, g.sendUtr); !service.IsNotFound(err) {
		t.Fatalf("another account's send: %v", err)
	}
	if _, err := svc.Exports.StartContacts(ctx, f.acct, audience.ExportInput{}); service.ErrorCode(err) != service.CodeValidation {
		t.Fatalf("neither id: %v", err)
	}
	for i := 0; i < audience.MaxActiveExports; i++ {
		f.start(t, audience.ExportContactsType)
	}
	_, err := f.startErr(audience.ExportSendRecipients)
	if err != audience.ErrTooManyExports || service.ErrorCode(err) != service.CodeConflict {
		t.Fatalf("over the cap: %v", err)
	}
	if se, ok := err.(*service.Error); !ok || se.Message != "You already have 3 exports under way. Wait for one to finish, then start this one again." {
		t.Fatalf("message: %v", err)
	}
	// Another account has its own cap; a member who starts one is recorded.
	who := service.WithActor(ctx, service.Actor{AccountID: g.acct, MemberID: 7, Role: service.RoleViewer, Name: "Vi <vi@example.com>"})
	job, err := svc.Exports.StartContacts(who, g.acct, audience.ExportInput{ContactTypeID: strconv.FormatInt(g.typeID, 10)})
	if err != nil || job.MemberID != 7 {
		t.Fatalf("a member's export: %+v, %v", job, err)
	}
	if entries, _, err := svc.Audit.List(ctx, g.acct, 1); err != nil || len(entries) == 0 ||
		entries[0].Action != string(service.AuditExportStarted) || entries[0].MemberID != 7 || entries[0].Actor != "Vi <vi@example.com>" {
		t.Fatalf("audit log: %+v, %v", entries, err)
	}
	// Once they have run, the account may start again.
	if n, err := svc.Exports.RunDue(ctx); err != nil || n != audience.MaxActiveExports+1 {
		t.Fatalf("RunDue: %d, %v", n, err)
	}
	f.start(t, audience.ExportSendRecipients)
}

// An export claimed by a process that died (its lease ran out) is taken
// over by another process's runner and finished from the start; one whose
// lease still runs is left alone; the dead writer's part is deleted
// (TestExportJobsStalledWriterLosesItsExport: a writer that wakes).
func TestExportJobsTakeOverExpiredLease(t *testing.T) {
	t.Parallel()
	clock := dbtest.NewClock(time.Now())
	procs := dbtest.Processes(t, 2, service.Config{Now: clock.Now})
	a, b := procs[0], procs[1]
	f := newExportFixture(t, a, "a@example.com", 1500)
	job := f.start(t, audience.ExportContactsType)
	// A dead process held it: a part written, some progress, its lease live.
	w := a.DB.W.WithContext(f.ctx)
	if err := w.Exec(`UPDATE export_jobs SET state = 'running', worker = 'dead:1', attempts = 1, rows_done = 1000, parts = 1, lease_until = ? WHERE id = ?`,
		clock.Now().Add(30*time.Second).UnixMilli(), job.ID).Error; err != nil {
		t.Fatal(err)
	}
	if err := w.Exec(`INSERT INTO export_parts (export_id, seq, data) VALUES (?, 0, ?)`, job.ID, []byte("stale,half,file\n")).Error; err != nil {
		t.Fatal(err)
	}
	if n, err := b.Exports.RunDue(f.ctx); err != nil || n != 0 {
		t.Fatalf("a live lease was taken: %d, %v", n, err)
	}
	clock.Advance(time.Minute)
	if n, err := b.Exports.RunDue(f.ctx); err != nil || n != 1 {
		t.Fatalf("RunDue after the lease ran out: %d, %v", n, err)
	}
	got, err := a.Exports.Get(f.ctx, f.acct, job.ID)
	if err != nil {
		t.Fatal(err)
	}
	if got.State != audience.ExportDone || got.Attempts != 2 || got.RowsDone != 1500 {
		t.Fatalf("taken over: %+v", got)
	}
	if file := download(t, a, f.acct, job.ID); !bytes.Equal(file, f.streamed(t, audience.ExportContactsType)) {
		t.Fatal("the taken-over export's file differs from the streamed export")
	}
	var parts int64
	if err := a.DB.R.Raw("SELECT COUNT(*) FROM export_parts WHERE export_id = ?", job.ID).Scan(&parts).Error; err != nil || parts != got.Parts {
		t.Fatalf("parts %d, recorded %d, %v", parts, got.Parts, err)
	}
}

// Two runners (two processes over one database) share several exports
// of two accounts: each is written once, by one of them, and is whole.
func TestExportJobsTwoRunners(t *testing.T) {
	t.Parallel()
	procs := dbtest.Processes(t, 2)
	fs := []*exportFixture{newExportFixture(t, procs[0], "a@example.com", 1200), newExportFixture(t, procs[0], "b@example.com", 800)}
	kinds := []audience.ExportKind{audience.ExportContactsType, audience.ExportContactsSegment, audience.ExportSendRecipients}
	var jobs []*models.ExportJob
	owner := map[int64]*exportFixture{}
	for _, f := range fs {
		for _, k := range kinds {
			j := f.start(t, k)
			jobs = append(jobs, j)
			owner[j.ID] = f
		}
	}
	var wg sync.WaitGroup
	done := make([]int, 2)
	errs := make([]error, 2)
	for i, p := range procs {
		wg.Add(1)
		go func() {
			defer wg.Done()
			done[i], errs[i] = p.Exports.RunDue(context.Background())
		}()
	}
	wg.Wait()
	if errs[0] != nil || errs[1] != nil || done[0]+done[1] != len(jobs) {
		t.Fatalf("runners: %v finished, errors %v", done, errs)
	}
	for _, j := range jobs {
		f := owner[j.ID]
		got, err := procs[1].Exports.Get(f.ctx, f.acct, j.ID)
		if err != nil {
			t.Fatal(err)
		}
		if got.State != audience.ExportDone || got.Attempts != 1 {
			t.Fatalf("export %d (%s): %s after %d attempts", j.ID, j.Kind, got.State, got.Attempts)
		}
		if !bytes.Equal(download(t, procs[1], f.acct, j.ID), f.streamed(t, audience.ExportKind(j.Kind))) {
			t.Fatalf("export %d (%s): file differs from the streamed export", j.ID, j.Kind)
		}
	}
}

// A finished export and its file are deleted once ExportKeep has passed,
// not before; so is a failed one. An export of something deleted fails
// with a message that says so.
func TestExportJobsExpire(t *testing.T) {
	t.Parallel()
	clock := dbtest.NewClock(time.Now())
	svc := dbtest.Service(t, service.Config{Now: clock.Now})
	f := newExportFixture(t, svc, "a@example.com", 20)
	job := f.start(t, audience.ExportContactsType)
	failing := f.start(t, audience.ExportSendRecipients)
	if err := svc.DB.W.Exec("UPDATE single_sends SET deleted_at = ? WHERE id = ?", models.NewTimestamp(models.Now()), f.sendID).Error; err != nil {
		t.Fatal(err)
	}
	if n, err := svc.Exports.RunDue(f.ctx); err != nil || n != 2 {
		t.Fatalf("RunDue: %d, %v", n, err)
	}
	failed, err := svc.Exports.Get(f.ctx, f.acct, failing.ID)
	if err != nil || failed.State != audience.ExportFailed || failed.Error != "What this export was to write no longer exists (it was deleted)." {
		t.Fatalf("failed export: %+v, %v", failed, err)
	}
	parts := func() int64 {
		var n int64
		if err := svc.DB.R.Raw("SELECT COUNT(*) FROM export_parts WHERE export_id = ?", job.ID).Scan(&n).Error; err != nil {
			t.Fatal(err)
		}
		return n
	}
	if parts() != 1 {
		t.Fatalf("parts before expiry: %d", parts())
	}
	clock.Advance(audience.ExportKeep - time.Minute)
	if n, err := svc.Exports.Expire(f.ctx); err != nil || n != 0 {
		t.Fatalf("expired early: %d, %v", n, err)
	}
	clock.Advance(time.Minute)
	if n, err := svc.Exports.Expire(f.ctx); err != nil || n != 2 {
		t.Fatalf("Expire: %d, %v", n, err)
	}
	if parts() != 0 {
		t.Fatalf("parts after expiry: %d", parts())
	}
	if _, _, err := svc.Exports.Download(f.ctx, f.acct, job.ID); !service.IsNotFound(err) {
		t.Fatalf("download after expiry: %v", err)
	}
}

// An export cut short by shutdown (its runner's context ends) goes back
// to the queue at once, not failed, and the next run writes it whole.
func TestExportJobsShutdownRequeues(t *testing.T) {
	svc := dbtest.Service(t)
	f := newExportFixture(t, svc, "a@example.com", 3000)
	job := f.start(t, audience.ExportContactsType)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	restore := audience.ExportProgress(svc.Exports, func(_, rows int64) {
		if rows >= 1000 {
			cancel() // herald stops while the export is under way
		}
	})
	n, err := svc.Exports.RunDue(ctx)
	restore()
	if n != 0 || err == nil {
		t.Fatalf("RunDue under shutdown: %d, %v", n, err)
	}
	got, err := svc.Exports.Get(f.ctx, f.acct, job.ID)
	if err != nil {
		t.Fatal(err)
	}
	if got.State != audience.ExportQueued || got.Worker != "" || got.LeaseUntil != 0 {
		t.Fatalf("after shutdown: %+v", got)
	}
	if n, err := svc.Exports.RunDue(f.ctx); err != nil || n != 1 {
		t.Fatalf("RunDue after restart: %d, %v", n, err)
	}
	if !bytes.Equal(download(t, svc, f.acct, job.ID), f.streamed(t, audience.ExportContactsType)) {
		t.Fatal("the export run again differs from the streamed export")
	}
}

// A writer whose lease ran out while it was stalled (a process paused,
// not dead) finds its export taken over at its next write and stops: the
// other process's file stands, written once from the start.
func TestExportJobsStalledWriterLosesItsExport(t *testing.T) {
	clock := dbtest.NewClock(time.Now())
	procs := dbtest.Processes(t, 2, service.Config{Now: clock.Now})
	a, b := procs[0], procs[1]
	f := newExportFixture(t, a, "a@example.com", 2500)
	job := f.start(t, audience.ExportContactsType)
	var took bool
	var bDone int
	var bErr error
	defer audience.ExportProgress(a.Exports, func(id, rows int64) {
		if took {
			return
		}
		took = true
		// a has claimed the export and recorded its start, then stalls past
		// its lease; b takes the export over and finishes it meanwhile.
		clock.Advance(2 * time.Minute)
		bDone, bErr = b.Exports.RunDue(context.Background())
	})()
	n, err := a.Exports.RunDue(f.ctx)
	if err != nil || n != 0 || !took {
		t.Fatalf("the stalled runner: %d finished, %v", n, err)
	}
	if bErr != nil || bDone != 1 {
		t.Fatalf("the runner that took over: %d finished, %v", bDone, bErr)
	}
	got, err := a.Exports.Get(f.ctx, f.acct, job.ID)
	if err != nil {
		t.Fatal(err)
	}
	if got.State != audience.ExportDone || got.Attempts != 2 || got.RowsDone != 2500 || got.Worker != "" {
		t.Fatalf("after the takeover: %+v", got)
	}
	if !bytes.Equal(download(t, a, f.acct, job.ID), f.streamed(t, audience.ExportContactsType)) {
		t.Fatal("the file differs from the streamed export")
	}
}
