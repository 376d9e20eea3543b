package web_test

import (
	"net/http"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/pquerna/otp/totp"

	"herald/dbtest"
	"herald/delivery"
	"herald/service"
	"herald/web"
)

// TestRecoveryCodePages: turning two-factor login on shows ten recovery
// codes once on the account page; the code step logs in with one (its own
// form), once; a used or wrong recovery code gets the wrong code's answer;
// "Make new codes" needs the password (or a current code), shows new
// codes once and voids the old; the page counts the codes left and warns
// at two.
func TestRecoveryCodePages(t *testing.T) {
	t.Parallel()
	mem := &delivery.MemoryOutbox{}
	svc := dbtest.Service(t, service.Config{Transport: delivery.NewOutbox(mem), SecretKey: "a-test-secret-key-of-at-least-32-characters"})
	a := newTestAppOn(t, svc, web.Options{AuthPerMinute: 1000}) // a dozen logins from one IP
	c, _ := a.account("Ann", "ann@example.com")
	c.get("/account") // the form's CSRF token
	wantRedirect(t, c.post("/account/2fa/setup", nil), "/account/2fa")
	key := text(first(c.get("/account/2fa").doc, "#totp-key"))
	code, _ := totp.GenerateCode(key, time.Now())
	wantRedirect(t, c.post("/account/2fa/enable", url.Values{"code": {code}}), "/account#recovery")
	r := c.get("/account")
	wantStatus(t, r, http.StatusOK)
	codes := strings.Fields(text(first(r.doc, "#recovery-codes")))
	if len(codes) != 10 || first(r.doc, `#recovery [data-copy="#recovery-codes"]`) == nil {
		t.Fatalf("codes shown: %q\n%s", codes, text(first(r.doc, "#recovery")))
	}
	if got := text(first(r.doc, "#recovery-left")); got != "10 of 10 recovery codes left. Each logs in once in place of a code of your authenticator app, if you lose your phone." {
		t.Fatalf("left: %q", got)
	}
	// Shown once: the next visit has the count, not the codes.
	r = c.get("/account")
	if first(r.doc, "#recovery-codes") != nil || first(r.doc, "#recovery-left") == nil {
		t.Fatal("the codes were shown twice")
	}

	// codeStep logs in with the password and lands on the code step.
	codeStep := func() *client {
		t.Helper()
		b := a.client()
		b.get("/login")
		wantRedirect(t, b.post("/login", url.Values{"email": {"ann@example.com"}, "password": {"test-passphrase-9"}}), "/login/code")
		r := b.get("/login/code")
		if first(r.doc, "details#use-recovery form#recovery-form #login-recovery") == nil {
			t.Fatalf("no recovery form:\n%s", r.body)
		}
		return b
	}
	b := codeStep()
	wrong := b.post("/login/code", url.Values{"code": {"000000"}})
	wantStatus(t, wrong, http.StatusUnprocessableEntity)
	wrongMsg := text(first(wrong.doc, "#login-code-error"))
	if wrongMsg == "" {
		t.Fatalf("no error on a wrong code:\n%s", wrong.body)
	}
	wantRedirect(t, b.post("/login/code", url.Values{"recovery": {"1"}, "code": {strings.ToUpper(codes[0])}}), "/dashboard")
	wantStatus(t, b.get("/dashboard"), http.StatusOK)

	// The same code again, and one never made: the wrong code's answer,
	// beside the recovery field, its section open.
	b = codeStep()
	for _, bad := range []string{codes[0], "abcde-fghjk"} {
		r = b.post("/login/code", url.Values{"recovery": {"1"}, "code": {bad}})
		wantStatus(t, r, http.StatusUnprocessableEntity)
		if got := text(first(r.doc, "#login-recovery-error")); got != wrongMsg {
			t.Fatalf("%s: %q, want the wrong code's %q", bad, got, wrongMsg)
		}
		if first(r.doc, "details#use-recovery[open]") == nil || first(r.doc, "#login-code-error") != nil {
			t.Fatalf("%s: the error is not beside the recovery field", bad)
		}
	}

	// Make new codes: a wrong password is refused beside the field.
	r = c.post("/account/2fa/recovery-codes", url.Values{"current_password": {"wrong-password"}})
	wantStatus(t, r, http.StatusUnprocessableEntity)
	if first(r.doc, "#recovery-proof[aria-invalid=true]") == nil || first(r.doc, "#two-factor-password[aria-invalid=true]") != nil {
		t.Fatal("the refusal is not beside the recovery form's field")
	}
	wantRedirect(t, c.post("/account/2fa/recovery-codes", url.Values{"current_password": {"test-passphrase-9"}}), "/account#recovery")
	r = c.get("/account")
	fresh := strings.Fields(text(first(r.doc, "#recovery-codes")))
	if len(fresh) != 10 || fresh[0] == codes[0] {
		t.Fatalf("new codes: %q", fresh)
	}
	b = codeStep()
	wantStatus(t, b.post("/login/code", url.Values{"recovery": {"1"}, "code": {codes[1]}}), http.StatusUnprocessableEntity)

	// Use all but two: the page warns.
	for _, f := range fresh[:8] {
		b = codeStep()
		wantRedirect(t, b.post("/login/code", url.Values{"recovery": {"1"}, "code": {f}}), "/dashboard")
	}
	r = c.get("/account")
	left := first(r.doc, "#recovery-left.alert-warning")
	if left == nil || attr(left, "data-left") != "2" || !strings.Contains(text(left), "2 recovery codes left. Make new ones soon") {
		t.Fatalf("no warning at 2 left: %s", text(first(r.doc, "#recovery")))
	}
}

