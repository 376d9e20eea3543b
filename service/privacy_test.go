package service_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"gorm.io/gorm"

	"herald/dbtest"
	"herald/models"
	"herald/service"
	"herald/service/servicetest"
)

// An address with a history (a send delivered to it, reports, an
// unsubscribe, a suppression, webhook events, hand-added segment rows, an
// automation enrolment, an import report, audit lines) is erased: no text
// column of any table holds it afterwards, in any form herald stores it;
// contacts/add then refuses it, an import skips it with the reason, the
// privacy export no longer finds it, and a form sign-up (LiftErasure)
// lets it in again. Another address keeps its contact.
func TestEraseLeavesNoAddress(t *testing.T) {
	t.Parallel()
	f := servicetest.NewSendFixture(t, true)
	const addr = "erase.me+tag@example.com"
	typeID := f.ContactType("People", addr, "keep@example.com")
	ss := f.WaitStatus(f.Create(f.Input("Spring", []string{"contacts_" + strconv.FormatInt(typeID, 10)}, nil)).Utr, models.SendCompleted, 20*time.Second)
	now := f.Now()
	enc := url.QueryEscape(addr)
	seg, err := f.Svc.Segments.Create(f.Ctx, f.Acct, service.SegmentInput{ContactTypeID: strconv.FormatInt(typeID, 10), SegmentName: "By hand", SelectField: []string{"first_name"}, SelectOperator: []string{"equals"}, Value: []string{"Nobody"}, QueryType: "and"})
	if err != nil {
		t.Fatal(err)
	}
	f.Exec("INSERT INTO segment_emails (user_id, segment_id, email, first_name, created_at, updated_at) VALUES (?, ?, ?, 'Ann', ?, ?)", f.Acct, seg.ID, addr, now, now)
	f.Exec("INSERT INTO feedback (user_id, send_id, email, kind, diagnostic, source, created_at) VALUES (?, ?, ?, 'soft_bounce', ?, 'dsn', ?)", f.Acct, ss.ID, addr, "452 <"+addr+">: mailbox full", now)
	f.Exec("INSERT INTO suppressions (user_id, email, reason, diagnostic, created_at) VALUES (?, ?, 'hard', ?, ?)", f.Acct, addr, "550 "+addr+" unknown", now)
	f.Exec("INSERT INTO lifted_suppressions (user_id, email, suppressed_at, lifted_at) VALUES (?, ?, ?, ?)", f.Acct, addr, now, now)
	f.Exec("INSERT INTO unsubscribers (user_id, unsubscribe_groups_id, email_address, created_at, updated_at) VALUES (?, NULL, ?, ?, ?)", f.Acct, addr, now, now)
	f.Exec("INSERT INTO unsubscribers (user_id, unsubscribe_groups_id, email_address, created_at, updated_at) VALUES (?, ?, ?, ?, ?)", f.Acct, f.Group, addr, now, now)
	f.Exec("INSERT INTO untied_reports (kind, source, email, why, created_at) VALUES ('bounce', 'dsn', ?, ?, ?)", addr, "no token for "+addr, now)
	f.Exec("INSERT INTO outbox_messages (user_id, mail_from, rcpt_to, subject, message, created_at) VALUES (?, 'a@b.c', ?, 's', ?, ?)", f.Acct, addr, []byte("To: "+addr+"\r\n\r\nhi"), now)
	f.Exec("INSERT INTO event_webhooks (user_id, url, events, secret, created_at, updated_at) VALUES (?, 'https://hooks.example.com/x', 'click', 's', ?, ?)", f.Acct, now, now)
	hook := f.Scalar("SELECT id FROM event_webhooks WHERE user_id = ?", f.Acct)
	f.Exec("INSERT INTO events (webhook_id, user_id, kind, email, url, created_at) VALUES (?, ?, 'click', ?, ?, ?)", hook, f.Acct, addr, "https://shop.example.com/?who="+enc, now)
	a := f.Automation(typeID, "")
	f.Exec("INSERT INTO automation_contacts (automation_id, user_id, email, first_name, due_at, enrolled_at, updated_at) VALUES (?, ?, ?, 'Ann', 0, ?, ?) ON CONFLICT DO NOTHING", a.ID, f.Acct, addr, now, now)
	f.Exec("INSERT INTO imports (user_id, contact_type_id, problems, created_at, updated_at) VALUES (?, ?, ?, ?, ?)", f.Acct, typeID, `[{"line":2,"reason":"duplicate `+addr+`"}]`, now, now)
	f.Exec("INSERT INTO audit_log (user_id, member_id, actor, action, target, detail, created_at) VALUES (?, 0, 'x', 'suppression.lifted', ?, 'x', 0)", f.Acct, addr)

	// Before: the export finds the contact and its mail.
	var before bytes.Buffer
	head, err := f.Svc.Privacy.StartExport(f.Ctx, f.Acct, strings.ToUpper(addr))
	if err != nil {
		t.Fatal(err)
	}
	if err := f.Svc.Privacy.WriteExport(f.Ctx, f.Acct, head, &before); err != nil {
		t.Fatal(err)
	}
	var doc struct {
		Email    string
		Erased   bool
		Contacts []models.ContactView
		Mails    []map[string]any
		Reports  []map[string]any
		Unsubscribes,
		Suppressions []map[string]any
		AutomationEnrolments []map[string]any `json:"automation_enrolments"`
	}
	if err := json.Unmarshal(before.Bytes(), &doc); err != nil {
		t.Fatalf("export is not JSON: %v\n%s", err, before.String())
	}
	if doc.Email != addr || len(doc.Contacts) != 1 || len(doc.Mails) != 1 || len(doc.Reports) != 1 || len(doc.Unsubscribes) != 2 || len(doc.Suppressions) != 2 || len(doc.AutomationEnrolments) != 1 {
		t.Fatalf("export before erasure: %s", before.String())
	}
	if c := doc.Contacts[0].Consent; c.Source != models.ConsentAPI || c.At == nil {
		t.Fatalf("consent of a contact added through the service: %+v", c)
	}

	if err := f.Svc.Privacy.Erase(f.Ctx, f.Acct, " "+strings.ToUpper(addr)); err != nil {
		t.Fatal(err)
	}
	for _, form := range []string{addr, strings.ToLower(addr), enc, "erase.me"} {
		if hits := findText(t, f, form); len(hits) > 0 {
			t.Errorf("%q still held after erasure in %v", form, hits)
		}
	}
	if n := f.Scalar("SELECT COUNT(*) FROM contacts WHERE email = ?", "keep@example.com"); n != 1 {
		t.Errorf("the other address's contact went: %d", n)
	}
	if n := f.Scalar("SELECT COUNT(*) FROM send_messages WHERE user_id = ? AND email LIKE 'erased:%'", f.Acct); n != 1 {
		t.Errorf("ledger rows with the hash: %d, want 1", n)
	}
	if n := f.Scalar("SELECT COUNT(*) FROM audit_log WHERE user_id = ? AND action = ?", f.Acct, string(service.AuditContactErased)); n != 1 {
		t.Errorf("audit lines of the erasure: %d", n)
	}

	// Not added again, not imported again.
	_, err = f.Svc.Contacts.Create(f.Ctx, f.Acct, service.ContactInput{ContactTypeID: strconv.FormatInt(typeID, 10), Email: addr, Country: "FR"})
	var se *service.Error
	if !errors.As(err, &se) || se.Code != service.CodeValidation || !strings.Contains(fmt.Sprint(se.Fields), service.MsgErased) {
		t.Fatalf("add an erased address: %v", err)
	}
	imp, err := f.Svc.Imports.Start(f.Ctx, f.Acct, typeID, "again.csv", -1)
	if err != nil {
		t.Fatal(err)
	}
	if err := f.Svc.Imports.Import(f.Ctx, imp, strings.NewReader("email,first_name\n"+strings.ToUpper(addr)+",Ann\nnew@example.com,Bob\n")); err != nil {
		t.Fatal(err)
	}
	if imp.Created != 1 || imp.Skipped != 1 || len(imp.Problems) != 1 || imp.Problems[0].Reason != service.MsgErased || imp.Problems[0].Line != 2 {
		t.Fatalf("import of an erased address: created %d skipped %d problems %+v", imp.Created, imp.Skipped, imp.Problems)
	}
	var consent models.Consent
	if err := f.Svc.DB.R.Raw("SELECT consent FROM contacts WHERE email = 'new@example.com'").Scan(&consent).Error; err != nil {
		t.Fatal(err)
	}
	if consent.Source != models.ConsentImport || consent.ImportID != imp.ID || consent.Basis != "api" || consent.At == nil {
		t.Fatalf("consent of an imported contact: %+v", consent)
	}
	head, err = f.Svc.Privacy.StartExport(f.Ctx, f.Acct, addr)
	if err != nil || !head.Erased {
		t.Fatalf("export after erasure: %+v %v", head, err)
	}

	// A form sign-up lifts the erasure.
	if err := f.Svc.Privacy.LiftErasure(f.Ctx, nil, f.Acct, addr); err != nil {
		t.Fatal(err)
	}
	if _, err := f.Svc.Contacts.Create(f.Ctx, f.Acct, service.ContactInput{ContactTypeID: strconv.FormatInt(typeID, 10), Email: addr, Country: "FR"}); err != nil {
		t.Fatalf("add after the erasure was lifted: %v", err)
	}
}

