package service_test

import (
	"context"
	"reflect"
	"strconv"
	"strings"
	"testing"
	"time"

	"herald/service/servicetest"
	"herald/smtptest"

	"herald/dbtest"
	"herald/delivery"
	"herald/migrations"
	"herald/models"
	"herald/service"
	"herald/views/dashboard"

	"golang.org/x/net/html"
)

// noonTomorrow is noon (UTC) of the day after the wall clock's: where the
// dashboard's tests start their clocks. The figures are kept per UTC day
// and the tests read them by day while moving the clock by hours (a
// person's clicks up to 4 h after the send) and days (opens 25 h after
// it): from noon none of that crosses a midnight the test did not mean to
// cross, whatever the time of day the test runs at. And the clock's day
// is never the wall clock's, so a figure counted on the wall clock's day
// instead of the service's shows on the wrong day.
func noonTomorrow() time.Time {
	return time.Now().UTC().Truncate(24 * time.Hour).Add(36 * time.Hour)
}

// newDashboardFixture is a running newSendFixture whose clock is moved on
// to noonTomorrow before anything is counted. Forward, as Advance moves
// it: the fixture's account, sender and group were made at the wall
// clock, where its clock started.
func newDashboardFixture(t *testing.T) *servicetest.SendFixture {
	t.Helper()
	f := servicetest.NewSendFixture(t, true)
	f.Set(noonTomorrow())
	return f
}

