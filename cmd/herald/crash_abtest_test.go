package main

import (
	"errors"
	"strings"
	"testing"
	"time"

	"herald/eventually"
	"herald/models"
	"herald/service"
	"herald/smtptest"
)

// TestABTestSurvivesKill9 runs an A/B subject test (two subjects on 20 %
// of 4,000 contacts) in `herald serve` and kills the process with SIGKILL
// while the test share goes out; the restarted process finishes the test
// share and sends nothing of the rest. When the wait is over (moved to
// now in the database) two processes run: one of them chooses the
// winner, and the first is killed while the rest goes out and restarted.
// Every address gets its message with its variant's subject (the rest
// the winner's: with no opens, the first), the extra messages are at
// most those in flight at each kill, and the counters are exact.
func TestABTestSurvivesKill9(t *testing.T) {
	t.Parallel()
	if testing.Short() {
		t.Skip("kills and restarts herald during an A/B test")
	}
	const (
		contacts = 4000
		conns    = 4
		bound    = 2 * conns // messages in flight at any moment
	)
	bin := buildHerald(t)
	sink := smtptest.Start(t)
	dsn, u, ss, addr := prepareSend(t, contacts)
	db, err := service.OpenDB(dsn)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	svc := newService(t, db, service.Config{})
	if err := db.W.Exec(`UPDATE single_sends SET ab_subjects = '["Alpha ((first_name))","Beta ((first_name))"]', ab_preheaders = '["",""]',
		ab_share = 20, ab_metric = 'opens', ab_wait = 60 WHERE id = ?`, ss.ID).Error; err != nil {
		t.Fatal(err)
	}
	logf := heraldLog(t)
	env := sendEnv(t, dsn, sink, conns)

	p := startHerald(t, bin, env, logf)
	// The split, once resolved.
	var test int64
	eventually.NoError(t, 2*time.Minute, func() error {
		var row models.SingleSend
		if err := db.R.Select("resolved").Where("id = ?", ss.ID).First(&row).Error; err != nil {
			t.Fatal(err)
		}
		if row.Resolved == 1 {
			return nil
		}
		return errors.New("not resolved within 2 minutes")
	})
	if err := db.R.Model(&models.SendMessage{}).Where("send_id = ? AND variant > 0", ss.ID).Count(&test).Error; err != nil {
		t.Fatal(err)
	}
	if test < contacts/10 || test > contacts*3/10 {
		t.Fatalf("test share %d of %d at 20 %%", test, contacts)
	}
	kills := 0
	// Kill 1 in the middle of the test share.
	if !waitSink(sink, p, int(test/2), time.Minute) {
		t.Fatalf("the test share stalled at %d", sink.Count())
	}
	p.kill()
	kills++
	t.Logf("kill 1 at %d of %d test messages", settle(sink), test)
	p = startHerald(t, bin, env, logf)
	if !waitSink(sink, p, int(test), 2*time.Minute) {
		t.Fatalf("the test share stalled at %d after the restart", sink.Count())
	}
	at := settle(sink)
	if at > int(test)+kills*bound {
		t.Fatalf("%d messages for a test share of %d: the rest went early", at, test)
	}
	var heldSent int64
	if err := db.R.Model(&models.SendMessage{}).Where("send_id = ? AND variant = 0 AND state <> 0", ss.ID).Count(&heldSent).Error; err != nil || heldSent != 0 {
		t.Fatalf("%d held rows left the queue (%v)", heldSent, err)
	}

	// The wait is over; a second process joins; the first is killed
	// during the rest.
	if err := db.W.Exec("UPDATE single_sends SET ab_decide_at = ? WHERE id = ?", time.Now().Add(-time.Second).UnixMilli(), ss.ID).Error; err != nil {
		t.Fatal(err)
	}
	env2 := sendEnv(t, dsn, sink, conns)
	p2 := startHerald(t, bin, env2, logf)
	defer p2.kill()
	if !waitSink(sink, p, at+(contacts-int(test))/3, time.Minute) {
		t.Fatalf("the rest stalled at %d", sink.Count())
	}
	n := sink.Count()
	p.kill()
	kills++
	t.Logf("kill 2 at %d of %d messages (the other process goes on)", n, contacts)
	p = startHerald(t, bin, env, logf)
	defer p.kill()
	done := waitCompleted(t, svc, u.ID, ss.Utr)
	settle(sink)
	if done.ABWinner != 1 || done.Delivered != contacts {
		t.Fatalf("winner %d delivered %d, want 1 and %d", done.ABWinner, done.Delivered, contacts)
	}
	checkAllDelivered(t, db, ss.ID, contacts)

	var rows []struct {
		Email   string
		Variant int
	}
	if err := db.R.Raw("SELECT email, variant FROM send_messages WHERE send_id = ?", ss.ID).Scan(&rows).Error; err != nil {
		t.Fatal(err)
	}
	variantOf := map[string]int{}
	for _, r := range rows {
		variantOf[r.Email] = r.Variant
	}
	extra := 0
	per := sink.PerRecipient()
	for i := range contacts {
		n := per[addr(i)]
		if n == 0 {
			t.Fatalf("%s got no message", addr(i))
		}
		extra += n - 1
	}
	if extra > kills*bound {
		t.Errorf("%d extra messages for %d kills, at most %d", extra, kills, kills*bound)
	}
	wrong := 0
	for _, m := range sink.Messages() {
		want := "Alpha "
		if variantOf[m.To] == 2 {
			want = "Beta "
		}
		if !strings.HasPrefix(m.Header().Get("Subject"), want) {
			wrong++
		}
	}
	if wrong > 0 {
		t.Fatalf("%d messages with another variant's subject", wrong)
	}
	t.Logf("%d contacts, test share %d, %d extra messages over %d kills", contacts, test, extra, kills)
}
