package service_test

import (
	"context"
	"errors"
	"reflect"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/google/uuid"

	"herald/dbtest"
	"herald/models"
	"herald/service"
	"herald/service/servicetest"
)

// goodDesign passes every design rule: an unsubscribe link, the postal
// address, and more than 20 words beside its image.
const goodDesign = `<html><head><title>News</title><style>p{color:red}</style></head><body>` +
	`<img src="https://shop.example.com/banner.png" alt="Autumn sale banner with many words in its alt text">` +
	`<p>Hello ((first_name)), our autumn sale starts on Monday: every coat, scarf and pair of boots is thirty percent off for one week only, in the shop and online.</p>` +
	`<p>((sender_name)), ((sender_address))</p><a href="((unsubscribe_preferences))">Unsubscribe or change your preferences</a></body></html>`

// itemOf is the item of rule in items (the first one).
func itemOf(t *testing.T, items []service.CheckItem, rule string) service.CheckItem {
	t.Helper()
	for _, it := range items {
		if it.Rule == rule {
			return it
		}
	}
	t.Fatalf("no %s item in %+v", rule, items)
	return service.CheckItem{}
}

func TestChecklistDesignRules(t *testing.T) {
	t.Parallel()
	svc := dbtest.Service(t)
	ctx := context.Background()
	acct := servicetest.NewAccount(t, svc, "owner@herald.test")
	c := service.NewChecklist(svc.DB, nil, nil)
	subject := func(html string) service.ChecklistSubject {
		return service.ChecklistSubject{From: "news@shop.example.com", HasSender: true, PostalAddr: "1 rue de Rivoli, France", HTML: html}
	}
	for _, tc := range []struct {
		name, rule string
		subject    service.ChecklistSubject
		want       service.Severity
		says       string
	}{
		{"unsubscribe present", service.RuleUnsubscribe, subject(goodDesign), service.SeverityOK, "has an unsubscribe link"},
		{"unsubscribe missing", service.RuleUnsubscribe, subject(strings.ReplaceAll(goodDesign, "((unsubscribe_preferences))", "https://shop.example.com/")), service.SeverityFailure, "((unsubscribe_preferences))"},
		{"text present", service.RuleText, subject(goodDesign), service.SeverityOK, "readable text"},
		{"text missing", service.RuleText, subject(`<html><head><title>Only a title</title></head><body><a href="((unsubscribe_preferences))"><img src="x.png" alt="A long alt text of words"></a> ((sender_address))</body></html>`), service.SeverityFailure, "no readable text"},
		{"not image-only", service.RuleImageOnly, subject(goodDesign), service.SeverityOK, "not image-only"},
		{"image-only", service.RuleImageOnly, subject(`<body><img src="a.png"><img src="b.png"><p>Sale now on, nineteen words at most here: one two three four five six seven eight nine ten eleven</p>((sender_address)) ((unsubscribe_preferences))</body>`), service.SeverityWarning, "2 images, 19 words"},
		{"twenty words with an image", service.RuleImageOnly, subject(`<body><img src="a.png"><p>Sale now on, twenty words here: one two three four five six seven eight nine ten eleven twelve thirteen fourteen</p></body>`), service.SeverityOK, "not image-only"},
		{"postal address shown", service.RulePostalAddress, subject(goodDesign), service.SeverityOK, "shows the sender's postal address"},
		{"postal address written out", service.RulePostalAddress, subject(`<p>Write to us: 1 rue de Rivoli, France</p>`), service.SeverityOK, "shows"},
		{"postal address not in the design", service.RulePostalAddress, subject(strings.ReplaceAll(goodDesign, "((sender_address))", "")), service.SeverityFailure, "add ((sender_address))"},
		{"sender without an address", service.RulePostalAddress, service.ChecklistSubject{From: "news@shop.example.com", HasSender: true, HTML: goodDesign}, service.SeverityFailure, "sender has no postal address"},
		{"no sender chosen", service.RulePostalAddress, service.ChecklistSubject{HTML: goodDesign}, service.SeverityWarning, "Choose a sender"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			items, err := c.Evaluate(ctx, acct, []service.ChecklistSubject{tc.subject})
			if err != nil {
				t.Fatal(err)
			}
			it := itemOf(t, items, tc.rule)
			if it.Severity != tc.want || it.OK != (tc.want == service.SeverityOK) || !strings.Contains(it.Message, tc.says) {
				t.Errorf("%s: got %+v, want %s saying %q", tc.rule, it, tc.want, tc.says)
			}
		})
	}
}

