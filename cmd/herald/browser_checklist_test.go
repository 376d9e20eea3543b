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

// TestBrowserChecklistBlocksASend writes a single send on a phone-sized
// screen (390 px) with a real browser on a real `herald serve`, for an
// account whose pre-send checklist blocks: the design chosen has no
// unsubscribe link and does not show the postal address. The panel says
// so as soon as the design is chosen (htmx re-check), saving is refused
// without leaving the page, the refusal is explained above the form and
// in the panel, and nothing is saved. With a design that passes, the
// panel clears and the send is saved.
func TestBrowserChecklistBlocksASend(t *testing.T) {
	t.Parallel()
	b, dsn := newBrowserSessionWithDB(t)
	base := b.base
	var problems consoleProblems
	problems.watch(b)
	poll := func(js string) chromedp.Action[chromedp.Void] {
		return chromedp.Poll[chromedp.Void](js, chromedp.WithPollingInterval(50*time.Millisecond))
	}

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

	// Through the service on the server's database: a contact, a verified
	// sender with a postal address, a group, two designs.
	ctx := context.Background()
	svc, _, acct := ownerService(t, dsn, service.Config{BaseURL: base, SystemFrom: "no-reply@localhost"})
	ct, err := svc.ContactTypes.Create(ctx, acct.ID, "Customers")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := svc.Contacts.Create(ctx, acct.ID, service.ContactInput{ContactTypeID: strconv.FormatInt(ct.ID, 10), FirstName: "Ann", Email: "ann@example.com", Country: "250"}); err != nil {
		t.Fatal(err)
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
	bare, err := svc.Designs.Create(ctx, acct.ID, service.DesignInput{Name: "Bare letter", TemplateID: "1",
		TemplateHTML: `<html><body><p>Hello ((first_name)), our autumn sale starts on Monday.</p></body></html>`})
	if err != nil {
		t.Fatal(err)
	}
	good, err := svc.Designs.Create(ctx, acct.ID, service.DesignInput{Name: "Full letter", TemplateID: "1",
		TemplateHTML: `<html><body><p>Hello ((first_name)), our autumn sale starts on Monday.</p><p>((sender_address))</p><a href="((unsubscribe_preferences))">Unsubscribe</a></body></html>`})
	if err != nil {
		t.Fatal(err)
	}

	// The account page turns blocking on.
	b.do("block on failed checks",
		chromedp.Navigate(base+"/account"),
		b.idle,
		chromedp.Click(chromedp.ID("checklist-block")),
		chromedp.Click(chromedp.ID("checklist-save")),
		chromedp.WaitVisible(chromedp.ID("checklist-saved")),
		b.idle,
	)
	if on, err := svc.Checklist.Blocks(ctx, acct.ID); err != nil || !on {
		t.Fatalf("blocking not saved: %v %v", on, err)
	}

	b.do("write the send",
		chromedp.Navigate(base+"/single-sends/new"),
		b.idle,
		chromedp.WaitVisible(chromedp.ID("send-form")),
		chromedp.SendKeys(chromedp.ID("send-name"), "Autumn sale"),
		chromedp.Click(chromedp.CSS(`#send-audience input[name="recipient_id"][value^="contacts_"]`)),
		chromedp.SendKeys(chromedp.ID("send-subject"), "Our autumn sale"),
		chromedp.SendKeys(chromedp.ID("send-preheader"), "Thirty percent off"),
		b.idle,
	)
	// Choosing the design checks it again: two failures.
	b.do("choose the bare design",
		choose("#send-template", "design-"+strconv.FormatInt(bare.ID, 10)),
		poll(`!!document.querySelector('#checklist-items li[data-rule="unsubscribe"][data-severity="failure"]')`),
		b.idle,
	)
	if got := b.text("summary", "#checklist-summary"); !strings.HasPrefix(got, "2 checks fail. Failures block sending.") {
		t.Fatalf("summary %q", got)
	}

	b.do("try to send",
		chromedp.Evaluate[chromedp.Void](`window.heraldMarker = "still here"`),
		chromedp.Click(chromedp.ID("send-save")),
		chromedp.WaitVisible(chromedp.ID("checklist-refused")),
		b.idle,
	)
	if got := b.eval("marker", `window.heraldMarker || ""`); got != "still here" {
		t.Fatal("the refusal reloaded the page")
	}
	alert := b.text("alert", "#send-form .alert-error")
	for _, want := range []string{"Not saved: this send fails the pre-send checklist",
		"The design has no unsubscribe link: add ((unsubscribe_preferences)) to it.",
		"The design does not show the sender's postal address: add ((sender_address)) to its footer."} {
		if !strings.Contains(alert, want) {
			t.Fatalf("the alert %q does not say %q", alert, want)
		}
	}
	// On a phone the explanation is on screen where the form starts, and
	// nothing is wider than the screen.
	if got := b.eval("alert in view", `(() => { const r = document.querySelector("#send-form .alert-error").getBoundingClientRect();
		return r.width > 0 && r.left >= 0 && r.right <= window.innerWidth ? "fits" : "off " + r.left + " " + r.right + " " + window.innerWidth })()`); got != "fits" {
		t.Fatalf("alert %s", got)
	}
	if got := b.eval("panel fits", `(() => { const r = document.querySelector("#send-checklist").getBoundingClientRect();
		return r.width > 0 && r.right <= window.innerWidth && document.documentElement.scrollWidth <= window.innerWidth ? "fits" : "overflows" })()`); got != "fits" {
		t.Fatal("the checklist panel overflows a 390 px screen")
	}
	if got := b.eval("values kept", `document.getElementById("send-name").value`); got != "Autumn sale" {
		t.Fatalf("the form lost the name: %q", got)
	}
	b.capture("checklist-refused")
	n := 0
	if err := svc.SingleSends.Each(ctx, acct.ID, service.ListFilter{}, func(*models.SingleSend) error { n++; return nil }); err != nil || n != 0 {
		t.Fatalf("%d sends saved (%v)", n, err)
	}
	for _, m := range problems.take() {
		if !strings.Contains(m, "422") || !strings.Contains(m, "/single-sends") {
			t.Fatalf("the browser logged: %s", m)
		}
	}

	// A design that passes: no failure left, and the send is saved.
	b.do("choose the full design",
		choose("#send-template", "design-"+strconv.FormatInt(good.ID, 10)),
		poll(`document.querySelectorAll('#checklist-items li[data-severity="failure"]').length === 0 && !!document.querySelector('#checklist-items li[data-rule="unsubscribe"][data-severity="ok"]')`),
		b.idle,
		chromedp.Click(chromedp.ID("send-save")),
		chromedp.WaitVisible(chromedp.ID("send-status")),
		b.idle,
	)
	if err := svc.SingleSends.Each(ctx, acct.ID, service.ListFilter{}, func(*models.SingleSend) error { n++; return nil }); err != nil || n != 1 {
		t.Fatalf("%d sends saved (%v)", n, err)
	}
	if ps := problems.take(); len(ps) > 0 {
		t.Fatalf("the browser logged: %q", ps)
	}
}
