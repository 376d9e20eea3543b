package main

import (
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
	"github.com/pquerna/otp/totp"

	"herald/dbtest"
	"herald/models"
	"herald/service"
)

// TestBrowserAccountBasics drives two-factor login and the password reset
// by mail with a real browser on a herald without a relay (mail kept in
// the outbox): sign up, set up two-factor login from the account page
// with a code computed here from the key shown, log out, log in with the
// password and a code; then "Forgot your password?", the link read from
// the outbox, a new password, and a login with it (and a code again:
// resetting the password leaves two-factor login on).
func TestBrowserAccountBasics(t *testing.T) {
	t.Parallel()
	if findChromium() == "" {
		dbtest.SkipOrFail(t, "chromium not found: install Debian's chromium to run browser tests")
	}
	dsn := dbtest.DSN(t)
	base := startConsoleServerWith(t, dsn, map[string]string{"HERALD_SECRET_KEY": "browser-test-secret-key-of-32-characters"})
	b := newBrowserSessionOn(t, base)
	var problems consoleProblems
	problems.watch(b)

	b.signUp()

	// Set up two-factor login: a QR code and the key as text.
	b.do("open the set-up",
		chromedp.Navigate(base+"/account"),
		b.idle,
		chromedp.WaitVisible(chromedp.ID("two-factor-setup")),
		chromedp.Click(chromedp.CSS(`#two-factor-setup button[type="submit"]`)),
		chromedp.WaitVisible(chromedp.ID("totp-key")),
		chromedp.Poll[chromedp.Void](`document.getElementById("totp-qr").complete && document.getElementById("totp-qr").naturalWidth > 0`),
		b.idle,
	)
	key := b.text("the key", "#totp-key")
	if len(key) < 16 {
		t.Fatalf("key %q", key)
	}
	b.capture("two-factor-setup")
	phoneWidth := func(page string) {
		t.Helper()
		b.do("phone width", chromedp.EmulateViewport(390, 800))
		if w := b.eval("page width", `String(document.documentElement.scrollWidth)`); w != "390" {
			t.Errorf("%s at 390 px is %s px wide: it scrolls sideways", page, w)
		}
		b.do("desktop width", chromedp.EmulateViewport(1280, 900))
	}
	phoneWidth("the set-up page")
	// A wrong code first: refused, the page still shows the same key.
	b.do("a wrong code",
		chromedp.SendKeys(chromedp.ID("totp-code"), "000000"),
		chromedp.Click(chromedp.CSS(`#totp-enable button[type="submit"]`)),
		chromedp.WaitVisible(chromedp.CSS(`#totp-code[aria-invalid="true"]`)),
		b.idle,
	)
	expected(t, &problems, "422")
	if got := b.text("the key again", "#totp-key"); got != key {
		t.Fatalf("key changed: %q, was %q", got, key)
	}
	enabled := time.Now()
	code, err := totp.GenerateCode(key, enabled)
	if err != nil {
		t.Fatal(err)
	}
	b.do("the right code",
		chromedp.Evaluate[chromedp.Void](`document.getElementById("totp-code").value = ""`),
		chromedp.SendKeys(chromedp.ID("totp-code"), code),
		chromedp.Click(chromedp.CSS(`#totp-enable button[type="submit"]`)),
		chromedp.WaitVisible(chromedp.CSS("#flash .flash-success")),
		chromedp.WaitVisible(chromedp.ID("two-factor-off")),
		b.idle,
	)
	if got := b.text("state", "#two-factor-state"); !strings.HasPrefix(got, "On.") {
		t.Fatalf("state %q", got)
	}

	logout := func() {
		t.Helper()
		b.do("log out",
			chromedp.Evaluate[chromedp.Void](`document.querySelector('form[action="/logout"]').submit()`),
			chromedp.WaitVisible(chromedp.ID("login-email")),
			b.idle,
		)
	}
	// loginWithCode logs in with the password, then a code of the step
	// after the last one used (one step of drift allows it), waiting
	// until that step is within reach.
	lastStep := enabled.Unix() / 30
	loginWithCode := func(password string) {
		t.Helper()
		b.do("log in: password",
			chromedp.Navigate(base+"/login"),
			b.idle,
			chromedp.WaitVisible(chromedp.ID("login-email")),
			chromedp.SendKeys(chromedp.ID("login-email"), "ada@example.com"),
			chromedp.SendKeys(chromedp.ID("login-password"), password),
			chromedp.Click(chromedp.CSS(`#login-form button[type="submit"]`)),
			chromedp.WaitVisible(chromedp.ID("login-code")),
			b.idle,
		)
		b.capture("login-code")
		phoneWidth("the code step")
		step := lastStep + 1
		for time.Now().Unix()/30 < step-1 {
			time.Sleep(500 * time.Millisecond)
		}
		c, err := totp.GenerateCode(key, time.Unix(step*30, 0))
		if err != nil {
			t.Fatal(err)
		}
		lastStep = step
		b.do("log in: code",
			chromedp.SendKeys(chromedp.ID("login-code"), c),
			chromedp.Click(chromedp.CSS(`#code-form button[type="submit"]`)),
			chromedp.WaitVisible(chromedp.CSS(".sidebar-footer")),
			b.idle,
		)
		if got := b.eval("where", `location.pathname`); got != "/dashboard" {
			t.Fatalf("after the code: %s", got)
		}
	}
	logout()
	loginWithCode("correct horse battery")

	// Forgot the password: the same answer page, the link in the outbox.
	logout()
	b.do("ask for a reset link",
		chromedp.Click(chromedp.ID("forgot-link")),
		chromedp.WaitVisible(chromedp.ID("forgot-email")),
		b.idle,
		chromedp.SendKeys(chromedp.ID("forgot-email"), "ada@example.com"),
		chromedp.Click(chromedp.CSS(`#forgot-form button[type="submit"]`)),
		chromedp.WaitVisible(chromedp.ID("forgot-sent")),
		b.idle,
	)
	db, err := service.OpenDB(dsn)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	var mail models.OutboxMessage
	if err := db.R.Where("rcpt_to = ? AND subject = ?", "ada@example.com", "Reset your Herald password").Order("id DESC").First(&mail).Error; err != nil {
		t.Fatalf("no reset mail in the outbox: %v", err)
	}
	body := strings.NewReplacer("=\r\n", "", "=3D", "=").Replace(string(mail.Message))
	link := regexp.MustCompile(regexp.QuoteMeta(base) + `/reset/[A-Za-z0-9_-]+`).FindString(body)
	if link == "" {
		t.Fatalf("no link in the mail:\n%.2000s", body)
	}
	b.do("open the link and set a password",
		chromedp.Navigate(link),
		b.idle,
		chromedp.WaitVisible(chromedp.ID("reset-password")),
		chromedp.SendKeys(chromedp.ID("reset-password"), "a brand new passphrase"),
		chromedp.SendKeys(chromedp.ID("reset-confirm"), "a brand new passphrase"),
		chromedp.Click(chromedp.CSS(`#reset-form button[type="submit"]`)),
		chromedp.WaitVisible(chromedp.CSS("#flash .flash-success")),
		chromedp.WaitVisible(chromedp.ID("login-email")),
		b.idle,
	)
	// The link worked once.
	b.do("the link again",
		chromedp.Navigate(link),
		b.idle,
		chromedp.WaitVisible(chromedp.ID("reset-gone")),
	)
	expected(t, &problems, "404")
	loginWithCode("a brand new passphrase")
	if msgs := problems.take(); len(msgs) > 0 {
		t.Fatalf("errors logged:\n%s", strings.Join(msgs, "\n"))
	}
}

// expected forgets the problems logged so far, which must all be the
// browser's note of an answer with the status the test asked for.
func expected(t *testing.T, p *consoleProblems, status string) {
	t.Helper()
	for _, m := range p.take() {
		if !strings.Contains(m, "status of "+status) {
			t.Fatalf("error logged: %s", m)
		}
	}
}
