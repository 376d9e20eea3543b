package service_test

import (
	"errors"
	"strconv"
	"strings"
	"sync"
	"testing"

	"herald/models"
	"herald/service"
	"herald/service/servicetest"
)

// apiAutomation makes an automation of typeID that starts from the API,
// with one instant email whose subject and body read the trigger's data.
func apiAutomation(t *testing.T, f *servicetest.SendFixture, typeID int64) *models.Automation {
	t.Helper()
	a, err := f.Svc.Automations.Create(f.Ctx, f.Acct, service.AutomationInput{Type: "custom", AutomationFor: "contacts_" + strconv.FormatInt(typeID, 10),
		AutomationName: "Upgrade", UnsubscribeGroupID: strconv.FormatInt(f.Group, 10), Trigger: "api"})
	if err != nil {
		t.Fatal(err)
	}
	if a.TriggerKind != models.TriggerAPI {
		t.Fatalf("trigger kind %q", a.TriggerKind)
	}
	if _, err := f.Svc.Automations.AddSchedule(f.Ctx, f.Acct, service.ScheduleInput{Utr: a.Utr, SenderID: strconv.FormatInt(f.Sender, 10),
		Subject: "Your ((data.plan)) plan, ((first_name))", WaitingPeriod: "0", WaitingType: "instantly", TemplateID: "1", PreviewImg: "01-blank.png",
		TemplateHTML: `<p>Plan ((data.plan)) until ((data.until))</p>`}); err != nil {
		t.Fatal(err)
	}
	return a
}

func TestAutomationAPITrigger(t *testing.T) {
	t.Parallel()
	f := servicetest.NewSendFixture(t, true)
	typeA := f.ContactType("Customers", "ann@example.com", "cy@example.com")
	typeB := f.ContactType("Others", "bob@example.com")
	a := apiAutomation(t, f, typeA)
	trigger := func(in service.TriggerInput) (bool, error) {
		t.Helper()
		return f.Svc.Automations.Trigger(f.Ctx, f.Acct, in)
	}

	// Not live yet.
	if _, err := trigger(service.TriggerInput{Automation: a.Utr, Email: "ann@example.com"}); errorMessage(err) != "The automation is not live." {
		t.Fatalf("trigger of a draft: %v", err)
	}
	if err := f.Svc.Automations.SetLive(f.Ctx, f.Acct, a.Utr); err != nil {
		t.Fatal(err)
	}
	// Every problem of the body at once, before the automation is looked up.
	_, err := trigger(service.TriggerInput{Email: "not an address", DataNotObject: true})
	if service.ErrorCode(err) != service.CodeValidation || fieldMessage(err, "automation") == "" || fieldMessage(err, "email") == "" || fieldMessage(err, "data") == "" {
		t.Fatalf("bad body: %v", err)
	}
	if _, err := trigger(service.TriggerInput{Automation: "no-such-utr", Email: "ann@example.com"}); service.ErrorCode(err) != service.CodeNotFound {
		t.Fatalf("unknown automation: %v", err)
	}
	// Another account's automation is not found.
	other := f.SecondAccount("other@example.org")
	if _, err := other.Svc.Automations.Trigger(other.Ctx, other.Acct, service.TriggerInput{Automation: a.Utr, Email: "ann@example.com"}); service.ErrorCode(err) != service.CodeNotFound {
		t.Fatalf("another account's automation: %v", err)
	}
	// A contact of another type, or no contact at all.
	for _, email := range []string{"bob@example.com", "nobody@example.com"} {
		if _, err := trigger(service.TriggerInput{Automation: a.Utr, Email: email}); fieldMessage(err, "email") != "The email is not a contact of the automation's contact type." {
			t.Fatalf("%s: %v", email, err)
		}
	}
	_ = typeB

	got, err := trigger(service.TriggerInput{Automation: a.Utr, Email: " Ann@Example.com ", Data: map[string]string{"plan": "Gold <b>", "until": "May"}})
	if err != nil || !got {
		t.Fatalf("first trigger: %v %v", got, err)
	}
	got, err = trigger(service.TriggerInput{Automation: a.Utr, Email: "ann@example.com", Data: map[string]string{"plan": "Silver"}})
	if err != nil || got {
		t.Fatalf("second trigger: enrolled %v %v, want already enrolled", got, err)
	}
	// A contact entering the type is not enrolled: only the API enrols.
	f.AddContact(typeA, "new@example.com")
	f.Settle()
	if n := f.StepsOf("ann@example.com", "Your Gold <b> plan, N"); n != 1 {
		t.Fatalf("ann got %d mails with her data in the subject", n)
	}
	if n := f.StepsOf("new@example.com", "Your"); n != 0 {
		t.Fatalf("a contact entering the type was enrolled: %d mails", n)
	}
	var carrier models.SingleSend
	f.Svc.DB.R.Where("automation_id = ?", a.ID).First(&carrier)
	if body := htmlPart(t, f.SentTo(carrier.Utr, "ann@example.com")); !strings.Contains(body, "Plan Gold &lt;b&gt; until May") {
		t.Fatalf("ann's body does not hold her data, escaped: %s", body)
	}

	// An automation that starts from its target refuses the trigger.
	b := f.Automation(typeA, "0")
	if err := f.Svc.Automations.SetLive(f.Ctx, f.Acct, b.Utr); err != nil {
		t.Fatal(err)
	}
	if _, err := trigger(service.TriggerInput{Automation: b.Utr, Email: "ann@example.com"}); errorMessage(err) != "The automation does not start from the API." {
		t.Fatalf("trigger of a target automation: %v", err)
	}

	// Concurrent calls for one contact: exactly one enrols it (the unique
	// (automation_id, email) index decides; on PostgreSQL the calls run on
	// several connections at once).
	var wg sync.WaitGroup
	var mu sync.Mutex
	enrolled := 0
	for i := 0; i < 8; i++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			ok, err := f.Svc.Automations.Trigger(f.Ctx, f.Acct, service.TriggerInput{Automation: a.Utr, Email: "cy@example.com"})
			if err != nil {
				t.Error(err)
				return
			}
			if ok {
				mu.Lock()
				enrolled++
				mu.Unlock()
			}
		}()
	}
	wg.Wait()
	if enrolled != 1 {
		t.Fatalf("%d concurrent calls enrolled cy, want 1", enrolled)
	}
	f.Settle()
	if n := f.StepsOf("cy@example.com", "Your  plan"); n != 1 {
		t.Fatalf("cy (no data) got %d mails, want 1 with the placeholder empty", n)
	}
	if n := f.Scalar("SELECT COUNT(*) FROM automation_contacts WHERE automation_id = ?", a.ID); n != 2 {
		t.Fatalf("%d enrolments, want 2", n)
	}
}

// errorMessage is a service error's message ("" for none).
func errorMessage(err error) string {
	var se *service.Error
	if errors.As(err, &se) {
		return se.Message
	}
	return ""
}

// fieldMessage is the first message of a service error's field.
func fieldMessage(err error, field string) string {
	var se *service.Error
	if errors.As(err, &se) && len(se.Fields[field]) > 0 {
		return se.Fields[field][0]
	}
	return ""
}