// findText walks every table and every text-like column of the database
// (sqlite_master / information_schema) and returns "table.column" where
// s occurs, case-insensitively.
func findText(t *testing.T, f *servicetest.SendFixture, s string) []string {
	t.Helper()
	db := f.Svc.DB.R
	type col struct{ Table, Column, Type string }
	var cols []col
	if f.Svc.DB.SQL().Postgres {
		if err := db.Raw(`SELECT table_name AS "table", column_name AS "column", data_type AS "type" FROM information_schema.columns
			WHERE table_schema = current_schema() AND data_type IN ('text', 'character varying', 'jsonb', 'json', 'bytea')`).Scan(&cols).Error; err != nil {
			t.Fatal(err)
		}
	} else {
		var tables []string
		if err := db.Raw("SELECT name FROM sqlite_master WHERE type = 'table'").Scan(&tables).Error; err != nil {
			t.Fatal(err)
		}
		for _, tb := range tables {
			var info []struct {
				Name string
				Type string
			}
			if err := db.Raw("SELECT name, type FROM pragma_table_info(?)", tb).Scan(&info).Error; err != nil {
				t.Fatal(err)
			}
			for _, c := range info {
				if ty := strings.ToUpper(c.Type); ty == "" || strings.Contains(ty, "TEXT") || strings.Contains(ty, "CHAR") || strings.Contains(ty, "BLOB") {
					cols = append(cols, col{tb, c.Name, ty})
				}
			}
		}
	}
	if len(cols) < 50 {
		t.Fatalf("only %d text columns found: the walk is broken", len(cols))
	}
	var hits []string
	for _, c := range cols {
		expr := `LOWER(CAST("` + c.Column + `" AS TEXT)) LIKE ?`
		arg := any("%" + strings.ToLower(s) + "%")
		if c.Type == "bytea" {
			expr, arg = `position(convert_to(?, 'UTF8') in "`+c.Column+`") > 0`, s
		}
		var n int64
		if err := db.Raw(`SELECT COUNT(*) FROM "`+c.Table+`" WHERE `+expr, arg).Scan(&n).Error; err != nil {
			t.Fatalf("%s.%s: %v", c.Table, c.Column, err)
		}
		if n > 0 {
			hits = append(hits, c.Table+"."+c.Column)
		}
	}
	return hits
}

