package main

import (
	"context"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
	"github.com/chromedp/chromedp/kb"

	"herald/models"
	"herald/service"
)

// TestBrowserContactPrivacy opens the page of a contact that came through
// a form (a long consent text, not yet confirmed) on a 390 px phone: the
// consent and privacy cards fit the screen and pass axe-core; by keyboard
// the download and the erase button are reached with Tab, Enter on the
// erase asks a question that says what happens, and declining keeps the
// contact while accepting erases it and lands on the list.
func TestBrowserContactPrivacy(t *testing.T) {
	t.Parallel()
	b, dsn := newBrowserSessionWithDB(t)
	base := b.base
	var problems consoleProblems
	problems.watch(b)
	b.signUp()

	ctx := context.Background()
	svc, db, acct := ownerService(t, dsn, service.Config{BaseURL: base, SystemFrom: "no-reply@localhost"})
	ct, err := svc.ContactTypes.Create(ctx, acct.ID, "Customers")
	if err != nil {
		t.Fatal(err)
	}
	const email = "ann.longname-for-phones@example.com"
	at := models.NewTimestamp(time.Now().Add(-time.Hour))
	v, err := svc.Contacts.Create(ctx, acct.ID, service.ContactInput{ContactTypeID: strconv.FormatInt(ct.ID, 10), Email: email, FirstName: "Ann", Country: "FR",
		Consent: models.Consent{Source: models.ConsentForm, FormID: 3, At: &at, IP: "2001:db8:85a3::8a2e:370:7334",
			UserAgent: "Mozilla/5.0 (iPhone; CPU iPhone OS 17_4 like Mac OS X) AppleWebKit/605.1.15 (KHTML, like Gecko) Version/17.4 Mobile/15E148 Safari/604.1",
			Text:      "Yes, send me the monthly letter about new products, offers and events. I can unsubscribe at any time with the link in every letter."}})
	if err != nil {
		t.Fatal(err)
	}
	if err := db.W.Exec("UPDATE contacts SET status = ? WHERE id = ?", models.ContactUnconfirmed, v.ID).Error; err != nil {
		t.Fatal(err)
	}
	page := "/contacts/" + strconv.FormatInt(v.ID, 10) + "/edit"
	b.do("the contact's page at 390 px",
		chromedp.EmulateViewport(390, 800),
		chromedp.Navigate(base+page),
		b.idle,
		chromedp.WaitVisible(chromedp.ID("contact-privacy")),
		b.idle,
	)
	if s := b.sideways(390); s != "" {
		t.Errorf("the contact page scrolls sideways at 390 px: %s", s)
	}
	if got := b.text("status", "#contact-status .badge"); got != "Unconfirmed" {
		t.Errorf("status %q", got)
	}
	for _, v := range b.axeCheck("contact privacy at 390 px") {
		t.Errorf("accessibility at 390 px: %s", v)
	}

	// By keyboard: Tab reaches the download, then the erase button.
	b.do("from the top", chromedp.Evaluate[chromedp.Void](`document.activeElement && document.activeElement.blur(); window.scrollTo(0, 0)`))
	tabTo := func(id string) {
		t.Helper()
		for range 300 {
			b.do("tab", chromedp.KeyEvent(kb.Tab))
			if b.eval("focus", `document.activeElement ? document.activeElement.id : ""`) == id {
				return
			}
		}
		t.Fatalf("Tab never reaches #%s", id)
	}
	tabTo("privacy-export")
	tabTo("privacy-erase")

	// Enter asks first; declined, nothing happens.
	var asked []string
	b.answerDialogs(func(m string) bool { asked = append(asked, m); return false })
	b.do("erase, declined", chromedp.KeyEvent(kb.Enter), b.idle)
	time.Sleep(300 * time.Millisecond)
	if len(asked) != 1 || !strings.Contains(asked[0], email) || !strings.Contains(asked[0], "cannot be undone") {
		t.Fatalf("the erase asked %q", asked)
	}
	if _, err := svc.Contacts.Get(ctx, acct.ID, v.ID); err != nil {
		t.Fatalf("declined, the contact is gone: %v", err)
	}
	// Accepted: erased, and back on the list with the message.
	b.answerDialogs(nil)
	b.do("focus the erase", chromedp.Focus(chromedp.ID("privacy-erase")))
	b.do("erase, accepted", chromedp.KeyEvent(kb.Enter))
	b.waitPath("/contacts")
	b.do("flash", chromedp.WaitVisible(chromedp.CSS("#flash .flash")))
	if got := b.text("flash", "#flash .flash"); !strings.Contains(got, "erased") {
		t.Errorf("flash %q", got)
	}
	if _, err := svc.Contacts.Get(ctx, acct.ID, v.ID); err == nil {
		t.Fatal("accepted, the contact is still there")
	}
	if erased, err := svc.Privacy.Erased(ctx, acct.ID, email); err != nil || !erased {
		t.Fatalf("erased: %v %v", erased, err)
	}
	if p := problems.take(); len(p) > 0 {
		t.Errorf("console problems: %q", p)
	}
}
