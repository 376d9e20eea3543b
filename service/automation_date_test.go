package service_test

import (
	"fmt"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"herald/models"
	"herald/service"
	"herald/service/servicetest"
)

// dateAutomation makes an automation of typeID that starts from the date
// field, with one instant email of the given subject.
func dateAutomation(t *testing.T, f *servicetest.SendFixture, typeID int64, field, offset, yearly, subject string) *models.Automation {
	t.Helper()
	a, err := f.Svc.Automations.Create(f.Ctx, f.Acct, service.AutomationInput{Type: "custom", AutomationFor: "contacts_" + strconv.FormatInt(typeID, 10),
		AutomationName: subject, UnsubscribeGroupID: strconv.FormatInt(f.Group, 10), Trigger: "date", DateField: field, DateOffsetDays: offset, DateYearly: yearly})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := f.Svc.Automations.AddSchedule(f.Ctx, f.Acct, service.ScheduleInput{Utr: a.Utr, SenderID: strconv.FormatInt(f.Sender, 10),
		Subject: subject + " ((first_name))", WaitingPeriod: "0", WaitingType: "instantly", TemplateID: "1", PreviewImg: "01-blank.png",
		TemplateHTML: `<p>` + subject + ` <a href="https://shop.example.com/">shop</a></p>`}); err != nil {
		t.Fatal(err)
	}
	if err := f.Svc.Automations.SetLive(f.Ctx, f.Acct, a.Utr); err != nil {
		t.Fatal(err)
	}
	return a
}

func dateField(t *testing.T, f *servicetest.SendFixture, name, typ string) {
	t.Helper()
	if _, err := f.Svc.Fields.Create(f.Ctx, f.Acct, service.FieldInput{FieldName: name, FieldType: typ}); err != nil {
		t.Fatal(err)
	}
}

func dateContact(t *testing.T, f *servicetest.SendFixture, typeID int64, email string, custom map[string]string) {
	t.Helper()
	if _, err := f.Svc.Contacts.Create(f.Ctx, f.Acct, service.ContactInput{ContactTypeID: strconv.FormatInt(typeID, 10), FirstName: "N", LastName: "L",
		Email: email, Country: "250", Custom: custom}); err != nil {
		t.Fatal(err)
	}
}

