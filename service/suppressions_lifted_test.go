package service_test

import (
	"context"
	"fmt"
	"testing"
	"time"

	"herald/dbtest"
	"herald/models"
	"herald/service"
)

// TestLiftedSuppressionsList: the suppressions the bounce rules' repair
// lifted are listed per account, by pages newest lifted first (the id
// breaking a tie) and whole by id, the last made first, narrowed by a
// search; another account's are
// never among them; the count says whether the console links them. The
// handled reports keep each report's reason beside its status and words.
func TestLiftedSuppressionsList(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	svc := dbtest.Service(t)
	acct := func(name string) int64 {
		u, _, err := svc.Accounts.Create(ctx, service.AccountInput{Name: name, Email: name + "@herald.test", Password: "test-passphrase-9"})
		if err != nil {
			t.Fatal(err)
		}
		return u.ID
	}
	a, b := acct("ann"), acct("bob")
	if n, err := svc.Suppressions.LiftedCount(ctx, a); err != nil || n != 0 {
		t.Fatalf("count before: %d %v", n, err)
	}
	base := time.Date(2026, 5, 1, 12, 0, 0, 0, time.UTC)
	add := func(user int64, email string, lifted time.Time) {
		t.Helper()
		row := models.LiftedSuppression{UserID: user, Email: email, Reason: "5.1.8 smtp; 501 5.1.8 Sender address rejected (dsn)", StatusCode: "5.1.8",
			Diagnostic: "smtp; 501 5.1.8 Sender address rejected", Source: "dsn", ReasonCode: "rejected", Kind: "block",
			SuppressedAt: models.NewTimestamp(base.AddDate(0, -2, 0)), LiftedAt: models.NewTimestamp(lifted)}
		if err := svc.DB.W.Create(&row).Error; err != nil {
			t.Fatal(err)
		}
	}
	// Lifted at three times, out of id order; two at the same time.
	add(a, "old@example.com", base)
	add(a, "new1@example.com", base.Add(time.Hour))
	add(b, "bob@example.org", base.Add(2*time.Hour))
	add(a, "new2@example.com", base.Add(time.Hour))
	add(a, "middle@example.com", base.Add(30*time.Minute))

	list := func(user int64, f service.ListFilter) []string {
		t.Helper()
		var got []string
		if err := svc.Suppressions.EachLifted(ctx, user, f, func(l *models.LiftedSuppression) error {
			got = append(got, l.Email)
			return nil
		}); err != nil {
			t.Fatal(err)
		}
		return got
	}
	for _, tc := range []struct {
		name string
		f    service.ListFilter
		want string
	}{
		{"whole", service.ListFilter{}, "[middle@example.com new2@example.com new1@example.com old@example.com]"},
		{"first page", service.ListFilter{Page: 1, PerPage: 3}, "[new2@example.com new1@example.com middle@example.com]"},
		{"second page", service.ListFilter{Page: 2, PerPage: 3}, "[old@example.com]"},
		{"an asked sort is ignored", service.ListFilter{Page: 1, PerPage: 2, Sort: "email"}, "[new2@example.com new1@example.com]"},
		{"search", service.ListFilter{Search: " NEW", Page: 1, PerPage: 10}, "[new2@example.com new1@example.com]"},
		{"search without pages", service.ListFilter{Search: "old"}, "[old@example.com]"},
	} {
		if got := fmt.Sprint(list(a, tc.f)); got != tc.want {
			t.Errorf("%s: %s, want %s", tc.name, got, tc.want)
		}
	}
	if got := fmt.Sprint(list(b, service.ListFilter{})); got != "[bob@example.org]" {
		t.Errorf("bob's: %s", got)
	}
	if n, err := svc.Suppressions.LiftedCount(ctx, a); err != nil || n != 4 {
		t.Errorf("count: %d %v", n, err)
	}

	// The reports list keeps each report's reason.
	now := models.NewTimestamp(models.Now())
	for _, f := range []models.Feedback{
		{UserID: a, Email: "full@example.com", Kind: service.FeedbackSoftBounce, StatusCode: "4.2.2", Diagnostic: "Mailbox full", Source: "ses", ReasonCode: "mailboxfull", CreatedAt: now},
		{UserID: a, Email: "late@example.com", Kind: "deferral", StatusCode: "4.4.7", Diagnostic: "Delivery delayed", Source: "dsn", ReasonCode: "expired", CreatedAt: now},
	} {
		if err := svc.DB.W.Create(&f).Error; err != nil {
			t.Fatal(err)
		}
	}
	var got []string
	if err := svc.Feedback.Each(ctx, a, service.FeedbackFilter{ListFilter: service.ListFilter{Page: 1, PerPage: 10}}, func(f *models.Feedback) error {
		got = append(got, f.Email+" "+f.Kind+" "+f.ReasonCode+" "+f.StatusCode)
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	if fmt.Sprint(got) != "[late@example.com deferral expired 4.4.7 full@example.com soft_bounce mailboxfull 4.2.2]" {
		t.Errorf("reports: %q", got)
	}
}
