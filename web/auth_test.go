package web_test

import (
	"context"
	"errors"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"testing"

	"github.com/gofiber/fiber/v2"

	"herald/web"
)

func TestSignupShowsKeysOnce(t *testing.T) {
	t.Parallel()
	a := newTestApp(t, web.Options{})
	c := a.client()
	public, secret := c.signup("Ada Lovelace", "Ada@Example.com", "correct horse")
	if !strings.HasPrefix(public, "pk_") || !strings.HasPrefix(secret, "sk_") {
		t.Fatalf("keys shown: %q %q", public, secret)
	}
	// The keys shown are the account's.
	id, _, err := a.svc.Accounts.Check(context.Background(), public, secret)
	if err != nil {
		t.Fatalf("shown keys do not authenticate: %v", err)
	}
	u, err := a.svc.Accounts.Get(context.Background(), id)
	if err != nil || u.Email != "ada@example.com" || u.Name != "Ada Lovelace" {
		t.Fatalf("account: %+v %v", u, err)
	}

	// The first screen is the dashboard: its "Get started" steps, with
	// the keys above them. A reload (or a detour through a step, or the
	// keys page) does not lose the secret: it stays until the person says
	// it is saved.
	r := c.get("/dashboard")
	if first(r.doc, "#get-started") == nil || value(r.doc, "#secret-key") != secret ||
		first(r.doc, `#welcome-keys [data-copy="#secret-key"]`) == nil || first(r.doc, `#welcome-keys [data-copy="#public-key"]`) == nil {
		t.Fatalf("the first screen lost the keys or the steps:\n%s", r.body)
	}
	if got := text(first(r.doc, "#welcome-keys-title")); got != "Your API keys (shown once)" {
		t.Fatalf("box title %q", got)
	}
	wantRedirect(t, c.get("/account/keys"), "/dashboard")
	if value(c.get("/dashboard").doc, "#secret-key") != secret {
		t.Fatal("a reload lost the secret key")
	}
	// Saved: never shown again, anywhere.
	wantRedirect(t, c.post("/dashboard/welcome-keys", nil), "/dashboard")
	r = c.get("/dashboard")
	if first(r.doc, "#welcome-keys") != nil || strings.Contains(r.body, secret) || first(r.doc, "#get-started") == nil {
		t.Fatal("the dashboard shows the keys after they were saved")
	}
	wantRedirect(t, c.get("/account/keys"), "/account")
	r = c.get("/account")
	wantStatus(t, r, http.StatusOK)
	if strings.Contains(r.body, secret) {
		t.Fatal("the account page shows the secret key")
	}
	if got := text(first(r.doc, "#current-public-key")); got != public {
		t.Fatalf("public key on the account page = %q, want %q", got, public)
	}
	// The secret is not in the cookie either, once saved.
	for _, v := range c.cookies {
		if strings.Contains(v, secret) {
			t.Fatal("secret key in a cookie")
		}
	}
}

func TestRotateKeys(t *testing.T) {
	t.Parallel()
	a := newTestApp(t, web.Options{})
	c := a.client()
	oldPub, oldSec := c.signup("Ada", "ada@example.com", "test-passphrase-9")
	c.get("/account")
	r := c.post("/account/keys", nil)
	wantRedirect(t, r, "/account/keys")
	r = c.get("/account/keys")
	wantStatus(t, r, http.StatusOK)
	pub, sec := value(r.doc, "#public-key"), value(r.doc, "#secret-key")
	if pub == oldPub || sec == oldSec || !strings.HasPrefix(sec, "sk_") {
		t.Fatalf("rotation showed %q %q", pub, sec)
	}
	ctx := context.Background()
	if _, _, err := a.svc.Accounts.Check(ctx, oldPub, oldSec); err == nil {
		t.Fatal("old keys still work")
	}
	if _, _, err := a.svc.Accounts.Check(ctx, pub, sec); err != nil {
		t.Fatalf("new keys: %v", err)
	}
	wantRedirect(t, c.get("/account/keys"), "/account")
}