// An unconfirmed contact receives no single send, and is deleted once it
// has been unconfirmed for 30 days on the service's clock; a confirmed one
// of the same age stays.
func TestUnconfirmedContacts(t *testing.T) {
	t.Parallel()
	f := servicetest.NewSendFixture(t, true)
	typeID := f.ContactType("People", "yes@example.com", "notyet@example.com")
	f.Exec("UPDATE contacts SET status = ? WHERE email = ?", models.ContactUnconfirmed, "notyet@example.com")
	ss := f.WaitStatus(f.Create(f.Input("Spring", []string{"contacts_" + strconv.FormatInt(typeID, 10)}, nil)).Utr, models.SendCompleted, 20*time.Second)
	led := f.Ledger(ss.ID)
	if _, ok := led["notyet@example.com"]; ok || len(led) != 1 {
		t.Fatalf("ledger of a send: %v, want only the confirmed contact", led)
	}
	if n, err := f.Svc.Contacts.PurgeUnconfirmed(f.Ctx); err != nil || n != 0 {
		t.Fatalf("purge of fresh unconfirmed contacts: %d %v", n, err)
	}
	f.Advance(31 * 24 * time.Hour)
	if n, err := f.Svc.Contacts.PurgeUnconfirmed(f.Ctx); err != nil || n != 1 {
		t.Fatalf("purge after 31 days: %d %v", n, err)
	}
	if n := f.Scalar("SELECT COUNT(*) FROM contacts WHERE user_id = ?", f.Acct); n != 1 {
		t.Fatalf("contacts left: %d, want the confirmed one", n)
	}
}

