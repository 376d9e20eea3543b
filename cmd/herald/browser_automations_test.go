package main

import (
	"context"
	"errors"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"herald/eventually"
	"herald/models"
	"herald/service"
)

// TestBrowserAutomation builds a two-email automation with a real browser
// on a real `herald serve` (its sending engine running, mail kept in the
// outbox): sign up; a contact type, a verified sender and a group are
// prepared through the service; then in the browser create a custom
// automation, see set live refused for want of a group, choose the group,
// add email 1 "at once" and email 2 "after 2 days", set it live. A contact
// who then joins the contact type gets email 1 (and only it) in the
// outbox, and the builder shows the step's statistics. The design editor
// opens on an email and saves it.
func TestBrowserAutomation(t *testing.T) {
	t.Parallel()
	b, dsn := newBrowserSessionWithDB(t)
	base := b.base
	var problems consoleProblems
	problems.watch(b)

	b.signUp()

	// What the automation needs, through the service on the server's
	// database: a contact type, a verified sender and a group.
	ctx := context.Background()
	svc, db, acct := ownerService(t, dsn, service.Config{BaseURL: base, SystemFrom: "no-reply@localhost"})
	ct, err := svc.ContactTypes.Create(ctx, acct.ID, "Customers")
	if err != nil {
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
	g, err := svc.Groups.Create(ctx, acct.ID, service.GroupInput{GroupName: "Onboarding mail", Description: "Tips for new customers", IsDisplay: "1"})
	if err != nil {
		t.Fatal(err)
	}
	itoa := func(n int64) string { return strconv.FormatInt(n, 10) }

	// The automations page is in the menu; with nothing yet, it says so.
	b.do("open automations from the menu",
		chromedp.Navigate(base+"/dashboard"),
		b.idle,
		chromedp.Click(chromedp.CSS(`.nav a.nav-link[href="/automations"]`)),
		chromedp.WaitVisible(chromedp.CSS("#automations-list .empty")),
		b.idle,
	)
	b.capture("automations-empty")

	// A custom automation on the contact type, no group yet.
	b.do("create a custom automation",
		chromedp.Click(chromedp.ID("automation-type-custom")),
		chromedp.SendKeys(chromedp.ID("automation-create-name"), "Onboarding"),
		choose("#automation-create-target", "contacts_"+itoa(ct.ID)),
		choose("#automation-create-group", "0"),
		chromedp.Click(chromedp.ID("automation-create-save")),
		chromedp.WaitVisible(chromedp.ID("automation-status")),
		b.idle,
	)
	path := b.eval("path", `location.pathname`)
	if !strings.HasPrefix(path, "/automations/") {
		t.Fatalf("after creating: %s", path)
	}
	utr := strings.TrimPrefix(path, "/automations/")
	if got := b.eval("empty timeline", `document.querySelector("#automation-timeline .empty") ? "empty" : "not empty"`); got != "empty" {
		t.Fatal("a custom automation does not start empty")
	}

	// Set live is refused: no group. The reason shows in the panel.
	b.do("set live without a group",
		chromedp.Evaluate[chromedp.Void](`window.heraldMarker = "still here"`),
		chromedp.Click(chromedp.ID("set-live")),
		chromedp.WaitVisible(chromedp.ID("live-problem")),
		b.idle,
	)
	if got := b.text("refusal", "#live-problem"); got != service.MsgGroupRequired {
		t.Fatalf("refusal %q", got)
	}
	if got := b.eval("marker", `window.heraldMarker || ""`); got != "still here" {
		t.Fatal("the refusal reloaded the page")
	}
	b.capture("automation-refused")
	// The refusal is a 422, which the browser logs: that one is expected.
	for _, m := range problems.take() {
		if !strings.Contains(m, "422") || !strings.Contains(m, "/live") {
			t.Fatalf("the browser logged: %s", m)
		}
	}

	// The group, in the settings.
	b.do("choose the group",
		choose("#automation-settings-group", itoa(g.ID)),
		chromedp.Click(chromedp.ID("automation-settings-save")),
		// Only the reloaded page marks the saved group selected.
		chromedp.WaitReady(chromedp.CSS(`#automation-settings-group option[value="`+itoa(g.ID)+`"][selected]`)),
		b.idle,
	)
	if got := b.eval("group", `document.getElementById("automation-settings-group").value`); got != itoa(g.ID) {
		t.Fatalf("group after saving %q", got)
	}

	// Email 1, at once, with a placeholder in its subject.
	b.do("open the email form",
		chromedp.Click(chromedp.ID("add-email")),
		chromedp.WaitVisible(chromedp.ID("email-form")),
		b.idle,
	)
	if got := b.eval("defaults", `document.getElementById("email-wait-type").value + " " + (document.getElementById("email-sender").value !== "" ? "sender" : "none")`); got != "instantly sender" {
		t.Fatalf("email 1 defaults %q", got)
	}
	if got := b.eval("period hidden", `getComputedStyle(document.querySelector(".email-period")).display`); got != "none" {
		t.Fatalf("the number shows for an email sent at once (%s)", got)
	}
	b.do("write email 1",
		chromedp.SendKeys(chromedp.ID("email-subject"), "Welcome "),
		choose("#email-subject-placeholder", "((first_name))"),
		choose("#email-design", "library-2"),
		chromedp.WaitVisible(chromedp.ID("email-preview-frame")),
		b.idle,
	)
	if got := b.eval("frame", `document.getElementById("email-preview-frame").contentDocument ? "readable" : "opaque"`); got != "opaque" {
		t.Fatalf("the sandboxed preview is %s from the page", got)
	}
	b.capture("automation-email-form")
	b.do("save email 1",
		chromedp.Click(chromedp.ID("email-save")),
		chromedp.WaitVisible(chromedp.CSS("#automation-steps li.timeline-item")),
		b.idle,
	)

	// Email 2, two days later.
	b.do("write email 2",
		chromedp.Click(chromedp.ID("add-email")),
		chromedp.WaitVisible(chromedp.ID("email-form")),
		b.idle,
		choose("#email-wait-type", "days"),
		chromedp.Evaluate[chromedp.Void](`document.getElementById("email-wait-period").value = ""`),
		chromedp.SendKeys(chromedp.ID("email-wait-period"), "2"),
		chromedp.SendKeys(chromedp.ID("email-subject"), "Day two for ((first_name))"),
		choose("#email-design", "library-3"),
		chromedp.WaitVisible(chromedp.ID("email-preview-frame")),
		b.idle,
	)
	b.do("save email 2",
		chromedp.Click(chromedp.ID("email-save")),
		chromedp.WaitVisible(chromedp.CSS("#automation-steps li.timeline-item:nth-child(2)")),
		b.idle,
	)
	if got := b.eval("waits", `[...document.querySelectorAll("#automation-steps .wait-label")].map(e => e.textContent.trim()).join(" | ")`); got != "At once | After 2 days" {
		t.Fatalf("waits %q", got)
	}
	if got := b.eval("subjects", `[...document.querySelectorAll("#automation-steps .email-subject")].map(e => e.textContent.trim()).join(" | ")`); got != "Welcome ((first_name)) | Day two for ((first_name))" {
		t.Fatalf("subjects %q", got)
	}

	// Live.
	b.do("set live",
		chromedp.Click(chromedp.ID("set-live")),
		chromedp.WaitVisible(chromedp.CSS(`#automation-status[data-status="Live"]`)),
		b.idle,
	)
	if got := b.eval("pause button", `document.getElementById("pause-automation") ? "pause" : "none"`); got != "pause" {
		t.Fatal("no pause button once live")
	}
	b.capture("automation-live")

	// A contact joins the contact type: email 1 reaches the outbox, not 2.
	if _, err := svc.Contacts.Create(ctx, acct.ID, service.ContactInput{ContactTypeID: itoa(ct.ID), FirstName: "Grace", LastName: "Hopper",
		Email: "grace@example.com", Country: "US"}); err != nil {
		t.Fatal(err)
	}
	var kept []models.OutboxMessage
	// Up to 30 s for email 1; the checks below say what came.
	_ = eventually.Wait(30*time.Second, func() error {
		if err := db.R.Where("rcpt_to = ?", "grace@example.com").Find(&kept).Error; err != nil {
			t.Fatal(err)
		}
		if len(kept) == 0 {
			return errors.New("no mail yet")
		}
		return nil
	})
	if len(kept) != 1 || kept[0].Subject != "Welcome Grace" {
		t.Fatalf("outbox for grace: %+v", kept)
	}
	b.do("see it in the outbox",
		chromedp.Navigate(base+"/outbox"),
		b.idle,
		chromedp.WaitVisible(chromedp.CSS("#outbox-list tbody tr")),
	)
	if got := b.eval("outbox rows", `[...document.querySelectorAll("#outbox-list tbody tr")].filter(tr => tr.textContent.includes("grace@example.com")).map(tr => tr.textContent.includes("Welcome Grace") ? "welcome" : "other").join(",")`); got != "welcome" {
		t.Fatalf("outbox rows for grace: %q", got)
	}
	time.Sleep(2 * time.Second) // a few engine ticks: email 2 waits two days
	if err := db.R.Where("rcpt_to = ?", "grace@example.com").Find(&kept).Error; err != nil || len(kept) != 1 {
		t.Fatalf("grace got %d mails (%v)", len(kept), err)
	}

	// The builder counts it on email 1.
	b.do("statistics",
		chromedp.Navigate(base+"/automations/"+utr),
		b.idle,
		chromedp.WaitVisible(chromedp.CSS("#automation-steps .email-stats")),
	)
	if got := b.eval("step stats", `document.querySelector("#automation-steps li.timeline-item .email-stats dd").textContent.trim()`); got != "1" {
		t.Fatalf("email 1 sent %q", got)
	}
	if got := b.text("triggered", "#total-triggered .send-stat-value"); got != "1" {
		t.Fatalf("total triggered %q", got)
	}
	b.capture("automation-builder")

	// The design of email 2 in the editor: GrapesJS starts and saves.
	b.do("open the design editor",
		chromedp.Click(chromedp.CSS(`#automation-steps li.timeline-item:nth-child(2) a[data-design]`)),
		chromedp.WaitVisible(chromedp.CSS("#gjs .gjs-frame")),
		chromedp.Poll[chromedp.Void](`!!window.heraldEditor && window.heraldEditor.getComponents().length > 0`),
	)
	b.do("save the design",
		chromedp.Click(chromedp.ID("design-save")),
		chromedp.WaitVisible(chromedp.CSS("#editor-status.flash-success")),
	)
	b.capture("automation-design")
	rows, err := svc.Automations.Schedules(ctx, acct.ID, utr)
	if err != nil {
		t.Fatal(err)
	}
	if len(rows) != 2 || rows[1].TemplateJSON == nil || !strings.Contains(*rows[1].TemplateHTML, "<body") {
		t.Fatalf("email 2 after the editor saved it: %d rows, json %v", len(rows), rows[1].TemplateJSON != nil)
	}

	b.do("the list",
		chromedp.Navigate(base+"/automations"),
		b.idle,
		chromedp.WaitVisible(chromedp.CSS("#automations-list tbody tr")),
	)
	if got := b.text("status", `#automations-list tbody tr td[data-label="Status"]`); got != "Live" {
		t.Fatalf("listed as %q", got)
	}
	b.capture("automations")

	if msgs := problems.take(); len(msgs) > 0 {
		t.Fatalf("the browser logged errors:\n%s", strings.Join(msgs, "\n"))
	}
}