// TestDashboardDailyFigures: a send's deliveries, then a day later its
// opens, clicks, a hard bounce, a complaint and an unsubscribe, land on
// the day they happened in account_daily, scoped by account: another
// account's send, contacts and opens never show in the first's figures.
// The audience follows contacts added and deleted; the setup steps tick.
func TestDashboardDailyFigures(t *testing.T) {
	t.Parallel()
	f := newDashboardFixture(t)
	typeA := f.ContactType("Customers", "ann@example.com", "bob@example.com", "cy@example.com", "dee@example.com")
	ss := f.Create(f.Input("Spring", []string{"contacts_" + strconv.FormatInt(typeA, 10)}, nil))
	f.WaitStatus(ss.Utr, models.SendCompleted, 20*time.Second)
	other, otherSend := f.OtherAccount("other@herald.test", "zed@example.com", "yan@example.com", "xia@example.com")

	// The send's day (the engine records deliveries at the service's
	// clock, which stands still while it sends).
	sent := f.Now()
	o := f.Overview(f.Acct)
	today := o.Days[len(o.Days)-1]
	if today.Sent != 4 || today.Delivered != 4 || today.Opens != 0 || today.ContactsAdded != 4 {
		t.Fatalf("send day: %+v", today)
	}
	if o.Audience != 4 || o.AudienceBefore != 0 || o.Total.Delivered != 4 {
		t.Fatalf("audience %d before %d total %+v", o.Audience, o.AudienceBefore, o.Total)
	}
	if len(o.Recent) != 1 || o.Recent[0].Utr != ss.Utr || o.Recent[0].Delivered != 4 || o.Recent[0].Automation {
		t.Fatalf("recent: %+v", o.Recent)
	}
	s := o.Setup
	if !s.Sender || !s.SenderVerified || !s.Contacts || !s.Group || !s.Sent || s.Notifications {
		t.Fatalf("setup: %+v", s)
	}

	// Opens, clicks, unsubscribes, a complaint without a time and
	// deletions are counted at the service's clock, a day later; feedback
	// with a time at the report's time (a hard bounce reported as two
	// days before the send: it lands there). The other account's opens
	// are its own. From noon, 25 h on is the next day.
	f.Advance(25 * time.Hour)
	ann, bob, cy, dee := f.SentTo(ss.Utr, "ann@example.com"), f.SentTo(ss.Utr, "bob@example.com"), f.SentTo(ss.Utr, "cy@example.com"), f.SentTo(ss.Utr, "dee@example.com")
	for range 3 { // replays count once per message
		if err := f.Svc.Tracking.Open(f.Ctx, tokenOf(t, ann)); err != nil {
			t.Fatal(err)
		}
	}
	if err := f.Svc.Tracking.Open(f.Ctx, tokenOf(t, bob)); err != nil {
		t.Fatal(err)
	}
	if _, err := f.Svc.Tracking.Click(f.Ctx, tokenOf(t, bob), 0); err != nil {
		t.Fatal(err)
	}
	if err := f.Svc.Tracking.OneClick(f.Ctx, tokenOf(t, ann)); err != nil {
		t.Fatal(err)
	}
	f.Handle(service.Report{Kind: delivery.ReportHardBounce, Source: delivery.SourceDSN, Token: returnToken(t, dee), At: sent.Add(-48 * time.Hour),
		Recipient: "dee@example.com", Status: "5.1.1", Diagnostic: "smtp; 550 5.1.1 User unknown"},
		service.Report{Kind: delivery.ReportComplaint, Source: delivery.SourceARF, Token: returnToken(t, cy), Recipient: "cy@example.com"})
	for _, m := range f.Sent(otherSend.Utr) {
		if err := f.Svc.Tracking.Open(f.Ctx, tokenOf(t, m)); err != nil {
			t.Fatal(err)
		}
	}
	if err := f.Svc.Contacts.Delete(f.Ctx, f.Acct, firstContact(t, f, typeA)); err != nil {
		t.Fatal(err)
	}

	o = f.Overview(f.Acct)
	n := len(o.Days)
	today, sendDay, bounceDay := o.Days[n-1], o.Days[n-2], o.Days[n-4]
	if want := (service.Day{Day: today.Day, Opens: 2, Clicks: 1, Complaints: 1, Unsubscribes: 2, ContactsRemoved: 1}); today != want {
		t.Fatalf("next day: %+v\nwant      %+v", today, want)
	}
	if want := (service.Day{Day: sendDay.Day, Sent: 4, Delivered: 4, ContactsAdded: 4}); sendDay != want {
		t.Fatalf("send day: %+v\nwant     %+v", sendDay, want)
	}
	if want := (service.Day{Day: bounceDay.Day, Bounces: 1}); bounceDay != want {
		t.Fatalf("bounce day: %+v\nwant       %+v", bounceDay, want)
	}
	if !today.Day.Equal(sendDay.Day.Add(24 * time.Hour)) {
		t.Fatalf("days %v then %v", sendDay.Day, today.Day)
	}
	if o.Audience != 3 || o.BounceRate() != 0.25 || o.ComplaintRate() != 0.25 {
		t.Fatalf("audience %d bounce rate %v complaint rate %v", o.Audience, o.BounceRate(), o.ComplaintRate())
	}
	if r := o.Recent[0]; r.UniqueOpens != 2 || r.UniqueClicks != 1 || r.Bounces != 1 || r.Unsubscribes != 2 || r.SpamReports != 1 {
		t.Fatalf("recent send: %+v", r)
	}

	// The other account sees only its own.
	p := f.Overview(other)
	if p.Total.Sent != 3 || p.Total.Delivered != 3 || p.Total.Opens != 3 || p.Total.Bounces != 0 || p.Total.Complaints != 0 ||
		p.Total.Unsubscribes != 0 || p.Audience != 3 || len(p.Recent) != 1 || p.Recent[0].Utr != otherSend.Utr {
		t.Fatalf("other account: total %+v audience %d recent %+v", p.Total, p.Audience, p.Recent)
	}

	// Thirty days on, the send's day has left the window; the audience
	// stays.
	f.Advance(30 * 24 * time.Hour)
	if o = f.Overview(f.Acct); o.Total != (service.Day{}) || o.Audience != 3 || o.AudienceBefore != 3 {
		t.Fatalf("30 days later: total %+v audience %d before %d", o.Total, o.Audience, o.AudienceBefore)
	}
}

// firstContact is the id of a live contact of the type.
func firstContact(t *testing.T, f *servicetest.SendFixture, typeID int64) int64 {
	t.Helper()
	var id int64
	if err := f.Svc.DB.R.Model(&models.Contact{}).Select("id").Where("user_id = ? AND contact_type_id = ? AND deleted_at IS NULL", f.Acct, typeID).
		Order("id").Limit(1).Scan(&id).Error; err != nil || id == 0 {
		t.Fatalf("contact: %d %v", id, err)
	}
	return id
}