// TestChecklistOrgAddress: ((org_address)) in a design satisfies the
// postal-address rule once the organisation profile has an address (as
// ((sender_address)) does), and says what to fill in before; an account's
// profile counts for its own designs only.
func TestChecklistOrgAddress(t *testing.T) {
	t.Parallel()
	svc := dbtest.Service(t)
	ctx := context.Background()
	acct := servicetest.NewAccount(t, svc, "owner@herald.test")
	other := servicetest.NewAccount(t, svc, "other@herald.test")
	c := service.NewChecklist(svc.DB, nil, nil)
	design := strings.ReplaceAll(goodDesign, "((sender_address))", "((org_address))")
	check := func(account int64, s service.ChecklistSubject) service.CheckItem {
		t.Helper()
		items, err := c.Evaluate(ctx, account, []service.ChecklistSubject{s})
		if err != nil {
			t.Fatal(err)
		}
		return itemOf(t, items, service.RulePostalAddress)
	}
	sender := service.ChecklistSubject{From: "news@shop.example.com", HasSender: true, PostalAddr: "1 rue de Rivoli, France", HTML: design}
	if it := check(acct, sender); it.Severity != service.SeverityFailure || !strings.Contains(it.Message, "organisation profile has no postal address") {
		t.Fatalf("before the profile's address: %+v", it)
	}
	if _, err := svc.Profiles.Save(ctx, other, service.ProfileInput{CompanyName: "Other", AddressLine1: "9 Elm Street", City: "Leeds"}); err != nil {
		t.Fatal(err)
	}
	if it := check(acct, sender); it.Severity != service.SeverityFailure {
		t.Fatalf("another account's address counted: %+v", it)
	}
	if _, err := svc.Profiles.Save(ctx, acct, service.ProfileInput{CompanyName: "Shop", AddressLine1: "1 rue de Rivoli", City: "Paris"}); err != nil {
		t.Fatal(err)
	}
	for name, s := range map[string]service.ChecklistSubject{"with a sender": sender, "with a sender without an address": {From: "news@shop.example.com", HasSender: true, HTML: design}} {
		if it := check(acct, s); it.Severity != service.SeverityOK || !strings.Contains(it.Message, "organisation's postal address") {
			t.Fatalf("%s, after the profile's address: %+v", name, it)
		}
	}
}

