package web_test

import (
	"context"
	"net/http"
	"net/url"
	"strings"
	"testing"
	"time"

	"herald/dbtest"
	"herald/models"
	"herald/service"
	"herald/web"
)

// browserAccept is what Chromium and Firefox send for a page (and what
// the link scanners of mail gateways that pose as them send).
const browserAccept = "text/html,application/xhtml+xml,application/xml;q=0.9,image/avif,image/webp,*/*;q=0.8"

// verifyApp is the console with the outbox as transport and an account
// holding two senders not yet verified.
func verifyApp(t *testing.T) (*testApp, int64, []*models.Sender) {
	t.Helper()
	return verifyAppOn(t, dbtest.Service(t))
}

// verifyAppOn is verifyApp over svc.
func verifyAppOn(t *testing.T, svc *service.Service) (*testApp, int64, []*models.Sender) {
	t.Helper()
	a := newTestAppOn(t, svc, web.Options{})
	u, _, err := a.svc.Accounts.Create(context.Background(), service.AccountInput{Name: "Ann", Email: "ann@example.com", Password: "test-passphrase-9"})
	if err != nil {
		t.Fatal(err)
	}
	var out []*models.Sender
	for _, email := range []string{"one@shop.example.com", "two@shop.example.com"} {
		s, err := a.svc.Senders.Create(context.Background(), u.ID, service.SenderInput{FromName: "Shop", FromEmail: email,
			ReplyToEmail: "help@shop.example.com", CountryID: "250", CompanyAddress: "1 rue de Rivoli", Nickname: "shop"})
		if err != nil {
			t.Fatal(err)
		}
		out = append(out, s)
	}
	return a, u.ID, out
}

func verified(t *testing.T, a *testApp, acct, id int64) bool {
	t.Helper()
	s, err := a.svc.Senders.Get(context.Background(), acct, id)
	if err != nil {
		t.Fatal(err)
	}
	return s.IsVerified == 1
}

// wantPublicHeaders checks that a page opened from a mail cannot be framed.
func wantPublicHeaders(t *testing.T, r *response) {
	t.Helper()
	if !strings.Contains(r.header.Get("Content-Security-Policy"), "frame-ancestors 'none'") || r.header.Get("X-Frame-Options") != "DENY" {
		t.Fatalf("framing headers: CSP %q, XFO %q", r.header.Get("Content-Security-Policy"), r.header.Get("X-Frame-Options"))
	}
}

// finding 3: a GET of the link verified at once, so a mail gateway that
// fetches links to scan them verified an address nobody confirmed. Now a
// browser's GET shows a button whose POST (no session, no CSRF token: the
// token in the link is the credential) verifies; a program's GET still
// verifies (decisions.md 5).
func TestSenderVerifyLink(t *testing.T) {
	t.Parallel()
	a, acct, ss := verifyApp(t)
	link := "/senders/verify/" + ss[0].VerifyToken
	stranger := a.client() // no session, no cookie

	r := stranger.do("GET", link, nil, false, "Accept", browserAccept)
	wantStatus(t, r, http.StatusOK)
	wantPublicHeaders(t, r)
	form := first(r.doc, `#sender-verify[data-state="confirm"] form[method="post"]`)
	if form == nil || attr(form, "action") != link || first(form, "button#verify-button") == nil ||
		!strings.Contains(text(first(r.doc, "#sender-verify")), "one@shop.example.com") {
		t.Fatalf("confirm page:\n%.3000s", r.body)
	}
	if verified(t, a, acct, ss[0].ID) {
		t.Fatal("a browser's GET verified the sender")
	}
	r = stranger.do("HEAD", link, nil, false)
	if r.status != http.StatusOK || verified(t, a, acct, ss[0].ID) {
		t.Fatalf("HEAD: %d, verified %v", r.status, verified(t, a, acct, ss[0].ID))
	}

	// The button: a POST with no session and no CSRF token.
	r = a.client().do("POST", link, url.Values{}, false, "Accept", browserAccept)
	wantStatus(t, r, http.StatusOK)
	wantPublicHeaders(t, r)
	if first(r.doc, `#sender-verify[data-state="verified"]`) == nil || !verified(t, a, acct, ss[0].ID) {
		t.Fatalf("after the POST:\n%.3000s", r.body)
	}
	// Opened again: it says so, with no button.
	r = stranger.do("GET", link, nil, false, "Accept", browserAccept)
	if r.status != http.StatusOK || first(r.doc, `#sender-verify[data-state="verified"]`) == nil || first(r.doc, "#verify-button") != nil {
		t.Fatalf("verified link again: %d\n%.2000s", r.status, r.body)
	}
	if back := first(r.doc, "a#verify-back"); back == nil || attr(back, "href") != "/senders" {
		t.Fatalf("the verified page has no way on:\n%.2000s", r.body)
	}

	// A program's GET verifies and answers the envelope.
	for _, accept := range []string{"", "*/*", "application/json"} {
		r = stranger.do("GET", "/senders/verify/0123456789abcdef0123456789abcdef", nil, false, "Accept", accept)
		if r.status != http.StatusNotFound || r.body != `{"status":"failed","errors":"Record Not Found"}` {
			t.Fatalf("unknown link, Accept %q: %d %s", accept, r.status, r.body)
		}
	}
	r = stranger.do("GET", "/senders/verify/"+ss[1].VerifyToken, nil, false, "Accept", "*/*")
	if r.status != http.StatusOK || r.body != `{"status":"success","message":"Sender Verified"}` || !verified(t, a, acct, ss[1].ID) {
		t.Fatalf("a program's GET: %d %s", r.status, r.body)
	}
	r = stranger.do("GET", "/senders/verify/0123456789abcdef0123456789abcdef", nil, false, "Accept", browserAccept)
	if r.status != http.StatusNotFound || first(r.doc, `#sender-verify[data-state="unknown"]`) == nil {
		t.Fatalf("unknown link in a browser: %d\n%.2000s", r.status, r.body)
	}
}

// Links expire after 7 days: the page says so and nothing verifies them.
func TestSenderVerifyLinkExpired(t *testing.T) {
	t.Parallel()
	svc, clk := clockedService(t, service.Config{})
	a, acct, ss := verifyAppOn(t, svc)
	clk.Advance(service.VerifyLinkLifetime + time.Minute)
	stranger := a.client()
	link := "/senders/verify/" + ss[0].VerifyToken

	r := stranger.do("GET", link, nil, false, "Accept", browserAccept)
	if r.status != http.StatusNotFound || first(r.doc, `#sender-verify[data-state="expired"]`) == nil || first(r.doc, "#verify-button") != nil {
		t.Fatalf("expired link in a browser: %d\n%.2000s", r.status, r.body)
	}
	wantPublicHeaders(t, r)
	r = stranger.do("POST", link, url.Values{}, false, "Accept", browserAccept)
	if r.status != http.StatusNotFound || first(r.doc, `#sender-verify[data-state="expired"]`) == nil {
		t.Fatalf("POST of an expired link: %d\n%.2000s", r.status, r.body)
	}
	r = stranger.do("GET", link, nil, false)
	if r.status != http.StatusNotFound || r.body != `{"status":"failed","errors":"This verification link has expired."}` {
		t.Fatalf("a program's GET of an expired link: %d %s", r.status, r.body)
	}
	if verified(t, a, acct, ss[0].ID) {
		t.Fatal("an expired link verified the sender")
	}
}