// TestDashboardCountsSendTimeBounces: a mailbox the relay refuses during
// the send is sent and bounced on the send's day (Ledger.Record's
// transaction path, beside the deliveries).
func TestDashboardCountsSendTimeBounces(t *testing.T) {
	t.Parallel()
	f := newDashboardFixture(t)
	f.SMTP.Refuse(smtptest.AtRcpt, "bad@example.com", 550, "5.1.1", "User unknown")
	typeA := f.ContactType("Customers", "ann@example.com", "bad@example.com", "cy@example.com")
	ss := f.Create(f.Input("First", []string{"contacts_" + strconv.FormatInt(typeA, 10)}, nil))
	f.WaitStatus(ss.Utr, models.SendCompleted, 20*time.Second)
	o := f.Overview(f.Acct)
	if today := o.Days[len(o.Days)-1]; today.Sent != 3 || today.Delivered != 2 || today.Bounces != 1 {
		t.Fatalf("send day: %+v", today)
	}
	if o.BounceRate() != 1.0/3 {
		t.Fatalf("bounce rate %v", o.BounceRate())
	}
}

// TestDashboardAudienceFollowsImportsAndDeletes: contacts added one by
// one or by a CSV import (created ones only, not updated), deleted one by
// one or with their contact type, keep the audience equal to the live
// contacts of the account, and another account's never count.
func TestDashboardAudienceFollowsImportsAndDeletes(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	// A clock of the test's, standing still: on the wall clock a midnight
	// between the first contact and the last read would split today's
	// figures.
	clock := dbtest.NewClock(noonTomorrow())
	svc := dbtest.Service(t, service.Config{Now: clock.Now})
	acct := servicetest.NewAccount(t, svc, "aud@example.com")
	other := servicetest.NewAccount(t, svc, "other@example.com")
	add := func(acct int64, typeID int64, email string) {
		t.Helper()
		if _, err := svc.Contacts.Create(ctx, acct, service.ContactInput{ContactTypeID: strconv.FormatInt(typeID, 10), Email: email, Country: "250"}); err != nil {
			t.Fatal(err)
		}
	}
	a, err := svc.ContactTypes.Create(ctx, acct, "Type A")
	if err != nil {
		t.Fatal(err)
	}
	b, err := svc.ContactTypes.Create(ctx, acct, "Type B")
	if err != nil {
		t.Fatal(err)
	}
	o, err := svc.ContactTypes.Create(ctx, other, "Type O")
	if err != nil {
		t.Fatal(err)
	}
	add(acct, a.ID, "ann@example.com")
	add(acct, a.ID, "bob@example.com")
	add(acct, b.ID, "bea@example.com")
	add(acct, b.ID, "ben@example.com")
	add(other, o.ID, "oz@example.com")
	// The import tells a contact it created from one it updated by
	// created_at = updated_at: the clock moves on between bob's creation
	// and the import's update of him, as any running clock does.
	clock.Advance(time.Second)
	csv := "email,first_name\nbob@example.com,Bob\ncy@example.com,Cy\ndee@example.com,Dee\n"
	imp, err := svc.Imports.Start(ctx, acct, a.ID, "a.csv", int64(len(csv)))
	if err != nil {
		t.Fatal(err)
	}
	if err := svc.Imports.Run(ctx, imp, strings.NewReader(csv)); err != nil || imp.Created != 2 {
		t.Fatalf("import: created %d, %v", imp.Created, err)
	}
	audience := func(stage string, want int64) {
		t.Helper()
		ov, err := svc.Dashboard.Overview(ctx, acct)
		if err != nil {
			t.Fatal(err)
		}
		var live int64
		if err := svc.DB.R.Model(&models.Contact{}).Where("user_id = ? AND deleted_at IS NULL", acct).Count(&live).Error; err != nil {
			t.Fatal(err)
		}
		if ov.Audience != want || live != want || ov.Setup.Contacts != (want > 0) {
			t.Fatalf("%s: audience %d, live contacts %d, want %d", stage, ov.Audience, live, want)
		}
	}
	audience("added and imported", 6)
	var id int64
	if err := svc.DB.R.Model(&models.Contact{}).Select("id").Where("user_id = ? AND email = ?", acct, "ann@example.com").Scan(&id).Error; err != nil {
		t.Fatal(err)
	}
	if err := svc.Contacts.Delete(ctx, acct, id); err != nil {
		t.Fatal(err)
	}
	audience("one deleted", 5)
	if err := svc.ContactTypes.Delete(ctx, acct, b.ID); err != nil {
		t.Fatal(err)
	}
	audience("a type deleted", 3)
	ov, err := svc.Dashboard.Overview(ctx, acct)
	if err != nil {
		t.Fatal(err)
	}
	if today := ov.Days[len(ov.Days)-1]; today.ContactsAdded != 6 || today.ContactsRemoved != 3 || ov.AudienceBefore != 0 {
		t.Fatalf("today: %+v, before %d", today, ov.AudienceBefore)
	}
	if ov, err := svc.Dashboard.Overview(ctx, other); err != nil || ov.Audience != 1 {
		t.Fatalf("the other account's audience: %v %v", ov, err)
	}
}