func TestSignupValidation(t *testing.T) {
	t.Parallel()
	a := newTestApp(t, web.Options{})
	c := a.client()
	c.signup("Ada", "ada@example.com", "test-passphrase-9")

	tests := []struct {
		name  string
		form  url.Values
		field string // the input whose errors hold want
		want  string
	}{
		{"empty", url.Values{}, "signup-name", "The name field is required."},
		{"bad email", url.Values{"name": {"Bob"}, "email": {"bob@"}, "password": {"test-passphrase-9"}}, "signup-email", "The email must be a valid email address."},
		{"short password", url.Values{"name": {"Bob"}, "email": {"bob@example.com"}, "password": {"short"}}, "signup-password", "The password must be at least 10 characters."},
		{"nine characters", url.Values{"name": {"Bob"}, "email": {"bob@example.com"}, "password": {"abcdefgh9"}}, "signup-password", "The password must be at least 10 characters."},
		{"common password", url.Values{"name": {"Bob"}, "email": {"bob@example.com"}, "password": {"1234567890"}}, "signup-password", "The password is too common. Choose one that is harder to guess."},
		{"common, other case", url.Values{"name": {"Bob"}, "email": {"bob@example.com"}, "password": {"QwertyUIOP"}}, "signup-password", "The password is too common. Choose one that is harder to guess."},
		{"name with a line break", url.Values{"name": {"Bob\r\nBcc: x@example.com"}, "email": {"bob@example.com"}, "password": {"test-passphrase-9"}}, "signup-name", "The name must not contain line breaks."},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c := a.client()
			c.get("/signup")
			r := c.post("/signup", tt.form)
			wantStatus(t, r, http.StatusUnprocessableEntity)
			input := first(r.doc, "#"+tt.field)
			if input == nil || attr(input, "aria-invalid") != "true" {
				t.Fatalf("input #%s not marked invalid", tt.field)
			}
			if got := texts(r.doc, "#"+tt.field+"-error li"); len(got) == 0 || got[0] != tt.want {
				t.Fatalf("errors beside #%s = %q, want %q", tt.field, got, tt.want)
			}
			// What was typed is kept, but never the password.
			if value(r.doc, "#signup-email") != tt.form.Get("email") || value(r.doc, "#signup-password") != "" {
				t.Fatal("the form lost the input or kept the password")
			}
		})
	}
}

func TestLogin(t *testing.T) {
	t.Parallel()
	a := newTestApp(t, web.Options{})
	a.account("Ada", "ada@example.com")

	t.Run("wrong password", func(t *testing.T) {
		c := a.client()
		c.get("/login")
		r := c.post("/login", url.Values{"email": {"ada@example.com"}, "password": {"wrong password"}})
		wantStatus(t, r, http.StatusUnprocessableEntity)
		if got := texts(r.doc, "#login-email-error li"); len(got) != 1 || got[0] != "These credentials do not match our records." {
			t.Fatalf("error beside the email: %q", got)
		}
		if value(r.doc, "#login-email") != "ada@example.com" {
			t.Fatal("the email was not kept")
		}
		wantRedirect(t, c.get("/dashboard"), "/login")
	})

	t.Run("unknown address", func(t *testing.T) {
		c := a.client()
		c.get("/login")
		r := c.post("/login", url.Values{"email": {"nobody@example.com"}, "password": {"test-passphrase-9"}})
		wantStatus(t, r, http.StatusUnprocessableEntity)
	})

	t.Run("success", func(t *testing.T) {
		c := a.client()
		c.get("/login")
		before := c.csrf
		r := c.post("/login", url.Values{"email": {"ADA@example.com"}, "password": {"test-passphrase-9"}})
		wantRedirect(t, r, "/dashboard")
		r = c.get("/dashboard")
		wantStatus(t, r, http.StatusOK)
		if got := text(first(r.doc, ".whoami strong")); got != "Ada" {
			t.Fatalf("logged in as %q", got)
		}
		if c.csrf == before {
			t.Fatal("the CSRF token did not change at login")
		}
		wantRedirect(t, c.get("/login"), "/dashboard")
		wantRedirect(t, c.get("/"), "/dashboard")
	})

	t.Run("back to the page asked for", func(t *testing.T) {
		c := a.client()
		r := c.get("/suppressions/global?q=x")
		wantRedirect(t, r, "/login?next=")
		r = c.get(r.location())
		if got := value(r.doc, `input[name="next"]`); got != "/suppressions/global?q=x" {
			t.Fatalf("next = %q", got)
		}
		r = c.post("/login", url.Values{"email": {"ada@example.com"}, "password": {"test-passphrase-9"}, "next": {"/suppressions/global?q=x"}})
		wantRedirect(t, r, "/suppressions/global?q=x")
	})

	t.Run("never to another site", func(t *testing.T) {
		for _, next := range []string{"//evil.example", "https://evil.example", `/\evil.example`} {
			c := a.client()
			c.get("/login")
			r := c.post("/login", url.Values{"email": {"ada@example.com"}, "password": {"test-passphrase-9"}, "next": {next}})
			wantRedirect(t, r, "/dashboard")
		}
	})
}

