package service_test

import (
	"context"
	"encoding/json"
	"fmt"
	"reflect"
	"testing"
	"time"

	"herald/dbtest"
	"herald/models"
	"herald/service"
)

// TestRepairReadsSuppressionsAgain fills the suppressions as herald up to
// migration 00035 left them, in every shape its recorders wrote (the
// ledger's error text, a report's status and diagnostic, the soft-bounce
// limit) and in shapes they never wrote, for two accounts, then migrates:
// only a gone mailbox stays suppressed (with its reason code); every
// other suppression a recorder made is lifted, told in the account's
// audit log and kept in lifted_suppressions; the soft-bounce limit's and
// the unknown shapes stay as they were. Migrating again changes nothing.
func TestRepairReadsSuppressionsAgain(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	db, err := service.OpenDB(dbtest.DSN(t))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	if err := service.MigrateTo(ctx, db, 35); err != nil {
		t.Fatal(err)
	}
	exec := func(q string, args ...any) {
		t.Helper()
		if err := db.W.Exec(q, args...).Error; err != nil {
			t.Fatalf("%s: %v", q, err)
		}
	}
	now := models.NewTimestamp(models.Now())
	for _, id := range []int64{1, 2} {
		exec(`INSERT INTO users (id, name, email, password_hash, public_key, secret_hash, created_at, updated_at) VALUES (?, ?, ?, '', ?, ?, ?, ?)`,
			id, fmt.Sprint("Account ", id), fmt.Sprintf("owner%d@herald.test", id), fmt.Sprint("pk", id), []byte{byte(id)}, now, now)
	}
	at := models.NewTimestamp(time.Date(2026, 3, 4, 10, 11, 12, 123456000, time.UTC))
	type old struct {
		user                                            int64
		email, reason, status, diagnostic, source, code string // code: reason_code as stored
	}
	olds := []old{
		// The ledger: a real unknown user at RCPT (kept; its reply
		// becomes its status and diagnostic) …
		{1, "unknown@example.com", "delivery: permanent failure at rcpt: 550 5.1.1 <unknown@example.com>: Recipient address rejected: User unknown in virtual mailbox table", "", "", "smtp", ""},
		// … an old one without the enhanced code (kept), …
		{2, "gone@example.org", "delivery: permanent failure at rcpt: 550 User unknown", "", "", "", ""},
		// … a retry window that ran out on a full mailbox, …
		{1, "full@example.com", "delivery: temporary failure at rcpt: 452 4.2.2 Mailbox full", "", "", "smtp", ""},
		// … a policy code at RCPT (a block).
		{2, "listed@example.org", "delivery: permanent failure at rcpt: 550 5.7.1 Service unavailable; client [192.0.2.1] blocked using zen.spamhaus.org", "", "", "smtp", ""},
		// Reports: a DSN whose Status says 5.1.1 over a blacklist's words, …
		{1, "blacklisted@example.com", "5.1.1 smtp; 550 5.7.1 IP address blacklisted (dsn)", "5.1.1", "smtp; 550 5.7.1 IP address blacklisted", "dsn", ""},
		// … a refusal of the sender, …
		{1, "sender@example.com", "5.1.8 smtp; 501 5.1.8 <news@shop.example.com>: Sender address rejected: Domain not found (dsn)", "5.1.8", "smtp; 501 5.1.8 <news@shop.example.com>: Sender address rejected: Domain not found", "dsn", ""},
		// … a bounce text without a code, …
		{1, "text@example.com", "The mail could not be delivered to one or more recipients (text)", "", "The mail could not be delivered to one or more recipients", "text", ""},
		// … a provider's bounce that said nothing, …
		{2, "quiet@example.org", "hard_bounce (ses)", "", "", "ses", ""},
		// … and a real unknown user (kept).
		{2, "nobody@example.org", "5.1.1 smtp; 550 5.1.1 <nobody@example.org>... User unknown (dsn)", "5.1.1", "smtp; 550 5.1.1 <nobody@example.org>... User unknown", "dsn", ""},
		// The soft-bounce limit: a rule that still holds (kept, its last
		// report's reason filled in).
		{1, "soft@example.com", "3 soft bounces within 30 days; the last: 4.2.2 Mailbox full (ses)", "4.2.2", "Mailbox full", "ses", ""},
		// Shapes no recorder wrote: left alone.
		{1, "operator@example.com", "Asked us by phone never to mail her again", "", "", "smtp", ""},
		{2, "manual@example.org", "550", "", "", "", ""},
		{2, "build@example.org", "delivery: invalid message: display name with a line break", "", "", "smtp", ""},
		// Written since 00035 with its reason: not read again.
		{2, "new@example.org", "5.0.0 smtp; 550 Requested action not taken (dsn)", "5.0.0", "smtp; 550 Requested action not taken", "dsn", "userunknown"},
	}
	for _, o := range olds {
		exec(`INSERT INTO suppressions (user_id, email, reason, send_id, status_code, diagnostic, source, reason_code, created_at) VALUES (?, ?, ?, 7, ?, ?, ?, ?, ?)`,
			o.user, o.email, o.reason, o.status, o.diagnostic, o.source, o.code, at)
	}
	// More than one batch: every odd one a retry window run out (lifted),
	// every even one an unknown user (kept).
	const bulk = 1203
	for i := 0; i < bulk; i++ {
		reason := "delivery: permanent failure at rcpt: 550 5.1.1 User unknown"
		if i%2 == 1 {
			reason = "delivery: temporary failure at rcpt: 451 4.3.0 Try again later"
		}
		exec(`INSERT INTO suppressions (user_id, email, reason, created_at) VALUES (2, ?, ?, ?)`, fmt.Sprintf("bulk%04d@example.net", i), reason, at)
	}

	before := time.Now().Add(-time.Second)
	if err := db.Migrate(ctx); err != nil {
		t.Fatal(err)
	}

	type kept struct{ reason, status, diagnostic, source, code string }
	stays := map[string]kept{}
	var sups []models.Suppression
	if err := db.R.Order("id").Find(&sups).Error; err != nil {
		t.Fatal(err)
	}
	bulkKept := 0
	for _, s := range sups {
		if s.CreatedAt.Time.Compare(at.Time) != 0 {
			t.Errorf("%s: created_at %v, want %v", s.Email, s.CreatedAt, at)
		}
		if s.UserID == 2 && len(s.Email) > 4 && s.Email[:4] == "bulk" {
			bulkKept++
			if s.ReasonCode != "userunknown" || s.StatusCode != "5.1.1" || s.Diagnostic != "550 5.1.1 User unknown" {
				t.Errorf("%s kept as %q %q %q", s.Email, s.ReasonCode, s.StatusCode, s.Diagnostic)
			}
			continue
		}
		stays[s.Email] = kept{s.Reason, s.StatusCode, s.Diagnostic, s.Source, s.ReasonCode}
	}
	if bulkKept != (bulk+1)/2 {
		t.Errorf("%d bulk unknown users kept, want %d", bulkKept, (bulk+1)/2)
	}
	wantStays := map[string]kept{
		"unknown@example.com":  {olds[0].reason, "5.1.1", "550 5.1.1 <unknown@example.com>: Recipient address rejected: User unknown in virtual mailbox table", "smtp", "userunknown"},
		"gone@example.org":     {olds[1].reason, "550", "550 User unknown", "", "userunknown"},
		"nobody@example.org":   {olds[8].reason, "5.1.1", olds[8].diagnostic, "dsn", "userunknown"},
		"soft@example.com":     {olds[9].reason, "4.2.2", "Mailbox full", "ses", "mailboxfull"},
		"operator@example.com": {olds[10].reason, "", "", "smtp", ""},
		"manual@example.org":   {olds[11].reason, "", "", "", ""},
		"build@example.org":    {olds[12].reason, "", "", "smtp", ""},
		"new@example.org":      {olds[13].reason, "5.0.0", olds[13].diagnostic, "dsn", "userunknown"},
	}
	if !reflect.DeepEqual(stays, wantStays) {
		t.Errorf("suppressions after the repair:\n%+v\nwant\n%+v", stays, wantStays)
	}

	// What was lifted, with its old words and its new reading.
	type lift struct {
		user                                                 int64
		reason, status, diagnostic, source, reasonCode, kind string
	}
	var rows []models.LiftedSuppression
	if err := db.R.Order("id").Find(&rows).Error; err != nil {
		t.Fatal(err)
	}
	lifted := map[string]lift{}
	bulkLifted := 0
	for _, l := range rows {
		if l.SuppressedAt.Time.Compare(at.Time) != 0 || l.LiftedAt.Before(before) || l.LiftedAt.After(time.Now()) || l.SendID == nil && l.UserID == 1 {
			t.Errorf("%s: suppressed %v lifted %v send %v", l.Email, l.SuppressedAt, l.LiftedAt, l.SendID)
		}
		if l.UserID == 2 && l.Email[:4] == "bulk" {
			bulkLifted++
			if l.ReasonCode != "speeding" || l.Kind != "soft_bounce" {
				t.Errorf("%s lifted as %s %s", l.Email, l.ReasonCode, l.Kind)
			}
			continue
		}
		lifted[l.Email] = lift{l.UserID, l.Reason, l.StatusCode, l.Diagnostic, l.Source, l.ReasonCode, l.Kind}
	}
	if bulkLifted != bulk/2 {
		t.Errorf("%d bulk rows lifted, want %d", bulkLifted, bulk/2)
	}
	wantLifted := map[string]lift{
		"full@example.com":        {1, olds[2].reason, "", "", "smtp", "mailboxfull", "soft_bounce"},
		"listed@example.org":      {2, olds[3].reason, "", "", "smtp", "blocked", "block"},
		"blacklisted@example.com": {1, olds[4].reason, "5.1.1", olds[4].diagnostic, "dsn", "blocked", "block"},
		"sender@example.com":      {1, olds[5].reason, "5.1.8", olds[5].diagnostic, "dsn", "rejected", "block"},
		"text@example.com":        {1, olds[6].reason, "", olds[6].diagnostic, "text", "onhold", "soft_bounce"},
		"quiet@example.org":       {2, olds[7].reason, "", "", "ses", "undefined", "soft_bounce"},
	}
	if !reflect.DeepEqual(lifted, wantLifted) {
		t.Errorf("lifted:\n%+v\nwant\n%+v", lifted, wantLifted)
	}

	// One audit line per lifted address, in its own account's log.
	var audit []models.AuditEntry
	if err := db.R.Order("id").Find(&audit).Error; err != nil {
		t.Fatal(err)
	}
	lines := map[string]models.AuditEntry{}
	for _, a := range audit {
		if a.Action != string(service.AuditSuppressionLifted) || a.Actor != "Herald (bounce rules' repair)" || a.MemberID != 0 ||
			a.CreatedAt < before.UnixMilli() || a.CreatedAt > time.Now().UnixMilli() {
			t.Errorf("audit line %+v", a)
		}
		if _, dup := lines[a.Target]; dup {
			t.Errorf("two audit lines for %s", a.Target)
		}
		lines[a.Target] = a
	}
	if len(lines) != len(wantLifted)+bulk/2 {
		t.Errorf("%d audit lines, want %d", len(lines), len(wantLifted)+bulk/2)
	}
	for email, l := range wantLifted {
		if lines[email].UserID != l.user {
			t.Errorf("%s: audit line in account %d, want %d", email, lines[email].UserID, l.user)
		}
	}
	for email, want := range map[string]string{
		"sender@example.com": "was: 5.1.8 smtp; 501 5.1.8 <news@shop.example.com>: Sender address rejected: Domain not found (dsn); now read as rejected (block)",
		"full@example.com":   "was: 452 4.2.2 Mailbox full (at RCPT TO); now read as mailboxfull (soft bounce)",
		"text@example.com":   "was: The mail could not be delivered to one or more recipients (text); now read as onhold (soft bounce)",
	} {
		if got := lines[email].Detail; got != want {
			t.Errorf("%s: audit detail %q, want %q", email, got, want)
		}
	}
	if got := service.AuditLabel(string(service.AuditSuppressionLifted)); got != "Suppression lifted by the bounce rules' repair" {
		t.Errorf("label %q", got)
	}

	// Migrating again changes nothing.
	snapshot := func() string {
		t.Helper()
		var s []models.Suppression
		var l []models.LiftedSuppression
		var a []models.AuditEntry
		for _, q := range []any{&s, &l, &a} {
			if err := db.R.Order("id").Find(q).Error; err != nil {
				t.Fatal(err)
			}
		}
		b, err := json.Marshal([]any{s, l, a})
		if err != nil {
			t.Fatal(err)
		}
		return string(b)
	}
	first := snapshot()
	if err := db.Migrate(ctx); err != nil {
		t.Fatal(err)
	}
	if again := snapshot(); again != first {
		t.Error("a second Migrate changed the tables")
	}
}
