package main

import (
	"fmt"
	"net/http"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"herald/dbtest"
	"herald/delivery"
	"herald/eventually"
	"herald/service"
	"herald/smtptest"
)

// TestBrowserRelays: with HERALD_SMTP_URL naming three relays, the
// console's Relays page shows each one: the relay that refused
// connections paused with its failure, the others up, a relay's use of
// its daily quota as every process counts it (rows another process wrote
// in relay_rates) and its last hour. The page is axe clean at 1280 and
// 390 px and scrolls no sideways.
func TestBrowserRelays(t *testing.T) {
	t.Parallel()
	if findChromium() == "" {
		dbtest.SkipOrFail(t, "chromium not found: install Debian's chromium to run browser tests")
	}
	dsn := dbtest.DSN(t)
	main, shop, gone := smtptest.Start(t), smtptest.Start(t), smtptest.Start(t)
	gone.Close() // refuses connections from now on
	smtpURL := gone.URL() + "&name=gone&weight=50 " + main.URL() + "&name=main&rate=14/s,2000/d " +
		shop.URL() + "&name=shop&from_domains=shop.example|deals.example"
	base := startConsoleServerOn(t, dsn, map[string]string{"HERALD_SMTP_URL": smtpURL})
	b := newBrowserSessionOn(t, base)
	b.signUp()
	pub := b.eval("public key", `document.getElementById("public-key").value`)
	secret := b.eval("secret key", `document.getElementById("secret-key").value`)

	// A sender's verification mail: the heaviest relay refuses it, the
	// next takes it.
	body := url.Values{"from_name": {"Acme News"}, "from_email": {"news@acme.example.com"}, "reply_to_email": {"reply@acme.example.com"},
		"country_id": {"840"}, "company_address": {"1 Main St"}, "nickname": {"news"}, "zip_code": {"90001"}}
	req, _ := http.NewRequest("POST", base+"/api/sender/save", strings.NewReader(body.Encode()))
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	req.Header.Set("PublicKey", pub)
	req.Header.Set("SecretKey", secret)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("create a sender: %d", resp.StatusCode)
	}
	eventually.True(t, 20*time.Second, "the verification mail reached the main relay", func() bool { return main.Count() == 1 })

	// Another process's counts of the main relay today.
	_, db, _ := ownerService(t, dsn, service.Config{BaseURL: base, SystemFrom: "no-reply@localhost"})
	now := time.Now()
	if err := db.W.Exec("UPDATE relay_rates SET count = count + 1499 WHERE relay = 'main' AND per = 86400 AND start = ?",
		delivery.WindowStart(now, 24*time.Hour).Unix()).Error; err != nil {
		t.Fatal(err)
	}

	for _, width := range []int64{1280, 390} {
		where := fmt.Sprintf("/relays at %d px", width)
		b.do("open "+where, chromedp.EmulateViewport(width, 900), chromedp.Navigate(base+"/relays"), b.idle, chromedp.WaitVisible(chromedp.CSS("#main")))
		if w := b.eval(where, `String(document.documentElement.scrollWidth)`); w != fmt.Sprint(width) {
			t.Errorf("%s is %s px wide: it scrolls sideways", where, w)
		}
		for _, v := range b.axeCheck(where) {
			t.Errorf("%s: %s", where, v)
		}
	}
	state := func(name string) string { return b.text("state of "+name, "#relay-"+name+` td[data-label="State"]`) }
	if s := state("gone"); !strings.Contains(s, "Paused") || !strings.Contains(s, "connection refused") {
		t.Errorf("gone: %q", s)
	}
	if s := state("main"); !strings.HasPrefix(s, "Up") {
		t.Errorf("main: %q", s)
	}
	if s := b.text("main today", "#relay-main .relay-today"); s != "1500 of 2000 (75%)" {
		t.Errorf("main today: %q", s)
	}
	if s := b.text("main last hour", "#relay-main .relay-hour"); s != "1" {
		t.Errorf("main last hour: %q", s)
	}
	if s := b.text("shop carries", "#relay-shop"); !strings.Contains(s, "Mail from shop.example, deals.example") {
		t.Errorf("shop: %q", s)
	}
	if s := b.eval("nav", `(document.querySelector('nav.nav a[href="/relays"]') || {}).textContent || ""`); !strings.Contains(s, "Relays") {
		t.Errorf("the navigation lacks Relays: %q", s)
	}
}
