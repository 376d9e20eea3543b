package service_test

import (
	"strconv"
	"strings"
	"testing"
	"time"

	"herald/delivery"
	"herald/models"
	"herald/service"
	"herald/service/servicetest"
	"herald/smtptest"
)

// returnToken is the VERP token of a message's return path.
func returnToken(t *testing.T, m smtptest.Message) string {
	t.Helper()
	local := m.From[:strings.LastIndexByte(m.From, '@')]
	tok, ok := strings.CutPrefix(local, "bounces+b")
	if !ok {
		t.Fatalf("return path %q", m.From)
	}
	return tok
}

// mailtoToken is the token of a message's List-Unsubscribe mailto: address.
func mailtoToken(t *testing.T, m smtptest.Message) string {
	t.Helper()
	lu := m.Header().Get("List-Unsubscribe")
	i := strings.Index(lu, "mailto:bounces+u")
	if i < 0 {
		t.Fatalf("List-Unsubscribe %q", lu)
	}
	tok := lu[i+len("mailto:bounces+u"):]
	return tok[:strings.IndexByte(tok, '@')]
}

// TestFeedbackHandlesEveryKindOnce drives Feedback.Handle with the reports
// a relay's DSN, a feedback loop, a provider and a mailto: unsubscribe
// give about a real send (decisions.md 7): each kind counts once per
// message, a forged token changes nothing, a multi-recipient report
// reaches each recipient of the send, and the rate alerts are mailed once.
func TestFeedbackHandlesEveryKindOnce(t *testing.T) {
	t.Parallel()
	f := servicetest.NewSendFixture(t, true)
	if _, err := f.Svc.Notifications.Save(f.Ctx, f.Acct, service.NotificationInput{EmailAddress: "alerts@herald.test", EmailOwner: "Ops"}); err != nil {
		t.Fatal(err)
	}
	emails := []string{"ann@example.com", "bob@example.com", "cy@example.com", "dee@example.com", "eve@example.com", "fay@example.com"}
	typeA := f.ContactType("Customers", emails...)
	ss := f.Create(f.Input("Spring", []string{"contacts_" + strconv.FormatInt(typeA, 10)}, nil))
	f.WaitStatus(ss.Utr, models.SendCompleted, 20*time.Second)
	ann, bob, cy := f.SentTo(ss.Utr, "ann@example.com"), f.SentTo(ss.Utr, "bob@example.com"), f.SentTo(ss.Utr, "cy@example.com")

	// A hard bounce by the return path's token, reported twice.
	hard := service.Report{Kind: delivery.ReportHardBounce, Source: delivery.SourceDSN, Token: returnToken(t, ann),
		Recipient: "ann@example.com", Status: "5.1.1", Diagnostic: "smtp; 550 5.1.1 <ann@example.com>: User unknown"}
	f.Handle(hard, hard)
	// A forged token: nothing, even with a real recipient.
	f.Handle(service.Report{Kind: delivery.ReportHardBounce, Source: delivery.SourceDSN, Token: "aaaaaaaaaaaaaaaaaaaaaaa", Recipient: "bob@example.com", Status: "5.1.1"},
		service.Report{Kind: delivery.ReportComplaint, Source: delivery.SourceARF, Token: returnToken(t, bob)[:10], Recipient: "bob@example.com"})
	got := f.Get(ss.Utr)
	if got.Bounces != 1 || got.Delivered != 6 {
		t.Fatalf("after the hard bounce: bounces %d delivered %d", got.Bounces, got.Delivered)
	}
	sup := f.Suppressed()
	if len(sup) != 1 || sup["ann@example.com"] == nil || sup["ann@example.com"].StatusCode != "5.1.1" || sup["ann@example.com"].Source != "dsn" ||
		!strings.Contains(sup["ann@example.com"].Diagnostic, "User unknown") {
		t.Fatalf("suppressions: %+v", sup)
	}

	// A complaint by the Message-ID alone (an ARF report that kept the
	// original headers), twice.
	complaint := service.Report{Kind: delivery.ReportComplaint, Source: delivery.SourceARF, MessageID: bob.Header().Get("Message-Id")}
	f.Handle(complaint, complaint)
	got = f.Get(ss.Utr)
	if got.SpamReports != 1 || got.Unsubscribes != 1 {
		t.Fatalf("after the complaint: spam_reports %d unsubscribes %d", got.SpamReports, got.Unsubscribes)
	}
	var global []models.Unsubscriber
	if err := f.Svc.DB.R.Where("user_id = ? AND unsubscribe_groups_id IS NULL", f.Acct).Find(&global).Error; err != nil || len(global) != 1 || global[0].EmailAddress != "bob@example.com" {
		t.Fatalf("global unsubscribers: %+v %v", global, err)
	}

	// A mailto: unsubscribe: the send's group.
	f.Handle(service.Report{Kind: delivery.ReportUnsubscribe, Source: delivery.SourceMailto, Token: mailtoToken(t, cy), Recipient: "cy@example.com"})
	if got = f.Get(ss.Utr); got.Unsubscribes != 2 {
		t.Fatalf("after the mailto unsubscribe: unsubscribes %d", got.Unsubscribes)
	}
	var inGroup int64
	if err := f.Svc.DB.R.Model(&models.Unsubscriber{}).Where("user_id = ? AND unsubscribe_groups_id = ? AND email_address = ?", f.Acct, f.Group, "cy@example.com").
		Count(&inGroup).Error; err != nil || inGroup != 1 {
		t.Fatalf("group member: %d %v", inGroup, err)
	}

	// A report with ann's token naming another recipient of the send
	// (dee): about ann's message alone, never dee's (a recipient can read
	// their own token off their mail and write any address beside it); a
	// provider that quotes the Message-ID; one whose metadata carried the
	// token back; a report naming where a forward ended: the token's
	// message.
	eve, fay := f.SentTo(ss.Utr, "eve@example.com"), f.SentTo(ss.Utr, "fay@example.com")
	f.Handle(service.Report{Kind: delivery.ReportSoftBounce, Source: delivery.SourceDSN, Token: returnToken(t, ann), Recipient: "dee@example.com", Status: "4.2.2", Diagnostic: "mailbox full"},
		service.Report{Kind: delivery.ReportSoftBounce, Source: delivery.SourceSendGrid, MessageID: eve.Header().Get("Message-Id"), Recipient: "EVE@example.com", Status: "4.4.7"},
		service.Report{Kind: delivery.ReportSoftBounce, Source: delivery.SourcePostmark, Token: returnToken(t, fay), Recipient: "fay@example.com"},
		service.Report{Kind: delivery.ReportSoftBounce, Source: delivery.SourceDSN, Token: returnToken(t, cy), Recipient: "cy@forward.example.net", Status: "4.2.2"})
	if got = f.Get(ss.Utr); got.SoftBounces != 4 || got.Bounces != 1 {
		t.Fatalf("after the soft bounces: soft_bounces %d bounces %d", got.SoftBounces, got.Bounces)
	}
	var softOn []string
	if err := f.Svc.DB.R.Model(&models.SendMessage{}).Where("send_id = ? AND soft_bounced_at IS NOT NULL", ss.ID).Order("email").Pluck("email", &softOn).Error; err != nil {
		t.Fatal(err)
	}
	if strings.Join(softOn, ",") != "ann@example.com,cy@example.com,eve@example.com,fay@example.com" {
		t.Fatalf("soft bounces on %v: a token reaches its own message only", softOn)
	}
	// What names no message by a token or Message-ID of herald's changes
	// nothing, however real its addresses: the send's utr and an address
	// (anyone who got a copy of the send can read the utr), an address
	// alone, a Message-ID that does not verify.
	f.Handle(service.Report{Kind: delivery.ReportHardBounce, Source: delivery.SourceSendGrid, SendUtr: ss.Utr, Recipient: "dee@example.com", Status: "5.1.1"},
		service.Report{Kind: delivery.ReportHardBounce, Source: delivery.SourcePostmark, Recipient: "eve@example.com", Status: "5.1.1"},
		service.Report{Kind: delivery.ReportComplaint, Source: delivery.SourceARF, MessageID: "b" + returnToken(t, fay)[:12] + "aaaa@shop.example.com", Recipient: "fay@example.com"})
	if got = f.Get(ss.Utr); got.SoftBounces != 4 || got.Bounces != 1 || got.SpamReports != 1 {
		t.Fatalf("after the untied reports: soft_bounces %d bounces %d spam_reports %d", got.SoftBounces, got.Bounces, got.SpamReports)
	}
	if len(f.Suppressed()) != 1 {
		t.Fatalf("a soft bounce or an untied report suppressed: %v", f.Suppressed())
	}
	if got := untiedWhy(t, f.Svc); got[service.UntiedTokenForged] != 2 || got[service.UntiedNoToken] != 2 || got[service.UntiedMessageID] != 1 || len(got) != 3 {
		t.Fatalf("untied reports by why: %v", got)
	}

	// The log the console shows.
	kinds := map[string]int{}
	for _, r := range f.FeedbackRows() {
		kinds[r.Kind]++
	}
	if kinds[service.FeedbackHardBounce] != 1 || kinds[service.FeedbackComplaint] != 1 || kinds[service.FeedbackUnsubscribe] != 1 || kinds[service.FeedbackSoftBounce] != 4 {
		t.Fatalf("feedback log: %v", kinds)
	}

	// One alert per kind: 1 hard bounce of 6 delivered is over 5 %, 1
	// complaint over 0.1 %.
	f.WaitFor("the two alerts", 10*time.Second, func() bool {
		n := 0
		for _, m := range f.SMTP.Messages() {
			if s := servicetest.DecodeSubject(t, m); m.To == "alerts@herald.test" && (strings.HasPrefix(s, "High bounce rate") || strings.HasPrefix(s, "Spam complaints")) {
				n++
			}
		}
		return n == 2
	})
	f.Handle(service.Report{Kind: delivery.ReportHardBounce, Source: delivery.SourceDSN, Token: returnToken(t, bob), Status: "5.1.1"})
	time.Sleep(200 * time.Millisecond)
	n := 0
	for _, m := range f.SMTP.Messages() {
		if m.To == "alerts@herald.test" && strings.HasPrefix(servicetest.DecodeSubject(t, m), "High bounce rate") {
			n++
		}
	}
	if n != 1 {
		t.Fatalf("%d bounce alerts, want 1 per send", n)
	}

	// The next send leaves out the bounced, complaining and unsubscribed.
	next := f.Create(f.Input("Summer", []string{"contacts_" + strconv.FormatInt(typeA, 10)}, nil))
	if done := f.WaitStatus(next.Utr, models.SendCompleted, 20*time.Second); done.Triggered != 3 {
		t.Fatalf("next send triggered %d, want 3 (ann, bob and cy left out)", done.Triggered)
	}
}

