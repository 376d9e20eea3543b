package service_test

import (
	"context"
	"fmt"
	"testing"

	"herald/dbtest"
	"herald/models"
	"herald/service"
)

// TestRepairMigrationLiftsWrongSuppressions fills the tables as herald
// before migration 00013 left them (every permanent failure a bounce, its
// address suppressed, with the reason texts the old code stored), then
// migrates: suppressions that came from a build error or a relay's refusal
// of the sender, the content or by policy are lifted, their ledger rows
// become blocked or failed, and the send counters follow. Real bounces
// and suppressions herald's sending did not make stay.
func TestRepairMigrationLiftsWrongSuppressions(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	db, err := service.OpenDB(dbtest.DSN(t))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	if err := service.MigrateTo(ctx, db, 12); err != nil {
		t.Fatal(err)
	}
	w := db.W
	exec := func(q string, args ...any) {
		t.Helper()
		if err := w.Exec(q, args...).Error; err != nil {
			t.Fatalf("%s: %v", q, err)
		}
	}
	now := models.NewTimestamp(models.Now())
	exec(`INSERT INTO users (id, name, email, password_hash, public_key, secret_hash, created_at, updated_at) VALUES (1, 'A', 'a@herald.test', '', 'pk', ?, ?, ?)`,
		[]byte{1}, now, now)
	send := func(id int64, bounces, delivered int) {
		exec(`INSERT INTO single_sends (id, user_id, template_id, sender_id, unsubscribe_group_id, single_send_name, utr, status, resolved,
			triggered, delivered, bounces, created_at, updated_at) VALUES (?, 1, 1, 1, 1, ?, ?, 3, 1, ?, ?, ?, ?, ?)`,
			id, fmt.Sprint("Send ", id), fmt.Sprint("utr-", id), bounces+delivered, delivered, bounces, now, now)
	}
	type old struct {
		email, reason string
		want          models.MessageState // ledger state after the repair
	}
	var msgID int64
	add := func(sendID int64, rows []old) {
		for _, r := range rows {
			msgID++
			state := models.MessageBounced
			if r.reason == "" {
				state = models.MessageDelivered
			}
			exec(`INSERT INTO send_messages (id, send_id, user_id, email, state, error) VALUES (?, ?, 1, ?, ?, ?)`, msgID, sendID, r.email, state, r.reason)
			if state == models.MessageBounced {
				exec(`INSERT INTO suppressions (user_id, email, reason, send_id, created_at) VALUES (1, ?, ?, ?, ?)`, r.email, r.reason, sendID, now)
			}
		}
	}
	// The texts are those the old code stored: SendError.Error() without
	// the enhanced code (replyError took it out of the text), and build
	// errors.
	a := []old{
		{"unknown@example.com", "delivery: permanent failure at rcpt: 550 User unknown", models.MessageBounced},
		{"s1@example.com", "delivery: permanent failure at rcpt: 553 <news@shop.example.com>: Sender address rejected: not owned by user news@shop.example.com", models.MessageBlocked},
		{"ok@example.com", "", models.MessageDelivered},
		{"c1@example.com", "delivery: permanent failure at data: 550 Message content rejected", models.MessageBlocked},
		{"name@example.com", "delivery: invalid message: display name with a line break", models.MessageFailed},
	}
	b := []old{
		{"s2@example.com", "delivery: permanent failure at mail: 553 Sender address rejected: not owned by user", models.MessageBlocked},
		{"relay@elsewhere.example", "delivery: permanent failure at rcpt: 554 <relay@elsewhere.example>: Relay access denied", models.MessageBlocked},
		{"dkim@example.com", "delivery: DKIM signing for shop.example.com: crypto/rsa: verification error", models.MessageFailed},
		{"later@example.com", "delivery: temporary failure at rcpt: 451 Try again later", models.MessageBounced},
		{"down@example.com", "delivery: temporary failure at connect: dial tcp 127.0.0.1:25: connect: connection refused", models.MessageFailed},
		{"listed@example.com", "delivery: permanent failure at rcpt: 550 Mailbox unavailable\n5.7.1 Client host blocked", models.MessageBlocked},
		{"bad address@example.com", `delivery: permanent failure at envelope: recipient "bad address@example.com"`, models.MessageFailed},
		{"disabled@example.com", "delivery: permanent failure at rcpt: 551 User not local", models.MessageBounced},
	}
	send(1, 4, 1)
	send(2, 8, 0)
	send(3, 0, 2) // untouched
	add(1, a)
	add(2, b)
	exec(`INSERT INTO send_messages (id, send_id, user_id, email, state) VALUES (?, 3, 1, 'x@example.com', 2), (?, 3, 1, 'y@example.com', 2)`, msgID+1, msgID+2)
	// Suppressions herald's sending did not make: left alone.
	exec(`INSERT INTO suppressions (user_id, email, reason, created_at) VALUES (1, 'manual@example.com', '550', ?), (1, 'dsn@example.com', 'DSN: 5.7.1 blocked', ?)`, now, now)

	if err := db.Migrate(ctx); err != nil {
		t.Fatal(err)
	}

	var sup []models.Suppression
	if err := db.R.Order("email").Find(&sup).Error; err != nil {
		t.Fatal(err)
	}
	var kept []string
	for _, s := range sup {
		kept = append(kept, s.Email)
	}
	// later@ stays a bounce in the ledger; its suppression goes with
	// 00036, which reads a retry window run out as a soft bounce.
	if fmt.Sprint(kept) != "[disabled@example.com dsn@example.com manual@example.com unknown@example.com]" {
		t.Fatalf("suppressions after the repair: %v", kept)
	}
	var rows []models.SendMessage
	if err := db.R.Order("id").Find(&rows).Error; err != nil {
		t.Fatal(err)
	}
	want := map[string]old{}
	for _, r := range append(a, b...) {
		want[r.email] = r
	}
	for _, r := range rows {
		w, ok := want[r.Email]
		if !ok {
			continue
		}
		if r.State != w.want || r.Error != w.reason {
			t.Errorf("%s: state %d error %q; want %d (error kept)", r.Email, r.State, r.Error, w.want)
		}
	}
	check := func(id, bounces, blocks, failures int64, first, last, lastBlock string) {
		t.Helper()
		var ss models.SingleSend
		if err := db.R.Where("id = ?", id).First(&ss).Error; err != nil {
			t.Fatal(err)
		}
		if ss.Bounces != bounces || ss.Blocks != blocks || ss.Failures != failures || ss.FirstFailure != first || ss.LastFailure != last || ss.LastBlock != lastBlock {
			t.Errorf("send %d: bounces %d blocks %d failures %d first %q last %q last block %q; want %d %d %d %q %q %q",
				id, ss.Bounces, ss.Blocks, ss.Failures, ss.FirstFailure, ss.LastFailure, ss.LastBlock, bounces, blocks, failures, first, last, lastBlock)
		}
	}
	check(1, 1, 2, 1, a[4].reason, a[4].reason, a[3].reason)
	check(2, 2, 3, 3, b[2].reason, b[6].reason, b[5].reason)
	check(3, 0, 0, 0, "", "", "")
}
