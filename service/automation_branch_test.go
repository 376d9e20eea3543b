package service_test

import (
	"strconv"
	"sync"
	"testing"
	"time"

	"herald/models"
	"herald/service"
	"herald/service/servicetest"
)

// TestAutomationBranch: a branch after the first email sends a person
// who opened it down path a at once, and the others (no open, or only a
// mail proxy's) down path b when its wait runs out; each contact gets
// each step once, however many rounds run.
func TestAutomationBranch(t *testing.T) {
	t.Parallel()
	f := servicetest.NewSendFixture(t, true)
	typeA := f.ContactType("Customers")
	a, err := f.Svc.Automations.Create(f.Ctx, f.Acct, service.AutomationInput{Type: "custom", AutomationFor: "contacts_" + strconv.FormatInt(typeA, 10),
		AutomationName: "Branching", UnsubscribeGroupID: strconv.FormatInt(f.Group, 10)})
	if err != nil {
		t.Fatal(err)
	}
	email := func(subject, path string) *models.AutomationSchedule {
		t.Helper()
		r, err := f.Svc.Automations.AddSchedule(f.Ctx, f.Acct, service.ScheduleInput{Utr: a.Utr, SenderID: strconv.FormatInt(f.Sender, 10),
			Subject: subject, WaitingPeriod: "0", WaitingType: "instantly", TemplateID: "1", PreviewImg: "01-blank.png",
			TemplateHTML: `<p>` + subject + ` <a href="https://shop.example.com/">shop</a></p>`, Path: path})
		if err != nil {
			t.Fatalf("%s: %v", subject, err)
		}
		return r
	}
	branch := service.BranchInput{Utr: a.Utr, WaitingPeriod: "2", WaitingType: "days"}
	if _, err := f.Svc.Automations.AddBranch(f.Ctx, f.Acct, branch); errorMessage(err) != "Add an email before the branch: it waits for an open or click of one." {
		t.Fatalf("a branch first: %v", err)
	}
	if _, err := f.Svc.Automations.AddSchedule(f.Ctx, f.Acct, service.ScheduleInput{Utr: a.Utr, SenderID: strconv.FormatInt(f.Sender, 10), Subject: "A",
		WaitingPeriod: "0", WaitingType: "instantly", TemplateID: "1", PreviewImg: "01-blank.png", TemplateHTML: "<p>a</p>", Path: "a"}); errorMessage(err) != "The automation has no branch: add one first." {
		t.Fatalf("a path without a branch: %v", err)
	}
	email("First", "")
	if _, err := f.Svc.Automations.AddBranch(f.Ctx, f.Acct, service.BranchInput{Utr: a.Utr, WaitingPeriod: "0", WaitingType: "instantly"}); fieldMessage(err, "waiting_type") == "" || fieldMessage(err, "waiting_period") == "" {
		t.Fatalf("a branch without a wait: %v", err)
	}
	br, err := f.Svc.Automations.AddBranch(f.Ctx, f.Acct, branch)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := f.Svc.Automations.AddBranch(f.Ctx, f.Acct, branch); errorMessage(err) != "The automation already has a branch." {
		t.Fatalf("a second branch: %v", err)
	}
	if _, err := f.Svc.Automations.AddSchedule(f.Ctx, f.Acct, service.ScheduleInput{Utr: a.Utr, SenderID: strconv.FormatInt(f.Sender, 10), Subject: "Late",
		WaitingPeriod: "0", WaitingType: "instantly", TemplateID: "1", PreviewImg: "01-blank.png", TemplateHTML: "<p>a</p>"}); errorMessage(err) != "Add emails after the branch to one of its paths." {
		t.Fatalf("an email after the branch on the main line: %v", err)
	}
	if _, err := f.Svc.Automations.AddWelcomeSeries(f.Ctx, f.Acct, a.Utr); errorMessage(err) != "Add emails after the branch to one of its paths." {
		t.Fatalf("a welcome series after the branch: %v", err)
	}
	rows, err := f.Svc.Automations.Schedules(f.Ctx, f.Acct, a.Utr)
	if err != nil || len(rows) != 2 {
		t.Fatalf("steps %d %v", len(rows), err)
	}
	if err := f.Svc.Automations.DeleteSchedule(f.Ctx, f.Acct, a.Utr, rows[0].Utr); errorMessage(err) != "Remove the branch first: it needs an email before it." {
		t.Fatalf("delete of the only email before the branch: %v", err)
	}
	email("Thanks", "a")
	email("Nudge", "b")
	if err := f.Svc.Automations.DeleteSchedule(f.Ctx, f.Acct, a.Utr, br.Utr); errorMessage(err) != "Remove the emails of both paths before the branch." {
		t.Fatalf("delete of a branch with paths: %v", err)
	}
	// The branch has no send of its own: three emails, three sends.
	if n := f.Scalar("SELECT COUNT(*) FROM single_sends WHERE automation_id = ?", a.ID); n != 3 {
		t.Fatalf("%d step sends, want 3", n)
	}
	if err := f.Svc.Automations.SetLive(f.Ctx, f.Acct, a.Utr); err != nil {
		t.Fatal(err)
	}
	for _, e := range []string{"reader@example.com", "quiet@example.com", "proxied@example.com"} {
		f.AddContact(typeA, e)
	}
	f.Settle()
	var first models.SingleSend
	f.Svc.DB.R.Where("automation_id = ? AND subject = ?", a.ID, "First").First(&first)
	for _, e := range []string{"reader@example.com", "quiet@example.com", "proxied@example.com"} {
		if n := f.StepsOf(e, "First"); n != 1 {
			t.Fatalf("%s got First %d times", e, n)
		}
	}
	f.Advance(time.Hour)
	if err := f.Svc.Tracking.OpenHit(f.Ctx, tokenOf(t, f.SentTo(first.Utr, "reader@example.com")), personHit); err != nil {
		t.Fatal(err)
	}
	if err := f.Svc.Tracking.OpenHit(f.Ctx, tokenOf(t, f.SentTo(first.Utr, "proxied@example.com")), gmailProxyHit); err != nil {
		t.Fatal(err)
	}
	f.Settle()
	if f.StepsOf("reader@example.com", "Thanks") != 1 || f.StepsOf("reader@example.com", "Nudge") != 0 {
		t.Fatalf("reader after opening: thanks %d nudge %d", f.StepsOf("reader@example.com", "Thanks"), f.StepsOf("reader@example.com", "Nudge"))
	}
	for _, e := range []string{"quiet@example.com", "proxied@example.com"} {
		if f.StepsOf(e, "Thanks")+f.StepsOf(e, "Nudge") != 0 {
			t.Fatalf("%s left the branch before its wait ran out", e)
		}
	}
	en, err := f.Svc.Automations.Enrolment(f.Ctx, f.Acct, a.Utr)
	if err != nil || en.Active != 2 || en.Finished != 1 {
		t.Fatalf("enrolment while waiting: %+v %v", en, err)
	}
	// Who waits at the branch: the two that did not open as people.
	who, more, err := f.Svc.Automations.StepContacts(f.Ctx, f.Acct, a.Utr, br.Utr, 1)
	if err != nil || more || len(who) != 2 || who[0].Email != "quiet@example.com" || who[1].Email != "proxied@example.com" {
		t.Fatalf("contacts at the branch: %+v %v %v", who, more, err)
	}
	if who, _, err := f.Svc.Automations.StepContacts(f.Ctx, f.Acct, a.Utr, br.Utr, 2); err != nil || len(who) != 0 {
		t.Fatalf("page 2 at the branch: %+v %v", who, err)
	}
	other := f.SecondAccount("other@example.org")
	if _, _, err := other.Svc.Automations.StepContacts(other.Ctx, other.Acct, a.Utr, br.Utr, 1); service.ErrorCode(err) != service.CodeNotFound {
		t.Fatalf("another account reads the step: %v", err)
	}
	f.Advance(47 * time.Hour)
	f.Settle()
	f.Settle()
	for _, e := range []string{"quiet@example.com", "proxied@example.com"} {
		if f.StepsOf(e, "Nudge") != 1 || f.StepsOf(e, "Thanks") != 0 {
			t.Fatalf("%s after the wait: nudge %d thanks %d", e, f.StepsOf(e, "Nudge"), f.StepsOf(e, "Thanks"))
		}
	}
	if f.StepsOf("reader@example.com", "Thanks") != 1 || f.StepsOf("reader@example.com", "Nudge") != 0 {
		t.Fatal("the reader got a step twice or the other path")
	}
	en, err = f.Svc.Automations.Enrolment(f.Ctx, f.Acct, a.Utr)
	if err != nil || en.Finished != 3 || en.Active != 0 {
		t.Fatalf("enrolment at the end: %+v %v", en, err)
	}
}

