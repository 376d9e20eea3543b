package web_test

import (
	"context"
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

// joinTeam invites email to the account of owner's client with role and
// accepts the mailed link in a new browser, which it returns logged in
// as the member (password "member-passphrase-7").
func joinTeam(t *testing.T, a *testApp, mem *delivery.MemoryOutbox, owner *client, email, role string) *client {
	t.Helper()
	owner.get("/team")
	wantRedirect(t, owner.post("/team/invitations", url.Values{"email": {email}, "role": {role}}), "/team")
	var link string
	for _, m := range mem.Messages() {
		if mm := invitationLinkRE.FindStringSubmatch(mailText(t, m.Data)); mm != nil && m.To[0] == email {
			link = mm[1]
		}
	}
	if link == "" {
		t.Fatalf("no invitation mailed to %s", email)
	}
	c := a.client()
	c.get(link)
	wantRedirect(t, c.post(link, url.Values{"name": {strings.Split(email, "@")[0]}, "password": {"member-passphrase-7"}}), "/dashboard")
	return c
}

// TestMemberLoginBasicsPages: a member (a viewer, the least role) resets
// its forgotten password from the login page by the mailed link, which
// ends its sessions only, and turns two-factor login on from its own
// account page, after which its login asks for a code.
func TestMemberLoginBasicsPages(t *testing.T) {
	t.Parallel()
	mem := &delivery.MemoryOutbox{}
	svc := dbtest.Service(t, service.Config{Transport: delivery.NewOutbox(mem), SecretKey: "a-test-secret-key-of-at-least-32-characters"})
	a := newTestAppOn(t, svc, web.Options{})
	owner, _ := a.account("Ann", "ann@example.com")
	bob := joinTeam(t, a, mem, owner, "bob@example.com", "viewer")
	cat := joinTeam(t, a, mem, owner, "cat@example.com", "editor")

	// Forgot your password?, for the member's address.
	c := a.client()
	c.get("/login/forgot")
	r := c.post("/login/forgot", url.Values{"email": {"bob@example.com"}})
	wantStatus(t, r, http.StatusOK)
	msgs := mem.Messages()
	last := msgs[len(msgs)-1]
	m := resetLinkRE.FindStringSubmatch(mailText(t, last.Data))
	if last.To[0] != "bob@example.com" || m == nil {
		t.Fatalf("no link mailed to the member:\n%s", mailText(t, last.Data))
	}
	link := m[1]
	r = c.get(link)
	if text(first(r.doc, "#reset-email")) != "bob@example.com" {
		t.Fatalf("page: %s", pageText(r))
	}
	wantRedirect(t, c.post(link, url.Values{"password": {"bobs-new-passphrase-2"}, "password_confirmation": {"bobs-new-passphrase-2"}}), "/login")
	wantRedirect(t, bob.get("/account"), "/login")      // the member's session ended
	wantStatus(t, owner.get("/account"), http.StatusOK) // the owner's did not
	wantStatus(t, cat.get("/account"), http.StatusOK)   // nor another member's
	wantStatus(t, c.get(link), http.StatusNotFound)     // once
	bob = a.client()
	bob.login("bob@example.com", "bobs-new-passphrase-2")
	wantStatus(t, bob.get("/dashboard"), http.StatusOK)

	// Two-factor login from the member's own account page.
	r = bob.get("/account")
	if !strings.HasPrefix(text(first(r.doc, "#two-factor-state")), "Off.") || first(r.doc, "#two-factor-setup") == nil {
		t.Fatalf("the member's account page has no two-factor card: %s", pageText(r))
	}
	wantRedirect(t, bob.post("/account/2fa/setup", nil), "/account/2fa")
	r = bob.get("/account/2fa")
	wantStatus(t, r, http.StatusOK)
	key := text(first(r.doc, "#totp-key"))
	other := a.client()
	other.login("bob@example.com", "bobs-new-passphrase-2")
	code, _ := totp.GenerateCode(key, time.Now())
	wantRedirect(t, bob.post("/account/2fa/enable", url.Values{"code": {code}}), "/account")
	r = bob.get("/account")
	if !strings.HasPrefix(text(first(r.doc, "#two-factor-state")), "On.") {
		t.Fatalf("card: %s", text(first(r.doc, "#two-factor")))
	}
	wantRedirect(t, other.get("/account"), "/login")    // the member's other session ended
	wantStatus(t, owner.get("/account"), http.StatusOK) // the owner's did not
	if text(first(owner.get("/account").doc, "#two-factor-state")) == text(first(r.doc, "#two-factor-state")) {
		t.Fatal("the member's two-factor login shows on the owner's page")
	}

	// The member's login now asks for its code: a used one and a wrong
	// one are refused, the next one logs it in as the member.
	b := a.client()
	b.get("/login")
	wantRedirect(t, b.post("/login", url.Values{"email": {"bob@example.com"}, "password": {"bobs-new-passphrase-2"}}), "/login/code")
	wantRedirect(t, b.get("/dashboard"), "/login")
	wantStatus(t, b.post("/login/code", url.Values{"code": {code}}), http.StatusUnprocessableEntity)
	bad := []byte(code)
	bad[0] = '0' + (bad[0]-'0'+1)%10
	wantStatus(t, b.post("/login/code", url.Values{"code": {string(bad)}}), http.StatusUnprocessableEntity)
	next, _ := totp.GenerateCode(key, time.Now().Add(30*time.Second))
	wantRedirect(t, b.post("/login/code", url.Values{"code": {next}}), "/dashboard")
	r = b.get("/dashboard")
	wantStatus(t, r, http.StatusOK)
	if got := text(first(r.doc, ".whoami")); !strings.Contains(got, "bob") || !strings.Contains(got, "Viewer") {
		t.Fatalf("logged in as %q, want the member", got)
	}
	// The owner's login still asks for no code.
	o := a.client()
	o.get("/login")
	wantRedirect(t, o.post("/login", url.Values{"email": {"ann@example.com"}, "password": {"test-passphrase-9"}}), "/dashboard")

	// Off with the member's own password.
	wantStatus(t, b.post("/account/2fa/off", url.Values{"current_password": {"test-passphrase-9"}}), http.StatusUnprocessableEntity)
	wantRedirect(t, b.post("/account/2fa/off", url.Values{"current_password": {"bobs-new-passphrase-2"}}), "/account")
	ctx := context.Background()
	if _, mm, err := svc.Accounts.SignIn(ctx, service.LoginInput{Email: "bob@example.com", Password: "bobs-new-passphrase-2"}); err != nil || mm == nil || mm.TwoFactor() {
		t.Fatalf("still on: %v", err)
	}
}
