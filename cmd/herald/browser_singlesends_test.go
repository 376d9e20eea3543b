package main

import (
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"herald/models"
	"herald/service"
)

// TestBrowserSingleSend drives a single send from start to end with a
// real browser on a real `herald serve` (its sending engine running, mail
// kept in the outbox): sign up, import three contacts, add and verify a
// sender, create a group, then write a single send (design preview, live
// count, placeholder picker, test mail), send it now and watch its page
// follow it through htmx polling until the statistics appear. Opening a
// mail and clicking its link then shows on the chart and the link table.
func TestBrowserSingleSend(t *testing.T) {
	t.Parallel()
	b, dsn := newBrowserSessionWithDB(t)
	base := b.base
	var problems consoleProblems
	problems.watch(b)
	poll := func(js string) chromedp.Action[chromedp.Void] {
		return chromedp.Poll[chromedp.Void](js, chromedp.WithPollingInterval(50*time.Millisecond))
	}

	b.signUp()

	// The single sends page is in the menu; with nothing yet, it says so.
	b.do("open single sends from the menu",
		chromedp.Navigate(base+"/dashboard"),
		b.idle,
		chromedp.Click(chromedp.CSS(`.nav a.nav-link[href="/single-sends"]`)),
		chromedp.WaitVisible(chromedp.CSS("#sends-list .empty")),
		b.idle,
	)
	b.capture("single-sends-empty")

	// The audience: a contact type and three contacts imported.
	b.do("create a contact type",
		chromedp.Navigate(base+"/contacts/types"),
		b.idle,
		chromedp.SendKeys(chromedp.ID("type-create-name"), "Customers"),
		chromedp.Click(chromedp.CSS(`#type-create button[type="submit"]`)),
		chromedp.WaitVisible(chromedp.CSS("#types-list tbody tr .cell-main a")),
		b.idle,
	)
	contacts := []string{"ann@example.com", "bob@example.org", "cy@example.net"}
	csv := "email,first_name,last_name,country\n"
	for i, e := range contacts {
		csv += fmt.Sprintf("%s,Person%d,Tester,US\n", e, i)
	}
	file := filepath.Join(t.TempDir(), "customers.csv")
	if err := os.WriteFile(file, []byte(csv), 0o644); err != nil {
		t.Fatal(err)
	}
	b.do("import the contacts",
		chromedp.Navigate(base+"/contacts/import"),
		b.idle,
		chromedp.SetUploadFiles(chromedp.ID("import-file"), []string{file}),
		chromedp.Click(chromedp.ID("import-basis-customers")), // the basis of their consent
		chromedp.Click(chromedp.CSS(`#import-form button[type="submit"]`)),
		chromedp.WaitVisible(chromedp.CSS(`#import-progress[data-status="done"]`)),
		b.idle,
	)
	if got := b.text("created", "#import-created"); got != "3" {
		t.Fatalf("%s contacts imported", got)
	}

	// A sender, verified by the link mailed to it (kept in the outbox).
	b.do("add a sender",
		chromedp.Navigate(base+"/senders/new"),
		b.idle,
		chromedp.SendKeys(chromedp.ID("sender-from-name"), "Ada at Example"),
		chromedp.SendKeys(chromedp.ID("sender-from-email"), "news@example.com"),
		chromedp.SendKeys(chromedp.ID("sender-reply-to"), "ada@example.com"),
		chromedp.SendKeys(chromedp.ID("sender-nickname"), "News"),
		chromedp.SendKeys(chromedp.ID("sender-address1"), "1 Main Street"),
	)
	b.do("choose a country",
		choose("#sender-country", b.eval("germany", `[...document.querySelectorAll("#sender-country option")].find(o => o.textContent === "Germany").value`)),
		poll(`document.querySelectorAll("#sender-state option").length > 1`),
		b.idle,
	)
	b.do("save the sender",
		chromedp.Click(chromedp.CSS(`#sender-form button[type="submit"]`)),
		chromedp.WaitVisible(chromedp.CSS("#dns-DKIM")),
		b.idle,
	)
	b.do("open the verification mail",
		chromedp.Navigate(base+"/outbox"),
		b.idle,
		chromedp.Click(chromedp.CSS("#outbox-list tbody tr .cell-main a")),
		chromedp.WaitVisible(chromedp.ID("message-text")),
	)
	link := regexp.MustCompile(`https?://\S+/senders/verify/[A-Za-z0-9_-]+`).FindString(b.text("text part", "#message-text"))
	if link == "" {
		t.Fatal("no verification link in the mail")
	}
	// The browser's GET shows a button; its POST verifies.
	b.do("open the link", chromedp.Navigate(link), chromedp.WaitVisible(chromedp.ID("verify-button")))
	b.do("verify",
		chromedp.Click(chromedp.ID("verify-button")),
		chromedp.WaitVisible(chromedp.CSS(`#sender-verify[data-state="verified"]`)),
	)
	b.do("see it verified", chromedp.Navigate(base+"/senders"), b.idle, chromedp.WaitVisible(chromedp.CSS("#senders-list .badge-success")))

	// An unsubscribe group.
	b.do("create a group",
		chromedp.Navigate(base+"/suppressions/groups"),
		b.idle,
		chromedp.SendKeys(chromedp.ID("group-create-name"), "Newsletter"),
		chromedp.SendKeys(chromedp.ID("group-create-description"), "The monthly letter"),
		chromedp.Click(chromedp.CSS(`#group-create button[type="submit"]`)),
		chromedp.WaitVisible(chromedp.CSS("#groups-list tbody tr .cell-main a")),
		b.idle,
	)

	// The form: the lone sender and group are chosen already.
	b.do("open the form",
		chromedp.Navigate(base+"/single-sends"),
		b.idle,
		chromedp.Click(chromedp.ID("new-send")),
		chromedp.WaitVisible(chromedp.ID("send-form")),
		b.idle,
	)
	if got := b.eval("sender", `document.getElementById("send-sender").value !== "" && document.getElementById("send-group").value !== "" ? "chosen" : "not chosen"`); got != "chosen" {
		t.Fatal("the lone sender or group is not chosen")
	}
	// "Send now?" is asked only of a form that would save: an empty one
	// comes back with its messages and no question; a field's message
	// goes once the field is changed.
	countQuestions := chromedp.Evaluate[chromedp.Void](`window.confirm = () => { sessionStorage.asked = String(Number(sessionStorage.asked || 0) + 1); return true; }`)
	b.do("save the empty form",
		countQuestions,
		chromedp.Click(chromedp.ID("send-save")),
		chromedp.WaitVisible(chromedp.ID("send-name-error")),
		b.idle,
	)
	if got := b.eval("questions", `sessionStorage.asked || "0"`); got != "0" {
		t.Fatalf("an invalid form was asked %s times whether to send now", got)
	}
	for _, m := range problems.take() { // the dry run's and the save's 422, as meant
		if !strings.Contains(m, "status of 422") {
			t.Errorf("browser console: %s", m)
		}
	}
	b.do("type a name", chromedp.SendKeys(chromedp.ID("send-name"), "x"), chromedp.WaitNotPresent(chromedp.ID("send-name-error")))
	b.do("clear it", chromedp.Evaluate[chromedp.Void](`document.getElementById("send-name").value = ""`))
	b.do("name it and choose a design",
		chromedp.SendKeys(chromedp.ID("send-name"), "October news"),
		choose("#send-template", "library-2"),
		chromedp.WaitVisible(chromedp.ID("send-preview-frame")),
		b.idle,
	)
	if got := b.eval("frame", `document.getElementById("send-preview-frame").contentDocument ? "readable" : "opaque"`); got != "opaque" {
		t.Fatalf("the sandboxed preview is %s from the page", got)
	}
	b.do("choose the audience",
		chromedp.Click(chromedp.CSS(`#send-audience input[name="recipient_id"][value^="contacts_"]`)),
		chromedp.WaitNotPresent(chromedp.ID("send-to-error")), // the empty save's message goes once chosen
		poll(`(document.querySelector("#send-count-value") || {}).textContent === "3"`),
		b.idle,
	)
	b.do("write the subject with a placeholder",
		chromedp.SendKeys(chromedp.ID("send-subject"), "Hello "),
		choose("#send-subject-placeholder", "((first_name))"),
		chromedp.SendKeys(chromedp.ID("send-preheader"), "What is new this month"),
	)
	if got := b.eval("subject", `document.getElementById("send-subject").value`); got != "Hello ((first_name))" {
		t.Fatalf("subject %q", got)
	}
	if got := b.eval("picker reset", `document.getElementById("send-subject-placeholder").value`); got != "" {
		t.Fatalf("the picker kept %q", got)
	}
	b.capture("single-send-form")

	// A test mail to the account's own address, without leaving the form.
	b.do("send a test",
		chromedp.Evaluate[chromedp.Void](`window.heraldMarker = "still here"`),
		chromedp.Click(chromedp.ID("send-test")),
		chromedp.WaitVisible(chromedp.CSS("#send-test-result .alert-success")),
		b.idle,
	)
	if got := b.eval("marker", `window.heraldMarker || ""`); got != "still here" {
		t.Fatal("the test reloaded the page")
	}
	b.capture("single-send-test")

	// Send now (the confirmation is accepted): the send's page follows it
	// through polling, without a reload, until the statistics appear.
	b.do("send now",
		countQuestions,
		chromedp.Click(chromedp.ID("send-save")),
		chromedp.WaitVisible(chromedp.ID("send-status")),
		b.idle,
		chromedp.Evaluate[chromedp.Void](`window.heraldMarker = "still here"`),
	)
	if got := b.eval("path", `location.pathname`); !strings.HasPrefix(got, "/single-sends/") {
		t.Fatalf("after saving: %s", got)
	}
	if got := b.eval("questions", `sessionStorage.asked || "0"`); got != "1" {
		t.Fatalf("a valid form sent now was asked %s times, want once", got)
	}
	utr := strings.TrimPrefix(b.eval("path", `location.pathname`), "/single-sends/")
	b.do("watch it complete",
		chromedp.Poll[chromedp.Void](`(document.getElementById("send-status") || {}).dataset.status === "Completed"`, chromedp.WithPollingInterval(100*time.Millisecond)),
		chromedp.WaitVisible(chromedp.ID("send-statistics")),
		b.idle,
	)
	if got := b.eval("marker", `window.heraldMarker || ""`); got != "still here" {
		t.Fatal("the page was reloaded: the progress did not come through htmx")
	}
	for css, want := range map[string]string{"#stat-recipients .send-stat-value": "3", "#stat-delivered .send-stat-value": "3", "#stat-bounces .send-stat-value": "0"} {
		if got := b.text(css, css); got != want {
			t.Errorf("%s = %q, want %q", css, got, want)
		}
	}
	if got := b.eval("polling", `document.getElementById("send-status").hasAttribute("hx-trigger") ? "polls" : "stopped"`); got != "stopped" {
		t.Fatal("a completed send still polls")
	}

	// The outbox transport kept one message per contact, and the test.
	db, err := service.OpenDB(dsn)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	var kept []models.OutboxMessage
	if err := db.R.Where("rcpt_to IN ?", append(contacts, "ada@example.com")).Order("id").Find(&kept).Error; err != nil {
		t.Fatal(err)
	}
	per := map[string][]string{}
	for _, m := range kept {
		per[m.RcptTo] = append(per[m.RcptTo], m.Subject)
	}
	for i, e := range contacts {
		if want := fmt.Sprintf("Hello Person%d", i); len(per[e]) != 1 || per[e][0] != want {
			t.Errorf("outbox for %s: %q, want [%q]", e, per[e], want)
		}
	}
	if got := per["ada@example.com"]; len(got) != 1 || !strings.HasPrefix(got[0], "[Test] Hello ") {
		t.Errorf("test mail %q", got)
	}

	// A recipient opens the mail and clicks its first link: the chart and
	// the link table show it.
	var mail models.OutboxMessage
	if err := db.R.Where("rcpt_to = ?", contacts[0]).First(&mail).Error; err != nil {
		t.Fatal(err)
	}
	body := strings.NewReplacer("=\r\n", "", "=3D", "=").Replace(string(mail.Message))
	pixel := regexp.MustCompile(regexp.QuoteMeta(base) + `/t/o/[A-Za-z0-9_-]+`).FindString(body)
	click := regexp.MustCompile(regexp.QuoteMeta(base) + `/t/c/[A-Za-z0-9_-]+/0`).FindString(body)
	if pixel == "" || click == "" {
		t.Fatalf("no tracking in the mail:\n%.3000s", body)
	}
	noRedirect := &http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	for _, u := range []string{pixel, click} {
		resp, err := noRedirect.Get(u)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
	}
	b.do("reload the statistics",
		chromedp.Navigate(base+"/single-sends/"+utr),
		b.idle,
		chromedp.WaitVisible(chromedp.CSS("#send-chart svg .chart-opens")),
		chromedp.WaitVisible(chromedp.CSS("#send-links tbody tr")),
	)
	if got := b.text("opens", "#stat-unique-opens .send-stat-value"); got != "1" {
		t.Errorf("unique opens %q", got)
	}
	if got := b.text("clicks", "#stat-unique-clicks .send-stat-rate"); got != "33.3%" {
		t.Errorf("click rate %q", got)
	}
	if got := b.eval("link clicks", `[...document.querySelectorAll("#send-links tbody tr td.cell-num")].map(td => td.textContent.trim()).join(",")`); !strings.HasPrefix(got, "1") {
		t.Errorf("link clicks %q", got)
	}
	b.capture("single-send-statistics")

	// The list shows it completed, with its counts.
	b.do("the list",
		chromedp.Navigate(base+"/single-sends"),
		b.idle,
		chromedp.WaitVisible(chromedp.CSS("#sends-list tbody tr")),
	)
	if got := b.text("status", `#sends-list tbody tr td[data-label="Status"]`); got != "Completed" {
		t.Fatalf("listed as %q", got)
	}
	if got := b.text("delivered", `#sends-list tbody tr td[data-label="Delivered"]`); got != "3" {
		t.Fatalf("listed delivered %q", got)
	}
	b.capture("single-sends")

	// The dashboard of the account with its send: the send and
	// its rates, the chart, the steps done so far, at a phone's and a
	// desktop's width, neither scrolling sideways.
	for _, width := range []int64{390, 1280} {
		b.do(fmt.Sprintf("dashboard at %d px", width),
			chromedp.EmulateViewport(width, 800),
			chromedp.Navigate(base+"/dashboard"),
			b.idle,
			chromedp.WaitVisible(chromedp.CSS("#recent-sends")),
			chromedp.WaitVisible(chromedp.CSS("#chart-sent svg")),
		)
		if w := b.eval("page width", `String(document.documentElement.scrollWidth)`); w != fmt.Sprint(width) {
			t.Errorf("the dashboard at %d px is %s px wide: it scrolls sideways", width, w)
		}
		// The open and click above came from Go's HTTP client: a machine's
		// (docs/MACHINE_ACTIVITY.md), so the human rates are 0 and the raw
		// ones beside them count it.
		if got := b.eval("recent send", `[...document.querySelectorAll("#recent-sends tbody tr td.cell-num")].map(td => (td.querySelector(".rate-value") || td).textContent.trim()).join(" ")`); got != "100.0% 0.0% 0.0% 0.0% 0.0%" {
			t.Errorf("at %d px the recent send's rates are %q", width, got)
		}
		if got := b.eval("raw rates", `[...document.querySelectorAll("#recent-sends tbody tr .rate-raw")].map(e => e.textContent.trim()).join(" ")`); got != "raw 33.3% raw 33.3%" {
			t.Errorf("at %d px the recent send's raw rates are %q", width, got)
		}
		if got := b.eval("legend", `[...document.querySelectorAll("#chart-sent .legend")].map(e => e.textContent.trim()).join(",")`); got != "sent,human opens,human clicks" {
			t.Errorf("at %d px the chart's legend is %q", width, got)
		}
		if got := b.eval("steps", `[...document.querySelectorAll("#get-started .steps li")].map(li => li.id + "=" + li.dataset.done).join(" ")`); got !=
			"step-sender=true step-contacts=true step-group=true step-send=true step-notifications=false" {
			t.Errorf("at %d px the steps are %q", width, got)
		}
		if got := b.text("sent", "#stat-sent .stat-value"); got != "3" {
			t.Errorf("at %d px sent in 30 days %q", width, got)
		}
	}
	b.do("desktop again", chromedp.EmulateViewport(1280, 900))
	b.capture("dashboard")

	// The time zone, on the account page.
	b.do("set the time zone",
		chromedp.Navigate(base+"/account"),
		b.idle,
		choose("#time-zone-select", "Europe/Paris"),
		chromedp.Click(chromedp.CSS(`#time-zone button[type="submit"]`)),
		chromedp.WaitVisible(chromedp.ID("time-zone-saved")),
		b.idle,
	)
	b.capture("account-time-zone")
	b.do("bounced addresses",
		chromedp.Navigate(base+"/dashboard"),
		b.idle,
		chromedp.Click(chromedp.CSS(`.nav a.nav-link[href="/suppressions/bounced"]`)),
		chromedp.WaitVisible(chromedp.CSS("#bounced-list .empty")),
	)
	// Two addresses bounced (as a relay's 550 would record them): select
	// both, the bulk button counts them, lift them (the confirmation is
	// accepted) and the list is empty again.
	var acct int64
	if err := db.R.Model(&models.User{}).Where("email = ?", "ada@example.com").Pluck("id", &acct).Error; err != nil || acct == 0 {
		t.Fatalf("account: %v", err)
	}
	for _, email := range []string{"gone@example.net", "left@example.net"} {
		row := models.Suppression{UserID: acct, Email: email, Reason: "550 5.1.1 user unknown", CreatedAt: models.NewTimestamp(models.Now())}
		if err := db.W.Create(&row).Error; err != nil {
			t.Fatal(err)
		}
	}
	b.do("bounced addresses listed",
		chromedp.Reload(),
		b.idle,
		chromedp.WaitVisible(chromedp.CSS(`#bounced-list tbody tr`)),
		chromedp.Click(chromedp.CSS(`#bounced-list [data-select-all]`)),
	)
	if got := b.text("bulk lift label", `#bounced-list [data-bulk-lift] span`); got != "Lift selected (2)" {
		t.Fatalf("bulk lift button says %q", got)
	}
	b.capture("bounced")
	b.do("lift both",
		chromedp.Click(chromedp.CSS(`#bounced-list [data-bulk-lift]`)),
		chromedp.WaitVisible(chromedp.CSS("#bounced-list .empty")),
	)
	if got := b.text("flash", "#flash"); !strings.Contains(got, "2 addresses lifted") {
		t.Fatalf("flash %q", got)
	}

	if msgs := problems.take(); len(msgs) > 0 {
		t.Fatalf("the browser logged errors:\n%s", strings.Join(msgs, "\n"))
	}
}
