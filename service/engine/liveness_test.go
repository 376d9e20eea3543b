package engine_test

import (
	"strconv"
	"testing"

	"gorm.io/gorm"

	"herald/service/engine"
	"herald/service/servicetest"
)

// After the database server restarted, a relaxed commit of outcomes may
// be lost (PostgreSQL), so the next heartbeat gives every claim of the
// process back to the queue and the jobs claimed before are no longer
// handed over. A heartbeat of a process whose server did not restart,
// and any on SQLite (no server), leaves the claims alone.
func TestServerRestartGivesClaimsBack(t *testing.T) {
	t.Parallel()
	f := servicetest.NewSendFixture(t, false)
	typeA := f.ContactType("Customers", "a@example.com", "b@example.com", "c@example.com")
	ss := f.Create(f.Input("Restart", []string{"contacts_" + strconv.FormatInt(typeA, 10)}, nil))
	if err := f.Sending.Tick(f.Ctx); err != nil {
		t.Fatal(err)
	}
	f.WaitResolved(ss.ID)
	if err := engine.Beat(f.Ctx, f.Sending); err != nil {
		t.Fatal(err)
	}
	jobs, err := engine.Claim(f.Ctx, f.Sending, 10)
	if err != nil || len(jobs) != 3 {
		t.Fatalf("claimed %d jobs (%v), want 3", len(jobs), err)
	}
	claimed := func() int64 {
		return f.Scalar("SELECT COUNT(*) FROM send_messages WHERE send_id = ? AND worker = ?", ss.ID, engine.Worker(f.Sending))
	}
	if err := engine.Beat(f.Ctx, f.Sending); err != nil {
		t.Fatal(err)
	}
	if n := claimed(); n != 3 || !jobs[0].Fresh() {
		t.Fatalf("after a plain heartbeat: %d claims kept, fresh %v; want 3, true", n, jobs[0].Fresh())
	}

	engine.ForgetServerStart(f.Sending)
	if err := engine.Beat(f.Ctx, f.Sending); err != nil {
		t.Fatal(err)
	}
	if !f.Svc.DB.SQL().Postgres {
		if n := claimed(); n != 3 || !jobs[0].Fresh() {
			t.Fatalf("SQLite: %d claims kept, fresh %v after a heartbeat; want 3, true", n, jobs[0].Fresh())
		}
		return
	}
	if n := claimed(); n != 0 {
		t.Fatalf("%d claims still held after the server restarted, want 0", n)
	}
	if q := f.Scalar("SELECT COUNT(*) FROM send_messages WHERE send_id = ? AND state = 0 AND worker IS NULL", ss.ID); q != 3 {
		t.Fatalf("%d messages queued again, want 3", q)
	}
	for i, j := range jobs {
		if j.Fresh() {
			t.Fatalf("job %d claimed before the restart may still be handed over", i)
		}
	}
}

// The outcomes' pool commits without waiting for the disk on PostgreSQL,
// and every other write still waits; on SQLite both are the one writer.
func TestRelaxedPoolOnlyForOutcomes(t *testing.T) {
	t.Parallel()
	f := servicetest.NewSendFixture(t, false)
	db := f.Svc.DB
	if !db.SQL().Postgres {
		if db.Relaxed != db.W {
			t.Fatal("SQLite: the relaxed pool is not the one writer")
		}
		return
	}
	show := func(g *gorm.DB) string {
		var v string
		if err := g.Raw("SHOW synchronous_commit").Scan(&v).Error; err != nil {
			t.Fatal(err)
		}
		return v
	}
	for range 3 { // several connections of each pool
		if w, r := show(db.W), show(db.Relaxed); w != "on" || r != "off" {
			t.Fatalf("synchronous_commit: writer %q, relaxed %q; want on, off", w, r)
		}
	}
}
