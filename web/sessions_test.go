package web_test

import (
	"bytes"
	"context"
	"io"
	"maps"
	"mime"
	"mime/multipart"
	"mime/quotedprintable"
	"net/http"
	"net/mail"
	"net/url"
	"strings"
	"testing"
	"time"

	"herald/dbtest"
	"herald/delivery"
	"herald/service"
	"herald/web"
)

// clockedService is a service over a fresh database (configured by cfg)
// that reads its time from a clock the test moves (Config.Now).
func clockedService(t *testing.T, cfg service.Config) (*service.Service, *dbtest.Clock) {
	t.Helper()
	c := dbtest.NewClock(time.Now())
	cfg.Now = c.Now
	return dbtest.Service(t, cfg), c
}

// stolen is another browser holding a copy of c's cookies.
func (c *client) stolen() *client {
	return &client{t: c.t, a: c.a, cookies: maps.Clone(c.cookies), csrf: c.csrf}
}

// sessionRows counts the sessions table's rows.
func sessionRows(t *testing.T, svc *service.Service) int64 {
	t.Helper()
	var n int64
	if err := svc.DB.R.Table("sessions").Count(&n).Error; err != nil {
		t.Fatal(err)
	}
	return n
}

// A cookie copied before logout is refused after it: the session was a
// row, and logout deleted it.
func TestCopiedCookieRefusedAfterLogout(t *testing.T) {
	t.Parallel()
	a := newTestApp(t, web.Options{})
	c, _ := a.account("Ada", "ada@example.com")
	c.get("/dashboard")
	thief := c.stolen()
	wantStatus(t, thief.get("/dashboard"), http.StatusOK)

	wantRedirect(t, c.post("/logout", nil), "/login")
	wantRedirect(t, thief.get("/dashboard"), "/login")
	r := thief.hxGet("/account")
	if !strings.HasPrefix(r.header.Get("HX-Redirect"), "/login") {
		t.Fatalf("htmx with an ended session: %d %q", r.status, r.header.Get("HX-Redirect"))
	}
	// Nor can it change anything: its form token went with the session.
	thief = c.stolen() // as copied before logout, again
	c.csrf = ""
	r = thief.post("/suppressions/global", url.Values{"email_address": {"x@example.com"}})
	if r.status != http.StatusForbidden && (r.status != http.StatusSeeOther || !strings.HasPrefix(r.location(), "/login")) {
		t.Fatalf("POST with an ended session: %d %q", r.status, r.location())
	}
	if n := sessionRows(t, a.svc); n != 0 {
		t.Fatalf("%d session rows after logout", n)
	}
}

func TestChangePasswordEndsOtherSessions(t *testing.T) {
	t.Parallel()
	a := newTestApp(t, web.Options{})
	c, _ := a.account("Ada", "ada@example.com")
	thief := c.stolen()
	other := a.client()
	other.login("ada@example.com", "test-passphrase-9")

	r := c.get("/account")
	wantStatus(t, r, http.StatusOK)
	if first(r.doc, `form#password-form[action="/account/password"][method="post"]`) == nil {
		t.Fatal("no change-password form on the account page")
	}
	r = c.post("/account/password", url.Values{
		"current_password": {"test-passphrase-9"}, "password": {"a-new-passphrase-7"}, "password_confirmation": {"a-new-passphrase-7"},
	})
	wantRedirect(t, r, "/account")
	// The person who changed it goes on, in a fresh session.
	r = c.get("/account")
	wantStatus(t, r, http.StatusOK)
	if got := text(first(r.doc, "#flash .flash")); !strings.Contains(got, "Your password has been changed.") {
		t.Fatalf("flash = %q", got)
	}
	// Every other session ended: the copied cookie and the other login.
	wantRedirect(t, thief.get("/dashboard"), "/login")
	wantRedirect(t, other.get("/dashboard"), "/login")
	// The new password works, the old does not.
	fresh := a.client()
	fresh.get("/login")
	wantStatus(t, fresh.post("/login", url.Values{"email": {"ada@example.com"}, "password": {"test-passphrase-9"}}), http.StatusUnprocessableEntity)
	fresh.login("ada@example.com", "a-new-passphrase-7")
}

