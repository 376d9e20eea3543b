package main

import (
	"context"
	"fmt"
	"net/netip"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
	"github.com/chromedp/chromedp/kb"

	"herald/delivery"
	"herald/models"
	"herald/service"
)

// TestBrowserContactTimeline opens a contact's page at phone and desktop
// widths: its mail history loads with each mail's
// timeline — the newest opened by Apple's proxy (marked "machine"), then
// by the person, and its link clicked (shown as text, a hostile-looking
// URL escaped); the one before soft-bounced, hard-bounced and drew a
// complaint. The page does not scroll sideways, passes axe-core, and
// "Older mails" is reached with Tab and pressed with Enter.
func TestBrowserContactTimeline(t *testing.T) {
	t.Parallel()
	b, dsn := newBrowserSessionWithDB(t)
	base := b.base
	var problems consoleProblems
	problems.watch(b)

	b.signUp()

	// The contact and 21 mails to it, through the service on the server's
	// database: the ledger rows as the engine leaves them, then opens,
	// a click and reports through tracking and feedback.
	ctx := context.Background()
	svc, db, acct := ownerService(t, dsn, service.Config{BaseURL: base, SystemFrom: "no-reply@localhost"})
	ct, err := svc.ContactTypes.Create(ctx, acct.ID, "Customers")
	if err != nil {
		t.Fatal(err)
	}
	const email = "ann.longname-for-phones@example.com"
	v, err := svc.Contacts.Create(ctx, acct.ID, service.ContactInput{ContactTypeID: strconv.FormatInt(ct.ID, 10), Email: email, FirstName: "Ann", Country: "FR"})
	if err != nil {
		t.Fatal(err)
	}
	const link = `https://shop.example.com/spring-sale-with-a-long-path/?q=<b>bold</b>&utm_source=herald&utm_campaign=spring`
	sent := models.NewTimestamp(time.Now().Add(-2 * time.Hour))
	var msgs []models.SendMessage
	for i := range 21 {
		ss := models.SingleSend{UserID: acct.ID, SingleSendName: fmt.Sprintf("Letter %02d", i), Subject: "News", Utr: fmt.Sprintf("letter-%02d", i),
			Links: models.StringArray{link}, Status: models.SendCompleted, CreatedAt: sent, UpdatedAt: sent}
		if err := db.W.Create(&ss).Error; err != nil {
			t.Fatal(err)
		}
		m := models.SendMessage{SendID: ss.ID, UserID: acct.ID, Email: email, State: models.MessageDelivered, SentAt: &sent}
		if err := db.W.Create(&m).Error; err != nil {
			t.Fatal(err)
		}
		msgs = append(msgs, m)
	}
	newest, bounced := msgs[20], msgs[19]
	tok, err := svc.Tracking.Token(ctx, newest.ID)
	if err != nil {
		t.Fatal(err)
	}
	person := service.Hit{Method: "GET", IP: netip.MustParseAddr("203.0.113.7"),
		UserAgent: "Mozilla/5.0 (Windows NT 10.0; Win64; x64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/124.0.0.0 Safari/537.36"}
	if err := svc.Tracking.OpenHit(ctx, tok, service.Hit{Method: "GET", IP: netip.MustParseAddr("17.58.101.12"), UserAgent: "Mozilla/5.0"}); err != nil {
		t.Fatal(err)
	}
	if _, err := svc.Tracking.ClickHit(ctx, tok, 0, person); err != nil {
		t.Fatal(err)
	}
	verp, err := svc.Bounces.VERP(ctx)
	if err != nil {
		t.Fatal(err)
	}
	_, rt, _ := verp.ParseMessageID(verp.MessageID(bounced.ID, "example.com"))
	if err := svc.Feedback.Handle(ctx, []service.Report{
		{Kind: delivery.ReportSoftBounce, Source: delivery.SourceDSN, Token: rt, At: sent.Add(time.Minute), Status: "4.2.2", Diagnostic: "smtp; 452 4.2.2 Mailbox full"},
		{Kind: delivery.ReportHardBounce, Source: delivery.SourceDSN, Token: rt, At: sent.Add(2 * time.Minute), Status: "5.1.1", Diagnostic: "smtp; 550 5.1.1 User unknown"},
		{Kind: delivery.ReportComplaint, Source: delivery.SourceARF, Token: rt, At: sent.Add(3 * time.Minute)},
	}); err != nil {
		t.Fatal(err)
	}

	events := func(id int64) string {
		return b.eval("events", fmt.Sprintf(`[...document.querySelectorAll("#mail-%d .mail-event")].map(e => e.dataset.kind + (e.dataset.machine === "true" ? "(machine)" : "")).join(" ")`, id))
	}
	for _, width := range []int64{390, 1280} {
		b.do(fmt.Sprintf("the contact's page at %d px", width),
			chromedp.EmulateViewport(width, 800),
			chromedp.Navigate(base+"/contacts/"+strconv.FormatInt(v.ID, 10)+"/edit"),
			b.idle,
			chromedp.WaitVisible(chromedp.CSS(fmt.Sprintf("#mail-%d .mail-timeline", newest.ID))),
			b.idle,
		)
		if w := b.eval("page width", `String(document.documentElement.scrollWidth)`); w != fmt.Sprint(width) {
			t.Errorf("the contact page at %d px is %s px wide: it scrolls sideways", width, w)
		}
		if got := events(newest.ID); got != "delivered open(machine) click" {
			t.Errorf("at %d px the newest mail's timeline is %q", width, got)
		}
		if got := b.text("machine", fmt.Sprintf("#mail-%d .mail-event-machine", newest.ID)); got != "machine" {
			t.Errorf("machine mark %q", got)
		}
		if got := b.text("link", fmt.Sprintf("#mail-%d .mail-event-url", newest.ID)); got != link {
			t.Errorf("the clicked link reads %q", got)
		}
		if n := b.eval("markup", `String(document.querySelectorAll("#contact-history b, #contact-history .mail-timeline a").length)`); n != "0" {
			t.Errorf("the link's text became markup or a link: %s elements", n)
		}
		if got := events(bounced.ID); got != "delivered soft_bounce hard_bounce complaint unsubscribe" {
			t.Errorf("at %d px the bounced mail's timeline is %q", width, got)
		}
		if got := b.text("hard bounce", fmt.Sprintf(`#mail-%d .mail-event[data-kind="hard_bounce"]`, bounced.ID)); !strings.Contains(got, "5.1.1") || !strings.Contains(got, "User unknown") {
			t.Errorf("the hard bounce reads %q", got)
		}
	}
	b.capture("contact-timeline")

	// Older mails, by keyboard: Tab until the button has the focus, Enter.
	b.do("phone", chromedp.EmulateViewport(390, 800), chromedp.Evaluate[chromedp.Void](`document.activeElement && document.activeElement.blur(); window.scrollTo(0, 0)`))
	reached := false
	for range 200 {
		b.do("tab", chromedp.KeyEvent(kb.Tab))
		if b.eval("focus", `document.activeElement ? document.activeElement.textContent.trim() : ""`) == "Older mails" {
			reached = true
			break
		}
	}
	if !reached {
		t.Fatal("Tab never reaches Older mails")
	}
	b.do("older mails", chromedp.KeyEvent(kb.Enter), b.idle, chromedp.WaitVisible(chromedp.CSS(fmt.Sprintf("#mail-%d", msgs[0].ID))), b.idle)
	if n := b.eval("mails", `String(document.querySelectorAll("#contact-history .history-item").length)`); n != "21" {
		t.Errorf("%s mails after Older mails, want 21", n)
	}
	if w := b.eval("page width", `String(document.documentElement.scrollWidth)`); w != "390" {
		t.Errorf("after Older mails the page is %s px wide", w)
	}
	b.capture("contact-timeline-older")
	if p := problems.take(); len(p) > 0 {
		t.Errorf("console problems: %q", p)
	}
}