// TestSoftBounceLimitSuppresses: HERALD_SOFT_BOUNCE_LIMIT soft bounces of
// one address within 30 days suppress it; older ones do not count.
func TestSoftBounceLimitSuppresses(t *testing.T) {
	t.Parallel()
	f := servicetest.NewSendFixture(t, true) // on the fixture's clock
	typeA := f.ContactType("Customers", "full@example.com")
	soft := func(name string) {
		ss := f.Create(f.Input(name, []string{"contacts_" + strconv.FormatInt(typeA, 10)}, nil))
		f.WaitStatus(ss.Utr, models.SendCompleted, 20*time.Second)
		m := f.SentTo(ss.Utr, "full@example.com")
		f.Handle(service.Report{Kind: delivery.ReportSoftBounce, Source: delivery.SourceDSN, Token: returnToken(t, m), Status: "4.2.2", Diagnostic: "Mailbox full"})
	}
	soft("One")
	f.Advance(31 * 24 * time.Hour) // the first falls out of the window
	soft("Two")
	soft("Three")
	if sup := f.Suppressed(); len(sup) != 0 {
		t.Fatalf("suppressed after two soft bounces in the window: %v", sup)
	}
	soft("Four")
	sup := f.Suppressed()
	if len(sup) != 1 || sup["full@example.com"] == nil || !strings.HasPrefix(sup["full@example.com"].Reason, "3 soft bounces within 30 days") {
		t.Fatalf("suppressions: %+v", sup)
	}
}