// TestAccountDailyMigrationFillsFromHistory: migration 00023 fills
// account_daily from what herald recorded before it (the ledger's times,
// feedback, suppressions, contacts) with the same figures, on the same
// days, as the live counting leaves: the table is dropped after a send,
// its bounces, opens a day later, a complaint, an unsubscribe and a
// deletion, and the migration applied again.
//
// Migration 00032 fills the human opens and clicks (the machine rules) the
// same way: a proxy's open one day and the person's the next (the second
// day has no other figure; the unsubscribe, the complaint and the deletion fall on the service's clock too), a person's click, and a person's click that
// a scanner's click on another link 1 s later takes back.
func TestAccountDailyMigrationFillsFromHistory(t *testing.T) {
	t.Parallel()
	f := newDashboardFixture(t)
	f.SMTP.Refuse(smtptest.AtRcpt, "bad@example.com", 550, "5.1.1", "User unknown")
	typeA := f.ContactType("Customers", "ann@example.com", "bob@example.com", "cy@example.com", "dee@example.com", "eve@example.com", "bad@example.com")
	in := f.Input("Spring", []string{"contacts_" + strconv.FormatInt(typeA, 10)}, nil)
	in.TemplateHTML = twoLinks
	ss := f.Create(in)
	f.WaitStatus(ss.Utr, models.SendCompleted, 20*time.Second)
	sent := f.Now()
	f.Advance(25 * time.Hour)
	ann, bob, cy, dee := f.SentTo(ss.Utr, "ann@example.com"), f.SentTo(ss.Utr, "bob@example.com"), f.SentTo(ss.Utr, "cy@example.com"), f.SentTo(ss.Utr, "dee@example.com")
	eve := f.SentTo(ss.Utr, "eve@example.com")
	if err := f.Svc.Tracking.OpenHit(f.Ctx, tokenOf(t, ann), appleProxyHit); err != nil {
		t.Fatal(err)
	}
	if _, err := f.Svc.Tracking.ClickHit(f.Ctx, tokenOf(t, bob), 0, personHit); err != nil {
		t.Fatal(err)
	}
	if _, err := f.Svc.Tracking.ClickHit(f.Ctx, tokenOf(t, eve), 0, scannerHit); err != nil {
		t.Fatal(err)
	}
	f.Advance(time.Second)
	if _, err := f.Svc.Tracking.ClickHit(f.Ctx, tokenOf(t, eve), 1, scannerHit); err != nil {
		t.Fatal(err)
	}
	f.Advance(24 * time.Hour)
	if err := f.Svc.Tracking.OpenHit(f.Ctx, tokenOf(t, ann), personHit); err != nil {
		t.Fatal(err)
	}
	if err := f.Svc.Tracking.OneClick(f.Ctx, tokenOf(t, ann)); err != nil {
		t.Fatal(err)
	}
	f.Handle(service.Report{Kind: delivery.ReportHardBounce, Source: delivery.SourceDSN, Token: returnToken(t, dee), At: sent.Add(-48 * time.Hour),
		Recipient: "dee@example.com", Status: "5.1.1"},
		service.Report{Kind: delivery.ReportComplaint, Source: delivery.SourceARF, Token: returnToken(t, cy), Recipient: "cy@example.com"})
	if err := f.Svc.Contacts.Delete(f.Ctx, f.Acct, firstContact(t, f, typeA)); err != nil {
		t.Fatal(err)
	}

	type row struct {
		UserID, Day, Sent, Delivered, Bounces, Opens, Clicks, HumanOpens, HumanClicks, Unsubscribes, Complaints, ContactsAdded, ContactsRemoved int64
	}
	read := func() []row {
		t.Helper()
		var rows []row
		if err := f.Svc.DB.R.Table("account_daily").Order("user_id, day").Scan(&rows).Error; err != nil {
			t.Fatal(err)
		}
		return rows
	}
	live := read()
	if len(live) < 4 {
		t.Fatalf("live figures: %+v", live)
	}
	// The human figures are there to be filled: bob's click the day after
	// the send (eve's taken back), ann's open the day after that.
	clickDay, openDay := live[len(live)-2], live[len(live)-1]
	if clickDay.HumanClicks != 1 || clickDay.Clicks != 2 || clickDay.HumanOpens != 0 || clickDay.Opens != 1 ||
		openDay != (row{UserID: f.Acct, Day: clickDay.Day + 1, HumanOpens: 1, Unsubscribes: 2, Complaints: 1, ContactsRemoved: 1}) {
		t.Fatalf("live human figures: %+v", live)
	}
	w, err := f.Svc.DB.W.DB()
	if err != nil {
		t.Fatal(err)
	}
	for _, q := range []string{"DROP TABLE account_daily", "DELETE FROM goose_db_version WHERE version_id IN (23, 32)"} {
		if _, err := w.ExecContext(f.Ctx, q); err != nil {
			t.Fatalf("%s: %v", q, err)
		}
	}
	if err := migrations.Up(f.Ctx, w, f.Svc.DB.Dialect); err != nil {
		t.Fatal(err)
	}
	if filled := read(); !reflect.DeepEqual(filled, live) {
		t.Fatalf("filled by the migration:\n%+v\nlive:\n%+v", filled, live)
	}
}