// TestAutomationBranchTwoEngines: two engines (two processes on
// PostgreSQL) run their rounds at once around the branch's decisions;
// each contact still gets the first email once and exactly one path's
// email once, the one its opens call for.
func TestAutomationBranchTwoEngines(t *testing.T) {
	t.Parallel()
	f := servicetest.NewSendFixture(t, true)
	typeA := f.ContactType("Customers")
	a, err := f.Svc.Automations.Create(f.Ctx, f.Acct, service.AutomationInput{Type: "custom", AutomationFor: "contacts_" + strconv.FormatInt(typeA, 10),
		AutomationName: "Two engines", UnsubscribeGroupID: strconv.FormatInt(f.Group, 10)})
	if err != nil {
		t.Fatal(err)
	}
	add := func(subject, path string) {
		t.Helper()
		if _, err := f.Svc.Automations.AddSchedule(f.Ctx, f.Acct, service.ScheduleInput{Utr: a.Utr, SenderID: strconv.FormatInt(f.Sender, 10),
			Subject: subject, WaitingPeriod: "0", WaitingType: "instantly", TemplateID: "1", PreviewImg: "01-blank.png",
			TemplateHTML: `<p>` + subject + `</p>`, Path: path}); err != nil {
			t.Fatal(err)
		}
	}
	add("First", "")
	if _, err := f.Svc.Automations.AddBranch(f.Ctx, f.Acct, service.BranchInput{Utr: a.Utr, WaitingPeriod: "1", WaitingType: "hours"}); err != nil {
		t.Fatal(err)
	}
	add("Yes", "a")
	add("No", "b")
	if err := f.Svc.Automations.SetLive(f.Ctx, f.Acct, a.Utr); err != nil {
		t.Fatal(err)
	}
	var emails []string
	for i := 0; i < 12; i++ {
		e := "c" + strconv.Itoa(i) + "@example.com"
		emails = append(emails, e)
		f.AddContact(typeA, e)
	}
	f.Settle()
	var first models.SingleSend
	f.Svc.DB.R.Where("automation_id = ? AND subject = ?", a.ID, "First").First(&first)
	f.Advance(10 * time.Minute)
	opened := map[string]bool{}
	for i, e := range emails {
		if i%2 == 0 {
			opened[e] = true
			if err := f.Svc.Tracking.OpenHit(f.Ctx, tokenOf(t, f.SentTo(first.Utr, e)), personHit); err != nil {
				t.Fatal(err)
			}
		}
	}
	second, err := f.Svc.NewSending(f.Ctx, service.SendingConfig{Conns: 1, Tick: time.Hour})
	if err != nil {
		t.Fatal(err)
	}
	both := func() {
		t.Helper()
		var wg sync.WaitGroup
		for _, s := range []*service.Sending{f.Sending, second} {
			wg.Add(1)
			go func() {
				defer wg.Done()
				for i := 0; i < 3; i++ {
					if err := s.Tick(f.Ctx); err != nil {
						t.Error(err)
					}
				}
			}()
		}
		wg.Wait()
	}
	both() // the openers leave the branch early
	f.Advance(time.Hour)
	both() // the others at the end of the wait
	f.Settle()
	for _, e := range emails {
		yes, no := f.StepsOf(e, "Yes"), f.StepsOf(e, "No")
		if f.StepsOf(e, "First") != 1 || opened[e] && (yes != 1 || no != 0) || !opened[e] && (yes != 0 || no != 1) {
			t.Errorf("%s (opened %v): first %d yes %d no %d", e, opened[e], f.StepsOf(e, "First"), yes, no)
		}
	}
}