// TestSignupKeysSurviveFreshSessions: turning two-factor login on and
// changing the password start a fresh session of the same login; the
// sign-up keys still waiting to be saved come along, and a logout drops
// them (the next login on this browser does not see them).
func TestSignupKeysSurviveFreshSessions(t *testing.T) {
	t.Parallel()
	svc := dbtest.Service(t, service.Config{SecretKey: "a-test-secret-key-of-at-least-32-characters"})
	a := newTestAppOn(t, svc, web.Options{AuthPerMinute: 1000})
	c := a.client()
	_, secret := c.signup("Ada", "ada@example.com", "test-passphrase-9")

	c.get("/account")
	wantRedirect(t, c.post("/account/2fa/setup", nil), "/account/2fa")
	key := text(first(c.get("/account/2fa").doc, "#totp-key"))
	code, _ := totp.GenerateCode(key, time.Now())
	wantRedirect(t, c.post("/account/2fa/enable", url.Values{"code": {code}}), "/account#recovery")
	if got := value(c.get("/dashboard").doc, "#secret-key"); got != secret {
		t.Fatalf("after two-factor login on, the first screen shows %q", got)
	}
	c.get("/account")
	wantRedirect(t, c.post("/account/password", url.Values{"current_password": {"test-passphrase-9"}, "password": {"another-passphrase-7"}, "password_confirmation": {"another-passphrase-7"}}), "/account")
	if got := value(c.get("/dashboard").doc, "#secret-key"); got != secret {
		t.Fatalf("after a password change, the first screen shows %q", got)
	}
	c.get("/dashboard")
	wantRedirect(t, c.post("/logout", nil), "/login")
	c.get("/login")
	wantRedirect(t, c.post("/login", url.Values{"email": {"ada@example.com"}, "password": {"another-passphrase-7"}}), "/login/code")
	next, _ := totp.GenerateCode(key, time.Now().Add(30*time.Second))
	wantRedirect(t, c.post("/login/code", url.Values{"code": {next}}), "/dashboard")
	if r := c.get("/dashboard"); first(r.doc, "#welcome-keys") != nil || strings.Contains(r.body, secret) {
		t.Fatal("the keys outlived the logout")
	}
}