// TestFeedbackCountsInAutomationTotals: reports about an automation's
// messages count on its steps, and so in its totals.
func TestFeedbackCountsInAutomationTotals(t *testing.T) {
	t.Parallel()
	f := servicetest.NewSendFixture(t, true)
	typeA := f.ContactType("Customers")
	a := f.Automation(typeA, "0")
	if err := f.Svc.Automations.SetLive(f.Ctx, f.Acct, a.Utr); err != nil {
		t.Fatal(err)
	}
	for _, e := range []string{"gone@example.com", "full@example.com", "angry@example.com", "fine@example.com"} {
		f.AddContact(typeA, e)
	}
	f.Settle()
	for _, e := range []string{"gone@example.com", "full@example.com", "angry@example.com", "fine@example.com"} {
		if f.StepsOf(e, "Step 1") != 1 {
			t.Fatalf("no step-1 mail to %s", e)
		}
	}
	token := func(to string) string {
		for _, m := range f.SMTP.Messages() {
			if m.To == to {
				return returnToken(t, m)
			}
		}
		t.Fatalf("no mail to %s", to)
		return ""
	}
	f.Handle(
		service.Report{Kind: delivery.ReportHardBounce, Source: delivery.SourceDSN, Token: token("gone@example.com"), Status: "5.1.1"},
		service.Report{Kind: delivery.ReportSoftBounce, Source: delivery.SourceDSN, Token: token("full@example.com"), Status: "4.2.2"},
		service.Report{Kind: delivery.ReportComplaint, Source: delivery.SourceARF, Token: token("angry@example.com")},
		service.Report{Kind: delivery.ReportComplaint, Source: delivery.SourceARF, Token: token("angry@example.com")},
	)
	got, err := f.Svc.Automations.Get(f.Ctx, f.Acct, a.Utr)
	if err != nil {
		t.Fatal(err)
	}
	if got.TotalDelivered != 4 || got.TotalBounces != 1 || got.TotalSoftBounces != 1 || got.TotalSpamReports != 1 || got.TotalUnsubscribe != 1 {
		t.Fatalf("totals: delivered %d bounces %d soft %d spam %d unsubscribes %d", got.TotalDelivered, got.TotalBounces,
			got.TotalSoftBounces, got.TotalSpamReports, got.TotalUnsubscribe)
	}
}