// TestDashboardListsAutomationEmails: an automation's email that went out
// is among the last sends, marked as one, with its automation (whose page
// shows it), its deliveries count in the day's figures, and it ticks the
// first send.
func TestDashboardListsAutomationEmails(t *testing.T) {
	t.Parallel()
	f := newDashboardFixture(t)
	typeA := f.ContactType("Customers", "before@example.com")
	a := f.Automation(typeA, "0")
	if err := f.Svc.Automations.SetLive(f.Ctx, f.Acct, a.Utr); err != nil {
		t.Fatal(err)
	}
	f.AddContact(typeA, "new@example.com")
	f.Settle()
	o := f.Overview(f.Acct)
	if len(o.Recent) != 1 || !o.Recent[0].Automation || o.Recent[0].AutomationUtr != a.Utr || o.Recent[0].Delivered != 1 {
		t.Fatalf("recent: %+v", o.Recent)
	}
	if today := o.Days[len(o.Days)-1]; today.Sent != 1 || today.Delivered != 1 {
		t.Fatalf("today: %+v", today)
	}
	if !o.Setup.Sent {
		t.Fatal("an automation's email that went out does not tick the first send")
	}
}

// twoLinks is a design with two tracked links (a scanner follows both).
const twoLinks = `<html><body><p>Hello ((first_name))</p><a href="https://shop.example.com/a">A</a> <a href="https://shop.example.com/b?x=1&amp;y=<2>">B</a>` +
	`<p>((sender_name)), ((sender_address))</p><a href="((unsubscribe_preferences))">Preferences</a></body></html>`