func TestChangePasswordValidation(t *testing.T) {
	t.Parallel()
	a := newTestApp(t, web.Options{})
	c, _ := a.account("Ada", "ada@example.com")
	tests := []struct {
		name  string
		form  url.Values
		input string
		want  string
	}{
		{"wrong current", url.Values{"current_password": {"not-my-password"}, "password": {"a-new-passphrase-7"}, "password_confirmation": {"a-new-passphrase-7"}},
			"password-current", "The current password is incorrect."},
		{"no current", url.Values{"password": {"a-new-passphrase-7"}, "password_confirmation": {"a-new-passphrase-7"}},
			"password-current", "The current password field is required."},
		{"short", url.Values{"current_password": {"test-passphrase-9"}, "password": {"short-pw"}, "password_confirmation": {"short-pw"}},
			"password-new", "The password must be at least 10 characters."},
		{"common", url.Values{"current_password": {"test-passphrase-9"}, "password": {"Password123"}, "password_confirmation": {"Password123"}},
			"password-new", "The password is too common. Choose one that is harder to guess."},
		{"mismatch", url.Values{"current_password": {"test-passphrase-9"}, "password": {"a-new-passphrase-7"}, "password_confirmation": {"a-new-passphrase-8"}},
			"password-confirm", "The password confirmation does not match."},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c.get("/account")
			r := c.post("/account/password", tt.form)
			wantStatus(t, r, http.StatusUnprocessableEntity)
			if attr(first(r.doc, "#"+tt.input), "aria-invalid") != "true" {
				t.Fatalf("#%s not marked invalid", tt.input)
			}
			if got := texts(r.doc, "#"+tt.input+"-error li"); len(got) == 0 || got[0] != tt.want {
				t.Fatalf("errors beside #%s = %q, want %q", tt.input, got, tt.want)
			}
			for _, id := range []string{"password-current", "password-new", "password-confirm"} {
				if value(r.doc, "#"+id) != "" {
					t.Fatalf("#%s shows what was typed", id)
				}
			}
		})
	}
	// Nothing changed: still logged in, the old password works.
	wantStatus(t, c.get("/dashboard"), http.StatusOK)
	a.client().login("ada@example.com", "test-passphrase-9")
}

func TestLogoutEverywhere(t *testing.T) {
	t.Parallel()
	a := newTestApp(t, web.Options{})
	c, _ := a.account("Ada", "ada@example.com")
	thief := c.stolen()
	other := a.client()
	other.login("ada@example.com", "test-passphrase-9")
	bob, _ := a.account("Bob", "bob@example.com")

	r := c.get("/account")
	if first(r.doc, `form#logout-everywhere-form[action="/account/logout-everywhere"][method="post"]`) == nil {
		t.Fatal("no log-out-everywhere form")
	}
	// The list shows both sessions, this one marked.
	if rows := all(r.doc, "#sessions-list tbody tr"); len(rows) != 2 {
		t.Fatalf("%d sessions listed, want 2", len(rows))
	}
	if got := texts(r.doc, "#sessions-list tbody tr.is-current .badge"); len(got) != 1 || got[0] != "This browser" {
		t.Fatalf("current session mark: %q", got)
	}
	wantRedirect(t, c.post("/account/logout-everywhere", nil), "/login")
	r = c.get("/login")
	if got := text(first(r.doc, "#flash .flash")); got != "You have logged out everywhere." {
		t.Fatalf("flash = %q", got)
	}
	for name, cl := range map[string]*client{"this browser": c, "copied cookie": thief, "other browser": other} {
		if r := cl.get("/dashboard"); r.status != http.StatusSeeOther || !strings.HasPrefix(r.location(), "/login") {
			t.Fatalf("%s still logged in: %d", name, r.status)
		}
	}
	// Another account's session is untouched.
	wantStatus(t, bob.get("/dashboard"), http.StatusOK)
}

// Login ends the session the browser had and starts another: a session
// planted in a browser before its login (fixation) gives nothing.
func TestLoginRegeneratesSession(t *testing.T) {
	t.Parallel()
	a := newTestApp(t, web.Options{})
	a.account("Ada", "ada@example.com")
	c, _ := a.account("Bob", "bob@example.com")
	c.get("/dashboard")
	planted := c.stolen()
	c.login("ada@example.com", "test-passphrase-9")
	r := c.get("/dashboard")
	if got := text(first(r.doc, ".whoami strong")); got != "Ada" {
		t.Fatalf("logged in as %q", got)
	}
	// The copy of the cookie from before is neither Bob's session any more
	// nor Ada's.
	wantRedirect(t, planted.get("/dashboard"), "/login")
	// Left: Ada's first browser and this one's new session.
	if n := sessionRows(t, a.svc); n != 2 {
		t.Fatalf("%d session rows, want 2", n)
	}
}

func TestAnonymousVisitorsMakeNoSessionRows(t *testing.T) {
	t.Parallel()
	a := newTestApp(t, web.Options{})
	a.svc.Accounts.Create(context.Background(), service.AccountInput{Name: "Ada", Email: "ada@example.com", Password: "test-passphrase-9"})
	c := a.client()
	c.get("/")
	c.get("/login")
	c.get("/signup")
	c.post("/login", url.Values{"email": {"ada@example.com"}, "password": {"wrong password"}})
	c.get("/dashboard")
	if n := sessionRows(t, a.svc); n != 0 {
		t.Fatalf("%d session rows from an anonymous visitor", n)
	}
}

