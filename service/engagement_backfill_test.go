package service_test

import (
	"context"
	"testing"
	"time"

	"herald/dbtest"
	"herald/models"
	"herald/service"
)

// TestEngagementBackfill: migration 00050 fills each contact's last
// engagement from the ledger: the latest of its mails' counted human
// opens and clicks, by account and address; a contact whose mails only
// machines opened, or of another account, keeps 0.
func TestEngagementBackfill(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	db, err := service.OpenDB(dbtest.DSN(t))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	if err := service.MigrateTo(ctx, db, 49); err != nil {
		t.Fatal(err)
	}
	now := models.NewTimestamp(time.Date(2026, 3, 4, 10, 0, 0, 0, time.UTC))
	for _, id := range []int64{1, 2} {
		if err := db.W.Exec(`INSERT INTO users (id, name, email, password_hash, public_key, secret_hash, created_at, updated_at) VALUES (?, ?, ?, '', ?, ?, ?, ?)`,
			id, "Account", []string{"", "one@herald.test", "two@herald.test"}[id], []string{"", "pk1", "pk2"}[id], []byte{byte(id)}, now, now).Error; err != nil {
			t.Fatal(err)
		}
	}
	create := func(v any) {
		t.Helper()
		if err := db.W.Create(v).Error; err != nil {
			t.Fatal(err)
		}
	}
	contacts := map[string]*models.Contact{}
	for _, k := range []struct {
		acct  int64
		email string
	}{{1, "ann@example.com"}, {1, "bob@example.com"}, {2, "ann@example.com"}} {
		ct := &models.ContactType{UserID: k.acct, Name: "T" + k.email, CreatedAt: now, UpdatedAt: now}
		create(ct)
		c := &models.Contact{UserID: k.acct, ContactTypeID: ct.ID, Email: k.email, CreatedAt: now, UpdatedAt: now}
		create(c)
		contacts[string(rune('0'+k.acct))+k.email] = c
	}
	// The sends are written as migration 49 has them: without the
	// columns of later migrations (resend_of, ab_designs, ab_time_after).
	createSend := func(ss *models.SingleSend) {
		t.Helper()
		if err := db.W.Omit("resend_of", "ab_designs", "ab_time_after").Create(ss).Error; err != nil {
			t.Fatal(err)
		}
	}
	ss := &models.SingleSend{UserID: 1, SingleSendName: "Letter", Subject: "News", Utr: "u1", CreatedAt: now, UpdatedAt: now}
	createSend(ss)
	ss2 := &models.SingleSend{UserID: 1, SingleSendName: "Letter 2", Subject: "News", Utr: "u2", CreatedAt: now, UpdatedAt: now}
	createSend(ss2)
	// ann: an open at 1000 on one mail, a click at 3000 on another (the
	// latest), an open at 2000 after it; bob: machines only.
	create(&models.SendMessage{SendID: ss.ID, UserID: 1, Email: "ann@example.com", State: models.MessageDelivered, SentAt: &now, HumanOpenCountedAt: 1000, HumanClickCountedAt: 3000})
	create(&models.SendMessage{SendID: ss2.ID, UserID: 1, Email: "ann@example.com", State: models.MessageDelivered, SentAt: &now, HumanOpenCountedAt: 2000})
	create(&models.SendMessage{SendID: ss.ID, UserID: 1, Email: "bob@example.com", State: models.MessageDelivered, SentAt: &now, OpenedAt: &now})

	if err := db.Migrate(ctx); err != nil {
		t.Fatal(err)
	}
	for key, want := range map[string]int64{"1ann@example.com": 3000, "1bob@example.com": 0, "2ann@example.com": 0} {
		var got int64
		if err := db.R.Raw("SELECT last_engaged_at FROM contacts WHERE id = ?", contacts[key].ID).Scan(&got).Error; err != nil {
			t.Fatal(err)
		}
		if got != want {
			t.Errorf("%s: last engaged %d, want %d", key, got, want)
		}
	}
}