func TestChecklistFromDomain(t *testing.T) {
	t.Parallel()
	svc := dbtest.Service(t)
	ctx := context.Background()
	acct := servicetest.NewAccount(t, svc, "owner@herald.test")
	checked := time.Date(2030, 1, 1, 9, 0, 0, 0, time.UTC)
	var asked []string
	results := map[string]service.DomainAuth{
		"good.example":  {Domain: "good.example", Checked: true, CheckedAt: checked},
		"bad.example":   {Domain: "bad.example", Checked: true, CheckedAt: checked, Problems: []string{"no DMARC record at _dmarc.bad.example", "the DKIM key is not published"}},
		"loose.example": {Domain: "loose.example", Checked: true, CheckedAt: checked, Warnings: []string{"DMARC policy is p=none"}},
		"new.example":   {Domain: "new.example"},
	}
	auth := func(_ context.Context, accountID int64, domain string) (service.DomainAuth, error) {
		if accountID != acct {
			t.Errorf("asked for account %d", accountID)
		}
		asked = append(asked, domain)
		if domain == "broken.example" {
			return service.DomainAuth{}, errors.New("dns store down")
		}
		return results[domain], nil
	}
	c := service.NewChecklist(svc.DB, nil, auth)
	for _, tc := range []struct {
		from string
		want service.Severity
		says string
	}{
		{"news@good.example", service.SeverityOK, "good.example is authenticated"},
		{"news@Bad.Example", service.SeverityFailure, "bad.example is not authenticated: no DMARC record at _dmarc.bad.example; the DKIM key is not published."},
		{"news@loose.example", service.SeverityWarning, "but: DMARC policy is p=none"},
		{"news@new.example", service.SeverityWarning, "has not been checked yet"},
	} {
		items, err := c.Evaluate(ctx, acct, []service.ChecklistSubject{{From: tc.from, HasSender: true, HTML: goodDesign, PostalAddr: "x"}})
		if err != nil {
			t.Fatal(err)
		}
		it := itemOf(t, items, service.RuleFromDomain)
		if it.Severity != tc.want || !strings.Contains(it.Text(), tc.says) {
			t.Errorf("%s: got %+v, want %s saying %q", tc.from, it, tc.want, tc.says)
		}
	}
	// The console lists a domain's findings one a line, under the verdict.
	items, err := c.Evaluate(ctx, acct, []service.ChecklistSubject{{From: "news@bad.example", HasSender: true, HTML: goodDesign, PostalAddr: "x"}})
	if err != nil {
		t.Fatal(err)
	}
	if it := itemOf(t, items, service.RuleFromDomain); it.Message != "The domain bad.example is not authenticated:" || len(it.Details) != 2 {
		t.Errorf("domain item %+v: want the verdict and its two findings apart", it)
	}
	asked = asked[:len(asked)-1]
	if want := []string{"good.example", "bad.example", "loose.example", "new.example"}; !reflect.DeepEqual(asked, want) {
		t.Errorf("asked %v, want %v", asked, want)
	}
	// Two emails of one domain: checked once.
	asked = nil
	s := service.ChecklistSubject{From: "a@good.example", HasSender: true, HTML: goodDesign}
	items, err = c.Evaluate(ctx, acct, []service.ChecklistSubject{s, s})
	if err != nil || len(asked) != 1 {
		t.Fatalf("asked %v, %v", asked, err)
	}
	n := 0
	for _, it := range items {
		if it.Rule == service.RuleFromDomain {
			n++
		}
	}
	if n != 1 {
		t.Errorf("%d from-domain items, want 1", n)
	}
	if _, err := c.Evaluate(ctx, acct, []service.ChecklistSubject{{From: "a@broken.example", HTML: goodDesign}}); err == nil {
		t.Error("an error of the DNS checks was swallowed")
	}
	// Not wired: a warning, never a failure.
	items, err = service.NewChecklist(svc.DB, nil, nil).Evaluate(ctx, acct, []service.ChecklistSubject{{From: "a@bad.example", HasSender: true, HTML: goodDesign}})
	if err != nil {
		t.Fatal(err)
	}
	if it := itemOf(t, items, service.RuleFromDomain); it.Severity != service.SeverityWarning || !strings.Contains(it.Message, "not been checked yet") {
		t.Errorf("unwired: %+v", it)
	}
}

// addSentSend inserts a send of acct first sent at with its counters.
func addSentSend(t *testing.T, svc *service.Service, acct int64, at time.Time, delivered, bounces, complaints int64) {
	t.Helper()
	now := models.NewTimestamp(time.Now())
	ss := &models.SingleSend{UserID: acct, TemplateID: 1, SingleSendName: "Past", Utr: uuid.NewString(), Status: models.SendCompleted,
		RecipientID: models.Targets{}, ExcludeSpecificRecipientID: models.Targets{}, ScheduleDate: "0000-00-00", ScheduleTime: "00:00:00",
		UniqueOpenToken: "{}", Links: models.StringArray{}, Delivered: delivered, Bounces: bounces, SpamReports: complaints,
		SentAt: models.DateTime{Time: at}, CreatedAt: now, UpdatedAt: now}
	if err := svc.DB.W.Create(ss).Error; err != nil {
		t.Fatal(err)
	}
}

