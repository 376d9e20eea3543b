package web_test

import (
	"context"
	"net/http"
	"net/url"
	"regexp"
	"strings"
	"testing"
	"time"

	"herald/delivery"
	"herald/service"
	"herald/web"
)

// signupLink is the link of the last sign-up mail to the address.
var signupLinkRE = regexp.MustCompile(`http://localhost:8080(/signup/confirm/[A-Za-z0-9_-]+)`)

func TestFirstSignupIsImmediate(t *testing.T) {
	t.Parallel()
	a, mem := newMailboxApp(t, web.Options{})
	c := a.client()
	public, _ := c.signup("Ada", "ada@example.com", "test-passphrase-9")
	if !strings.HasPrefix(public, "pk_") {
		t.Fatalf("keys: %q", public)
	}
	wantStatus(t, c.get("/dashboard"), http.StatusOK)
	if n := len(mem.Messages()); n != 0 {
		t.Fatalf("%d mails sent for the first sign-up", n)
	}
}

// pageText is the visible text of the page's main content.
func pageText(r *response) string { return text(first(r.doc, "main")) }

// Sign-up answers the same for a taken and a free address: what differs
// is the mail.
func TestSignupDoesNotRevealAccounts(t *testing.T) {
	t.Parallel()
	a, mem := newMailboxApp(t, web.Options{})
	a.account("Ada", "ada@example.com")

	signup := func(email string) *response {
		c := a.client()
		c.get("/signup")
		return c.post("/signup", url.Values{"name": {"Someone"}, "email": {email}, "password": {"test-passphrase-9"}})
	}
	taken := signup("ADA@example.com")
	fresh := signup("bob@example.com")
	wantStatus(t, taken, http.StatusOK)
	wantStatus(t, fresh, fresh.status)
	if taken.status != fresh.status || taken.location() != fresh.location() {
		t.Fatalf("taken: %d %q, fresh: %d %q", taken.status, taken.location(), fresh.status, fresh.location())
	}
	tt := strings.ReplaceAll(pageText(taken), "ada@example.com", "<address>")
	ft := strings.ReplaceAll(pageText(fresh), "bob@example.com", "<address>")
	if tt != ft {
		t.Fatalf("pages differ:\ntaken: %s\nfresh: %s", tt, ft)
	}
	if !strings.Contains(ft, "Check your inbox at <address>") || !strings.Contains(ft, "we sent a link to finish signing up.") {
		t.Fatalf("page: %s", ft)
	}
	if len(taken.header.Values("Set-Cookie")) != len(fresh.header.Values("Set-Cookie")) {
		t.Fatal("the answers set different cookies")
	}

	msgs := mem.Messages()
	if len(msgs) != 2 || msgs[0].To[0] != "ada@example.com" || msgs[1].To[0] != "bob@example.com" {
		t.Fatalf("mails: %+v", msgs)
	}
	notice, link := mailText(t, msgs[0].Data), mailText(t, msgs[1].Data)
	if !strings.Contains(notice, "You already have a Herald account") || !strings.Contains(notice, "http://localhost:8080/login") ||
		signupLinkRE.MatchString(notice) {
		t.Fatalf("notice to the taken address:\n%s", notice)
	}
	if !signupLinkRE.MatchString(link) {
		t.Fatalf("no link in the mail to the new address:\n%s", link)
	}
	// No account was opened for either, and Ada's password is unchanged.
	if _, err := a.svc.Accounts.ByEmail(context.Background(), "bob@example.com"); !service.IsNotFound(err) {
		t.Fatalf("bob's account exists before the link: %v", err)
	}
	a.client().login("ada@example.com", "test-passphrase-9")
}

