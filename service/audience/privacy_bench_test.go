package audience_test

import (
	"context"
	"os"
	"strconv"
	"testing"
	"time"

	"herald/dbtest"
	"herald/models"
	"herald/service"
)

// BenchmarkPrivacyRequest measures the privacy export and then the erasure
// of one address with 1,000 mails in its history (each opened and clicked)
// on an account of HERALD_PRIVACY_CONTACTS contacts (default 10,000), each
// of which has one mail of its own in the same 1,000 sends: a ledger of
// contacts + 1,000 rows. Each step is timed with its peak live heap
// (sampled every 10 ms) and the process's peak RSS (VmHWM, reset before
// each), as BenchmarkExportBackground does (docs/BENCHMARKS.md).
//
//	HERALD_PRIVACY_CONTACTS=1000000 go test -run '^$' -bench BenchmarkPrivacyRequest -benchtime 1x ./service/audience/
//	HERALD_TEST_DATABASE=postgres://… go test -run '^$' -bench BenchmarkPrivacyRequest -benchtime 1x ./service/audience/
func BenchmarkPrivacyRequest(b *testing.B) {
	n := 10_000
	if v := os.Getenv("HERALD_PRIVACY_CONTACTS"); v != "" {
		var err error
		if n, err = strconv.Atoi(v); err != nil {
			b.Fatal(err)
		}
	}
	const mails = 1000
	const who = "person@example.com"
	ctx := context.Background()
	svc := dbtest.Service(b)
	u, _, err := svc.Accounts.Create(ctx, service.AccountInput{Name: "Big", Email: "big@example.com", Password: "test-passphrase-9"})
	if err != nil {
		b.Fatal(err)
	}
	ct, err := svc.ContactTypes.Create(ctx, u.ID, "Everyone")
	if err != nil {
		b.Fatal(err)
	}
	now := models.NewTimestamp(models.Now())
	w := svc.DB.W.WithContext(ctx)
	exec := func(what, q string, args ...any) {
		b.Helper()
		if err := w.Exec(q, args...).Error; err != nil {
			b.Fatalf("%s: %v", what, err)
		}
	}
	start := time.Now()
	exec("contacts", `WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n WHERE i < ?)
		INSERT INTO contacts (user_id, contact_type_id, first_name, last_name, email, city, postal_code, created_at, updated_at)
		SELECT ?, ?, 'First', 'Last', 'c' || i || '@example.com', 'Springfield', '12345', ?, ? FROM n`, n, u.ID, ct.ID, now, now)
	exec("the person", `INSERT INTO contacts (user_id, contact_type_id, first_name, last_name, email, created_at, updated_at)
		VALUES (?, ?, 'Pat', 'Person', ?, ?, ?)`, u.ID, ct.ID, who, now, now)
	exec("sends", `WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n WHERE i < ?)
		INSERT INTO single_sends (user_id, template_id, sender_id, unsubscribe_group_id, single_send_name, subject, utr, status, created_at, updated_at, sent_at)
		SELECT ?, 1, 1, 1, 'Letter ' || i, 'Letter ' || i, 'bench-privacy-' || i, 3, ?, ?, ? FROM n`, mails, u.ID, now, now, now)
	var first int64
	if err := svc.DB.R.Raw("SELECT MIN(id) FROM single_sends WHERE user_id = ?", u.ID).Scan(&first).Error; err != nil {
		b.Fatal(err)
	}
	// Every contact one mail, spread over the sends; the person one in each.
	exec("the ledger", `INSERT INTO send_messages (send_id, user_id, contact_id, email, first_name, last_name, state, sent_at)
		SELECT ? + (id % ?), user_id, id, email, first_name, last_name, 2, ? FROM contacts WHERE user_id = ? AND email <> ?`,
		first, mails, now, u.ID, who)
	exec("the person's mails", `INSERT INTO send_messages (send_id, user_id, contact_id, email, first_name, last_name, state, sent_at, opened_at, clicked_at)
		SELECT s.id, s.user_id, c.id, c.email, c.first_name, c.last_name, 2, ?, ?, ? FROM single_sends s, contacts c
		WHERE s.user_id = ? AND c.user_id = ? AND c.email = ?`, now, now, now, u.ID, u.ID, who)
	exec("the person's opens and clicks", `INSERT INTO send_events (send_id, kind, link, at, message_id)
		SELECT send_id, k.kind, CASE WHEN k.kind = 2 THEN 0 ELSE -1 END, ?, id FROM send_messages, (SELECT 1 AS kind UNION ALL SELECT 2) k
		WHERE user_id = ? AND email = ?`, now, u.ID, who)
	if svc.DB.Dialect == "postgres" {
		exec("analyze", "ANALYZE")
	}
	b.Logf("%d contacts, %d ledger rows (%d of the person's) on %s in %v", n+1, n+mails, mails, svc.DB.Dialect, time.Since(start).Round(time.Millisecond))

	for b.Loop() {
		var bytes int64
		measureExport(b, "privacy export (1,000 mails)", mails, func() (int64, error) {
			head, err := svc.Privacy.StartExport(ctx, u.ID, who)
			if err != nil {
				return 0, err
			}
			var cw countingWriter
			err = svc.Privacy.WriteExport(ctx, u.ID, head, &cw)
			bytes = cw.n
			return cw.n, err
		})
		if bytes < int64(mails)*100 {
			b.Fatalf("the export holds %d bytes for %d mails", bytes, mails)
		}
		measureExport(b, "erase (1,000 mails)", mails, func() (int64, error) {
			return 0, svc.Privacy.Erase(ctx, u.ID, who)
		})
		var left int64
		if err := svc.DB.R.Raw("SELECT COUNT(*) FROM send_messages WHERE email = ?", who).Scan(&left).Error; err != nil || left != 0 {
			b.Fatalf("after the erasure %d ledger rows hold the address (%v)", left, err)
		}
	}
}
