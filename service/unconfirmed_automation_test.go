package service_test

import (
	"testing"
	"time"

	"herald/models"
	"herald/service/servicetest"
)

// An unconfirmed contact's automation email waits (no mail while it is
// unconfirmed, however often the round looks), then goes once, when it
// has confirmed; a confirmed contact enrolled with it is mailed at once.
// Runs on PostgreSQL too when HERALD_TEST_DATABASE is set.
func TestUnconfirmedAutomationEmailWaits(t *testing.T) {
	t.Parallel()
	f := servicetest.NewSendFixture(t, true)
	typeID := f.ContactType("Customers")
	a := f.Automation(typeID, "0")
	if err := f.Svc.Automations.SetLive(f.Ctx, f.Acct, a.Utr); err != nil {
		t.Fatal(err)
	}
	f.AddContact(typeID, "later@example.com")
	f.Exec("UPDATE contacts SET status = ? WHERE email = ?", models.ContactUnconfirmed, "later@example.com")
	f.AddContact(typeID, "now@example.com")
	f.Settle()
	if f.StepsOf("now@example.com", "Step 1") != 1 {
		t.Fatalf("the confirmed contact got %d step 1 mails", f.StepsOf("now@example.com", "Step 1"))
	}
	if n := f.StepsOf("later@example.com", "Step"); n != 0 {
		t.Fatalf("an unconfirmed contact got %d automation mails", n)
	}
	if n := f.Scalar("SELECT COUNT(*) FROM automation_contacts WHERE user_id = ? AND email = ?", f.Acct, "later@example.com"); n != 1 {
		t.Fatalf("the unconfirmed contact has %d enrolments, want 1 (waiting)", n)
	}
	// Still unconfirmed an hour on: the email keeps waiting.
	for range 4 {
		f.Advance(16 * time.Minute)
		f.Settle()
	}
	if n := f.StepsOf("later@example.com", "Step"); n != 0 {
		t.Fatalf("an unconfirmed contact got %d automation mails after an hour", n)
	}
	// Confirmed: the waiting email goes at the round's next look, once.
	f.Exec("UPDATE contacts SET status = ? WHERE email = ?", models.ContactConfirmed, "later@example.com")
	f.Advance(16 * time.Minute)
	f.Settle()
	f.Settle()
	if n := f.StepsOf("later@example.com", "Step 1"); n != 1 {
		t.Fatalf("after confirming: %d step 1 mails, want 1", n)
	}
	if n := f.StepsOf("later@example.com", "Step 2"); n != 0 {
		t.Fatalf("step 2 went early: %d", n)
	}
}
