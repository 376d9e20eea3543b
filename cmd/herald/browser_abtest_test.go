package main

import (
	"context"
	"errors"
	"fmt"
	"net/http"
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

// TestBrowserABTestWinnerGoesToTheRest writes an A/B subject test on a
// phone-sized screen (390 px) with a real browser on a real `herald
// serve` that sends to a test relay: two subjects on half of 20 contacts,
// by unique opens. The test share goes out with its subjects; an open of
// a B message (its tracking pixel, fetched over HTTP) makes B the winner
// once the wait is over (the wait's end is moved to now in the
// database: the server's clock is the real one); the server gives the
// rest B's subject, each contact one message, and the send's page at
// 1280 px shows both variants with B's winner badge.
func TestBrowserABTestWinnerGoesToTheRest(t *testing.T) {
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
	for i := range 20 {
		if _, err := svc.Contacts.Create(ctx, acct.ID, service.ContactInput{ContactTypeID: strconv.FormatInt(ct.ID, 10),
			FirstName: "C" + strconv.Itoa(i), Email: "c" + strconv.Itoa(i) + "@example.com", Country: "250"}); err != nil {
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
	if _, err := svc.Groups.Create(ctx, acct.ID, service.GroupInput{GroupName: "Newsletter", Description: "The monthly letter", IsDisplay: "1"}); err != nil {
		t.Fatal(err)
	}
	design, err := svc.Designs.Create(ctx, acct.ID, service.DesignInput{Name: "Letter", TemplateID: "1",
		TemplateHTML: `<html><body><p>Hello ((first_name)), our sale starts on Monday.</p><p>((sender_address))</p><a href="((unsubscribe_preferences))">Unsubscribe</a></body></html>`})
	if err != nil {
		t.Fatal(err)
	}

	b.do("write the test",
		chromedp.Navigate(base+"/single-sends/new"),
		b.idle,
		chromedp.WaitVisible(chromedp.ID("send-form")),
		chromedp.SendKeys(chromedp.ID("send-name"), "Spring sale"),
		chromedp.Click(chromedp.CSS(`#send-audience input[name="recipient_id"][value^="contacts_"]`)),
		choose("#send-template", "design-"+strconv.FormatInt(design.ID, 10)),
		chromedp.SendKeys(chromedp.ID("send-subject"), "Spring sale"),
		chromedp.SendKeys(chromedp.ID("send-preheader"), "Thirty percent off"),
	)
	// The test's fields show once it is switched on.
	if got := b.eval("hidden", `document.getElementById("send-ab-subject-1").offsetParent === null ? "hidden" : "shown"`); got != "hidden" {
		t.Fatal("the A/B fields show with the option off")
	}
	b.do("switch the test on",
		chromedp.Click(chromedp.ID("send-ab-on")),
		chromedp.WaitVisible(chromedp.ID("send-ab-subject-1")),
		chromedp.SendKeys(chromedp.ID("send-ab-subject-1"), "Spring sale"),
		chromedp.SendKeys(chromedp.ID("send-ab-subject-2"), "Half price this week"),
		choose("#send-ab-share", "50"),
		choose("#send-ab-metric", "opens"),
		choose("#send-ab-wait", "30"),
		b.idle,
	)
	if got := b.eval("fits", `document.documentElement.scrollWidth <= window.innerWidth ? "fits" : "overflows"`); got != "fits" {
		t.Fatal("the A/B option overflows a 390 px screen")
	}
	b.capture("abtest-compose")
	b.do("send",
		chromedp.Click(chromedp.ID("send-save")),
		chromedp.WaitVisible(chromedp.ID("send-status")),
		b.idle,
	)
	var ss models.SingleSend
	if err := db.R.Where("user_id = ? AND single_send_name = ?", acct.ID, "Spring sale").First(&ss).Error; err != nil {
		t.Fatal(err)
	}
	if len(ss.ABSubjects) != 2 || ss.ABShare != 50 || ss.ABWait != 30 {
		t.Fatalf("saved test %v %d %d", ss.ABSubjects, ss.ABShare, ss.ABWait)
	}

	// The test share goes out; the rest waits.
	var rows []struct {
		ID      int64
		Email   string
		Variant int
	}
	eventually.NoError(t, 30*time.Second, func() error {
		rows = rows[:0]
		if err := db.R.Raw("SELECT id, email, variant FROM send_messages WHERE send_id = ?", ss.ID).Scan(&rows).Error; err != nil {
			t.Fatal(err)
		}
		test := 0
		for _, r := range rows {
			if r.Variant > 0 {
				test++
			}
		}
		if n := sink.Count(); len(rows) != 20 || test == 0 || n != test {
			return fmt.Errorf("test share not sent: %d rows, %d messages", len(rows), n)
		}
		return nil
	})
	variantOf := map[string]int{}
	opened := false
	for _, r := range rows {
		variantOf[r.Email] = r.Variant
		if r.Variant == 2 && !opened {
			tok, err := svc.Tracking.Token(ctx, r.ID)
			if err != nil {
				t.Fatal(err)
			}
			resp, err := http.Get(base + "/t/o/" + tok + ".gif")
			if err != nil {
				t.Fatal(err)
			}
			resp.Body.Close()
			opened = true
		}
	}
	if !opened {
		t.Fatal("no B message in the test share")
	}
	eventually.NoError(t, 10*time.Second, func() error {
		var n int64
		db.R.Raw("SELECT COUNT(*) FROM send_messages WHERE send_id = ? AND opened_at IS NOT NULL", ss.ID).Scan(&n)
		if n == 1 {
			return nil
		}
		return errors.New("the open was not counted")
	})
	// The wait is over.
	if err := db.W.Exec("UPDATE single_sends SET ab_decide_at = ? WHERE id = ?", time.Now().Add(-time.Second).UnixMilli(), ss.ID).Error; err != nil {
		t.Fatal(err)
	}
	eventually.NoError(t, 30*time.Second, func() error {
		if n := sink.Count(); n < 20 {
			return fmt.Errorf("the rest not sent: %d of 20", n)
		}
		return nil
	})
	subjects := []string{"Half price this week", "Spring sale", "Half price this week"}
	for _, m := range sink.Messages() {
		if want := subjects[variantOf[m.To]]; m.Header().Get("Subject") != want {
			t.Errorf("%s (variant %d) got %q, want %q", m.To, variantOf[m.To], m.Header().Get("Subject"), want)
		}
	}
	for addr, n := range sink.PerRecipient() {
		if n != 1 {
			t.Errorf("%s got %d messages", addr, n)
		}
	}

	b.do("the statistics on a desktop",
		chromedp.EmulateViewport(1280, 900),
		chromedp.Navigate(base+"/single-sends/"+ss.Utr),
		b.idle,
		chromedp.WaitVisible(chromedp.ID("send-ab-test")),
	)
	if got := b.text("B", "#ab-variant-2"); !strings.Contains(strings.ToLower(got), "winner") || !strings.Contains(got, "Half price this week") {
		t.Fatalf("variant B row %q", got)
	}
	if got := b.text("A", "#ab-variant-1"); strings.Contains(strings.ToLower(got), "winner") {
		t.Fatalf("variant A row %q", got)
	}
	if got := b.text("rest", "#ab-rest"); !strings.Contains(got, "The winner, B") {
		t.Fatalf("rest row %q", got)
	}
	// The results table stays inside its card on a laptop's screen and on
	// a phone (its columns scroll within the card where they must).
	for _, w := range []int64{1366, 390} {
		b.do("resize", chromedp.EmulateViewport(w, 900), b.idle)
		if got := b.eval("inside its card", `(() => {
			const card = document.getElementById("send-ab-test").getBoundingClientRect();
			const wrap = document.querySelector("#send-ab-test .table-wrap");
			const table = wrap.querySelector("table").getBoundingClientRect();
			const scrolls = getComputedStyle(wrap).overflowX === "auto" && wrap.getBoundingClientRect().right <= card.right + 1;
			return (table.right <= card.right + 1 || scrolls) && document.documentElement.scrollWidth <= window.innerWidth ? "inside" : "past its card by " + Math.round(table.right - card.right) + " px";
		})()`); got != "inside" {
			t.Errorf("the A/B results table at %d px: %s", w, got)
		}
	}
	b.do("desktop again", chromedp.EmulateViewport(1280, 900), b.idle)
	b.capture("abtest-statistics")
	if ps := problems.take(); len(ps) > 0 {
		t.Fatalf("the browser logged: %q", ps)
	}
}