func TestChecklistRates(t *testing.T) {
	t.Parallel()
	now := time.Date(2030, 6, 1, 12, 0, 0, 0, time.UTC)
	for _, tc := range []struct {
		name                        string
		delivered, bounces, reports int64
		bounce, complaint           service.Severity
		says                        string
	}{
		{"nothing delivered", 0, 0, 0, service.SeverityOK, service.SeverityOK, "No mail delivered"},
		{"clean", 10000, 10, 5, service.SeverityOK, service.SeverityOK, "0.05 %"},
		{"bounces under 2 percent", 10000, 199, 0, service.SeverityOK, service.SeverityOK, "1.99 %"},
		{"bounces at 2 percent", 10000, 200, 0, service.SeverityFailure, service.SeverityOK, "2.00 % (200 of 10000 delivered"},
		{"bounces over 2 percent", 10000, 350, 0, service.SeverityFailure, service.SeverityOK, "3.50 %"},
		{"complaints at 0.1 percent", 10000, 0, 10, service.SeverityOK, service.SeverityOK, "0.10 %"},
		{"complaints over 0.1 percent", 10000, 0, 11, service.SeverityOK, service.SeverityWarning, "0.11 %"},
		{"complaints under 0.3 percent", 10000, 0, 29, service.SeverityOK, service.SeverityWarning, "0.29 %"},
		{"complaints at 0.3 percent", 10000, 0, 30, service.SeverityOK, service.SeverityFailure, "0.30 % (30 of 10000 delivered"},
		{"complaints over 0.3 percent", 10000, 0, 45, service.SeverityOK, service.SeverityFailure, "0.45 %"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			svc := dbtest.Service(t)
			ctx := context.Background()
			acct := servicetest.NewAccount(t, svc, "owner@herald.test")
			other := servicetest.NewAccount(t, svc, "other@herald.test")
			if tc.delivered > 0 {
				// Split over two recent sends of the account.
				addSentSend(t, svc, acct, now.Add(-29*24*time.Hour), tc.delivered/2, tc.bounces/2, tc.reports/2)
				addSentSend(t, svc, acct, now.Add(-time.Hour), tc.delivered-tc.delivered/2, tc.bounces-tc.bounces/2, tc.reports-tc.reports/2)
			}
			// Neither another account's sends nor the account's older ones count.
			addSentSend(t, svc, other, now.Add(-time.Hour), 100, 90, 80)
			addSentSend(t, svc, acct, now.Add(-31*24*time.Hour), 100, 90, 80)
			c := service.NewChecklist(svc.DB, func() time.Time { return now }, nil)
			r, err := c.Rates(ctx, acct)
			if err != nil {
				t.Fatal(err)
			}
			if r != (service.AccountRates{Delivered: tc.delivered, Bounces: tc.bounces, Complaints: tc.reports}) {
				t.Fatalf("rates %+v", r)
			}
			items, err := c.Evaluate(ctx, acct, []service.ChecklistSubject{{From: "a@shop.example", HasSender: true, PostalAddr: "x", HTML: goodDesign}})
			if err != nil {
				t.Fatal(err)
			}
			b, cm := itemOf(t, items, service.RuleBounceRate), itemOf(t, items, service.RuleComplaintRate)
			if b.Severity != tc.bounce || cm.Severity != tc.complaint {
				t.Errorf("bounce %+v, complaint %+v; want %s, %s", b, cm, tc.bounce, tc.complaint)
			}
			if !strings.Contains(b.Message+cm.Message, tc.says) {
				t.Errorf("messages %q %q do not say %q", b.Message, cm.Message, tc.says)
			}
		})
	}
}

