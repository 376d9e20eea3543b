package main

import (
	"context"
	"fmt"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"herald/dbtest"
	"herald/eventually"
	"herald/models"
	"herald/service"
	"herald/smtptest"
)

// TestBrowserResendToThoseWhoDidNotOpen: a real `herald serve` sends a
// letter to four contacts; one opens it as a person and one only through
// a privacy proxy (written in the ledger as the tracker writes them). On a
// phone (390 px) the send's page shows "About 3 people did not open" in
// its resend card; the form refuses an empty subject, then schedules the
// resend two days after the send and lands on the resend's page, which
// links back to the original. On a desktop (1280 px) the original's card
// links to the resend. Each page is checked by axe and for sideways
// scrolling.
func TestBrowserResendToThoseWhoDidNotOpen(t *testing.T) {
	t.Parallel()
	if findChromium() == "" {
		dbtest.SkipOrFail(t, "chromium not found: install Debian's chromium to run browser tests")
	}
	dsn := dbtest.DSN(t)
	sink := smtptest.Start(t)
	base := startConsoleServerOn(t, dsn, map[string]string{"HERALD_SMTP_URL": sink.URL()})
	b := newBrowserSessionOn(t, base)
	var problems consoleProblems
	problems.watch(b)

	b.do("sign up on a phone",
		chromedp.EmulateViewport(390, 800),
		chromedp.Navigate(base+"/signup"),
		b.idle,
		chromedp.WaitVisible(chromedp.ID("signup-name")),
		chromedp.SendKeys(chromedp.ID("signup-name"), "Ada Lovelace"),
		chromedp.SendKeys(chromedp.ID("signup-email"), "ada@example.com"),
		chromedp.SendKeys(chromedp.ID("signup-password"), "correct horse battery"),
		chromedp.Click(chromedp.CSS(`#signup-form button[type="submit"]`)),
		chromedp.WaitVisible(chromedp.ID("secret-key")),
	)

	ctx := context.Background()
	svc, db, acct := ownerService(t, dsn, service.Config{BaseURL: base, SystemFrom: "no-reply@localhost"})
	ct, err := svc.ContactTypes.Create(ctx, acct.ID, "Customers")
	if err != nil {
		t.Fatal(err)
	}
	emails := []string{"ann@example.com", "bob@example.com", "cy@example.com", "dan@example.com"}
	for i, e := range emails {
		if _, err := svc.Contacts.Create(ctx, acct.ID, service.ContactInput{ContactTypeID: strconv.FormatInt(ct.ID, 10),
			FirstName: "C" + strconv.Itoa(i), Email: e, Country: "250"}); err != nil {
			t.Fatal(err)
		}
	}
	snd, err := svc.Senders.Create(ctx, acct.ID, service.SenderInput{FromName: "Ada at Example", FromEmail: "news@example.com",
		ReplyToEmail: "ada@example.com", CountryID: "250", CompanyAddress: "1 Main Street", Nickname: "News"})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := svc.Senders.Verify(ctx, snd.VerifyToken); err != nil {
		t.Fatal(err)
	}
	g, err := svc.Groups.Create(ctx, acct.ID, service.GroupInput{GroupName: "Newsletter", Description: "The monthly letter", IsDisplay: "1"})
	if err != nil {
		t.Fatal(err)
	}
	orig, err := svc.SingleSends.Create(ctx, acct.ID, service.SingleSendInput{TemplateID: "1",
		TemplateHTML: `<html><body><p>Hello ((first_name)), our sale starts on Monday.</p><p>((sender_address))</p><a href="((unsubscribe_preferences))">Unsubscribe</a></body></html>`,
		SenderID:     strconv.FormatInt(snd.ID, 10), UnsubscribeGroupID: strconv.FormatInt(g.ID, 10), SingleSendName: "Spring sale",
		Subject: "Spring sale", Preheader: "Thirty percent off", RecipientID: []string{"contacts_" + strconv.FormatInt(ct.ID, 10)}, ScheduleType: "0"})
	if err != nil {
		t.Fatal(err)
	}
	eventually.NoError(t, 30*time.Second, func() error {
		var ss models.SingleSend
		if err := db.R.Where("id = ?", orig.ID).Take(&ss).Error; err != nil {
			t.Fatal(err)
		}
		if ss.Status != models.SendCompleted || ss.Delivered != 4 {
			return fmt.Errorf("the letter: status %d, %d delivered", ss.Status, ss.Delivered)
		}
		return nil
	})
	now := time.Now().UnixMilli()
	if err := db.W.Exec("UPDATE send_messages SET human_opened_at = ?, opened_at = CURRENT_TIMESTAMP WHERE send_id = ? AND email = ?", now, orig.ID, "ann@example.com").Error; err != nil {
		t.Fatal(err)
	}
	if err := db.W.Exec("UPDATE send_messages SET opened_at = CURRENT_TIMESTAMP WHERE send_id = ? AND email = ?", orig.ID, "bob@example.com").Error; err != nil {
		t.Fatal(err)
	}

	b.do("the letter's page on a phone",
		chromedp.Navigate(base+"/single-sends/"+orig.Utr),
		b.idle,
		chromedp.WaitVisible(chromedp.ID("resend-count")),
	)
	if got := b.text("count", "#resend-count"); got != "About 3 people did not open this send." {
		t.Fatalf("count %q", got)
	}
	b.capture("resend-card")
	if p := b.sideways(390); p != "" {
		t.Errorf("the send's page scrolls sideways at 390 px: %s", p)
	}

	b.do("schedule without a subject",
		choose("#resend-wait", "2"),
		chromedp.Click(chromedp.ID("resend-submit")),
		b.idle,
		chromedp.WaitVisible(chromedp.CSS(`#send-resend .field-errors`)),
	)
	if got := b.text("subject error", "#send-resend"); !strings.Contains(got, "subject field is required") {
		t.Fatalf("the card after an empty subject: %q", got)
	}
	var n int64
	if err := db.R.Raw("SELECT COUNT(*) FROM single_sends WHERE resend_of = ?", orig.ID).Scan(&n).Error; err != nil || n != 0 {
		t.Fatalf("a resend was saved without a subject (%d, %v)", n, err)
	}
	b.capture("resend-card-error")
	// The refusal is a 422, which the browser logs: that one is expected.
	for _, m := range problems.take() {
		if !strings.Contains(m, "422") || !strings.Contains(m, "/resend") {
			t.Fatalf("the browser logged: %s", m)
		}
	}

	b.do("schedule the resend",
		chromedp.SendKeys(chromedp.ID("resend-subject"), "Did you see our sale?"),
		chromedp.Click(chromedp.ID("resend-submit")),
		chromedp.WaitVisible(chromedp.ID("resend-original")),
		b.idle,
	)
	var rs models.SingleSend
	if err := db.R.Where("resend_of = ?", orig.ID).Take(&rs).Error; err != nil {
		t.Fatal(err)
	}
	if rs.Subject != "Did you see our sale?" || rs.Status != models.SendReady || rs.SendAfter == nil ||
		rs.SendAfter.Time.Sub(time.Now()) < 47*time.Hour {
		t.Fatalf("the resend: %q status %d at %v", rs.Subject, rs.Status, rs.SendAfter)
	}
	if got := b.text("back link", "#resend-original"); got != "Spring sale" {
		t.Fatalf("the resend links back to %q", got)
	}
	if got := b.text("schedule", "#send-schedule"); !strings.Contains(got, "who have not opened it by then") {
		t.Fatalf("the resend's schedule reads %q", got)
	}
	if b.eval("edit", `document.getElementById("edit-send") ? "shown" : "none"`) != "none" {
		t.Fatal("a resend offers Edit")
	}
	b.capture("resend-page")
	if p := b.sideways(390); p != "" {
		t.Errorf("the resend's page scrolls sideways at 390 px: %s", p)
	}

	b.do("the letter's page on a desktop",
		chromedp.EmulateViewport(1280, 900),
		chromedp.Navigate(base+"/single-sends/"+orig.Utr),
		b.idle,
		chromedp.WaitVisible(chromedp.ID("resend-link")),
	)
	if got := b.text("scheduled", "#resend-scheduled"); !strings.Contains(got, "Did you see our sale?") {
		t.Fatalf("the letter's card reads %q", got)
	}
	b.capture("resend-card-scheduled")
	if p := b.sideways(1280); p != "" {
		t.Errorf("the send's page scrolls sideways at 1280 px: %s", p)
	}
	b.do("follow the link",
		chromedp.Click(chromedp.ID("resend-link")),
		chromedp.WaitVisible(chromedp.ID("resend-original")),
		b.idle,
	)
	b.capture("resend-page-desktop")
	if p := b.sideways(1280); p != "" {
		t.Errorf("the resend's page scrolls sideways at 1280 px: %s", p)
	}
	if ps := problems.take(); len(ps) > 0 {
		t.Fatalf("the browser logged: %q", ps)
	}
}