func TestAuthRateLimitPerIP(t *testing.T) {
	t.Parallel()
	a := newTestApp(t, web.Options{AuthPerMinute: 3})
	c := a.client()
	c.get("/signup")
	for i := range 3 {
		r := c.post("/signup", url.Values{"name": {"x"}})
		if r.status != http.StatusUnprocessableEntity {
			t.Fatalf("try %d: status %d", i+1, r.status)
		}
	}
	r := c.post("/signup", url.Values{"name": {"x"}})
	wantStatus(t, r, http.StatusTooManyRequests)
	if got := text(first(r.doc, ".error-code")); got != "429" {
		t.Fatalf("429 page: %q", got)
	}
	// The limit covers both forms.
	r = c.post("/login", url.Values{"email": {"a@example.com"}, "password": {"x"}})
	wantStatus(t, r, http.StatusTooManyRequests)
	// Pages are not limited.
	wantStatus(t, c.get("/login"), http.StatusOK)
}

func TestLogout(t *testing.T) {
	t.Parallel()
	a := newTestApp(t, web.Options{})
	c, _ := a.account("Ada", "ada@example.com")
	r := c.get("/dashboard")
	wantStatus(t, r, http.StatusOK)
	token := c.csrf
	if first(r.doc, `form[action="/logout"][method="post"]`) == nil {
		t.Fatal("no logout form")
	}
	wantRedirect(t, c.post("/logout", nil), "/login")
	r = c.get("/login")
	if got := text(first(r.doc, "#flash .flash")); got != "You have logged out." {
		t.Fatalf("flash = %q", got)
	}
	wantRedirect(t, c.get("/dashboard"), "/login")
	// The token of the old session no longer works.
	r = c.post("/suppressions/global", url.Values{"_csrf": {token}, "email_address": {"a@example.com"}})
	wantStatus(t, r, http.StatusForbidden)
	// Logout needs the token too.
	wantStatus(t, a.client().do("POST", "/logout", url.Values{}, false), http.StatusForbidden)
}