func TestChecklistBlocksSends(t *testing.T) {
	t.Parallel()
	f := servicetest.NewSendFixture(t, false)
	typeID := f.ContactType("Customers", "a@example.com")
	in := f.BlockingInput(typeID)

	// Off (the default): the failing send is saved as before.
	if on, err := f.Svc.Checklist.Blocks(f.Ctx, f.Acct); err != nil || on {
		t.Fatalf("blocks by default: %v %v", on, err)
	}
	saved, err := f.Svc.SingleSends.Create(f.Ctx, f.Acct, in)
	if err != nil {
		t.Fatalf("not blocking: %v", err)
	}
	items, err := f.Svc.Checklist.ForSend(f.Ctx, f.Acct, saved)
	if err != nil {
		t.Fatal(err)
	}
	want := []string{
		"The design has no unsubscribe link: add ((unsubscribe_preferences)) to it. Gmail and Yahoo ask bulk mail for a visible way out.",
		"The design does not show the sender's postal address: add ((sender_address)) to its footer.",
	}
	if got := service.Failures(items); !reflect.DeepEqual(got, want) {
		t.Fatalf("failures %q", got)
	}

	// On: create and update are refused, one message per failure.
	if err := f.Svc.Checklist.SetBlocks(f.Ctx, f.Acct, true); err != nil {
		t.Fatal(err)
	}
	other := servicetest.NewAccount(t, f.Svc, "other@herald.test")
	if on, _ := f.Svc.Checklist.Blocks(f.Ctx, other); on {
		t.Fatal("another account blocks too")
	}
	check := func(err error) {
		t.Helper()
		var se *service.Error
		if !errors.As(err, &se) || se.Code != service.CodeValidation || !reflect.DeepEqual(se.Fields, map[string][]string{"checklist": want}) {
			t.Fatalf("got %v, want the checklist's refusal", err)
		}
	}
	_, err = f.Svc.SingleSends.Create(f.Ctx, f.Acct, in)
	check(err)
	in.Utr = saved.Utr
	in.SingleSendName = "Renamed"
	_, err = f.Svc.SingleSends.Update(f.Ctx, f.Acct, in)
	check(err)
	if cur, _ := f.Svc.SingleSends.Get(f.Ctx, f.Acct, saved.Utr); cur.SingleSendName != "Blocked" {
		t.Errorf("a refused update changed the send: %q", cur.SingleSendName)
	}
	// Body errors come first, as before.
	bad := in
	bad.Subject = ""
	if _, err := f.Svc.SingleSends.Update(f.Ctx, f.Acct, bad); err == nil || !strings.Contains(err.Error(), "subject") || strings.Contains(err.Error(), "checklist") {
		t.Errorf("a body error: %v", err)
	}

	// Mended, it passes while blocking.
	in.TemplateHTML = goodDesign
	if _, err := f.Svc.SingleSends.Update(f.Ctx, f.Acct, in); err != nil {
		t.Fatalf("a mended send: %v", err)
	}
	// Off again: the failing one goes through.
	if err := f.Svc.Checklist.SetBlocks(f.Ctx, f.Acct, false); err != nil {
		t.Fatal(err)
	}
	if _, err := f.Svc.SingleSends.Create(f.Ctx, f.Acct, f.BlockingInput(typeID)); err != nil {
		t.Fatalf("unblocked: %v", err)
	}
}

func TestChecklistBlocksSetLive(t *testing.T) {
	t.Parallel()
	f := servicetest.NewSendFixture(t, false)
	typeID := f.ContactType("Customers")
	a := f.Automation(typeID, "")
	items, err := f.Svc.Checklist.ForAutomation(f.Ctx, f.Acct, a.Utr)
	if err != nil {
		t.Fatal(err)
	}
	got := service.Failures(items)
	// The fixture's two emails have neither an unsubscribe link nor the
	// address, and "Step 1 shop" is readable text.
	if len(got) != 4 || !strings.HasPrefix(got[0], "Email 1: The design has no unsubscribe link") || !strings.HasPrefix(got[3], "Email 2: The design does not show") {
		t.Fatalf("failures %q", got)
	}
	if err := f.Svc.Checklist.SetBlocks(f.Ctx, f.Acct, true); err != nil {
		t.Fatal(err)
	}
	err = f.Svc.Automations.SetLive(f.Ctx, f.Acct, a.Utr)
	var se *service.Error
	if !errors.As(err, &se) || !reflect.DeepEqual(se.Fields, map[string][]string{"checklist": got}) {
		t.Fatalf("set live: %v", err)
	}
	if cur, _ := f.Svc.Automations.Get(f.Ctx, f.Acct, a.Utr); cur.Status != models.AutomationDraft {
		t.Fatal("a refused automation went live")
	}
	scheds, err := f.Svc.Automations.Schedules(f.Ctx, f.Acct, a.Utr)
	if err != nil {
		t.Fatal(err)
	}
	for _, s := range scheds {
		if _, err := f.Svc.Automations.UpdateSchedule(f.Ctx, f.Acct, s.Utr, service.ScheduleInput{Utr: a.Utr, SenderID: strconv.FormatInt(f.Sender, 10),
			Subject: s.Subject, WaitingPeriod: strconv.Itoa(s.WaitingPeriod), WaitingType: s.WaitingType, TemplateID: "1", PreviewImg: s.PreviewImg, TemplateHTML: goodDesign}); err != nil {
			t.Fatal(err)
		}
	}
	if err := f.Svc.Automations.SetLive(f.Ctx, f.Acct, a.Utr); err != nil {
		t.Fatalf("mended: %v", err)
	}
}

