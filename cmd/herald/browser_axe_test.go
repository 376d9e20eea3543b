package main

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
)

// axeScript is axe-core (MPL-2.0, testdata/axe-core-4.14.1/LICENSE),
// vendored for the tests only: the console never serves it.
const axeScript = "testdata/axe-core-4.14.1/axe.min.js"

// axeViolation is one rule axe-core found broken on a page.
type axeViolation struct {
	ID     string `json:"id"`
	Impact string `json:"impact"`
	Help   string `json:"help"`
	Nodes  []struct {
		Target  []any  `json:"target"`
		Summary string `json:"failureSummary"`
	} `json:"nodes"`
}

// axeCheck runs axe-core on the page the session shows and returns its
// serious and critical violations, one line each.
func (b *browserSession) axeCheck(step string) []string {
	b.t.Helper()
	src, err := os.ReadFile(axeScript)
	if err != nil {
		b.t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(b.ctx, 60*time.Second)
	defer cancel()
	// Injected through the DevTools protocol, so the page's own
	// Content-Security-Policy (script-src 'self') does not apply to it.
	// Animations and transitions finished first: a flash message fading in
	// is measured at its final colours, not halfway.
	// A polling list (the exports page every second) is held still while
	// axe reads the page: htmx requests are cancelled until it is done, and
	// one already on its way is let finish its swap, so no row is measured
	// at the half opacity of .htmx-swapping.
	if _, err := chromedp.Run(ctx, chromedp.Evaluate[chromedp.Void](`
		window.__axeHold = e => e.preventDefault();
		document.addEventListener("htmx:beforeRequest", window.__axeHold);
		new Promise(done => {
			const still = () => !document.querySelector(".htmx-request, .htmx-swapping, .htmx-settling");
			const wait = n => still() || n <= 0 ? done() : setTimeout(() => wait(n - 1), 50);
			wait(200);
		})`, chromedp.EvalAwaitPromise)); err != nil {
		b.t.Fatalf("%s: hold htmx: %v", step, err)
	}
	defer chromedp.Run(b.ctx, chromedp.Evaluate[chromedp.Void](`document.removeEventListener("htmx:beforeRequest", window.__axeHold)`))
	if _, err := chromedp.Run(ctx, chromedp.Evaluate[chromedp.Void](`document.getAnimations().forEach(a => { try { a.finish() } catch (e) {} })`)); err != nil {
		b.t.Fatalf("%s: finish animations: %v", step, err)
	}
	if _, err := chromedp.Run(ctx, chromedp.Evaluate[chromedp.Void](string(src))); err != nil {
		b.t.Fatalf("%s: inject axe-core: %v", step, err)
	}
	out, err := chromedp.Run(ctx, chromedp.Evaluate[string](
		`axe.run(document, {resultTypes: ["violations"]}).then(r => JSON.stringify(r.violations))`,
		chromedp.EvalAwaitPromise))
	if err != nil {
		b.t.Fatalf("%s: run axe-core: %v", step, err)
	}
	var vs []axeViolation
	if err := json.Unmarshal([]byte(out), &vs); err != nil {
		b.t.Fatalf("%s: axe-core's answer: %v", step, err)
	}
	var bad []string
	for _, v := range vs {
		if v.Impact != "serious" && v.Impact != "critical" {
			continue
		}
		var targets []string
		for i, n := range v.Nodes {
			if i == 3 {
				targets = append(targets, fmt.Sprintf("… %d more", len(v.Nodes)-3))
				break
			}
			targets = append(targets, fmt.Sprint(n.Target...)+" ("+strings.ReplaceAll(n.Summary, "\n", " ")+")")
		}
		bad = append(bad, fmt.Sprintf("%s (%s): %s at %s", v.ID, v.Impact, v.Help, strings.Join(targets, ", ")))
	}
	return bad
}

// TestBrowserAccessibility opens every console page that needs no record
// (and the pages before login) at phone and desktop widths and runs
// axe-core on each: no serious or critical violation may stand.
func TestBrowserAccessibility(t *testing.T) {
	t.Parallel()
	b := newBrowserSession(t)
	base := b.base
	check := func(path string) {
		t.Helper()
		for _, width := range []int64{390, 1280} {
			b.do("open "+path, chromedp.EmulateViewport(width, 900), chromedp.Navigate(base+path), b.idle, chromedp.WaitVisible(chromedp.CSS("main")))
			for _, v := range b.axeCheck(path) {
				t.Errorf("%s at %d px: %s", path, width, v)
			}
			if p := b.sideways(width); p != "" {
				t.Errorf("%s at %d px: %s", path, width, p)
			}
		}
	}
	for _, path := range []string{"/login", "/signup"} {
		check(path)
	}
	b.do("sign up",
		chromedp.EmulateViewport(1280, 900),
		chromedp.Navigate(base+"/signup"),
		b.idle,
		chromedp.SendKeys(chromedp.ID("signup-name"), "Ada Lovelace"),
		chromedp.SendKeys(chromedp.ID("signup-email"), "ada@example.com"),
		chromedp.SendKeys(chromedp.ID("signup-password"), "correct horse battery"),
		chromedp.Click(chromedp.CSS(`#signup-form button[type="submit"]`)),
		chromedp.WaitVisible(chromedp.ID("secret-key")),
	)
	for _, path := range []string{
		"/dashboard", "/account",
		"/suppressions/global", "/suppressions/groups", "/suppressions/bounced", "/suppressions/reports", "/suppressions/setup", "/suppressions/lifted",
		"/contacts", "/contacts/types", "/contacts/fields", "/contacts/import",
		"/segments", "/exports", "/senders", "/senders/new", "/outbox", "/templates",
		"/single-sends", "/single-sends/new", "/single-sends/calendar", "/automations", "/notifications", "/event-webhooks",
		"/team", "/audit-log",
	} {
		check(path)
	}
}

// sideways says what makes the page scroll sideways at width: the page
// wider than the window, and the widest elements that stick out of it
// ("" when the page fits).
func (b *browserSession) sideways(width int64) string {
	b.t.Helper()
	return b.eval("sideways", `(() => {
		const w = window.innerWidth, page = document.documentElement.scrollWidth;
		if (page <= w) return "";
		const out = [];
		for (const el of document.querySelectorAll("body *")) {
			const r = el.getBoundingClientRect();
			if (r.right > w + 1 && r.width > 0 && getComputedStyle(el).position !== "fixed") {
				out.push(el.tagName.toLowerCase() + (el.id ? "#" + el.id : "") + (el.className && typeof el.className === "string" ? "." + el.className.trim().split(/\s+/).join(".") : "") + " " + Math.round(r.right) + "px");
			}
		}
		return "scrolls sideways: the page is " + page + " px wide in a " + w + " px window; past its edge: " + out.slice(0, 6).join(", ");
	})()`)
}
