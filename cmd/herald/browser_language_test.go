package main

import (
	"context"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"herald/models"
	"herald/service"
)

// TestBrowserPreferencesInGerman: a contact whose language is German
// opens the preference page of a mail in Chromium (whose own
// Accept-Language is English) at phone width: the page says
// <html lang="de">, speaks German, does not scroll sideways and passes
// axe-core; saving "unsubscribe from all" answers in German too.
func TestBrowserPreferencesInGerman(t *testing.T) {
	t.Parallel()
	b, dsn := newBrowserSessionWithDB(t)
	base := b.base
	var problems consoleProblems
	problems.watch(b)
	b.signUp()

	ctx := context.Background()
	svc, db, acct := ownerService(t, dsn, service.Config{BaseURL: base, SystemFrom: "no-reply@localhost"})
	ct, err := svc.ContactTypes.Create(ctx, acct.ID, "Kunden")
	if err != nil {
		t.Fatal(err)
	}
	const email = "anna.langername-fuer-telefone@example.de"
	v, err := svc.Contacts.Create(ctx, acct.ID, service.ContactInput{ContactTypeID: strconv.FormatInt(ct.ID, 10), Email: email, FirstName: "Anna", Country: "DE"})
	if err != nil {
		t.Fatal(err)
	}
	if err := db.W.Exec("UPDATE contacts SET language = 'de' WHERE id = ? AND user_id = ?", v.ID, acct.ID).Error; err != nil {
		t.Fatal(err)
	}
	g, err := svc.Groups.Create(ctx, acct.ID, service.GroupInput{GroupName: "Newsletter", Description: "Einmal im Monat: Neuheiten und Angebote", IsDisplay: "1"})
	if err != nil {
		t.Fatal(err)
	}
	sent := models.NewTimestamp(time.Now().Add(-time.Hour))
	ss := models.SingleSend{UserID: acct.ID, SingleSendName: "Frühling", Subject: "Neu", Utr: "fruehling", UnsubscribeGroupID: g.ID,
		Status: models.SendCompleted, CreatedAt: sent, UpdatedAt: sent}
	if err := db.W.Create(&ss).Error; err != nil {
		t.Fatal(err)
	}
	m := models.SendMessage{SendID: ss.ID, UserID: acct.ID, ContactID: &v.ID, Email: email, State: models.MessageDelivered, SentAt: &sent}
	if err := db.W.Create(&m).Error; err != nil {
		t.Fatal(err)
	}
	tok, err := svc.Tracking.Token(ctx, m.ID)
	if err != nil {
		t.Fatal(err)
	}

	check := func(step string) {
		t.Helper()
		b.do(step+" at 390 px", chromedp.EmulateViewport(390, 800)) // capture may have widened it
		if got := b.eval("lang", `document.documentElement.lang + " " + document.documentElement.dir`); got != "de ltr" {
			t.Errorf("%s: <html lang dir> = %q, want de ltr", step, got)
		}
		if got := b.text("heading", "h1"); got != "E-Mail-Einstellungen" {
			t.Errorf("%s: heading %q", step, got)
		}
		if w := b.eval("page width", `String(document.documentElement.scrollWidth)`); w != "390" {
			t.Errorf("%s at 390 px is %s px wide: it scrolls sideways", step, w)
		}
		for _, v := range b.axeCheck(step) {
			t.Errorf("%s: %s", step, v)
		}
		b.capture("preferences-de-" + strings.ReplaceAll(step, " ", "-"))
	}

	b.do("the preference page", chromedp.EmulateViewport(390, 800), chromedp.Navigate(base+"/u/"+tok),
		chromedp.WaitVisible(chromedp.CSS("#preferences form")))
	check("the page")
	body := b.text("page", "#preferences")
	for _, want := range []string{"Wählen Sie, was " + email + " erhält.", "E-Mails, die ich nicht mehr möchte", "Sie erhalten noch E-Mails von 1 Liste.",
		"Von allem abmelden", "Einstellungen speichern"} {
		if !strings.Contains(body, want) {
			t.Errorf("the page lacks %q:\n%s", want, body)
		}
	}

	b.do("unsubscribe from all", chromedp.Click(chromedp.CSS(`input[name="all"]`)), chromedp.Click(chromedp.CSS(`#preferences button[type="submit"]`)),
		chromedp.WaitVisible(chromedp.CSS(`#preferences [role="status"]`)))
	check("saved")
	if got := b.text("status", `#preferences [role="status"]`); !strings.HasPrefix(got, "Ihre Einstellungen sind gespeichert.") {
		t.Errorf("saved: %q", got)
	}
	var all int64
	if err := db.R.Model(&models.Unsubscriber{}).Where("user_id = ? AND email_address = ? AND unsubscribe_groups_id IS NULL", acct.ID, email).Count(&all).Error; err != nil || all != 1 {
		t.Fatalf("global unsubscribe stored: %d %v", all, err)
	}
	if p := problems.take(); len(p) > 0 {
		t.Errorf("console errors: %s", strings.Join(p, "; "))
	}
}