// TestAutomationClickTakesPathA: a person's click on a tracked link of an
// automation's email is followed to the link of the design (the carrier
// send knows its links, as a single send does once resolved) and sends
// the contact down path a before the branch's wait runs out.
func TestAutomationClickTakesPathA(t *testing.T) {
	t.Parallel()
	f := servicetest.NewSendFixture(t, true)
	typeA := f.ContactType("Customers")
	a, err := f.Svc.Automations.Create(f.Ctx, f.Acct, service.AutomationInput{Type: "custom", AutomationFor: "contacts_" + strconv.FormatInt(typeA, 10),
		AutomationName: "Clicks", UnsubscribeGroupID: strconv.FormatInt(f.Group, 10)})
	if err != nil {
		t.Fatal(err)
	}
	add := func(subject, path string) {
		t.Helper()
		if _, err := f.Svc.Automations.AddSchedule(f.Ctx, f.Acct, service.ScheduleInput{Utr: a.Utr, SenderID: strconv.FormatInt(f.Sender, 10),
			Subject: subject, WaitingPeriod: "0", WaitingType: "instantly", TemplateID: "1", PreviewImg: "01-blank.png",
			TemplateHTML: `<p>` + subject + ` <a href="https://shop.example.com/">shop</a> <a href="https://shop.example.com/sale?who=((email))">sale</a></p>`, Path: path}); err != nil {
			t.Fatal(err)
		}
	}
	add("First", "")
	if _, err := f.Svc.Automations.AddBranch(f.Ctx, f.Acct, service.BranchInput{Utr: a.Utr, WaitingPeriod: "1", WaitingType: "days"}); err != nil {
		t.Fatal(err)
	}
	add("Thanks", "a")
	add("Nudge", "b")
	if err := f.Svc.Automations.SetLive(f.Ctx, f.Acct, a.Utr); err != nil {
		t.Fatal(err)
	}
	f.AddContact(typeA, "clicker@example.com")
	f.AddContact(typeA, "quiet@example.com")
	f.Settle()
	var first models.SingleSend
	f.Svc.DB.R.Where("automation_id = ? AND subject = ?", a.ID, "First").First(&first)
	f.Advance(time.Minute) // past the scanner window of a click
	to, err := f.Svc.Tracking.ClickHit(f.Ctx, tokenOf(t, f.SentTo(first.Utr, "clicker@example.com")), 1, personHit)
	if err != nil || to != "https://shop.example.com/sale?who=clicker@example.com" {
		t.Fatalf("click on the second link: %q %v", to, err)
	}
	f.Settle()
	if f.StepsOf("clicker@example.com", "Thanks") != 1 || f.StepsOf("clicker@example.com", "Nudge") != 0 {
		t.Fatalf("clicker: thanks %d nudge %d", f.StepsOf("clicker@example.com", "Thanks"), f.StepsOf("clicker@example.com", "Nudge"))
	}
	if f.StepsOf("quiet@example.com", "Thanks")+f.StepsOf("quiet@example.com", "Nudge") != 0 {
		t.Fatal("the quiet contact left the branch before its wait ran out")
	}
}

