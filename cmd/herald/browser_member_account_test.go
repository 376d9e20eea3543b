package main

import (
	"context"
	"regexp"
	"strings"
	"testing"

	"github.com/chromedp/chromedp"

	"herald/dbtest"
	"herald/models"
	"herald/service"
)

// outboxLink is the last link under path (such as "/reset/") mailed to
// rcpt with subject, read from the outbox of a herald without a relay.
func outboxLink(t *testing.T, db *service.DB, base, rcpt, subject, path string) string {
	t.Helper()
	var mail models.OutboxMessage
	if err := db.R.Where("rcpt_to = ? AND subject = ?", rcpt, subject).Order("id DESC").First(&mail).Error; err != nil {
		t.Fatalf("no mail %q to %s in the outbox: %v", subject, rcpt, err)
	}
	body := strings.NewReplacer("=\r\n", "", "=3D", "=").Replace(string(mail.Message))
	link := regexp.MustCompile(regexp.QuoteMeta(base+path) + `[A-Za-z0-9_-]+`).FindString(body)
	if link == "" {
		t.Fatalf("no %s link in the mail:\n%.2000s", path, body)
	}
	return link
}

// TestBrowserMemberPasswordReset drives, on a phone-wide browser (390
// px), a team member who forgot its password: "Forgot your password?" on
// the login page, the link read from the outbox, a new password, and a
// login with it as the member. The member's other session ends; the
// owner's does not.
func TestBrowserMemberPasswordReset(t *testing.T) {
	t.Parallel()
	if findChromium() == "" {
		dbtest.SkipOrFail(t, "chromium not found: install Debian's chromium to run browser tests")
	}
	dsn := dbtest.DSN(t)
	base := startConsoleServerWith(t, dsn, nil)
	db, err := service.OpenDB(dsn)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	svc := newService(t, db, service.Config{BaseURL: base})
	ctx := context.Background()

	// Ada's account, and Grace, a viewer of it, invited and joined.
	ada, _, err := svc.Accounts.Create(ctx, service.AccountInput{Name: "Ada Lovelace", Email: "ada@example.com", Password: "correct horse battery"})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := svc.Team.Invite(ctx, ada.ID, "grace@example.com", service.RoleViewer); err != nil {
		t.Fatal(err)
	}
	invite := outboxLink(t, db, base, "grace@example.com", "Ada Lovelace invited you to join their team on Herald", "/invitations/")
	grace, err := svc.Team.Accept(ctx, invite[strings.LastIndex(invite, "/")+1:], service.AcceptInput{Name: "Grace Hopper", Password: "grace's first passphrase"})
	if err != nil {
		t.Fatal(err)
	}
	adaSession, _ := svc.Sessions.Start(ctx, ada.ID)
	graceSession, _ := svc.Sessions.StartMember(ctx, ada.ID, grace.ID)

	b := newBrowserSessionOn(t, base)
	var problems consoleProblems
	problems.watch(b)
	phone := chromedp.EmulateViewport(390, 800)
	narrow := func(page string) {
		t.Helper()
		if w := b.eval("page width", `String(document.documentElement.scrollWidth)`); w != "390" {
			t.Errorf("%s at 390 px is %s px wide: it scrolls sideways", page, w)
		}
	}

	b.do("ask for a reset link",
		phone,
		chromedp.Navigate(base+"/login"),
		b.idle,
		chromedp.Click(chromedp.ID("forgot-link")),
		chromedp.WaitVisible(chromedp.ID("forgot-email")),
		b.idle,
	)
	narrow("the forgot page")
	b.capture("member-forgot")
	b.do("send the address",
		phone,
		chromedp.SendKeys(chromedp.ID("forgot-email"), "grace@example.com"),
		chromedp.Click(chromedp.CSS(`#forgot-form button[type="submit"]`)),
		chromedp.WaitVisible(chromedp.ID("forgot-sent")),
		b.idle,
	)
	link := outboxLink(t, db, base, "grace@example.com", "Reset your Herald password", "/reset/")
	b.do("open the link",
		phone,
		chromedp.Navigate(link),
		b.idle,
		chromedp.WaitVisible(chromedp.ID("reset-password")),
	)
	if got := b.text("the address", "#reset-email"); got != "grace@example.com" {
		t.Fatalf("the link resets %q", got)
	}
	narrow("the reset page")
	b.capture("member-reset")
	b.do("set a new password",
		phone,
		chromedp.SendKeys(chromedp.ID("reset-password"), "grace's new passphrase"),
		chromedp.SendKeys(chromedp.ID("reset-confirm"), "grace's new passphrase"),
		chromedp.Click(chromedp.CSS(`#reset-form button[type="submit"]`)),
		chromedp.WaitVisible(chromedp.CSS("#flash .flash-success")),
		chromedp.WaitVisible(chromedp.ID("login-email")),
		b.idle,
	)
	if _, err := svc.Sessions.Check(ctx, graceSession); !service.IsNotFound(err) {
		t.Fatalf("the member's other session lived on: %v", err)
	}
	if _, err := svc.Sessions.Check(ctx, adaSession); err != nil {
		t.Fatalf("the owner's session ended: %v", err)
	}

	// The link worked once.
	b.do("the link again", phone, chromedp.Navigate(link), b.idle, chromedp.WaitVisible(chromedp.ID("reset-gone")))
	expected(t, &problems, "404")

	// Grace logs in with the new password, as the member she is.
	b.do("log in",
		phone,
		chromedp.Navigate(base+"/login"),
		b.idle,
		chromedp.WaitVisible(chromedp.ID("login-email")),
		chromedp.SendKeys(chromedp.ID("login-email"), "grace@example.com"),
		chromedp.SendKeys(chromedp.ID("login-password"), "grace's new passphrase"),
		chromedp.Click(chromedp.CSS(`#login-form button[type="submit"]`)),
		chromedp.WaitVisible(chromedp.CSS(".sidebar-footer")),
		b.idle,
	)
	if got := b.eval("where", `location.pathname`); got != "/dashboard" {
		t.Fatalf("after login: %s", got)
	}
	if got := b.eval("who", `(document.querySelector(".whoami") || {}).textContent || ""`); !strings.Contains(got, "Grace Hopper") || !strings.Contains(got, "Viewer") {
		t.Fatalf("logged in as %q", got)
	}
	narrow("the dashboard")
	if msgs := problems.take(); len(msgs) > 0 {
		t.Fatalf("errors logged:\n%s", strings.Join(msgs, "\n"))
	}
}