func TestSignupLinkCreatesAccount(t *testing.T) {
	t.Parallel()
	a, mem := newMailboxApp(t, web.Options{})
	a.account("Ada", "ada@example.com")
	c := a.client()
	c.get("/signup")
	wantStatus(t, c.post("/signup", url.Values{"name": {"Bob Builder"}, "email": {"Bob@Example.com"}, "password": {"bobs-passphrase-1"}}), http.StatusOK)
	m := signupLinkRE.FindStringSubmatch(mailText(t, mem.Messages()[0].Data))
	if m == nil {
		t.Fatal("no link mailed")
	}
	link := m[1]

	// Opening the link (as a mail gateway's scanner would) changes nothing.
	other := a.client()
	r := other.get(link)
	wantStatus(t, r, http.StatusOK)
	form := first(r.doc, `form#confirm-form[method="post"]`)
	if form == nil || attr(form, "action") != link || text(first(r.doc, "#confirm-email")) != "bob@example.com" {
		t.Fatalf("confirm page:\n%s", r.body)
	}
	if _, err := a.svc.Accounts.ByEmail(context.Background(), "bob@example.com"); !service.IsNotFound(err) {
		t.Fatalf("GET opened the account: %v", err)
	}
	// The button does, logs in, and shows the keys once.
	r = other.post(link, nil)
	wantRedirect(t, r, "/dashboard")
	r = other.get("/dashboard")
	wantStatus(t, r, http.StatusOK)
	id, _, err := a.svc.Accounts.Check(context.Background(), value(r.doc, "#public-key"), value(r.doc, "#secret-key"))
	if err != nil {
		t.Fatalf("shown keys: %v", err)
	}
	u, _ := a.svc.Accounts.Get(context.Background(), id)
	if u.Email != "bob@example.com" || u.Name != "Bob Builder" {
		t.Fatalf("account: %+v", u)
	}
	r = other.get("/dashboard")
	if got := text(first(r.doc, ".whoami strong")); got != "Bob Builder" {
		t.Fatalf("logged in as %q", got)
	}
	// The password typed at sign-up is the account's.
	a.client().login("bob@example.com", "bobs-passphrase-1")

	// The link works once.
	again := a.client()
	again.get(link)
	r = again.post(link, nil)
	wantStatus(t, r, http.StatusNotFound)
	if got := text(first(r.doc, "#signup-link-gone .alert")); !strings.Contains(got, "expired or was already used") {
		t.Fatalf("used link: %q", got)
	}
}

func TestExpiredSignupLink(t *testing.T) {
	t.Parallel()
	mem := &delivery.MemoryOutbox{}
	svc, clk := clockedService(t, service.Config{Transport: delivery.NewOutbox(mem)})
	a := newTestAppOn(t, svc, web.Options{})
	a.account("Ada", "ada@example.com")
	c := a.client()
	c.get("/signup")
	c.post("/signup", url.Values{"name": {"Bob"}, "email": {"bob@example.com"}, "password": {"bobs-passphrase-1"}})
	link := signupLinkRE.FindStringSubmatch(mailText(t, mem.Messages()[0].Data))[1]

	clk.Advance(service.SignupLinkTTL)
	r := c.get(link)
	wantStatus(t, r, http.StatusNotFound)
	if first(r.doc, "form#confirm-form") != nil {
		t.Fatal("an expired link offers the button")
	}
	c.get("/login") // a page with a form token
	wantStatus(t, c.post(link, nil), http.StatusNotFound)
	if _, err := a.svc.Accounts.ByEmail(context.Background(), "bob@example.com"); !service.IsNotFound(err) {
		t.Fatalf("an expired link opened the account: %v", err)
	}
}

// A link whose address got an account in the meantime opens nothing.
func TestSignupLinkOfTakenAddress(t *testing.T) {
	t.Parallel()
	a, mem := newMailboxApp(t, web.Options{})
	a.account("Ada", "ada@example.com")
	c := a.client()
	c.get("/signup")
	c.post("/signup", url.Values{"name": {"Bob"}, "email": {"bob@example.com"}, "password": {"bobs-passphrase-1"}})
	link := signupLinkRE.FindStringSubmatch(mailText(t, mem.Messages()[0].Data))[1]
	if _, _, err := a.svc.Accounts.Create(context.Background(), service.AccountInput{Name: "Bob", Email: "bob@example.com", Password: "test-passphrase-9"}); err != nil {
		t.Fatal(err)
	}
	c.get(link)
	r := c.post(link, nil)
	wantStatus(t, r, http.StatusConflict)
	a.client().login("bob@example.com", "test-passphrase-9")
}

// Sign-up mails to one address are throttled; the answer stays the same.
func TestSignupMailsThrottled(t *testing.T) {
	t.Parallel()
	mem := &delivery.MemoryOutbox{}
	svc, clk := clockedService(t, service.Config{Transport: delivery.NewOutbox(mem)})
	a := newTestAppOn(t, svc, web.Options{AuthPerMinute: 1000})
	a.account("Ada", "ada@example.com")
	for i := range 6 {
		c := a.client()
		c.get("/signup")
		r := c.post("/signup", url.Values{"name": {"X"}, "email": {"victim@example.com"}, "password": {"test-passphrase-9"}})
		wantStatus(t, r, http.StatusOK)
		if i == 5 && !strings.Contains(pageText(r), "Check your inbox") {
			t.Fatalf("throttled answer differs: %s", pageText(r))
		}
	}
	if n := len(mem.Messages()); n != 3 {
		t.Fatalf("%d mails to one address, want 3", n)
	}
	clk.Advance(10 * time.Minute)
	c := a.client()
	c.get("/signup")
	c.post("/signup", url.Values{"name": {"X"}, "email": {"victim@example.com"}, "password": {"test-passphrase-9"}})
	if n := len(mem.Messages()); n != 4 {
		t.Fatalf("%d mails after the delay, want 4", n)
	}
}
