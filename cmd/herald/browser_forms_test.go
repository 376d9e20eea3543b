package main

import (
	"bytes"
	"context"
	"fmt"
	"mime"
	"net/http"
	"regexp"
	"strconv"
	"testing"
	"time"

	"github.com/chromedp/cdproto/emulation"
	"github.com/chromedp/chromedp"
	"github.com/chromedp/chromedp/kb"

	"herald/dbtest"
	"herald/eventually"
	"herald/models"
	"herald/service"
	"herald/smtptest"
)

// A phone's browser: headless Chromium says "HeadlessChrome", which
// herald's machine rules rightly take for a program.
const phoneUA = "Mozilla/5.0 (Linux; Android 14; Pixel 8) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/126.0.0.0 Mobile Safari/537.36"

// TestBrowserSignupForm: a person fills a double-opt-in German form's
// hosted page on a phone by keyboard, the confirmation mail reaches an SMTP sink, a
// link scanner's GET and a HEAD of its link confirm nothing, and the
// person's click on it confirms the contact. The pages are axe clean at
// 390 and 1280 px, scroll no sideways, and the keyboard reaches every
// control.
func TestBrowserSignupForm(t *testing.T) {
	t.Parallel()
	if findChromium() == "" {
		dbtest.SkipOrFail(t, "chromium not found: install Debian's chromium to run browser tests")
	}
	dsn := dbtest.DSN(t)
	sink := smtptest.Start(t)
	base := startConsoleServerOn(t, dsn, map[string]string{"HERALD_SMTP_URL": sink.URL()})
	b := newBrowserSessionOn(t, base)
	b.signUp()
	svc, db, acct := ownerService(t, dsn, service.Config{BaseURL: base, SystemFrom: "no-reply@localhost"})
	ctx := context.Background()
	ct, err := svc.ContactTypes.Create(ctx, acct.ID, "Readers")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := svc.Fields.Create(ctx, acct.ID, service.FieldInput{FieldName: "company", FieldType: "text"}); err != nil {
		t.Fatal(err)
	}
	g, err := svc.Groups.Create(ctx, acct.ID, service.GroupInput{GroupName: "Product news", Description: "New features, once a month", IsDisplay: "1"})
	if err != nil {
		t.Fatal(err)
	}
	fm, err := svc.Forms.Save(ctx, acct.ID, service.FormInput{Name: "The Weekly Herald", ContactTypeID: strconv.FormatInt(ct.ID, 10),
		Fields: []string{"company"}, GroupIDs: []string{strconv.FormatInt(g.ID, 10)}, Language: "de-AT"})
	if err != nil {
		t.Fatal(err)
	}
	b.installKeyboardAudit()
	if _, err := chromedp.Call(b.ctx, emulation.SetUserAgentOverride, emulation.SetUserAgentOverrideParams{UserAgent: phoneUA}); err != nil {
		t.Fatal(err)
	}
	page := base + "/f/" + fm.PublicID

	check := func(where string, width int64, controls bool) {
		t.Helper()
		if w := b.eval(where, `String(document.documentElement.scrollWidth)`); w != strconv.FormatInt(width, 10) {
			t.Errorf("%s is %s px wide: it scrolls sideways", where, w)
		}
		for _, v := range b.axeCheck(where) {
			t.Errorf("%s: %s", where, v)
		}
		if !controls {
			return // a page of text alone: nothing to reach
		}
		for _, p := range b.keyboardAudit(where) {
			t.Errorf("%s: %s", where, p)
		}
	}
	// The console's pages of the form, logged in.
	for _, path := range []string{"/forms", "/forms/" + strconv.FormatInt(fm.ID, 10)} {
		for _, width := range []int64{1280, 390} {
			where := fmt.Sprintf("%s at %d px", path, width)
			b.do("open "+where, chromedp.EmulateViewport(width, 900), chromedp.Navigate(base+path), b.idle, chromedp.WaitVisible(chromedp.CSS("#main")))
			check(where, width, true)
		}
	}
	// The live preview follows the name as it is typed.
	b.eval("clear the name", `(document.getElementById("form-name").value = "", "")`)
	b.do("rename in the settings", chromedp.SendKeys(chromedp.ID("form-name"), "Renamed weekly"))
	eventually.True(t, 10*time.Second, "the preview shows the new name", func() bool {
		return b.eval("preview", `(document.querySelector("#form-preview h3") || {}).textContent || ""`) == "Renamed weekly"
	})

	for _, width := range []int64{1280, 390} {
		where := fmt.Sprintf("the hosted form at %d px", width)
		b.do("open "+where, chromedp.EmulateViewport(width, 900), chromedp.Navigate(page), chromedp.WaitVisible(chromedp.CSS(`input[name="email"]`)))
		// The form's de-AT is spoken in German (the catalogue's tag).
		if lang := b.eval(where, `document.documentElement.lang`); lang != "de" {
			t.Errorf("%s: lang %q", where, lang)
		}
		check(where, width, true)
	}

	// The person fills the form by keyboard and sends it with Enter.
	b.do("fill the form",
		chromedp.Navigate(page), chromedp.WaitVisible(chromedp.CSS(`input[name="email"]`)),
		chromedp.Focus(chromedp.CSS(`input[name="email"]`)),
		chromedp.KeyEvent("ann@example.com"+kb.Tab+"Ann"+kb.Tab+"Lee"+kb.Tab+"Acme"+kb.Tab+" "),
	)
	time.Sleep(service.MinFillTime) // a person takes this long at least: a faster post is a bot's
	b.do("send the form", chromedp.Focus(chromedp.CSS(`input[name="company"]`)), chromedp.KeyEvent(kb.Enter),
		chromedp.WaitVisible(chromedp.CSS(`[role="status"]`)))
	if got := b.text("answer", `[role="status"]`); got != "Bitte prüfen Sie Ihr Postfach, um zu bestätigen." {
		t.Fatalf("answer %q", got)
	}
	check("the answer at 390 px", 390, false)
	var c models.Contact
	if err := db.R.Where("user_id = ? AND email = ?", acct.ID, "ann@example.com").First(&c).Error; err != nil {
		t.Fatal(err)
	}
	if c.Status != models.ContactUnconfirmed || c.FirstName != "Ann" || c.Consent.UserAgent != phoneUA {
		t.Fatalf("contact %+v", c)
	}

	// The mail, and its link.
	eventually.True(t, 10*time.Second, "the confirmation mail", func() bool { return sink.Count() >= 1 })
	msg := sink.Messages()[0]
	m := regexp.MustCompile(regexp.QuoteMeta(base) + `/c/[A-Za-z0-9_-]+`).Find(bytes.ReplaceAll(msg.Data, []byte("=\r\n"), nil))
	if msg.To != "ann@example.com" || m == nil {
		t.Fatalf("mail to %s without a link: %s", msg.To, msg.Data)
	}
	if subject, err := new(mime.WordDecoder).DecodeHeader(msg.Header().Get("Subject")); err != nil || subject != "Bitte bestätigen Sie Ihr Abonnement" {
		t.Fatalf("the mail's subject %q (%v): not the form's German", subject, err)
	}
	link := string(m)

	// A link scanner and a HEAD confirm nothing.
	for _, r := range []struct{ method, ua string }{{"HEAD", phoneUA}, {"GET", "Mozilla/5.0 (compatible; proofpoint URL defense)"}, {"GET", "curl/8.5.0"}} {
		req, _ := http.NewRequest(r.method, link, nil)
		req.Header.Set("User-Agent", r.ua)
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if resp.StatusCode != 200 {
			t.Fatalf("%s %s: %d", r.method, r.ua, resp.StatusCode)
		}
	}
	if err := db.R.First(&c, c.ID).Error; err != nil || c.Status != models.ContactUnconfirmed {
		t.Fatalf("a machine confirmed: %v %+v", err, c)
	}

	// The person opens the link (after the 10 s in which herald takes a
	// click for a mail gateway's scan): one click confirms.
	time.Sleep(time.Until(msg.At.Add(10*time.Second + 500*time.Millisecond)))
	b.do("open the link", chromedp.EmulateViewport(390, 900), chromedp.Navigate(link), chromedp.WaitVisible(chromedp.CSS("h1")))
	if got := b.text("confirmed", "h1"); got != "Sie sind angemeldet" {
		t.Fatalf("confirmation page %q", got)
	}
	for _, v := range b.axeCheck("the confirmation page") {
		t.Errorf("the confirmation page: %s", v)
	}
	if err := db.R.First(&c, c.ID).Error; err != nil || c.Status != models.ContactConfirmed || c.Consent.ConfirmedAt == nil {
		t.Fatalf("not confirmed: %v %+v", err, c)
	}
}