func TestCSRF(t *testing.T) {
	t.Parallel()
	a := newTestApp(t, web.Options{})
	c, _ := a.account("Ada", "ada@example.com")
	c.get("/suppressions/global")
	good := c.csrf
	wrong := "x" + good[1:]
	if wrong == good {
		wrong = "y" + good[1:]
	}
	form := func(token string) url.Values {
		v := url.Values{"email_address": {"a@example.com"}}
		if token != "" {
			v.Set("_csrf", token)
		}
		return v
	}
	tests := []struct {
		name    string
		form    url.Values
		headers []string
		want    int
	}{
		{"no token", form(""), nil, http.StatusForbidden},
		{"wrong token", form(wrong), nil, http.StatusForbidden},
		{"wrong header", form(""), []string{"X-CSRF-Token", "nope"}, http.StatusForbidden},
		{"form field", form(good), nil, http.StatusSeeOther},
		{"header", form(""), []string{"X-CSRF-Token", good}, http.StatusSeeOther},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := c.do("POST", "/suppressions/global", tt.form, false, tt.headers...)
			wantStatus(t, r, tt.want)
			if tt.want == http.StatusForbidden {
				if got := text(first(r.doc, ".error-code")); got != "403" {
					t.Fatalf("403 page: %q", got)
				}
			}
		})
	}

	t.Run("every method that changes state", func(t *testing.T) {
		for _, m := range []string{"POST", "PUT", "PATCH", "DELETE"} {
			if r := c.do(m, "/notifications", url.Values{}, false); r.status != http.StatusForbidden {
				t.Errorf("%s without token: %d", m, r.status)
			}
		}
	})

	t.Run("htmx gets the message in the flash area", func(t *testing.T) {
		r := c.do("POST", "/suppressions/global", form(""), true, "X-CSRF-Token", "nope")
		wantStatus(t, r, http.StatusForbidden)
		if r.header.Get("HX-Retarget") != "#flash" || first(r.doc, ".flash-error") == nil {
			t.Fatalf("htmx 403: retarget %q\n%s", r.header.Get("HX-Retarget"), r.body)
		}
	})

	t.Run("login and sign-up need it", func(t *testing.T) {
		anon := a.client()
		wantStatus(t, anon.do("POST", "/login", url.Values{"email": {"ada@example.com"}, "password": {"test-passphrase-9"}}, false), http.StatusForbidden)
		wantStatus(t, anon.do("POST", "/signup", url.Values{"name": {"B"}, "email": {"b@example.com"}, "password": {"test-passphrase-9"}}, false), http.StatusForbidden)
	})
}

func TestPagesRequireLogin(t *testing.T) {
	t.Parallel()
	a := newTestApp(t, web.Options{})
	_, _ = a.account("Ada", "ada@example.com")
	anon := a.client()
	anon.get("/login") // a session with a token, but no account
	for _, path := range []string{
		"/dashboard", "/account", "/account/keys", "/suppressions", "/suppressions/global",
		"/suppressions/groups", "/suppressions/groups/1", "/suppressions/groups/1/edit", "/notifications",
	} {
		t.Run("GET "+path, func(t *testing.T) {
			r := anon.get(path)
			wantRedirect(t, r, "/login")
			r = anon.hxGet(path)
			if r.header.Get("HX-Redirect") == "" || !strings.HasPrefix(r.header.Get("HX-Redirect"), "/login") {
				t.Fatalf("htmx: %d HX-Redirect %q", r.status, r.header.Get("HX-Redirect"))
			}
		})
	}
	for _, path := range []string{
		"/account/keys", "/suppressions/global", "/suppressions/global/1/delete", "/suppressions/global/bulk-delete",
		"/suppressions/groups", "/suppressions/groups/1", "/suppressions/groups/1/recipients", "/notifications",
		"/notifications/1/delete", "/notifications/bulk-delete", "/suppressions/bounced/lift", "/suppressions/bounced/1/lift",
	} {
		t.Run("POST "+path, func(t *testing.T) {
			wantRedirect(t, anon.post(path, url.Values{"ids": {"1"}}), "/login")
		})
	}
	wantRedirect(t, anon.get("/"), "/login")
}

func TestSessionCookie(t *testing.T) {
	t.Parallel()
	for _, tt := range []struct {
		base   string
		secure bool
	}{{"http://localhost:8080", false}, {"https://mail.example.com", true}} {
		a := newTestApp(t, web.Options{BaseURL: tt.base})
		req := httptest.NewRequest("GET", "/login", nil)
		resp, err := a.app.Test(req, -1)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		cookies := resp.Cookies()
		if len(cookies) != 1 {
			t.Fatalf("%s: cookies %v", tt.base, cookies)
		}
		ck := cookies[0]
		if !ck.HttpOnly || ck.SameSite != http.SameSiteLaxMode || ck.Secure != tt.secure || ck.Path != "/" {
			t.Fatalf("%s: cookie %+v", tt.base, ck)
		}
	}
}

