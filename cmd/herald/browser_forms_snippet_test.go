package main

import (
	"bytes"
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/chromedp/cdproto/cdp"
	"github.com/chromedp/cdproto/emulation"
	"github.com/chromedp/cdproto/network"
	"github.com/chromedp/chromedp"

	"herald/dbtest"
	"herald/delivery"
	"herald/eventually"
	"herald/models"
	"herald/service"
	"herald/smtptest"
)

// siteRequest is one request the other site saw.
type siteRequest struct {
	Path, Referer string
}

// otherSite is a site of the form's owner on another origin than herald's
// (another host name and port): it serves pages holding the snippets and
// the thank-you page a form may redirect to, and notes what it served.
type otherSite struct {
	base string // http://localhost:<port>: cross-site to herald's 127.0.0.1

	mu    sync.Mutex
	pages map[string]string // path → body
	seen  []siteRequest
}

func startOtherSite(t *testing.T) *otherSite {
	t.Helper()
	s := &otherSite{pages: map[string]string{}}
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		s.mu.Lock()
		s.seen = append(s.seen, siteRequest{Path: r.URL.Path, Referer: r.Referer()})
		body, ok := s.pages[r.URL.Path]
		s.mu.Unlock()
		if !ok {
			http.NotFound(w, r)
			return
		}
		w.Header().Set("Content-Type", "text/html; charset=utf-8")
		fmt.Fprint(w, body)
	}))
	t.Cleanup(srv.Close)
	// Chromium resolves localhost to the loopback itself: the site is
	// then another origin and another site than herald's 127.0.0.1.
	s.base = strings.Replace(srv.URL, "127.0.0.1", "localhost", 1)
	return s
}

func (s *otherSite) page(path, title, body string) string {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.pages[path] = `<!doctype html><html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width, initial-scale=1">` +
		`<title>` + title + `</title></head><body><main><h1>` + title + `</h1>` + body + `</main></body></html>`
	return s.base + path
}

func (s *otherSite) served(path string) []siteRequest {
	s.mu.Lock()
	defer s.mu.Unlock()
	var out []siteRequest
	for _, r := range s.seen {
		if r.Path == path {
			out = append(out, r)
		}
	}
	return out
}

