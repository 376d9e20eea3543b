package web_test

import (
	"fmt"
	"net/http"
	"net/netip"
	"net/url"
	"strconv"
	"strings"
	"testing"
	"time"

	"herald/dbtest"
	"herald/service"
	"herald/web"
)

// behindProxy is the console behind a trusted reverse proxy: app.Test's
// peer is 0.0.0.0, so X-Forwarded-For names the client.
func behindProxy(t *testing.T, perMinute int) *testApp {
	t.Helper()
	return behindProxyOn(t, dbtest.Service(t), perMinute)
}

// behindProxyOn is behindProxy over svc.
func behindProxyOn(t *testing.T, svc *service.Service, perMinute int) *testApp {
	t.Helper()
	proxies, err := web.ParseTrustedProxies("0.0.0.0, 10.0.0.0/8")
	if err != nil {
		t.Fatal(err)
	}
	return newTestAppOn(t, svc, web.Options{TrustedProxies: proxies, AuthPerMinute: perMinute})
}

// loginFrom posts the login form from the client address ip (through
// the proxy).
func (c *client) loginFrom(ip, email, password string) *response {
	c.t.Helper()
	c.get("/login")
	form := url.Values{"email": {email}, "password": {password}, "_csrf": {c.csrf}}
	return c.do("POST", "/login", form, false, "X-Forwarded-For", ip)
}

func accountInput(email string) service.AccountInput {
	return service.AccountInput{Name: "Ada", Email: email, Password: "test-passphrase-9"}
}

func retryAfter(t *testing.T, r *response) time.Duration {
	t.Helper()
	n, err := strconv.Atoi(r.header.Get("Retry-After"))
	if err != nil {
		t.Fatalf("429 without Retry-After: %q", r.header.Get("Retry-After"))
	}
	return time.Duration(n) * time.Second
}

// An attacker failing against the owner's address, from as many IPs as
// it likes, slows the address down to one try a minute, never more: the
// owner gets in after that minute at most, and at once from a browser
// that logged in to the address before.
func TestLoginDelaysNeverLockOwnerOut(t *testing.T) {
	t.Parallel()
	svc, clk := clockedService(t, service.Config{})
	a := behindProxyOn(t, svc, 100000)
	a.svc.Accounts.Create(t.Context(), accountInput("ada@example.com"))
	usual := a.client() // the owner's usual browser
	if r := usual.loginFrom("198.51.100.2", "ada@example.com", "test-passphrase-9"); r.status != http.StatusSeeOther {
		t.Fatalf("owner's login: %d", r.status)
	}
	usual.get("/dashboard")
	usual.post("/logout", nil)

	attack := func(n int) {
		attacker := a.client()
		var longest time.Duration
		for i := 0; i < n; {
			r := attacker.loginFrom(fmt.Sprintf("203.0.113.%d", i%250+1), "ada@example.com", "guess-"+strconv.Itoa(i))
			switch r.status {
			case http.StatusUnprocessableEntity:
				i++
			case http.StatusTooManyRequests:
				d := retryAfter(t, r)
				longest = max(longest, d)
				clk.Advance(d)
			default:
				t.Fatalf("attempt %d: %d", i, r.status)
			}
		}
		if longest != time.Minute {
			t.Fatalf("longest delay of the address %v, want the 1 minute cap", longest)
		}
	}
	attack(30)

	// A new browser of the owner, from home: refused for at most a minute…
	owner := a.client()
	r := owner.loginFrom("198.51.100.2", "ada@example.com", "test-passphrase-9")
	wantStatus(t, r, http.StatusTooManyRequests)
	if d := retryAfter(t, r); d <= 0 || d > time.Minute {
		t.Fatalf("owner told to wait %v", d)
	}
	if got := text(first(r.doc, ".alert-error")); !strings.HasPrefix(got, "Too many failed logins. Try again in ") {
		t.Fatalf("alert = %q", got)
	}
	// …then the right password works.
	clk.Advance(time.Minute)
	wantRedirect(t, owner.loginFrom("198.51.100.2", "ada@example.com", "test-passphrase-9"), "/dashboard")

	// The browser that logged in before is not held back at all.
	attack(30)
	wantStatus(t, a.client().loginFrom("198.51.100.3", "ada@example.com", "test-passphrase-9"), http.StatusTooManyRequests)
	wantRedirect(t, usual.loginFrom("198.51.100.2", "ada@example.com", "test-passphrase-9"), "/dashboard")
}