func TestSessionIdleExpiry(t *testing.T) {
	t.Parallel()
	svc, clk := clockedService(t, service.Config{})
	a := newTestAppOn(t, svc, web.Options{})
	c, id := a.account("Ada", "ada@example.com")
	// Used every 23 hours, it lives on (each use moves the idle limit)…
	for range 3 {
		clk.Advance(23 * time.Hour)
		wantStatus(t, c.get("/dashboard"), http.StatusOK)
	}
	// …its last use is recorded at most once a minute…
	before, _ := a.svc.Sessions.List(context.Background(), id)
	clk.Advance(30 * time.Second)
	wantStatus(t, c.get("/dashboard"), http.StatusOK)
	after, _ := a.svc.Sessions.List(context.Background(), id)
	if len(before) != 1 || len(after) != 1 || !after[0].LastUsed().Equal(before[0].LastUsed()) {
		t.Fatalf("last use written again within a minute: %v → %v", before, after)
	}
	// …and 24 hours without use end it.
	clk.Advance(24 * time.Hour)
	wantRedirect(t, c.get("/dashboard"), "/login")
	clk.Advance(-24 * time.Hour) // even back in time: the row is gone
	wantRedirect(t, c.get("/dashboard"), "/login")
}

func TestSessionAbsoluteExpiry(t *testing.T) {
	t.Parallel()
	svc, clk := clockedService(t, service.Config{})
	a := newTestAppOn(t, svc, web.Options{})
	c, _ := a.account("Ada", "ada@example.com")
	// In use all along, it still ends 7 days after login.
	for range 13 {
		clk.Advance(12 * time.Hour)
		wantStatus(t, c.get("/dashboard"), http.StatusOK)
	}
	clk.Advance(12*time.Hour - time.Minute) // 7 days less a minute
	wantStatus(t, c.get("/dashboard"), http.StatusOK)
	clk.Advance(time.Minute)
	wantRedirect(t, c.get("/dashboard"), "/login")
	// A new login starts a new week.
	c.login("ada@example.com", "test-passphrase-9")
	wantStatus(t, c.get("/dashboard"), http.StatusOK)
}

// Two herald processes over one database (each with its own connections
// and console): a logout in one is refused at once by the other.
func TestLogoutSeenByAnotherProcess(t *testing.T) {
	t.Parallel()
	svcs := dbtest.Processes(t, 2)
	one := newTestAppOn(t, svcs[0], web.Options{})
	two := newTestAppOn(t, svcs[1], web.Options{})
	c, _ := one.account("Ada", "ada@example.com")
	c.get("/dashboard")
	elsewhere := c.stolen()
	elsewhere.a = two
	wantStatus(t, elsewhere.get("/dashboard"), http.StatusOK)

	wantRedirect(t, c.post("/logout", nil), "/login")
	wantRedirect(t, elsewhere.get("/dashboard"), "/login")

	// And "log out everywhere" said to the second process ends the first's.
	c.login("ada@example.com", "test-passphrase-9")
	elsewhere = two.client()
	elsewhere.login("ada@example.com", "test-passphrase-9")
	elsewhere.get("/account")
	wantRedirect(t, elsewhere.post("/account/logout-everywhere", nil), "/login")
	wantRedirect(t, c.get("/dashboard"), "/login")
}

// newMailboxApp is the console with herald's own mail sent to a memory
// outbox the test reads.
func newMailboxApp(t *testing.T, opt web.Options) (*testApp, *delivery.MemoryOutbox) {
	t.Helper()
	mem := &delivery.MemoryOutbox{}
	return newTestAppOn(t, dbtest.Service(t, service.Config{Transport: delivery.NewOutbox(mem)}), opt), mem
}

// mailText is a message's subject and its decoded text and HTML parts.
func mailText(t *testing.T, raw []byte) string {
	t.Helper()
	m, err := mail.ReadMessage(bytes.NewReader(raw))
	if err != nil {
		t.Fatal(err)
	}
	subject, _ := new(mime.WordDecoder).DecodeHeader(m.Header.Get("Subject"))
	out := subject + "\n"
	_, params, err := mime.ParseMediaType(m.Header.Get("Content-Type"))
	if err != nil {
		t.Fatal(err)
	}
	mr := multipart.NewReader(m.Body, params["boundary"])
	for {
		p, err := mr.NextRawPart()
		if err == io.EOF {
			break
		}
		if err != nil {
			t.Fatal(err)
		}
		var body io.Reader = p
		if strings.EqualFold(p.Header.Get("Content-Transfer-Encoding"), "quoted-printable") {
			body = quotedprintable.NewReader(p)
		}
		b, err := io.ReadAll(body)
		if err != nil {
			t.Fatal(err)
		}
		out += string(b) + "\n"
	}
	return out
}
