package web_test

import (
	"net/http"
	"net/url"
	"regexp"
	"strings"
	"testing"

	"herald/web"
)

var invitationLinkRE = regexp.MustCompile(`http://localhost:8080(/invitations/[A-Za-z0-9_-]+)`)

// TestTeamRoles walks the team through the console: the owner invites an
// editor by mail; the editor accepts (choosing a password), logs in with
// it and acts on the owner's account; the console refuses what an editor
// may not do (403 with the reason) and lets through what it may; a role
// change and a removal take effect on the next request; the audit log
// (owner only) tells who did what.
func TestTeamRoles(t *testing.T) {
	t.Parallel()
	a, mem := newMailboxApp(t, web.Options{})
	owner, _ := a.account("Ada", "ada@example.com")

	wantStatus(t, owner.get("/team"), http.StatusOK)
	r := owner.post("/team/invitations", url.Values{"email": {"not an address"}, "role": {"editor"}})
	wantStatus(t, r, http.StatusUnprocessableEntity)
	wantRedirect(t, owner.post("/team/invitations", url.Values{"email": {"bob@example.com"}, "role": {"editor"}}), "/team")
	r = owner.get("/team")
	if got := text(first(r.doc, "#invitations")); !strings.Contains(got, "bob@example.com") || !strings.Contains(got, "Editor") {
		t.Fatalf("pending invitations: %q", got)
	}
	var link string
	for _, m := range mem.Messages() {
		body := mailText(t, m.Data)
		if mm := invitationLinkRE.FindStringSubmatch(body); mm != nil {
			link = mm[1]
		}
	}
	if link == "" {
		t.Fatal("no invitation link mailed")
	}

	// Bob accepts in his own browser and is logged in on Ada's account.
	bob := a.client()
	r = bob.get(link)
	wantStatus(t, r, http.StatusOK)
	if !strings.Contains(pageText(r), "Join Ada") {
		t.Fatalf("invitation page: %q", pageText(r))
	}
	wantStatus(t, bob.post(link, url.Values{"name": {"Bob"}, "password": {"short"}}), http.StatusUnprocessableEntity)
	wantRedirect(t, bob.post(link, url.Values{"name": {"Bob"}, "password": {"bobs-passphrase-1"}}), "/dashboard")
	wantStatus(t, a.client().get(link), http.StatusNotFound) // used

	// He logs in again with his own password.
	bob.post("/logout", nil)
	bob.login("bob@example.com", "bobs-passphrase-1")
	r = bob.get("/dashboard")
	wantStatus(t, r, http.StatusOK)
	if got := text(first(r.doc, ".whoami")); !strings.Contains(got, "Bob") || !strings.Contains(got, "Editor") {
		t.Fatalf("whoami: %q", got)
	}
	if first(r.doc, `a[href="/team"]`) != nil {
		t.Fatal("an editor sees the Team entry")
	}

	// What an editor may do, and may not.
	wantRedirect(t, bob.post("/contacts/types", url.Values{"name": {"Newsletter"}}), "")
	r = bob.get("/single-sends/new")
	wantStatus(t, r, http.StatusOK)
	if !strings.Contains(text(first(r.doc, "#send-role-note")), "Your role (Editor) may not start") {
		t.Fatal("the compose form does not tell the editor it cannot send")
	}
	if first(owner.get("/single-sends/new").doc, "#send-role-note") != nil {
		t.Fatal("the owner is told it cannot send")
	}
	r = bob.post("/single-sends", url.Values{"single_send_name": {"Spring"}})
	wantStatus(t, r, http.StatusForbidden)
	if !strings.Contains(pageText(r), "Your role (Editor) may not start, schedule or delete sends") {
		t.Fatalf("refusal: %q", pageText(r))
	}
	// htmx gets the reason in the flash area.
	r = bob.hxPost("/single-sends", url.Values{"single_send_name": {"Spring"}})
	if r.status != http.StatusForbidden || r.header.Get("HX-Retarget") != "#flash" || !strings.Contains(r.body, "Editor") {
		t.Fatalf("htmx refusal: %d %q", r.status, r.body)
	}
	for _, path := range []string{"/team", "/audit-log", "/account/keys"} {
		wantStatus(t, bob.get(path), http.StatusForbidden)
	}
	wantStatus(t, bob.post("/account/keys", nil), http.StatusForbidden)
	wantStatus(t, bob.post("/team/invitations", url.Values{"email": {"eve@example.com"}, "role": {"admin"}}), http.StatusForbidden)

	// Made viewer: refused at once.
	rows := all(owner.get("/team").doc, "#members tbody tr")
	if len(rows) != 2 {
		t.Fatalf("%d member rows, want the owner and Bob", len(rows))
	}
	id := strings.TrimPrefix(attr(rows[1], "id"), "member-")
	wantRedirect(t, owner.post("/team/members/"+id+"/role", url.Values{"role": {"viewer"}}), "/team")
	wantStatus(t, bob.post("/contacts/types", url.Values{"name": {"Other"}}), http.StatusForbidden)
	wantStatus(t, bob.get("/contacts"), http.StatusOK)

	// The owner's audit log tells it.
	r = owner.get("/audit-log")
	wantStatus(t, r, http.StatusOK)
	log := text(first(r.doc, "#audit-log"))
	for _, want := range []string{"Invited a member", "bob@example.com", "Joined the team", "Was refused: start, schedule or delete sends", "POST /single-sends", "Bob <bob@example.com>", "Changed a member's role", "Editor → Viewer"} {
		if !strings.Contains(log, want) {
			t.Errorf("audit log lacks %q:\n%s", want, log)
		}
	}

	// Removed: logged out at once.
	wantRedirect(t, owner.post("/team/members/"+id+"/delete", nil), "/team")
	wantRedirect(t, bob.get("/contacts"), "/login")
	r = a.client().post("/login", url.Values{"email": {"bob@example.com"}, "password": {"bobs-passphrase-1"}})
	if r.status == http.StatusSeeOther {
		t.Fatal("a removed member logs in")
	}
}