// TestBrowserSignupSnippet: the snippet the console shows, pasted into a
// page of a site on another origin, takes a person's sign-up by a plain
// HTML post (no script, no CSRF token, no CORS preflight): herald answers
// with its own page, or sends the person to the form's redirect address
// on the site; a script of the site may post it too and read the JSON
// answer. The confirmation mail reaches an SMTP sink through herald's
// SMTP; a link scanner's GET and a HEAD of the link confirm nothing; the
// person opening the link in the browser is confirmed (through the
// Confirm button when the click came as soon as a gateway's scan would).
func TestBrowserSignupSnippet(t *testing.T) {
	t.Parallel()
	if findChromium() == "" {
		dbtest.SkipOrFail(t, "chromium not found: install Debian's chromium to run browser tests")
	}
	dsn := dbtest.DSN(t)
	sink := smtptest.Start(t)
	base := startConsoleServerOn(t, dsn, map[string]string{"HERALD_SMTP_URL": sink.URL()})
	site := startOtherSite(t)
	b := newBrowserSessionOn(t, base)
	b.signUp()
	svc, db, acct := ownerService(t, dsn, service.Config{BaseURL: base, SystemFrom: "no-reply@localhost"})
	ctx := context.Background()
	ct, err := svc.ContactTypes.Create(ctx, acct.ID, "Readers")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := svc.Fields.Create(ctx, acct.ID, service.FieldInput{FieldName: "company", FieldType: "text"}); err != nil {
		t.Fatal(err)
	}
	g, err := svc.Groups.Create(ctx, acct.ID, service.GroupInput{GroupName: "Product news", Description: "New features, once a month", IsDisplay: "1"})
	if err != nil {
		t.Fatal(err)
	}
	thanks := site.page("/thanks", "Thank you", "<p>Look for our email.</p>")
	plain, err := svc.Forms.Save(ctx, acct.ID, service.FormInput{Name: "The Weekly Herald", ContactTypeID: strconv.FormatInt(ct.ID, 10),
		Fields: []string{"company"}, GroupIDs: []string{strconv.FormatInt(g.ID, 10)}})
	if err != nil {
		t.Fatal(err)
	}
	redirecting, err := svc.Forms.Save(ctx, acct.ID, service.FormInput{Name: "Release notes", ContactTypeID: strconv.FormatInt(ct.ID, 10),
		RedirectURL: thanks})
	if err != nil {
		t.Fatal(err)
	}

	// The owner copies each form's snippet from the console and pastes it
	// into a page of the site.
	embed := func(fm *models.Form) string {
		t.Helper()
		where := "the console's page of " + fm.Name
		b.do("open "+where, chromedp.EmulateViewport(1280, 900), chromedp.Navigate(base+"/forms/"+strconv.FormatInt(fm.ID, 10)), b.idle,
			chromedp.WaitVisible(chromedp.ID("form-snippet")))
		snippet := b.eval(where, `document.getElementById("form-snippet").textContent`)
		if !strings.Contains(snippet, `action="`+base+`/f/`+fm.PublicID+`"`) || strings.Contains(snippet, "_csrf") || strings.Contains(snippet, `name="ts"`) {
			t.Fatalf("%s: snippet %s", where, snippet)
		}
		return site.page("/join-"+fm.PublicID, "Join "+fm.Name, snippet)
	}
	plainPage, redirectingPage := embed(plain), embed(redirecting)

	// From here on the browser is a person's phone, with no session at
	// herald: the snippet's post must carry all it needs.
	if _, err := chromedp.Call(b.ctx, emulation.SetUserAgentOverride, emulation.SetUserAgentOverrideParams{UserAgent: phoneUA}); err != nil {
		t.Fatal(err)
	}
	b.do("forget the console's session", chromedp.Navigate("about:blank"))
	if _, err := chromedp.Call(b.ctx, network.ClearBrowserCookies, cdp.Empty{}); err != nil {
		t.Fatal(err)
	}
	signUp := func(page, email string) {
		t.Helper()
		b.do("fill the snippet for "+email, chromedp.EmulateViewport(390, 900), chromedp.Navigate(page),
			chromedp.WaitVisible(chromedp.CSS(`input[name="email"]`)),
			chromedp.SendKeys(chromedp.CSS(`input[name="email"]`), email),
			chromedp.SendKeys(chromedp.CSS(`input[name="first_name"]`), "Ann"))
		if origin := b.eval("the site's origin", `location.origin`); origin != site.base {
			t.Fatalf("the snippet's page is on %s, want %s", origin, site.base)
		}
		b.do("send the snippet for "+email, chromedp.Click(chromedp.CSS(`button[type="submit"]`)))
	}

	// Without a redirect address herald answers with its own page.
	signUp(plainPage, "ann@example.com")
	b.do("herald's answer", chromedp.WaitVisible(chromedp.CSS(`[role="status"]`)))
	if got := b.text("herald's answer", `[role="status"]`); got != "Check your inbox to confirm." {
		t.Fatalf("answer %q", got)
	}
	if loc := b.eval("herald's answer", `location.href`); loc != base+"/f/"+plain.PublicID {
		t.Fatalf("the answer is at %s", loc)
	}
	if w := b.eval("herald's answer", `String(document.documentElement.scrollWidth)`); w != "390" {
		t.Errorf("herald's answer is %s px wide at 390 px", w)
	}
	for _, v := range b.axeCheck("herald's answer to the snippet") {
		t.Errorf("herald's answer: %s", v)
	}

	// With one, the person lands on the site's thank-you page.
	signUp(redirectingPage, "bob@example.com")
	b.do("the site's thank-you page", chromedp.WaitVisible(chromedp.CSS("h1")))
	eventually.True(t, 10*time.Second, "the thank-you page", func() bool {
		return b.eval("the thank-you page", `location.href`) == thanks
	})
	if got := b.text("the thank-you page", "h1"); got != "Thank you" {
		t.Fatalf("landed on %q", got)
	}
	if got := site.served("/thanks"); len(got) != 1 || got[0].Referer != "" {
		t.Fatalf("the thank-you page was served %+v (herald's answers send no referrer)", got)
	}

	// A site that posts the snippet's form from its own script, asking for
	// JSON, reads herald's answer: a simple cross-origin request (no
	// preflight), answered to any origin since it carries no cookie.
	b.do("open the snippet's page again", chromedp.Navigate(plainPage), chromedp.WaitVisible(chromedp.CSS(`input[name="email"]`)))
	fctx, cancel := context.WithTimeout(b.ctx, 30*time.Second)
	answer, err := chromedp.Run(fctx, chromedp.Evaluate[string](
		`fetch(document.querySelector("form").action, {method: "POST", headers: {Accept: "application/json"}, body: new URLSearchParams({email: "cy@example.com", first_name: "Ann", website: ""})})`+
			`.then(async r => r.status + " " + (await r.json()).message)`,
		chromedp.EvalAwaitPromise))
	cancel()
	if err != nil || answer != "200 Check your inbox to confirm." {
		t.Fatalf("the site's script: %q %v", answer, err)
	}

	// The sign-ups are stored as the snippet's: unconfirmed, from a
	// person's browser, with the form's consent text.
	contact := func(email string) models.Contact {
		t.Helper()
		var c models.Contact
		if err := db.R.Where("user_id = ? AND email = ?", acct.ID, email).First(&c).Error; err != nil {
			t.Fatalf("contact %s: %v", email, err)
		}
		return c
	}
	for email, fm := range map[string]*models.Form{"ann@example.com": plain, "bob@example.com": redirecting, "cy@example.com": plain} {
		c := contact(email)
		if c.Status != models.ContactUnconfirmed || c.FirstName != "Ann" || c.Consent.Source != models.ConsentForm || c.Consent.FormID != fm.ID ||
			c.Consent.UserAgent != phoneUA || c.Consent.Text != service.ConsentText(service.FormPageLocale(fm, ""), fm) {
			t.Fatalf("contact %+v", c)
		}
	}

	// The mails, and their links.
	eventually.True(t, 10*time.Second, "three confirmation mails", func() bool { return sink.Count() >= 3 })
	links := map[string]string{}
	sent := map[string]time.Time{}
	linkRE := regexp.MustCompile(regexp.QuoteMeta(base) + `/c/[A-Za-z0-9_-]+`)
	for _, msg := range sink.Messages() {
		m := linkRE.Find(bytes.ReplaceAll(msg.Data, []byte("=\r\n"), nil))
		if m == nil {
			t.Fatalf("mail to %s without a link: %s", msg.To, msg.Data)
		}
		links[msg.To], sent[msg.To] = string(m), msg.At
	}
	if len(links) != 3 || links["ann@example.com"] == "" || links["bob@example.com"] == "" || links["cy@example.com"] == "" {
		t.Fatalf("mails to %v", links)
	}

	// A link scanner's GET (an agent herald's machine rules name) and a
	// HEAD confirm nothing.
	scanners := []struct{ method, ua string }{
		{"GET", "Mozilla/5.0 (compatible; Barracuda Sentinel link protection)"},
		{"GET", "Mozilla/5.0 (Windows NT 10.0; Win64; x64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/126.0 Safari/537.36 Mimecast"},
		{"HEAD", phoneUA},
	}
	scan := func(email string) {
		t.Helper()
		for _, r := range scanners {
			if got := (&delivery.MachineRules{}).Classify(delivery.Hit{Method: r.method, UserAgent: r.ua, Click: true}); got == delivery.Human {
				t.Fatalf("herald's machine rules take %s %q for a person", r.method, r.ua)
			}
			req, _ := http.NewRequest(r.method, links[email], nil)
			req.Header.Set("User-Agent", r.ua)
			resp, err := http.DefaultClient.Do(req)
			if err != nil {
				t.Fatal(err)
			}
			resp.Body.Close()
			if resp.StatusCode != http.StatusOK {
				t.Fatalf("%s %s: %d", r.method, r.ua, resp.StatusCode)
			}
		}
		if c := contact(email); c.Status != models.ContactUnconfirmed {
			t.Fatalf("a machine confirmed %s: %+v", email, c)
		}
	}
	scan("bob@example.com")

	// Bob opens his link at once: as soon after the mail as a gateway's
	// scan, herald asks, and his press of Confirm confirms.
	b.do("open Bob's link", chromedp.Navigate(links["bob@example.com"]), chromedp.WaitVisible(chromedp.CSS("h1")))
	if b.eval("Bob's link", `String(!!document.querySelector('main form button[type="submit"]'))`) == "true" {
		b.do("press Confirm", chromedp.Click(chromedp.CSS(`main form button[type="submit"]`)), chromedp.WaitNotPresent(chromedp.CSS(`main form button[type="submit"]`)))
	}
	if got := b.text("Bob confirmed", "h1"); got != "You are subscribed" {
		t.Fatalf("Bob's confirmation page %q", got)
	}
	if c := contact("bob@example.com"); c.Status != models.ContactConfirmed || c.Consent.ConfirmedAt == nil {
		t.Fatalf("Bob not confirmed: %+v", c)
	}

	// Ann opens hers later (past the 10 s in which herald takes a click
	// for a gateway's scan): one click confirms.
	// Past that window only the agent and the method tell a scanner: they
	// still confirm nothing.
	time.Sleep(time.Until(sent["ann@example.com"].Add(delivery.ScannerWindow + 500*time.Millisecond)))
	scan("ann@example.com")
	b.do("open Ann's link", chromedp.Navigate(links["ann@example.com"]), chromedp.WaitVisible(chromedp.CSS("h1")))
	if got := b.text("Ann confirmed", "h1"); got != "You are subscribed" {
		t.Fatalf("Ann's confirmation page %q", got)
	}
	for _, v := range b.axeCheck("the confirmation page") {
		t.Errorf("the confirmation page: %s", v)
	}
	if c := contact("ann@example.com"); c.Status != models.ContactConfirmed || c.Consent.ConfirmedAt == nil {
		t.Fatalf("Ann not confirmed: %+v", c)
	}
}