// TestAutomationDateTrigger: a yearly automation a week before a birthday
// and a one-off two days after a renewal date, in an account whose zone
// (Tokyo, UTC+9) is a day ahead of UTC at the moments the test uses.
func TestAutomationDateTrigger(t *testing.T) {
	t.Parallel()
	f := servicetest.NewSendFixture(t, true)
	if err := f.Svc.Accounts.SetTimeZone(f.Ctx, f.Acct, "Asia/Tokyo"); err != nil {
		t.Fatal(err)
	}
	dateField(t, f, "birthday", "datetime-local")
	dateField(t, f, "renewal", "datetime-local")
	members := f.ContactType("Members")
	dateContact(t, f, members, "ann@example.com", map[string]string{"birthday": "1990-03-10T08:30", "renewal": "2027-03-05"})
	dateContact(t, f, members, "eve@example.com", map[string]string{"birthday": "2000-02-29"})
	dateContact(t, f, members, "cy@example.com", nil)
	dateContact(t, f, members, "dan@example.com", nil)
	// A value the console would refuse, written by other means: skipped.
	f.Exec(`UPDATE contacts SET custom_fields = '{"birthday":"soon"}' WHERE email = 'dan@example.com'`)
	soon := dateAutomation(t, f, members, "birthday", "-7", "1", "Soon")
	if soon.TriggerKind != models.TriggerDate || soon.DateField != "birthday" || soon.DateOffsetDays != -7 || soon.DateYearly != 1 {
		t.Fatalf("automation %+v", soon)
	}
	dateAutomation(t, f, members, "renewal", "2", "0", "Renewed")

	// at moves the clock to a UTC time and lets the engine run.
	at := func(utc string) {
		t.Helper()
		tm, err := time.Parse(time.RFC3339, utc)
		if err != nil {
			t.Fatal(err)
		}
		f.Set(tm)
		f.Settle()
	}
	want := func(when string, counts map[string][2]int) {
		t.Helper()
		for email, c := range counts {
			if s, r := f.StepsOf(email, "Soon"), f.StepsOf(email, "Renewed"); s != c[0] || r != c[1] {
				t.Errorf("%s: %s got %d Soon and %d Renewed, want %d and %d", when, email, s, r, c[0], c[1])
			}
		}
	}
	none := [2]int{}
	// 2027 is not a leap year: eve's 29 February is on the 28th, a week
	// before which is 21 February in Tokyo (20 February 15:00 UTC).
	at("2027-02-20T14:59:00Z")
	want("20 Feb 2027 23:59 Tokyo", map[string][2]int{"ann@example.com": none, "eve@example.com": none, "cy@example.com": none, "dan@example.com": none})
	at("2027-02-20T15:00:00Z")
	want("21 Feb 2027 Tokyo", map[string][2]int{"ann@example.com": none, "eve@example.com": {1, 0}})
	// Ann's birthday a week ahead: 3 March in Tokyo, still 2 March in UTC.
	at("2027-03-02T14:59:59Z")
	want("2 March 2027 Tokyo", map[string][2]int{"ann@example.com": none})
	at("2027-03-02T15:00:00Z")
	want("3 March 2027 Tokyo", map[string][2]int{"ann@example.com": {1, 0}, "eve@example.com": {1, 0}})
	at("2027-03-03T10:00:00Z") // later the same day: nothing again
	want("later on 3 March 2027", map[string][2]int{"ann@example.com": {1, 0}})
	// Two days after the renewal date, once.
	at("2027-03-06T15:00:00Z")
	want("7 March 2027 Tokyo", map[string][2]int{"ann@example.com": {1, 1}, "eve@example.com": {1, 0}, "cy@example.com": none, "dan@example.com": none})

	// 2028 is a leap year: eve's birthday is the 29th, a week before is 22 February.
	at("2028-02-21T15:00:00Z")
	want("22 Feb 2028 Tokyo", map[string][2]int{"eve@example.com": {2, 0}})
	at("2028-03-02T15:00:00Z")
	want("3 March 2028 Tokyo", map[string][2]int{"ann@example.com": {2, 1}, "eve@example.com": {2, 0}})
	at("2028-03-06T15:00:00Z") // the one-off does not come back
	want("7 March 2028 Tokyo", map[string][2]int{"ann@example.com": {2, 1}, "cy@example.com": none, "dan@example.com": none})

	// One ledger row per address on the step's send, delivered; the send
	// counted each occurrence's message.
	var carrier models.SingleSend
	f.Svc.DB.R.Where("automation_id = ?", soon.ID).First(&carrier)
	led := f.Ledger(carrier.ID)
	if len(led) != 2 || led["ann@example.com"].State != models.MessageDelivered || led["eve@example.com"].State != models.MessageDelivered {
		t.Fatalf("ledger of Soon: %+v", led)
	}
	got, err := f.Svc.Automations.Get(f.Ctx, f.Acct, soon.Utr)
	if err != nil || got.TotalTriggered != 4 || got.TotalDelivered != 4 {
		t.Fatalf("totals of Soon: triggered %d delivered %d (%v), want 4 and 4", got.TotalTriggered, got.TotalDelivered, err)
	}
	if n := f.Scalar("SELECT COUNT(*) FROM automation_contacts WHERE automation_id = ? AND occurrence = 2028 AND state = ?", soon.ID, models.EnrolDone); n != 2 {
		t.Fatalf("%d enrolments of 2028 done, want 2", n)
	}
}