// Two processes over one database accept each other's session cookies:
// the keys live in the database.
func TestSessionSharedAcrossProcesses(t *testing.T) {
	t.Parallel()
	one := newTestApp(t, web.Options{})
	two := newTestAppOn(t, one.svc, web.Options{})
	c, _ := one.account("Ada", "ada@example.com")
	c.a = two
	r := c.get("/dashboard")
	wantStatus(t, r, http.StatusOK)
}

func TestForgedCookieIsNoSession(t *testing.T) {
	t.Parallel()
	a := newTestApp(t, web.Options{})
	c, _ := a.account("Ada", "ada@example.com")
	for k, v := range c.cookies {
		c.cookies[k] = v[:len(v)-4] + "AAAA"
	}
	wantRedirect(t, c.get("/dashboard"), "/login")
}

func TestErrorPages(t *testing.T) {
	a := newTestApp(t, web.Options{})
	a.app.Get("/boom", func(*fiber.Ctx) error { return errors.New("secret internals") })
	// The 500 is logged; keep it out of the test output.
	defer slog.SetDefault(slog.Default())
	slog.SetDefault(slog.New(slog.DiscardHandler))

	anon := a.client()
	r := anon.get("/no/such/page")
	wantStatus(t, r, http.StatusNotFound)
	if !strings.HasPrefix(r.header.Get("Content-Type"), "text/html") || text(first(r.doc, ".error-code")) != "404" {
		t.Fatalf("404 page: %s\n%s", r.header.Get("Content-Type"), r.body)
	}
	wantStatus(t, anon.get("/static/css/missing.css"), http.StatusNotFound)
	if r := anon.get("/static/css/app.css"); r.status != http.StatusOK || !strings.HasPrefix(r.header.Get("Content-Type"), "text/css") {
		t.Fatalf("stylesheet: %d %s", r.status, r.header.Get("Content-Type"))
	}

	r = anon.get("/boom")
	wantStatus(t, r, http.StatusInternalServerError)
	if strings.Contains(r.body, "secret internals") || text(first(r.doc, ".error-code")) != "500" {
		t.Fatalf("500 page shows the error:\n%s", r.body)
	}

	// Logged in, a missing record is a 404 inside the console's layout.
	c, _ := a.account("Ada", "ada@example.com")
	r = c.get("/suppressions/groups/424242")
	wantStatus(t, r, http.StatusNotFound)
	if first(r.doc, "nav.nav") == nil || text(first(r.doc, ".error-code")) != "404" {
		t.Fatalf("404 without the layout:\n%s", r.body)
	}
	for _, bad := range []string{"/suppressions/groups/abc", "/suppressions/groups/-1", "/suppressions/groups/0"} {
		wantStatus(t, c.get(bad), http.StatusNotFound)
	}
	// To htmx, an error is a message for the flash area.
	r = c.hxGet("/suppressions/groups/424242/edit")
	wantStatus(t, r, http.StatusNotFound)
	if r.header.Get("HX-Retarget") != "#flash" || r.header.Get("HX-Reswap") != "innerHTML" || first(r.doc, ".flash-error") == nil {
		t.Fatalf("htmx 404: %v\n%s", r.header, r.body)
	}
}

func TestSecurityHeaders(t *testing.T) {
	t.Parallel()
	a := newTestApp(t, web.Options{})
	r := a.client().get("/login")
	for k, want := range map[string]string{
		"X-Content-Type-Options": "nosniff",
		"X-Frame-Options":        "DENY",
		"Cache-Control":          "no-store",
		"Content-Type":           "text/html; charset=utf-8",
	} {
		if got := r.header.Get(k); got != want {
			t.Errorf("%s = %q, want %q", k, got, want)
		}
	}
	if csp := r.header.Get("Content-Security-Policy"); !strings.Contains(csp, "script-src 'self'") {
		t.Errorf("CSP = %q", csp)
	}
	// No CDN: every script and stylesheet is this site's.
	for _, n := range append(all(r.doc, "script[src]"), all(r.doc, "link[href]")...) {
		u := attr(n, "src") + attr(n, "href")
		if !strings.HasPrefix(u, "/static/") {
			t.Errorf("asset from elsewhere: %s", u)
		}
	}
}