// TestFeedbackBlockCountsOnceNeverSuppresses: a policy refusal reported
// after the relay accepted the message (a DSN or a provider's 5.7.x) is a
// block (decisions.md 8): `blocks` once per message, the reply kept as the
// send's last block, the address never suppressed.
func TestFeedbackBlockCountsOnceNeverSuppresses(t *testing.T) {
	t.Parallel()
	f := servicetest.NewSendFixture(t, true)
	typeA := f.ContactType("Customers", "ann@example.com", "bob@example.com")
	ss := f.Create(f.Input("Spring", []string{"contacts_" + strconv.FormatInt(typeA, 10)}, nil))
	f.WaitStatus(ss.Utr, models.SendCompleted, 20*time.Second)
	ann := f.SentTo(ss.Utr, "ann@example.com")
	block := service.Report{Kind: delivery.ReportBlock, Source: delivery.SourceDSN, Token: returnToken(t, ann), Recipient: "ann@example.com",
		Status: "5.7.1", Diagnostic: "554 5.7.1 Message rejected as spam by content filter"}
	f.Handle(block, block)
	got := f.Get(ss.Utr)
	if got.Blocks != 1 || got.Bounces != 0 || got.Delivered != 2 || !strings.Contains(got.LastBlock, "rejected as spam") {
		t.Fatalf("after a block reported twice: blocks %d bounces %d delivered %d last %q", got.Blocks, got.Bounces, got.Delivered, got.LastBlock)
	}
	if len(f.Suppressed()) != 0 {
		t.Fatalf("a block suppressed: %v", f.Suppressed())
	}
	rows := f.FeedbackRows()
	if len(rows) != 1 || rows[0].Kind != service.FeedbackBlock || rows[0].StatusCode != "5.7.1" {
		t.Fatalf("feedback log: %+v", rows)
	}
}
