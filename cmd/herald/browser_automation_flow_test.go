package main

import (
	"context"
	"strconv"
	"strings"
	"testing"

	"github.com/chromedp/chromedp"

	"herald/service"
)

// TestBrowserAutomationBranchFlow adds a branch to an automation with a
// real browser on a real `herald serve`: an automation with one email is
// prepared through the service; in the browser the editor adds a branch
// that waits 2 days, then an email for the openers through the path's
// own form (one for the others is added through the service). The flow
// shows the main line, the branch and its two paths side by side at
// 1280 px and one above the other at 390 px, without sideways scrolling
// and without serious accessibility problems at either width; so does
// the page of an automation started from the API, with its call, and the
// form and page of one started from a date field.
func TestBrowserAutomationBranchFlow(t *testing.T) {
	t.Parallel()
	b, dsn := newBrowserSessionWithDB(t)
	base := b.base
	var problems consoleProblems
	problems.watch(b)
	b.signUp()

	ctx := context.Background()
	svc, _, acct := ownerService(t, dsn, service.Config{BaseURL: base, SystemFrom: "no-reply@localhost"})
	itoa := func(n int64) string { return strconv.FormatInt(n, 10) }
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
	g, err := svc.Groups.Create(ctx, acct.ID, service.GroupInput{GroupName: "Onboarding mail", Description: "Tips", IsDisplay: "1"})
	if err != nil {
		t.Fatal(err)
	}
	a, err := svc.Automations.Create(ctx, acct.ID, service.AutomationInput{Type: "custom", AutomationFor: "contacts_" + itoa(ct.ID),
		AutomationName: "Trial follow-up", UnsubscribeGroupID: itoa(g.ID)})
	if err != nil {
		t.Fatal(err)
	}
	email := func(subject, path string) {
		t.Helper()
		if _, err := svc.Automations.AddSchedule(ctx, acct.ID, service.ScheduleInput{Utr: a.Utr, SenderID: itoa(snd.ID), Subject: subject,
			WaitingPeriod: "0", WaitingType: "instantly", TemplateID: "2", PreviewImg: "02-newsletter.png", Path: path}); err != nil {
			t.Fatal(err)
		}
	}
	email("Your trial has started", "")

	b.do("add a branch",
		chromedp.EmulateViewport(1280, 900),
		chromedp.Navigate(base+"/automations/"+a.Utr),
		b.idle,
		chromedp.WaitVisible(chromedp.ID("add-branch-form")),
		chromedp.Evaluate[chromedp.Void](`document.getElementById("branch-period").value = ""`),
		chromedp.SendKeys(chromedp.ID("branch-period"), "2"),
		choose("#branch-wait-type", "days"),
		chromedp.Click(chromedp.ID("add-branch")),
		chromedp.WaitVisible(chromedp.ID("automation-branch")),
		b.idle,
	)
	if got := b.text("branch wait", "#automation-branch .wait-label"); got != "Waits up to 2 days" {
		t.Fatalf("branch wait %q", got)
	}
	b.do("an email for the openers",
		chromedp.Click(chromedp.ID("add-email-a")),
		chromedp.WaitVisible(chromedp.ID("email-form")),
		b.idle,
		chromedp.SendKeys(chromedp.ID("email-subject"), "Glad you had a look"),
		choose("#email-design", "library-3"),
		chromedp.WaitVisible(chromedp.ID("email-preview-frame")),
		b.idle,
		chromedp.Click(chromedp.ID("email-save")),
		chromedp.WaitVisible(chromedp.CSS("#path-a-steps li.timeline-item")),
		b.idle,
	)
	if got := b.text("path a", "#path-a-steps .email-subject"); got != "Glad you had a look" {
		t.Fatalf("path a shows %q", got)
	}
	email("Need a hand getting started?", "b")

	// Side by side on a desktop, one above the other on a phone; never
	// wider than the window.
	layout := `(() => {
		const a = document.getElementById("path-a").getBoundingClientRect();
		const b = document.getElementById("path-b").getBoundingClientRect();
		if (Math.abs(a.top - b.top) < 1 && a.right <= b.left) return "side by side";
		if (b.top >= a.bottom) return "stacked";
		return "overlapping";
	})()`
	for _, w := range []struct {
		width int64
		want  string
	}{{1280, "side by side"}, {390, "stacked"}} {
		b.do("the flow at "+itoa(w.width)+" px",
			chromedp.EmulateViewport(w.width, 900),
			chromedp.Navigate(base+"/automations/"+a.Utr),
			b.idle,
			chromedp.WaitVisible(chromedp.CSS("#path-b-steps li.timeline-item")),
		)
		if got := b.eval("paths", layout); got != w.want {
			t.Errorf("the paths at %d px are %s, want %s (paths %s px wide)", w.width, got, w.want,
				b.eval("width", `String(document.querySelector(".flow-paths").getBoundingClientRect().width)`))
		}
		if got := b.eval("main line", `document.querySelectorAll("#automation-steps li.timeline-item").length + " " + document.querySelector("#path-b-steps .email-subject").textContent.trim()`); got != "1 Need a hand getting started?" {
			t.Errorf("the flow at %d px shows %q", w.width, got)
		}
		for _, v := range b.axeCheck("automation flow " + itoa(w.width)) {
			t.Errorf("accessibility at %d px: %s", w.width, v)
		}
		if p := b.sideways(w.width); p != "" {
			t.Errorf("at %d px: %s", w.width, p)
		}
	}
	b.capture("automation-branch-flow")

	// An automation started from the API shows the call that starts it,
	// inside the window at both widths.
	api, err := svc.Automations.Create(ctx, acct.ID, service.AutomationInput{Type: "custom", AutomationFor: "contacts_" + itoa(ct.ID),
		AutomationName: "Upgrade", UnsubscribeGroupID: itoa(g.ID), Trigger: "api"})
	if err != nil {
		t.Fatal(err)
	}
	for _, w := range []int64{1280, 390} {
		b.do("the API automation at "+itoa(w)+" px",
			chromedp.EmulateViewport(w, 900),
			chromedp.Navigate(base+"/automations/"+api.Utr),
			b.idle,
			chromedp.WaitVisible(chromedp.ID("automation-api-trigger")),
		)
		if got := b.text("call", "#automation-api-trigger pre"); !strings.Contains(got, api.Utr) {
			t.Errorf("the call at %d px: %q", w, got)
		}
		for _, v := range b.axeCheck("api automation " + itoa(w)) {
			t.Errorf("accessibility at %d px: %s", w, v)
		}
		if p := b.sideways(w); p != "" {
			t.Errorf("at %d px: %s", w, p)
		}
	}

	// An automation started from a date field: the form's date settings
	// show only once "On a date field" is chosen, offer only the date
	// fields, and the page says in words when it runs.
	for _, fl := range []service.FieldInput{{FieldName: "birthday", FieldType: "datetime-local"}, {FieldName: "nickname", FieldType: "text"}} {
		if _, err := svc.Fields.Create(ctx, acct.ID, fl); err != nil {
			t.Fatal(err)
		}
	}
	shown := `getComputedStyle(document.getElementById("automation-create-date")).display`
	var dateUtr string
	for _, w := range []int64{1280, 390} {
		b.do("the date trigger at "+itoa(w)+" px",
			chromedp.EmulateViewport(w, 900),
			chromedp.Navigate(base+"/automations"),
			b.idle,
			chromedp.WaitReady(chromedp.ID("automation-create-trigger-date")),
		)
		if got := b.eval("hidden", shown); got != "none" {
			t.Errorf("the date settings show before the date trigger is chosen (%s)", got)
		}
		b.do("choose the date trigger", chromedp.Click(chromedp.ID("automation-create-trigger-date")), chromedp.WaitVisible(chromedp.ID("automation-create-date-field")))
		if got := b.eval("date fields", `[...document.querySelectorAll("#automation-create-date-field option")].map(o => o.value).join(",")`); got != ",birthday" {
			t.Errorf("the date field offers %q, want only birthday", got)
		}
		for _, v := range b.axeCheck("date trigger form " + itoa(w)) {
			t.Errorf("accessibility at %d px: %s", w, v)
		}
		if p := b.sideways(w); p != "" {
			t.Errorf("date trigger form at %d px: %s", w, p)
		}
		if dateUtr != "" {
			continue
		}
		b.do("create a birthday automation",
			chromedp.Click(chromedp.ID("automation-type-custom")),
			chromedp.SendKeys(chromedp.ID("automation-create-name"), "Birthday"),
			choose("#automation-create-target", "contacts_"+itoa(ct.ID)),
			choose("#automation-create-group", itoa(g.ID)),
			choose("#automation-create-date-field", "birthday"),
			choose("#automation-create-date-when", "before"),
			chromedp.SendKeys(chromedp.ID("automation-create-date-days"), "7"),
			chromedp.Click(chromedp.ID("automation-create-date-yearly")),
			chromedp.Click(chromedp.ID("automation-create-save")),
			chromedp.WaitVisible(chromedp.ID("automation-date-rule")),
			b.idle,
		)
		dateUtr = strings.TrimPrefix(b.eval("path", `location.pathname`), "/automations/")
	}
	for _, w := range []int64{1280, 390} {
		b.do("the date automation at "+itoa(w)+" px",
			chromedp.EmulateViewport(w, 900),
			chromedp.Navigate(base+"/automations/"+dateUtr),
			b.idle,
			chromedp.WaitVisible(chromedp.ID("automation-date-rule")),
		)
		if got := b.text("rule", "#automation-date-rule"); got != "Starts: Every year, 7 days before Birthday, in your account's time zone." {
			t.Errorf("the rule at %d px: %q", w, got)
		}
		if got := b.eval("settings", `["date-field", "date-when", "date-days"].map(k => document.getElementById("automation-settings-" + k).value).join(" ") + " " + document.getElementById("automation-settings-date-yearly").checked`); got != "birthday before 7 true" {
			t.Errorf("the settings form at %d px: %q", w, got)
		}
		for _, v := range b.axeCheck("date automation " + itoa(w)) {
			t.Errorf("accessibility at %d px: %s", w, v)
		}
		if p := b.sideways(w); p != "" {
			t.Errorf("date automation at %d px: %s", w, p)
		}
	}
	// The report of an email that went to people: reached from the flow,
	// inside the window at both widths.
	steps, err := svc.Automations.Schedules(ctx, acct.ID, a.Utr)
	if err != nil || len(steps) == 0 || steps[0].SendID == nil {
		t.Fatalf("the automation's emails: %+v, %v", steps, err)
	}
	if err := svc.Automations.SetLive(ctx, acct.ID, a.Utr); err != nil { // an email's figures show once it is live
		t.Fatal(err)
	}
	if err := svc.DB.W.Exec("UPDATE single_sends SET triggered = 120, delivered = 118, unique_opens = 40, human_unique_opens = 31, total_opens = 52, unique_clicks = 9, human_unique_clicks = 7, total_clicks = 11 WHERE id = ?",
		*steps[0].SendID).Error; err != nil {
		t.Fatal(err)
	}
	for _, w := range []int64{1280, 390} {
		b.do("an email's report at "+itoa(w)+" px",
			chromedp.EmulateViewport(w, 900),
			chromedp.Navigate(base+"/automations/"+a.Utr),
			b.idle,
			chromedp.Click(chromedp.CSS("a[data-report]")),
			chromedp.WaitVisible(chromedp.ID("send-statistics")),
			b.idle,
		)
		if got := b.text("delivered", "#stat-delivered .send-stat-value"); got != "118" {
			t.Errorf("the report at %d px says delivered %q", w, got)
		}
		for _, v := range b.axeCheck("email report " + itoa(w)) {
			t.Errorf("accessibility at %d px: %s", w, v)
		}
		if p := b.sideways(w); p != "" {
			t.Errorf("at %d px: %s", w, p)
		}
	}
	if ps := problems.take(); len(ps) > 0 {
		t.Fatalf("the browser logged: %s", strings.Join(ps, "; "))
	}
}