// The rates read the account's recent sends through their index, never
// a scan of every account's sends (SQLite's plan; PostgreSQL's planner
// picks by table size, so its plan on a test table says nothing).
func TestChecklistRatesUseTheIndex(t *testing.T) {
	t.Parallel()
	svc := dbtest.Service(t)
	if svc.DB.Dialect != "sqlite" {
		t.Skip("the plan is checked on SQLite")
	}
	var rows []struct {
		ID, Parent, Notused int
		Detail              string
	}
	if err := svc.DB.R.Raw("EXPLAIN QUERY PLAN SELECT COALESCE(SUM(delivered), 0), COALESCE(SUM(bounces), 0), COALESCE(SUM(spam_reports), 0) "+
		"FROM single_sends WHERE user_id = ? AND sent_at >= ?", 1, models.DateTime{Time: time.Now()}).Scan(&rows).Error; err != nil {
		t.Fatal(err)
	}
	if len(rows) != 1 || !strings.Contains(rows[0].Detail, "USING INDEX single_sends_user_sent (user_id=? AND sent_at>?)") {
		t.Fatalf("plan %+v", rows)
	}
}

// BenchmarkChecklistForSend measures the whole checklist of one send for
// an account with 10,000 sends in its last 30 days among 50,000 sends of
// other accounts (the DNS checks not wired).
func BenchmarkChecklistForSend(b *testing.B) {
	svc := dbtest.Service(b)
	ctx := context.Background()
	u, _, err := svc.Accounts.Create(ctx, service.AccountInput{Name: "T", Email: "owner@herald.test", Password: "test-passphrase-9"})
	if err != nil {
		b.Fatal(err)
	}
	o, _, err := svc.Accounts.Create(ctx, service.AccountInput{Name: "O", Email: "other@herald.test", Password: "test-passphrase-9"})
	if err != nil {
		b.Fatal(err)
	}
	now := time.Now()
	tx := svc.DB.W.Begin()
	for i := range 60000 {
		acct := o.ID
		if i%6 == 0 {
			acct = u.ID
		}
		if err := tx.Exec("INSERT INTO single_sends (user_id, template_id, sender_id, unsubscribe_group_id, single_send_name, utr, delivered, bounces, spam_reports, sent_at, created_at, updated_at) "+
			"VALUES (?, 1, 0, 0, 'x', ?, 1000, 3, 1, ?, ?, ?)", acct, uuid.NewString(), models.DateTime{Time: now.Add(-time.Duration(i%40*24) * time.Hour)},
			models.NewTimestamp(now), models.NewTimestamp(now)).Error; err != nil {
			b.Fatal(err)
		}
	}
	if err := tx.Commit().Error; err != nil {
		b.Fatal(err)
	}
	c := service.NewChecklist(svc.DB, nil, nil)
	addr := "1 rue de Rivoli, France"
	ss := &models.SingleSend{UserID: u.ID, FromSender: "news@shop.example.com", SenderAddress: &addr, TemplateHTML: ptr(goodDesign)}
	b.ResetTimer()
	for b.Loop() {
		items, err := c.ForSend(ctx, u.ID, ss)
		if err != nil || len(items) != 7 {
			b.Fatal(len(items), err)
		}
	}
}

func ptr[T any](v T) *T { return &v }
