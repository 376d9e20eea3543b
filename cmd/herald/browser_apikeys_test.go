package main

import (
	"io"
	"net/http"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
)

// TestBrowserAPIKeys: on the account page, make a read-only named key,
// see its secret once, use it with Go's HTTP client against the running
// server (a read works, a change is refused with the envelope), revoke
// it, and see it refused.
func TestBrowserAPIKeys(t *testing.T) {
	t.Parallel()
	b := newBrowserSession(t)
	base := b.base

	b.signUp()
	b.do("open the account page",
		chromedp.Navigate(base+"/account"),
		b.idle,
		chromedp.WaitVisible(chromedp.ID("api-key-form")),
	)
	if n := b.eval("no key yet", `String(document.querySelectorAll("#api-keys-list tbody tr").length)`); n != "0" {
		t.Fatalf("%s keys listed before any was made", n)
	}

	// A refused form comes back with its message beside the field.
	b.do("create without a name",
		chromedp.Click(chromedp.ID("api-key-scope-areas")),
		chromedp.Click(chromedp.ID("api-key-create")),
		chromedp.WaitVisible(chromedp.ID("api-key-name-error")),
		b.idle,
	)
	if got := b.text("name error", "#api-key-name-error"); got != "The name field is required." {
		t.Fatalf("name error %q", got)
	}
	if got := b.text("areas error", "#api-key-areas-error"); got != "Choose at least one area." {
		t.Fatalf("areas error %q", got)
	}
	b.capture("account-api-key-errors")

	b.do("create a read-only key",
		chromedp.SendKeys(chromedp.ID("api-key-name"), "Reports"),
		chromedp.Click(chromedp.ID("api-key-scope-read")),
		chromedp.Click(chromedp.ID("api-key-create")),
		chromedp.WaitVisible(chromedp.ID("new-api-key-secret")),
		b.idle,
	)
	b.capture("account-api-key-new")
	b.do("phone width", chromedp.EmulateViewport(390, 800))
	if w := b.eval("page width on a phone", `String(document.documentElement.scrollWidth)`); w != "390" {
		t.Errorf("the account page is %s px wide at 390 px", w)
	}
	b.do("desktop width", chromedp.EmulateViewport(1280, 900))
	pub := b.eval("public key", `document.getElementById("new-api-key-public").value`)
	sec := b.eval("secret key", `document.getElementById("new-api-key-secret").value`)
	if !strings.HasPrefix(pub, "pkn_") || !strings.HasPrefix(sec, "skn_") {
		t.Fatalf("keys shown: %q %q", pub, sec)
	}
	if got := b.text("listed", "#api-keys-list tbody tr .cell-main"); got != "Reports" {
		t.Fatalf("listed %q", got)
	}
	if got := b.text("scope", `#api-keys-list tbody tr td[data-label="Scope"]`); got != "Read only" {
		t.Fatalf("scope shown %q", got)
	}

	// Shown once: the page again lists the key, never its secret.
	b.do("reload the account page",
		chromedp.Navigate(base+"/account"),
		b.idle,
		chromedp.WaitVisible(chromedp.ID("api-keys-list")),
	)
	if got := b.eval("secret gone", `String(document.getElementById("new-api-key-secret") === null && !document.documentElement.outerHTML.includes(`+jsString(sec)+`))`); got != "true" {
		t.Fatal("the secret is shown again")
	}
	if got := b.text("last used", `#api-keys-list tbody tr td[data-label="Last used"]`); got != "Never" {
		t.Fatalf("last used %q before any use", got)
	}

	call := func(method, path string, body url.Values) (int, string) {
		t.Helper()
		var r io.Reader
		if body != nil {
			r = strings.NewReader(body.Encode())
		}
		req, err := http.NewRequest(method, base+path, r)
		if err != nil {
			t.Fatal(err)
		}
		if body != nil {
			req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
		}
		req.Header.Set("PublicKey", pub)
		req.Header.Set("SecretKey", sec)
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		data, _ := io.ReadAll(resp.Body)
		return resp.StatusCode, string(data)
	}
	if code, body := call("GET", "/api/contacts-type", nil); code != 200 || !strings.Contains(body, `"status":"success"`) {
		t.Fatalf("read with the key: %d %s", code, body)
	}
	if code, body := call("POST", "/api/contacts-type/add", url.Values{"name": {"Leads"}}); code != 401 || body != `{"status":"failed","errors":"This API key may not do that."}` {
		t.Fatalf("change with a read-only key: %d %s", code, body)
	}

	b.do("open the account page again",
		chromedp.Navigate(base+"/account"),
		b.idle,
		chromedp.WaitVisible(chromedp.ID("api-keys-list")),
	)
	if got, today := b.text("last used", `#api-keys-list tbody tr td[data-label="Last used"]`), time.Now().UTC().Format(time.DateOnly); got != today {
		t.Fatalf("last used %q after a use today (%s)", got, today)
	}
	b.do("revoke the key",
		chromedp.Click(chromedp.CSS(`#api-keys-list button[aria-label="Revoke Reports"]`)),
		chromedp.WaitVisible(chromedp.ID("api-keys-notice")),
		b.idle,
	)
	if n := b.eval("key gone", `String(document.querySelectorAll("#api-keys-list tbody tr").length)`); n != "0" {
		t.Fatalf("%s keys listed after the revocation", n)
	}
	b.capture("account-api-key-revoked")
	if code, body := call("GET", "/api/contacts-type", nil); code != 401 || body != `{"status":"failed","errors":"Invalid PublicKey or SecretKey."}` {
		t.Fatalf("revoked key: %d %s", code, body)
	}
}

// jsString quotes s for a JavaScript expression.
func jsString(s string) string {
	return `"` + strings.NewReplacer(`\`, `\\`, `"`, `\"`).Replace(s) + `"`
}
