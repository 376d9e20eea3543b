package main

import (
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
	"github.com/pquerna/otp/totp"

	"herald/dbtest"
)

// TestBrowserRecoveryCodes drives the first screen after sign-up and the
// two-factor recovery codes in a real browser, at 1280 and 390 px: sign-up
// lands on the dashboard, its Get started steps under the API keys box,
// whose secret survives a reload until "I have saved the secret key";
// then two-factor login on, the ten codes shown once on the account page
// (with a copy button), a logout, and a login with the password and one
// of the codes (through "Lost your phone?"); the account page then counts
// nine left, and the used code is refused with the wrong code's message.
func TestBrowserRecoveryCodes(t *testing.T) {
	t.Parallel()
	if findChromium() == "" {
		dbtest.SkipOrFail(t, "chromium not found: install Debian's chromium to run browser tests")
	}
	dsn := dbtest.DSN(t)
	base := startConsoleServerWith(t, dsn, map[string]string{"HERALD_SECRET_KEY": "browser-test-secret-key-of-32-characters"})
	b := newBrowserSessionOn(t, base)
	var problems consoleProblems
	problems.watch(b)
	fits := func(where string) {
		t.Helper()
		b.do("phone width", chromedp.EmulateViewport(390, 800))
		if s := b.sideways(390); s != "" {
			t.Errorf("%s at 390 px %s", where, s)
		}
		b.do("desktop width", chromedp.EmulateViewport(1280, 900))
	}

	// The first screen: the dashboard, with the keys and the steps.
	b.signUp()
	if got := b.eval("where", `location.pathname`); got != "/dashboard" {
		t.Fatalf("sign-up landed on %s", got)
	}
	b.do("the steps", chromedp.WaitVisible(chromedp.ID("get-started")), chromedp.WaitVisible(chromedp.CSS(`#welcome-keys [data-copy="#secret-key"]`)))
	secret := b.eval("secret", `document.getElementById("secret-key").value`)
	if !strings.HasPrefix(secret, "sk_") {
		t.Fatalf("secret %q", secret)
	}
	if got := b.eval("order", `String(!!(document.getElementById("welcome-keys").compareDocumentPosition(document.getElementById("get-started")) & Node.DOCUMENT_POSITION_FOLLOWING))`); got != "true" {
		t.Fatal("the steps are not under the keys")
	}
	b.capture("welcome")
	fits("the first screen")
	b.do("reload", chromedp.Reload(), b.idle, chromedp.WaitVisible(chromedp.ID("secret-key")))
	if got := b.eval("secret again", `document.getElementById("secret-key").value`); got != secret {
		t.Fatalf("a reload lost the secret: %q", got)
	}
	b.do("saved",
		chromedp.Click(chromedp.CSS(`#welcome-keys-saved button[type="submit"]`)),
		chromedp.WaitNotPresent(chromedp.ID("welcome-keys")),
		chromedp.WaitVisible(chromedp.ID("get-started")),
		b.idle,
	)
	if got := b.eval("keys gone", `String(document.getElementById("welcome-keys") === null && !document.body.innerHTML.includes(`+"`"+secret+"`"+`))`); got != "true" {
		t.Fatal("the keys are still shown after saving")
	}

	// Two-factor login on: the codes, once.
	b.do("set up",
		chromedp.Navigate(base+"/account"),
		b.idle,
		chromedp.Click(chromedp.CSS(`#two-factor-setup button[type="submit"]`)),
		chromedp.WaitVisible(chromedp.ID("totp-key")),
		b.idle,
	)
	key := b.text("the key", "#totp-key")
	enabled := time.Now()
	code, err := totp.GenerateCode(key, enabled)
	if err != nil {
		t.Fatal(err)
	}
	b.do("turn on",
		chromedp.SendKeys(chromedp.ID("totp-code"), code),
		chromedp.Click(chromedp.CSS(`#totp-enable button[type="submit"]`)),
		chromedp.WaitVisible(chromedp.ID("recovery-codes")),
		chromedp.WaitVisible(chromedp.CSS(`#recovery [data-copy="#recovery-codes"]`)),
		b.idle,
	)
	codes := strings.Fields(b.text("codes", "#recovery-codes"))
	if len(codes) != 10 {
		t.Fatalf("codes shown: %q", codes)
	}
	b.capture("recovery-codes")
	fits("the account page with the codes")
	b.do("again", chromedp.Navigate(base+"/account"), b.idle, chromedp.WaitVisible(chromedp.ID("recovery-left")))
	if got := b.eval("shown once", `String(document.getElementById("recovery-codes") === null)`); got != "true" {
		t.Fatal("the codes were shown twice")
	}

	// Log out, and in with the password and a recovery code.
	login := func(c string) {
		t.Helper()
		b.do("log out",
			chromedp.Evaluate[chromedp.Void](`document.querySelector('form[action="/logout"]').submit()`),
			chromedp.WaitVisible(chromedp.ID("login-email")),
			b.idle,
			chromedp.SendKeys(chromedp.ID("login-email"), "ada@example.com"),
			chromedp.SendKeys(chromedp.ID("login-password"), "correct horse battery"),
			chromedp.Click(chromedp.CSS(`#login-form button[type="submit"]`)),
			chromedp.WaitVisible(chromedp.ID("login-code")),
			b.idle,
			chromedp.Click(chromedp.CSS(`#use-recovery summary`)),
			chromedp.WaitVisible(chromedp.ID("login-recovery")),
			chromedp.SendKeys(chromedp.ID("login-recovery"), c),
			chromedp.Click(chromedp.CSS(`#recovery-form button[type="submit"]`)),
		)
	}
	login(codes[3])
	b.do("on the dashboard", chromedp.WaitVisible(chromedp.CSS(".sidebar-footer")), b.idle)
	if got := b.eval("where", `location.pathname`); got != "/dashboard" {
		t.Fatalf("after the recovery code: %s", got)
	}
	b.do("the account page", chromedp.Navigate(base+"/account"), b.idle, chromedp.WaitVisible(chromedp.ID("recovery-left")))
	if got := b.eval("left", `document.getElementById("recovery-left").dataset.left`); got != "9" {
		t.Fatalf("codes left: %s", got)
	}

	// The same code again: refused beside the recovery field.
	login(codes[3])
	b.do("refused",
		chromedp.WaitVisible(chromedp.CSS(`#login-recovery[aria-invalid="true"]`)),
		chromedp.WaitVisible(chromedp.ID("login-recovery-error")),
		b.idle,
	)
	expected(t, &problems, "422")
	if got := b.text("message", "#login-recovery-error"); !strings.Contains(got, "The code is incorrect or was already used.") {
		t.Fatalf("message %q", got)
	}
	b.capture("recovery-refused")
	fits("the code step with a refused recovery code")
	if msgs := problems.take(); len(msgs) > 0 {
		t.Fatalf("errors logged:\n%s", strings.Join(msgs, "\n"))
	}
}