// TestAutomationDateTwoEngines: two engines scan one day's contacts at
// once (more than one batch of them): each contact is enrolled and queued
// once; the next year each is queued once again.
func TestAutomationDateTwoEngines(t *testing.T) {
	t.Parallel()
	f := servicetest.NewSendFixture(t, false)
	dateField(t, f, "renewal", "datetime-local")
	members := f.ContactType("Members")
	const n = 6000 // more than one enrolment batch (5000)
	var b strings.Builder
	b.WriteString("email,first_name,renewal\n")
	for i := range n {
		day := "2026-05-01"
		if i%3 == 0 {
			day = "2026-05-02" // not today
		}
		fmt.Fprintf(&b, "r%05d@example.com,R%d,%s\n", i, i, day)
	}
	imp, err := f.Svc.Imports.Start(f.Ctx, f.Acct, members, "contacts.csv", int64(b.Len()))
	if err != nil {
		t.Fatal(err)
	}
	if err := f.Svc.Imports.Run(f.Ctx, imp, strings.NewReader(b.String())); err != nil || imp.Created != n {
		t.Fatalf("import: %v, %d created", err, imp.Created)
	}
	a := dateAutomation(t, f, members, "renewal", "0", "true", "Renewal")
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
	var carrier models.SingleSend
	f.Svc.DB.R.Where("automation_id = ?", a.ID).First(&carrier)
	matched := int64(n - (n+2)/3)
	f.Set(time.Date(2026, 5, 1, 12, 0, 0, 0, time.UTC))
	both()
	if got := f.Scalar("SELECT COUNT(*) FROM automation_contacts WHERE automation_id = ?", a.ID); got != matched {
		t.Fatalf("%d enrolments, want %d", got, matched)
	}
	if got := f.Scalar("SELECT COUNT(*) FROM send_messages WHERE send_id = ?", carrier.ID); got != matched {
		t.Fatalf("%d ledger rows, want %d", got, matched)
	}
	if got := f.Scalar("SELECT triggered FROM single_sends WHERE id = ?", carrier.ID); got != matched {
		t.Fatalf("triggered %d, want %d", got, matched)
	}
	if got := f.Scalar("SELECT COUNT(*) FROM send_messages WHERE send_id = ? AND email LIKE 'r%%' AND (CAST(SUBSTR(email, 2, 5) AS INTEGER) % 3) = 0", carrier.ID); got != 0 {
		t.Fatalf("%d rows of contacts whose date is tomorrow", got)
	}
	// The messages went out (marked here as the engine would): a year
	// later each address is queued once again, the same row made fresh.
	f.Exec("UPDATE send_messages SET state = ?, attempts = 1, error = 'x', opened_at = CURRENT_TIMESTAMP, human_opened_at = 5 WHERE send_id = ?",
		models.MessageDelivered, carrier.ID)
	f.Set(time.Date(2027, 5, 1, 12, 0, 0, 0, time.UTC))
	both()
	if got := f.Scalar("SELECT COUNT(*) FROM send_messages WHERE send_id = ? AND state = ? AND attempts = 0 AND error = '' AND opened_at IS NULL AND human_opened_at = 0",
		carrier.ID, models.MessageQueued); got != matched {
		t.Fatalf("%d fresh ledger rows in the second year, want %d", got, matched)
	}
	if got := f.Scalar("SELECT triggered FROM single_sends WHERE id = ?", carrier.ID); got != 2*matched {
		t.Fatalf("triggered %d, want %d", got, 2*matched)
	}
	// A row still queued (not sent yet) is not made fresh again, and its
	// enrolment, finished, is not started a third time the same year.
	both()
	if got := f.Scalar("SELECT triggered FROM single_sends WHERE id = ?", carrier.ID); got != 2*matched {
		t.Fatalf("triggered %d after more rounds, want %d", got, 2*matched)
	}
}