// TestDashboardHumanFigures: proxies and a link scanner open and click
// beside a person; the dashboard's human figures (the last sends' and the
// days') count the person alone, exactly, and the raw ones everything, as
// the send's own counters do. A scanner's first click, judged a person's
// until it clicks a second link within 2 s, is taken back from the day.
func TestDashboardHumanFigures(t *testing.T) {
	t.Parallel()
	f := newDashboardFixture(t)
	typeA := f.ContactType("Customers", "ann@example.com", "bob@example.com", "cy@example.com", "dee@example.com")
	in := f.Input("Spring", []string{"contacts_" + strconv.FormatInt(typeA, 10)}, nil)
	in.TemplateHTML = twoLinks
	ss := f.Create(in)
	ss = f.WaitStatus(ss.Utr, models.SendCompleted, 20*time.Second)
	ledger := f.Ledger(ss.ID)
	tok := map[string]string{}
	for _, m := range f.Sent(ss.Utr) {
		tok[m.To] = tokenOf(t, m)
	}
	at := func(email string, d time.Duration) { f.Set(ledger[email].SentAt.Time.Add(d)) }
	open := func(email string, h service.Hit) {
		t.Helper()
		if err := f.Svc.Tracking.OpenHit(f.Ctx, tok[email], h); err != nil {
			t.Fatal(err)
		}
	}
	click := func(email string, link int, h service.Hit) {
		t.Helper()
		if _, err := f.Svc.Tracking.ClickHit(f.Ctx, tok[email], link, h); err != nil {
			t.Fatal(err)
		}
	}
	// ann: Apple's proxy fetches the pixel at once, she opens and clicks
	// an hour later, and again two hours later (unique: once).
	at("ann@example.com", time.Second)
	open("ann@example.com", appleProxyHit)
	at("ann@example.com", time.Hour)
	open("ann@example.com", personHit)
	click("ann@example.com", 0, personHit)
	at("ann@example.com", 3*time.Hour)
	open("ann@example.com", personHit)
	click("ann@example.com", 1, personHit)
	// bob: Gmail's proxy opens; a scanner clicks both links 30 s after
	// delivery, 1 s apart (the first click looks like a person's until the
	// second); an hour later a scanner that says so clicks again.
	at("bob@example.com", 2*time.Second)
	open("bob@example.com", gmailProxyHit)
	at("bob@example.com", 30*time.Second)
	click("bob@example.com", 0, scannerHit)
	at("bob@example.com", 31*time.Second)
	click("bob@example.com", 1, scannerHit)
	at("bob@example.com", time.Hour)
	click("bob@example.com", 0, service.Hit{Method: "GET", UserAgent: "Mozilla/5.0 (compatible; Barracuda Sentinel)", IP: personHit.IP})
	// cy: a HEAD request on the pixel. dee: nothing.
	at("cy@example.com", time.Minute)
	open("cy@example.com", service.Hit{Method: "HEAD", UserAgent: personHit.UserAgent, IP: personHit.IP})

	at("ann@example.com", 4*time.Hour) // the dashboard's today
	got := f.Get(ss.Utr)
	if got.UniqueOpens != 3 || got.UniqueClicks != 2 || got.HumanUniqueOpens != 1 || got.HumanUniqueClicks != 1 {
		t.Fatalf("send: opens %d (human %d), clicks %d (human %d)", got.UniqueOpens, got.HumanUniqueOpens, got.UniqueClicks, got.HumanUniqueClicks)
	}
	o := f.Overview(f.Acct)
	if len(o.Recent) != 1 {
		t.Fatalf("recent: %+v", o.Recent)
	}
	if r := o.Recent[0]; r.UniqueOpens != 3 || r.UniqueClicks != 2 || r.HumanOpens != 1 || r.HumanClicks != 1 || r.Delivered != 4 {
		t.Fatalf("recent send: %+v", r)
	}
	if tt := o.Total; tt.Opens != 3 || tt.Clicks != 2 || tt.HumanOpens != 1 || tt.HumanClicks != 1 {
		t.Fatalf("30 days: %+v", tt)
	}
	// Per day: ann's open and click on their day, nothing on any other
	// (bob's taken-back click included, whatever its day).
	annDay := ledger["ann@example.com"].SentAt.Time.Add(time.Hour).UTC().Truncate(24 * time.Hour)
	for _, d := range o.Days {
		want := int64(0)
		if d.Day.Equal(annDay) {
			want = 1
		}
		if d.HumanOpens != want || d.HumanClicks != want {
			t.Fatalf("day %v: human opens %d, clicks %d, want %d", d.Day, d.HumanOpens, d.HumanClicks, want)
		}
	}
	// dee: a person's click half a second before midnight (UTC), a
	// scanner's on the other link half a second after: the take-back
	// comes off the click's day, not the next.
	midnight := ledger["dee@example.com"].SentAt.Time.UTC().Truncate(24 * time.Hour).Add(48 * time.Hour)
	humanClicks := func() (before, after int64) {
		t.Helper()
		o := f.Overview(f.Acct)
		for _, d := range o.Days {
			switch {
			case d.Day.Equal(midnight.Add(-24 * time.Hour)):
				before = d.HumanClicks
			case d.Day.Equal(midnight):
				after = d.HumanClicks
			}
		}
		return before, after
	}
	f.Set(midnight.Add(-500 * time.Millisecond))
	click("dee@example.com", 0, personHit)
	f.Set(midnight.Add(500 * time.Millisecond))
	if b, a := humanClicks(); b != 1 || a != 0 {
		t.Fatalf("before the scanner's click: %d human clicks before midnight, %d after", b, a)
	}
	click("dee@example.com", 1, scannerHit)
	if b, a := humanClicks(); b != 0 || a != 0 {
		t.Fatalf("after the take-back: %d human clicks before midnight, %d after", b, a)
	}
	f.Set(ledger["ann@example.com"].SentAt.Time.Add(4 * time.Hour))

	// The page says the human rates, the raw ones beside.
	var b strings.Builder
	if err := dashboard.Page(dashboard.Data{Name: "Ann", Overview: o, Loc: time.UTC}).Render(f.Ctx, &b); err != nil {
		t.Fatal(err)
	}
	doc, err := html.Parse(strings.NewReader(b.String()))
	if err != nil {
		t.Fatal(err)
	}
	for sel, want := range map[string]string{
		"stat-opens":  "Open rate, human 25.0% 1 by people; raw 3 (75.0%) See single sends",
		"stat-clicks": "Click rate, human 25.0% 1 by people; raw 2 (50.0%) See single sends",
	} {
		if got := nodeText(byID(doc, sel)); got != want {
			t.Errorf("#%s: %q, want %q", sel, got, want)
		}
	}
	if got := nodeText(byID(doc, "recent-sends")); !strings.Contains(got, "25.0% raw 75.0% 25.0% raw 50.0%") {
		t.Errorf("recent sends: %q", got)
	}
	if got := nodeText(byID(doc, "chart-sent")); !strings.Contains(got, "human opens human clicks") ||
		!strings.Contains(got, "1 unique human open and 1 unique human click (raw, proxies and scanners included: 3 opens, 2 clicks)") {
		t.Errorf("chart: %q", got)
	}
}

// byID is the element of doc with the id, or nil.
func byID(n *html.Node, id string) *html.Node {
	if n.Type == html.ElementNode {
		for _, a := range n.Attr {
			if a.Key == "id" && a.Val == id {
				return n
			}
		}
	}
	for c := n.FirstChild; c != nil; c = c.NextSibling {
		if found := byID(c, id); found != nil {
			return found
		}
	}
	return nil
}

// nodeText is n's text with its spaces collapsed ("" for nil).
func nodeText(n *html.Node) string {
	if n == nil {
		return ""
	}
	var b strings.Builder
	var walk func(*html.Node)
	walk = func(n *html.Node) {
		if n.Type == html.TextNode {
			b.WriteString(n.Data + " ")
		}
		for c := n.FirstChild; c != nil; c = c.NextSibling {
			walk(c)
		}
	}
	walk(n)
	return strings.Join(strings.Fields(b.String()), " ")
}
