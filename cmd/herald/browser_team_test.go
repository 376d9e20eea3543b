package main

import (
	"context"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/chromedp/chromedp"

	"herald/models"
	"herald/service"
)

// TestBrowserTeam drives teammates and roles with a real browser on a real
// `herald serve` (mail kept in the outbox): the owner invites an editor
// from the Team page; the invitation mail, read in the outbox, leads to
// the page where the editor chooses a password; the editor logs in with
// it, prepares a single send and finds its send button disabled with the
// reason; posted anyway, the form is refused with the reason shown above
// it, and keeps what was typed; the owner then sees the
// invitation and the refusal in the audit log. The Team, invitation and
// audit log pages are captured (axe-core, and screenshots at 390 and
// 1280 px with HERALD_SCREENSHOTS).
func TestBrowserTeam(t *testing.T) {
	t.Parallel()
	b, dsn := newBrowserSessionWithDB(t)
	base := b.base
	var problems consoleProblems
	problems.watch(b)

	b.signUp()

	// Through the service on the server's database: what a send needs (a
	// contact, a verified sender, a group).
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

	// The owner invites Grace as an editor from the Team page.
	b.do("open the team page from the menu",
		chromedp.Navigate(base+"/dashboard"),
		b.idle,
		chromedp.Click(chromedp.CSS(`.nav a.nav-link[href="/team"]`)),
		chromedp.WaitVisible(chromedp.ID("invite-form")),
		b.idle,
	)
	b.do("invite an editor",
		chromedp.SendKeys(chromedp.ID("invite-email"), "grace@example.com"),
		choose("#invite-role", "editor"),
		chromedp.Click(chromedp.CSS(`#invite-form button[type="submit"]`)),
		chromedp.WaitVisible(chromedp.CSS(`#invitations tbody tr`)),
		b.idle,
	)
	if got := b.text("pending", "#invitations tbody tr"); !strings.Contains(got, "grace@example.com") || !strings.Contains(got, "Editor") {
		t.Fatalf("pending invitation: %q", got)
	}
	b.capture("team")

	// The invitation mail, read in the outbox.
	b.do("open the invitation mail",
		chromedp.Navigate(base+"/outbox"),
		b.idle,
		chromedp.Click(chromedp.CSS("#outbox-list tbody tr .cell-main a")),
		chromedp.WaitVisible(chromedp.ID("message-text")),
	)
	link := regexp.MustCompile(`https?://\S+/invitations/[A-Za-z0-9_-]+`).FindString(b.text("text part", "#message-text"))
	if link == "" {
		t.Fatal("no invitation link in the mail")
	}
	b.do("log out", chromedp.Click(chromedp.CSS(`.sidebar-footer form[action="/logout"] button`)), chromedp.WaitVisible(chromedp.ID("login-form")))

	// Grace accepts: a name and a password.
	b.do("open the link", chromedp.Navigate(link), b.idle, chromedp.WaitVisible(chromedp.ID("accept-form")))
	if got := b.text("invitation", "main h1"); got != "Join Ada Lovelace" {
		t.Fatalf("invitation page: %q", got)
	}
	b.capture("team-invitation")
	b.do("accept",
		chromedp.SendKeys(chromedp.ID("accept-name"), "Grace Hopper"),
		chromedp.SendKeys(chromedp.ID("accept-password"), "grace's own passphrase"),
		chromedp.Click(chromedp.CSS(`#accept-form button[type="submit"]`)),
		chromedp.WaitVisible(chromedp.CSS(".whoami")),
		b.idle,
	)
	b.do("log out", chromedp.Click(chromedp.CSS(`.sidebar-footer form[action="/logout"] button`)), chromedp.WaitVisible(chromedp.ID("login-form")))
	b.do("log in with her own password",
		chromedp.SendKeys(chromedp.ID("login-email"), "grace@example.com"),
		chromedp.SendKeys(chromedp.ID("login-password"), "grace's own passphrase"),
		chromedp.Click(chromedp.CSS(`#login-form button[type="submit"]`)),
		chromedp.WaitVisible(chromedp.CSS(".whoami")),
		b.idle,
	)
	if got := b.text("whoami", ".whoami"); !strings.Contains(got, "Grace Hopper") || !strings.Contains(got, "Editor") {
		t.Fatalf("logged in as %q", got)
	}
	if got := b.eval("team entry", `document.querySelector('.nav a[href="/team"]') ? "shown" : "hidden"`); got != "hidden" {
		t.Fatal("an editor sees the Team entry")
	}

	// She prepares a send on Ada's account, and is refused sending it.
	b.do("open the form",
		chromedp.Navigate(base+"/single-sends/new"),
		b.idle,
		chromedp.WaitVisible(chromedp.ID("send-form")),
		chromedp.SendKeys(chromedp.ID("send-name"), "October news"),
		choose("#send-template", "library-2"),
		chromedp.WaitVisible(chromedp.ID("send-preview-frame")),
		b.idle,
		chromedp.Click(chromedp.CSS(`#send-audience input[name="recipient_id"][value^="contacts_"]`)),
		chromedp.SendKeys(chromedp.ID("send-subject"), "Hello"),
		chromedp.SendKeys(chromedp.ID("send-preheader"), "What is new this month"),
		b.idle,
	)
	if p := problems.take(); len(p) > 0 {
		t.Fatalf("console problems before sending: %v", p)
	}
	if got := b.text("role note", "#send-role-note"); !strings.Contains(got, "Your role (Editor) may not start") {
		t.Fatalf("the form does not say the editor cannot send: %q", got)
	}
	if got := b.eval("send button", `document.getElementById("send-save").disabled ? "disabled" : "enabled"`); got != "disabled" {
		t.Fatalf("the editor's send button is %s", got)
	}
	// The button is disabled; the server refuses a request made without it
	// all the same (htmx posts the form as the button would).
	b.do("post the form anyway",
		chromedp.Evaluate[chromedp.Void](`htmx.ajax("POST", "/single-sends", {source: "#send-form", target: "#send-form", swap: "outerHTML"})`),
		chromedp.WaitVisible(chromedp.CSS(`#flash .flash-error`)),
		b.idle,
	)
	if got := b.text("refusal", "#flash .flash-error"); !strings.Contains(got, "Your role (Editor) may not start, schedule or delete sends") {
		t.Fatalf("refusal: %q", got)
	}
	if got := b.eval("form kept", `document.getElementById("send-name").value`); got != "October news" {
		t.Fatalf("the form lost its name: %q", got)
	}
	// The refusal is the one problem the browser logs: a 403 of the form.
	for _, p := range problems.take() {
		if !strings.Contains(p, "403") || !strings.Contains(p, "/single-sends") {
			t.Errorf("console problem: %s", p)
		}
	}
	b.capture("team-editor-refused")
	n := 0
	if err := svc.SingleSends.Each(ctx, acct.ID, service.ListFilter{}, func(*models.SingleSend) error { n++; return nil }); err != nil || n != 0 {
		t.Fatalf("%d sends saved (%v)", n, err)
	}

	// Ada sees both in the audit log.
	b.do("log out", chromedp.Click(chromedp.CSS(`.sidebar-footer form[action="/logout"] button`)), chromedp.WaitVisible(chromedp.ID("login-form")))
	b.do("the owner logs in",
		chromedp.SendKeys(chromedp.ID("login-email"), "ada@example.com"),
		chromedp.SendKeys(chromedp.ID("login-password"), "correct horse battery"),
		chromedp.Click(chromedp.CSS(`#login-form button[type="submit"]`)),
		chromedp.WaitVisible(chromedp.CSS(".whoami")),
		b.idle,
		chromedp.Click(chromedp.CSS(`.nav a.nav-link[href="/audit-log"]`)),
		chromedp.WaitVisible(chromedp.ID("audit-log")),
		b.idle,
	)
	log := b.text("audit log", "#audit-log")
	for _, want := range []string{"Invited a member", "grace@example.com", "Joined the team", "Was refused: start, schedule or delete sends", "POST /single-sends", "Grace Hopper <grace@example.com>", "Ada Lovelace <ada@example.com>"} {
		if !strings.Contains(log, want) {
			t.Errorf("audit log lacks %q:\n%s", want, log)
		}
	}
	b.capture("audit-log")

	// The Team page lists her, with her role to change.
	b.do("open the team page",
		chromedp.Navigate(base+"/team"),
		b.idle,
		chromedp.WaitVisible(chromedp.CSS(`#members tbody tr + tr select[name="role"]`)),
	)
	if got := b.text("members", "#members tbody"); !strings.Contains(got, "Grace Hopper") || !strings.Contains(got, "grace@example.com") {
		t.Fatalf("members: %q", got)
	}
	b.capture("team-members")
	if p := problems.take(); len(p) > 0 {
		t.Fatalf("console problems: %v", p)
	}
}