// TestAutomationDateInput: the date trigger's refusals.
func TestAutomationDateInput(t *testing.T) {
	t.Parallel()
	f := servicetest.NewSendFixture(t, false)
	dateField(t, f, "birthday", "datetime-local")
	dateField(t, f, "nickname", "text")
	members := f.ContactType("Members")
	seg, err := f.Svc.Segments.Create(f.Ctx, f.Acct, service.SegmentInput{ContactTypeID: strconv.FormatInt(members, 10), SegmentName: "All",
		SelectField: []string{"email"}, SelectOperator: []string{"contains"}, Value: []string{"@"}})
	if err != nil {
		t.Fatal(err)
	}
	in := func(field, offset, yearly string) service.AutomationInput {
		return service.AutomationInput{Type: "custom", AutomationFor: "contacts_" + strconv.FormatInt(members, 10), UnsubscribeGroupID: "0",
			Trigger: "date", DateField: field, DateOffsetDays: offset, DateYearly: yearly}
	}
	for _, c := range []struct {
		in           service.AutomationInput
		field, words string
	}{
		{in("", "0", "1"), "date_field", "required"},
		{in("anniversary", "0", "1"), "date_field", "The date field must be one of your custom fields."},
		{in("nickname", "0", "1"), "date_field", "The date field must be a custom field of type date (datetime-local)."},
		{in("first_name", "0", "1"), "date_field", "The date field must be one of your custom fields."},
		{in("birthday", "366", "1"), "date_offset_days", "The date offset must be a whole number of days from -365 to 365."},
		{in("birthday", "-366", "1"), "date_offset_days", "The date offset must be a whole number of days from -365 to 365."},
		{in("birthday", "1.5", "1"), "date_offset_days", "The date offset must be a whole number of days from -365 to 365."},
		{in("birthday", "0", "sometimes"), "date_yearly", "invalid"},
	} {
		_, err := f.Svc.Automations.Create(f.Ctx, f.Acct, c.in)
		if msg := fieldMessage(err, c.field); !strings.Contains(strings.ToLower(msg), strings.ToLower(c.words)) {
			t.Errorf("%+v: %s: %q (%v)", c.in, c.field, msg, err)
		}
	}
	bad := in("birthday", "0", "1")
	bad.AutomationFor = "segments_" + strconv.FormatInt(seg.ID, 10)
	if _, err := f.Svc.Automations.Create(f.Ctx, f.Acct, bad); fieldMessage(err, "automation_for") != "An automation started from a date field targets a contact type, not a segment." {
		t.Errorf("a segment: %v", err)
	}
	// Bounds are accepted; the settings of a live automation cannot change.
	for _, off := range []string{"-365", "365", ""} {
		if _, err := f.Svc.Automations.Create(f.Ctx, f.Acct, in("birthday", off, "")); err != nil {
			t.Errorf("offset %q: %v", off, err)
		}
	}
	a := dateAutomation(t, f, members, "birthday", "1", "0", "Hello")
	upd := in("birthday", "2", "0")
	upd.UnsubscribeGroupID = strconv.FormatInt(f.Group, 10)
	if _, err := f.Svc.Automations.Update(f.Ctx, f.Acct, a.Utr, upd); fieldMessage(err, "trigger") == "" {
		t.Errorf("a live automation's offset changed: %v", err)
	}
	// A field deleted after it was chosen: set live is refused.
	anniv, err := f.Svc.Fields.Create(f.Ctx, f.Acct, service.FieldInput{FieldName: "anniversary", FieldType: "datetime-local"})
	if err != nil {
		t.Fatal(err)
	}
	draft, err := f.Svc.Automations.Create(f.Ctx, f.Acct, service.AutomationInput{Type: "custom", AutomationFor: "contacts_" + strconv.FormatInt(members, 10),
		UnsubscribeGroupID: strconv.FormatInt(f.Group, 10), Trigger: "date", DateField: "anniversary"})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := f.Svc.Automations.AddSchedule(f.Ctx, f.Acct, service.ScheduleInput{Utr: draft.Utr, SenderID: strconv.FormatInt(f.Sender, 10),
		Subject: "Hi", WaitingPeriod: "0", WaitingType: "instantly", TemplateID: "1", PreviewImg: "01-blank.png", TemplateHTML: "<p>Hi</p>"}); err != nil {
		t.Fatal(err)
	}
	if err := f.Svc.Fields.Delete(f.Ctx, f.Acct, anniv.ID); err != nil {
		t.Fatal(err)
	}
	if err := f.Svc.Automations.SetLive(f.Ctx, f.Acct, draft.Utr); errorMessage(err) != "The date field must be one of your custom fields." {
		t.Errorf("set live without its field: %v", err)
	}
	// An API trigger of a date automation is refused.
	if _, err := f.Svc.Automations.Trigger(f.Ctx, f.Acct, service.TriggerInput{Automation: a.Utr, Email: "x@example.com"}); errorMessage(err) != "The automation does not start from the API." {
		t.Errorf("API trigger: %v", err)
	}
}
