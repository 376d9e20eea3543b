package service_test

import (
	"context"
	"io"
	"testing"
	"time"

	"herald/dbtest"
	"herald/models"
	"herald/service"
	"herald/views/dashboard"
)

// BenchmarkDashboard reads and renders the dashboard of an account with
// 1,000,000 contacts, 100 sends with 1,000,000 ledger rows between them,
// and 400 days of figures (docs/BENCHMARKS.md). The data is
// written with a few set-based SQL statements (recursive CTEs, the same
// on SQLite and PostgreSQL). "overview" is the service read alone;
// "page" is the read and the templ render of the whole page.
//
//	go test -run '^$' -bench BenchmarkDashboard -benchtime 200x ./service/
func BenchmarkDashboard(b *testing.B) {
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
	const contacts, sends, perSend, days = 1_000_000, 100, 10_000, 400
	now := models.NewTimestamp(models.Now())
	start := time.Now()
	w := svc.DB.W.WithContext(ctx)
	exec := func(what, q string, args ...any) {
		b.Helper()
		t := time.Now()
		if err := w.Exec(q, args...).Error; err != nil {
			b.Fatalf("%s: %v", what, err)
		}
		b.Logf("%s: %v", what, time.Since(t).Round(time.Millisecond))
	}
	exec("contacts", `WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n WHERE i < ?)
		INSERT INTO contacts (user_id, contact_type_id, first_name, last_name, email, created_at, updated_at)
		SELECT ?, ?, 'First', 'Last', 'c' || i || '@example.com', ?, ? FROM n`, contacts, u.ID, ct.ID, now, now)
	exec("sends", `WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n WHERE i < ?)
		INSERT INTO single_sends (user_id, template_id, sender_id, unsubscribe_group_id, single_send_name, status, utr,
			triggered, delivered, unique_opens, unique_clicks, bounces, unsubscribes, sent_at, created_at, updated_at, resolved, completed_at)
		SELECT ?, 1, 1, 1, 'Send ' || i, 3, 'utr-' || i, ?, ?, ?, ?, ?, ?, ?, ?, ?, 1, ? FROM n`,
		sends, u.ID, perSend, perSend-50, perSend/4, perSend/20, 50, 10, now, now, now, now)
	var first int64
	if err := svc.DB.R.Model(&models.SingleSend{}).Select("MIN(id)").Where("user_id = ?", u.ID).Scan(&first).Error; err != nil {
		b.Fatal(err)
	}
	exec("ledger", `WITH RECURSIVE n(i) AS (SELECT 0 UNION ALL SELECT i + 1 FROM n WHERE i < ?)
		INSERT INTO send_messages (send_id, user_id, contact_id, email, state, sent_at)
		SELECT ? + i % ?, ?, NULL, 'c' || i || '@example.com', 2, ? FROM n`, sends*perSend-1, first, sends, u.ID, now)
	today := time.Now().UTC().Unix() / 86400
	exec("figures", `WITH RECURSIVE n(i) AS (SELECT 0 UNION ALL SELECT i + 1 FROM n WHERE i < ?)
		INSERT INTO account_daily (user_id, day, sent, delivered, bounces, opens, clicks, unsubscribes, complaints, contacts_added)
		SELECT ?, ? - i, 2500, 2480, 20, 600, 120, 5, 1, 2500 FROM n`, days-1, u.ID, today)
	b.Logf("data set built in %v", time.Since(start).Round(time.Millisecond))

	o, err := svc.Dashboard.Overview(ctx, u.ID)
	if err != nil {
		b.Fatal(err)
	}
	if o.Audience != contacts || len(o.Recent) != 6 || o.Total.Sent != 2500*service.DashboardDays {
		b.Fatalf("overview: audience %d, %d recent, sent %d", o.Audience, len(o.Recent), o.Total.Sent)
	}
	b.Run("overview", func(b *testing.B) {
		for b.Loop() {
			if _, err := svc.Dashboard.Overview(ctx, u.ID); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("page", func(b *testing.B) {
		for b.Loop() {
			o, err := svc.Dashboard.Overview(ctx, u.ID)
			if err != nil {
				b.Fatal(err)
			}
			if err := dashboard.Page(dashboard.Data{Name: "Big", Overview: o, Loc: time.UTC}).Render(ctx, io.Discard); err != nil {
				b.Fatal(err)
			}
		}
	})
}