// TestAutomationBranchWaitEdit: the branch's wait changes with the check
// of adding one; a contact already waiting keeps the time it reached the
// branch, its deadline that time plus the new wait.
func TestAutomationBranchWaitEdit(t *testing.T) {
	t.Parallel()
	f := servicetest.NewSendFixture(t, true)
	typeA := f.ContactType("Customers")
	a, err := f.Svc.Automations.Create(f.Ctx, f.Acct, service.AutomationInput{Type: "custom", AutomationFor: "contacts_" + strconv.FormatInt(typeA, 10),
		AutomationName: "Edited wait", UnsubscribeGroupID: strconv.FormatInt(f.Group, 10)})
	if err != nil {
		t.Fatal(err)
	}
	add := func(subject, path string) {
		t.Helper()
		if _, err := f.Svc.Automations.AddSchedule(f.Ctx, f.Acct, service.ScheduleInput{Utr: a.Utr, SenderID: strconv.FormatInt(f.Sender, 10),
			Subject: subject, WaitingPeriod: "0", WaitingType: "instantly", TemplateID: "1", PreviewImg: "01-blank.png",
			TemplateHTML: `<p>` + subject + `</p>`, Path: path}); err != nil {
			t.Fatal(err)
		}
	}
	add("First", "")
	if _, err := f.Svc.Automations.UpdateBranchWait(f.Ctx, f.Acct, service.BranchInput{Utr: a.Utr, WaitingPeriod: "2", WaitingType: "hours"}); service.ErrorCode(err) != service.CodeNotFound {
		t.Fatalf("the wait of a branch that is not there: %v", err)
	}
	if _, err := f.Svc.Automations.AddBranch(f.Ctx, f.Acct, service.BranchInput{Utr: a.Utr, WaitingPeriod: "2", WaitingType: "days"}); err != nil {
		t.Fatal(err)
	}
	add("Thanks", "a")
	add("Nudge", "b")
	if err := f.Svc.Automations.SetLive(f.Ctx, f.Acct, a.Utr); err != nil {
		t.Fatal(err)
	}
	f.AddContact(typeA, "quiet@example.com")
	f.Settle()
	if f.StepsOf("quiet@example.com", "First") != 1 {
		t.Fatal("no first email")
	}
	f.Advance(time.Hour)

	for _, bad := range []service.BranchInput{{WaitingPeriod: "0", WaitingType: "hours"}, {WaitingPeriod: "3", WaitingType: "instantly"}, {WaitingPeriod: "3651", WaitingType: "days"}} {
		bad.Utr = a.Utr
		if _, err := f.Svc.Automations.UpdateBranchWait(f.Ctx, f.Acct, bad); fieldMessage(err, "waiting_period")+fieldMessage(err, "waiting_type") == "" {
			t.Fatalf("wait %+v taken: %v", bad, err)
		}
	}
	other := f.SecondAccount("other@example.org")
	if _, err := other.Svc.Automations.UpdateBranchWait(other.Ctx, other.Acct, service.BranchInput{Utr: a.Utr, WaitingPeriod: "1", WaitingType: "hours"}); service.ErrorCode(err) != service.CodeNotFound {
		t.Fatalf("another account changes the wait: %v", err)
	}
	// Two days become three hours: the contact, at the branch for an hour
	// now, leaves two hours from now.
	br, err := f.Svc.Automations.UpdateBranchWait(f.Ctx, f.Acct, service.BranchInput{Utr: a.Utr, WaitingPeriod: "3", WaitingType: "hours"})
	if err != nil || br.WaitingPeriod != 3 || br.WaitingType != "hours" {
		t.Fatalf("the new wait: %+v %v", br, err)
	}
	if n := f.Scalar("SELECT COUNT(*) FROM automation_schedules WHERE automation_id = ? AND kind = 'branch' AND waiting_period = 3 AND waiting_type = 'hours'", a.ID); n != 1 {
		t.Fatal("the branch's wait is not stored")
	}
	f.Advance(time.Hour + 59*time.Minute)
	f.Settle()
	if f.StepsOf("quiet@example.com", "Nudge") != 0 {
		t.Fatal("the contact left before the new deadline")
	}
	f.Advance(time.Minute)
	f.Settle()
	f.Settle()
	if f.StepsOf("quiet@example.com", "Nudge") != 1 || f.StepsOf("quiet@example.com", "Thanks") != 0 {
		t.Fatalf("after the new deadline: nudge %d thanks %d", f.StepsOf("quiet@example.com", "Nudge"), f.StepsOf("quiet@example.com", "Thanks"))
	}
}
