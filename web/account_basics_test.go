package web_test

import (
	"context"
	"net/http"
	"net/url"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/pquerna/otp/totp"

	"herald/dbtest"
	"herald/delivery"
	"herald/service"
	"herald/web"
)

// With HERALD_SIGNUP=off every sign-up route answers 403 with a page
// that says why, and the login page offers no sign-up.
func TestSignupClosedPages(t *testing.T) {
	t.Parallel()
	a := newTestAppOn(t, dbtest.Service(t, service.Config{SignupClosed: true}), web.Options{})
	c := a.client()
	login := c.get("/login")
	wantStatus(t, login, http.StatusOK)
	for _, n := range all(login.doc, "a") {
		if strings.HasPrefix(attr(n, "href"), "/signup") {
			t.Fatalf("the login page links to %s", attr(n, "href"))
		}
	}
	if first(login.doc, "#forgot-link") == nil {
		t.Fatal("no Forgot your password? link")
	}
	for _, r := range []*response{
		c.get("/signup"),
		c.post("/signup", url.Values{"name": {"A"}, "email": {"a@example.com"}, "password": {"test-passphrase-9"}}),
		c.get("/signup/confirm/abc"),
		c.post("/signup/confirm/abc", nil),
	} {
		wantStatus(t, r, http.StatusForbidden)
		if !strings.Contains(pageText(r), "Sign-up is closed on this server.") {
			t.Fatalf("page: %s", pageText(r))
		}
	}
	if _, err := a.svc.Accounts.ByEmail(context.Background(), "a@example.com"); !service.IsNotFound(err) {
		t.Fatalf("an account was opened: %v", err)
	}
	// Open by default: the link is there.
	open := newTestApp(t, web.Options{}).client().get("/login")
	if first(open.doc, `a[href="/signup"]`) == nil {
		t.Fatal("no sign-up link on an open server")
	}
}

var resetLinkRE = regexp.MustCompile(`http://localhost:8080(/reset/[A-Za-z0-9_-]+)`)

func TestPasswordResetPages(t *testing.T) {
	t.Parallel()
	a, mem := newMailboxApp(t, web.Options{})
	ann, _ := a.account("Ann", "ann@example.com")

	ask := func(email string) *response {
		c := a.client()
		r := c.get("/login")
		if first(r.doc, `a[href="/login/forgot"]`) == nil {
			t.Fatal("no link to /login/forgot")
		}
		c.get("/login/forgot")
		return c.post("/login/forgot", url.Values{"email": {email}})
	}
	taken, free := ask("Ann@example.com"), ask("nobody@example.com")
	wantStatus(t, taken, http.StatusOK)
	wantStatus(t, free, http.StatusOK)
	tt := strings.ReplaceAll(pageText(taken), "ann@example.com", "<address>")
	ft := strings.ReplaceAll(pageText(free), "nobody@example.com", "<address>")
	if tt != ft || !strings.Contains(tt, "If <address> has an account, we sent it a link") {
		t.Fatalf("pages differ:\n%s\n%s", tt, ft)
	}
	wantStatus(t, ask("not an address"), http.StatusUnprocessableEntity)
	msgs := mem.Messages()
	if len(msgs) != 2 || msgs[0].To[0] != "ann@example.com" || msgs[1].To[0] != "nobody@example.com" {
		t.Fatalf("mails: %+v", msgs)
	}
	if resetLinkRE.MatchString(mailText(t, msgs[1].Data)) {
		t.Fatal("a reset link went to an address without an account")
	}
	m := resetLinkRE.FindStringSubmatch(mailText(t, msgs[0].Data))
	if m == nil {
		t.Fatalf("no link:\n%s", mailText(t, msgs[0].Data))
	}
	link := m[1]

	// Opening the link (twice, as a mail scanner and the person would)
	// changes nothing: Ann is still logged in elsewhere.
	c := a.client()
	for range 2 {
		r := c.get(link)
		wantStatus(t, r, http.StatusOK)
		if text(first(r.doc, "#reset-email")) != "ann@example.com" {
			t.Fatalf("page: %s", pageText(r))
		}
	}
	wantStatus(t, ann.get("/account"), http.StatusOK)
	// The form: errors shown, then the password set.
	r := c.post(link, url.Values{"password": {"new-passphrase-5"}, "password_confirmation": {"other"}})
	wantStatus(t, r, http.StatusUnprocessableEntity)
	if first(r.doc, "#reset-confirm[aria-invalid=true]") == nil {
		t.Fatalf("no error on the confirmation:\n%s", pageText(r))
	}
	wantRedirect(t, c.post(link, url.Values{"password": {"new-passphrase-5"}, "password_confirmation": {"new-passphrase-5"}}), "/login")
	wantRedirect(t, ann.get("/account"), "/login") // every session ended
	wantStatus(t, c.get(link), http.StatusNotFound)
	wantStatus(t, c.post(link, url.Values{"password": {"third-passphrase-6"}, "password_confirmation": {"third-passphrase-6"}}), http.StatusNotFound)
	a.client().login("ann@example.com", "new-passphrase-5")
}