// LiftErasure inside a caller's write transaction, on a service whose
// erasure key is not made yet: the key is made inside that transaction.
// Made through the writer instead, it waited for the transaction that
// holds SQLite's one writer connection (until the context's end).
func TestLiftErasureInsideATransaction(t *testing.T) {
	t.Parallel()
	f := servicetest.NewSendFixture(t, false)
	ctx, cancel := context.WithTimeout(f.Ctx, 10*time.Second)
	defer cancel()
	err := f.Svc.DB.W.WithContext(ctx).Transaction(func(tx *gorm.DB) error {
		return f.Svc.Privacy.LiftErasure(ctx, tx, f.Acct, "again@example.com")
	})
	if err != nil {
		t.Fatalf("lift inside a transaction: %v", err)
	}
	if erased, err := f.Svc.Privacy.Erased(f.Ctx, f.Acct, "again@example.com"); err != nil || erased {
		t.Fatalf("erased %v, %v", erased, err)
	}
}

// The erasure finds an address's rows through an index in every table it
// reads by address, never by reading every account's rows. SQLite's plan
// is read as it is; PostgreSQL picks a sequential scan of a small test
// table whatever its indexes, so its plan is read with sequential scans
// priced out (a table without a usable index is still scanned then).
func TestEraseFindsAddressesByIndex(t *testing.T) {
	t.Parallel()
	svc := dbtest.Service(t)
	for _, q := range []string{
		"UPDATE events SET email = 'x' WHERE user_id = 1 AND email = 'a@example.com'",
		"UPDATE send_messages SET email = 'x' WHERE email = 'a@example.com' AND user_id = 1",
		"UPDATE contacts SET alt_email = NULL WHERE user_id = 1 AND alt_email = 'a@example.com'",
		"UPDATE feedback SET email = 'x' WHERE user_id = 1 AND email = 'a@example.com'",
		"UPDATE suppressions SET email = 'x' WHERE user_id = 1 AND email = 'a@example.com'",
		"UPDATE lifted_suppressions SET email = 'x' WHERE user_id = 1 AND email = 'a@example.com'",
		"UPDATE unsubscribers SET email_address = 'x' WHERE user_id = 1 AND email_address = 'a@example.com'",
		"DELETE FROM outbox_messages WHERE user_id = 1 AND rcpt_to = 'a@example.com'",
		"UPDATE untied_reports SET email = 'x' WHERE email = 'a@example.com'",
	} {
		table := strings.Fields(strings.TrimPrefix(strings.TrimPrefix(q, "UPDATE "), "DELETE FROM "))[0]
		var plan []string
		err := svc.DB.W.Transaction(func(tx *gorm.DB) error {
			if svc.DB.Dialect == "sqlite" {
				var rows []struct {
					ID, Parent, Notused int
					Detail              string
				}
				if err := tx.Raw("EXPLAIN QUERY PLAN " + q).Scan(&rows).Error; err != nil {
					return err
				}
				for _, r := range rows {
					plan = append(plan, r.Detail)
				}
				return nil
			}
			if err := tx.Exec("SET LOCAL enable_seqscan = off").Error; err != nil {
				return err
			}
			return tx.Raw("EXPLAIN "+q).Pluck("QUERY PLAN", &plan).Error
		})
		if err != nil {
			t.Fatalf("%s: %v", q, err)
		}
		all := strings.Join(plan, "\n")
		scan := strings.Contains(all, "Seq Scan on "+table) || slices.ContainsFunc(plan, func(d string) bool {
			return d == "SCAN "+table || (strings.HasPrefix(d, "SCAN "+table+" ") && !strings.Contains(d, "INDEX"))
		})
		if scan || len(plan) == 0 {
			t.Errorf("%s reads every row:\n%s", q, all)
		}
	}
}