// One client IP failing against many addresses is slowed down with
// growing delays; other IPs are not.
func TestLoginDelaysPerIP(t *testing.T) {
	t.Parallel()
	svc, clk := clockedService(t, service.Config{})
	a := behindProxyOn(t, svc, 100000)
	a.svc.Accounts.Create(t.Context(), accountInput("ada@example.com"))
	c := a.client()
	for i := range 10 { // free
		wantStatus(t, c.loginFrom("203.0.113.9", fmt.Sprintf("user%d@example.com", i), "wrong-password"), http.StatusUnprocessableEntity)
	}
	var delays []time.Duration
	for i := 10; i < 15; i++ {
		wantStatus(t, c.loginFrom("203.0.113.9", fmt.Sprintf("user%d@example.com", i), "wrong-password"), http.StatusUnprocessableEntity)
		// Refused now, even with the right password of another address.
		r := c.loginFrom("203.0.113.9", "ada@example.com", "test-passphrase-9")
		wantStatus(t, r, http.StatusTooManyRequests)
		d := retryAfter(t, r)
		delays = append(delays, d)
		// Another client is not slowed down.
		wantStatus(t, a.client().loginFrom("203.0.113.200", "nobody@example.com", "wrong-password"), http.StatusUnprocessableEntity)
		clk.Advance(d)
	}
	want := []time.Duration{time.Second, 2 * time.Second, 4 * time.Second, 8 * time.Second, 16 * time.Second}
	if fmt.Sprint(delays) != fmt.Sprint(want) {
		t.Fatalf("delays %v, want %v", delays, want)
	}
	// Once the delay has passed, the right password works from that IP.
	wantRedirect(t, c.loginFrom("203.0.113.9", "ada@example.com", "test-passphrase-9"), "/dashboard")
}

// X-Forwarded-For is believed only from a trusted proxy, and then the
// client is its right-most address that is not a trusted proxy.
func TestClientIPFromForwardedFor(t *testing.T) {
	t.Parallel()
	t.Run("untrusted peer: ignored", func(t *testing.T) {
		a := newTestApp(t, web.Options{AuthPerMinute: 3})
		for i := range 3 {
			c := a.client()
			r := c.loginFrom(fmt.Sprintf("198.51.100.%d", i+1), "nobody@example.com", "wrong-password")
			wantStatus(t, r, http.StatusUnprocessableEntity)
		}
		// A fourth "address" is still the same peer.
		wantStatus(t, a.client().loginFrom("198.51.100.99", "nobody@example.com", "wrong-password"), http.StatusTooManyRequests)
	})
	t.Run("trusted peer: right-most untrusted address", func(t *testing.T) {
		a := behindProxy(t, 3)
		for i := range 3 {
			// The left part is what the client wrote: forged, and ignored.
			xff := fmt.Sprintf("192.0.2.%d, 203.0.113.9, 10.0.0.5", i+1)
			wantStatus(t, a.client().loginFrom(xff, "nobody@example.com", "wrong-password"), http.StatusUnprocessableEntity)
		}
		wantStatus(t, a.client().loginFrom("192.0.2.77, 203.0.113.9, 10.0.0.5", "nobody@example.com", "wrong-password"), http.StatusTooManyRequests)
		// Another client behind the same proxies is not limited.
		wantStatus(t, a.client().loginFrom("203.0.113.10, 10.0.0.5", "nobody@example.com", "wrong-password"), http.StatusUnprocessableEntity)
	})
}

func TestParseTrustedProxies(t *testing.T) {
	t.Parallel()
	got, err := web.ParseTrustedProxies(" 10.0.0.1, 192.168.0.0/16,2001:db8::/32 ,::ffff:172.16.0.1")
	want := []netip.Prefix{
		netip.MustParsePrefix("10.0.0.1/32"), netip.MustParsePrefix("192.168.0.0/16"),
		netip.MustParsePrefix("2001:db8::/32"), netip.MustParsePrefix("172.16.0.1/32"),
	}
	if err != nil || fmt.Sprint(got) != fmt.Sprint(want) {
		t.Fatalf("got %v %v", got, err)
	}
	if got, err := web.ParseTrustedProxies(""); err != nil || len(got) != 0 {
		t.Fatalf("empty: %v %v", got, err)
	}
	for _, bad := range []string{"10.0.0", "example.com", "10.0.0.0/33"} {
		if _, err := web.ParseTrustedProxies(bad); err == nil {
			t.Errorf("accepted %q", bad)
		}
	}
}