func TestTwoFactorPages(t *testing.T) {
	t.Parallel()
	mem := &delivery.MemoryOutbox{}
	svc := dbtest.Service(t, service.Config{Transport: delivery.NewOutbox(mem), SecretKey: "a-test-secret-key-of-at-least-32-characters"})
	a := newTestAppOn(t, svc, web.Options{})
	c, id := a.account("Ann", "ann@example.com")

	r := c.get("/account")
	if !strings.HasPrefix(text(first(r.doc, "#two-factor-state")), "Off.") || first(r.doc, "#two-factor-setup") == nil {
		t.Fatalf("card: %s", text(first(r.doc, "#two-factor")))
	}
	wantRedirect(t, c.get("/account/2fa"), "/account") // nothing pending
	wantRedirect(t, c.post("/account/2fa/setup", nil), "/account/2fa")
	r = c.get("/account/2fa")
	wantStatus(t, r, http.StatusOK)
	key := text(first(r.doc, "#totp-key"))
	if src := attr(first(r.doc, "#totp-qr"), "src"); len(key) < 16 || !strings.HasPrefix(src, "data:image/png;base64,iVBOR") {
		t.Fatalf("key %q, QR %.40q", key, src)
	}
	r = c.post("/account/2fa/enable", url.Values{"code": {"000000"}})
	wantStatus(t, r, http.StatusUnprocessableEntity)
	if text(first(r.doc, "#totp-key")) != key || first(r.doc, "#totp-code[aria-invalid=true]") == nil {
		t.Fatal("the refused code's page lost the key or the error")
	}
	other := a.client()
	other.login("ann@example.com", "test-passphrase-9")
	code, _ := totp.GenerateCode(key, time.Now())
	wantRedirect(t, c.post("/account/2fa/enable", url.Values{"code": {code}}), "/account#recovery")
	wantStatus(t, c.get("/account"), http.StatusOK)  // this browser goes on
	wantRedirect(t, other.get("/account"), "/login") // the other session ended
	if u, _ := svc.Accounts.Get(context.Background(), id); !u.TwoFactor() {
		t.Fatal("not on")
	}

	// Login now asks for a code before any session starts.
	b := a.client()
	b.get("/login")
	wantRedirect(t, b.post("/login", url.Values{"email": {"ann@example.com"}, "password": {"test-passphrase-9"}}), "/login/code")
	wantRedirect(t, b.get("/dashboard"), "/login")
	r = b.get("/login/code")
	wantStatus(t, r, http.StatusOK)
	r = b.post("/login/code", url.Values{"code": {code}}) // used to turn it on
	wantStatus(t, r, http.StatusUnprocessableEntity)
	if !strings.Contains(pageText(r), "The code is incorrect or was already used.") {
		t.Fatalf("page: %s", pageText(r))
	}
	next, _ := totp.GenerateCode(key, time.Now().Add(30*time.Second)) // one step of drift
	wantRedirect(t, b.post("/login/code", url.Values{"code": {next}}), "/dashboard")
	wantStatus(t, b.get("/dashboard"), http.StatusOK)
	// Without the password first, the code step sends back to login.
	wantRedirect(t, a.client().get("/login/code"), "/login")

	// Off with the password.
	r = c.post("/account/2fa/off", url.Values{"current_password": {"wrong-password"}})
	wantStatus(t, r, http.StatusUnprocessableEntity)
	wantRedirect(t, c.post("/account/2fa/off", url.Values{"current_password": {"test-passphrase-9"}}), "/account")
	d := a.client()
	d.get("/login")
	wantRedirect(t, d.post("/login", url.Values{"email": {"ann@example.com"}, "password": {"test-passphrase-9"}}), "/dashboard")

	// A server without HERALD_SECRET_KEY says so instead of a set-up button.
	none := newTestApp(t, web.Options{})
	nc, _ := none.account("Bob", "bob@example.com")
	r = nc.get("/account")
	if first(r.doc, "#two-factor-setup") != nil || !strings.Contains(text(first(r.doc, "#two-factor")), "HERALD_SECRET_KEY") {
		t.Fatalf("card: %s", text(first(r.doc, "#two-factor")))
	}
}
