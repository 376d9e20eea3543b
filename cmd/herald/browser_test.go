package main

import (
	"context"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/cdproto/page"
	"github.com/chromedp/chromedp"

	"herald/dbtest"
	"herald/eventually"
)

// TestBrowserConsole drives the real server with a real browser: sign up,
// see the keys, add a global unsubscriber through the htmx form, see it
// listed, delete it, see it gone. With HERALD_SCREENSHOTS set to a folder,
// it also saves screenshots of two pages at phone and desktop widths.
func TestBrowserConsole(t *testing.T) {
	t.Parallel()
	chromium := findChromium()
	if chromium == "" {
		dbtest.SkipOrFail(t, "chromium not found: install Debian's chromium to run browser tests")
	}
	base := startConsoleServer(t)

	allocCtx, cancelAlloc := newAllocator(t, chromium)
	defer cancelAlloc()
	// No timeout on the context that owns the browser: it would stop it.
	browser, cancelBrowser := chromedp.NewContext(allocCtx)
	defer cancelBrowser()
	if err := chromedp.Do(browser, chromedp.Navigate("about:blank")); err != nil {
		t.Fatalf("start chromium: %v", err)
	}

	// Accept the confirmation dialogs (hx-confirm on delete).
	dialogs := chromedp.Events(browser, page.JavascriptDialogOpening)
	go func() {
		for _, err := range dialogs {
			if err != nil {
				return
			}
			_, _ = chromedp.Call(browser, page.HandleJavaScriptDialog, page.HandleJavaScriptDialogParams{Accept: true})
		}
	}()

	idle := htmxIdle

	do := func(step string, actions ...chromedp.Action[chromedp.Void]) {
		t.Helper()
		ctx, cancel := context.WithTimeout(browser, 20*time.Second)
		defer cancel()
		if err := chromedp.Do(ctx, actions...); err != nil {
			t.Fatalf("%s: %v", step, err)
		}
	}
	get := func(step string, a chromedp.Action[string]) string {
		t.Helper()
		ctx, cancel := context.WithTimeout(browser, 20*time.Second)
		defer cancel()
		v, err := chromedp.Run(ctx, a)
		if err != nil {
			t.Fatalf("%s: %v", step, err)
		}
		return v
	}

	shots := os.Getenv("HERALD_SCREENSHOTS")
	screenshots := func(name, path string) {
		t.Helper()
		if shots == "" {
			return
		}
		for _, width := range []int64{390, 1280} {
			do("screenshot "+name, chromedp.EmulateViewport(width, 800), chromedp.Navigate(base+path), idle, chromedp.WaitVisible(chromedp.CSS("#main")))
			ctx, cancel := context.WithTimeout(browser, 20*time.Second)
			png, err := chromedp.Run(ctx, chromedp.FullScreenshot(100))
			cancel()
			if err != nil {
				t.Fatalf("screenshot %s: %v", name, err)
			}
			file := filepath.Join(shots, name+"-"+strconv.FormatInt(width, 10)+".png")
			if err := os.WriteFile(file, png, 0o644); err != nil {
				t.Fatal(err)
			}
		}
		do("desktop again", chromedp.EmulateViewport(1280, 900))
	}
	// capture saves the page as it is at both widths.
	capture := func(name string) {
		t.Helper()
		if shots == "" {
			return
		}
		for _, width := range []int64{390, 1280} {
			do("resize", chromedp.EmulateViewport(width, 800))
			ctx, cancel := context.WithTimeout(browser, 20*time.Second)
			png, err := chromedp.Run(ctx, chromedp.FullScreenshot(100))
			cancel()
			if err == nil {
				err = os.WriteFile(filepath.Join(shots, name+"-"+strconv.FormatInt(width, 10)+".png"), png, 0o644)
			}
			if err != nil {
				t.Fatalf("screenshot %s: %v", name, err)
			}
		}
		do("desktop again", chromedp.EmulateViewport(1280, 900))
	}
	if shots != "" {
		if err := os.MkdirAll(shots, 0o755); err != nil {
			t.Fatal(err)
		}
	}

	// Sign up, and see the keys once.
	screenshots("signup", "/signup")
	do("sign up",
		chromedp.Navigate(base+"/signup"),
		idle,
		chromedp.WaitVisible(chromedp.ID("signup-name")),
		chromedp.SendKeys(chromedp.ID("signup-name"), "Ada Lovelace"),
		chromedp.SendKeys(chromedp.ID("signup-email"), "ada@example.com"),
		chromedp.SendKeys(chromedp.ID("signup-password"), "correct horse battery"),
		chromedp.Click(chromedp.CSS(`#signup-form button[type="submit"]`)),
		chromedp.WaitVisible(chromedp.ID("secret-key")),
	)
	if secret := get("read secret key", chromedp.Value(chromedp.ID("secret-key"))); !strings.HasPrefix(secret, "sk_") {
		t.Fatalf("secret key = %q, want sk_…", secret)
	}
	if public := get("read public key", chromedp.Value(chromedp.ID("public-key"))); !strings.HasPrefix(public, "pk_") {
		t.Fatalf("public key = %q, want pk_…", public)
	}
	screenshots("bounce-setup", "/suppressions/setup")
	screenshots("event-webhooks", "/event-webhooks")

	// At a phone's width no page scrolls sideways (the outbox's smtps://
	// sample once made it 399 px wide at 390).
	do("phone width", chromedp.EmulateViewport(390, 800))
	for _, path := range []string{"/outbox", "/account", "/dashboard", "/senders", "/single-sends/new"} {
		do("open "+path, chromedp.Navigate(base+path), idle, chromedp.WaitVisible(chromedp.CSS("#main")))
		if w := get("page width "+path, chromedp.Evaluate[string](`String(document.documentElement.scrollWidth)`)); w != "390" {
			t.Errorf("%s at 390 px is %s px wide: it scrolls sideways", path, w)
		}
	}
	do("desktop width again", chromedp.EmulateViewport(1280, 900))

	// Add a global unsubscriber through the htmx form: the page is not
	// reloaded (a marker set on window survives) and the row appears.
	const address = "browser-test@example.com"
	do("open global unsubscribers",
		chromedp.Navigate(base+"/suppressions/global"),
		idle,
		chromedp.WaitVisible(chromedp.ID("global-add-email")),
		chromedp.WaitVisible(chromedp.CSS("#global-list .empty")),
		chromedp.Evaluate[chromedp.Void](`window.heraldMarker = "still here"`),
		chromedp.SendKeys(chromedp.ID("global-add-email"), address),
		chromedp.Click(chromedp.CSS(`#global-add button[type="submit"]`)),
		chromedp.WaitVisible(chromedp.CSS("#global-list tbody tr")),
		chromedp.WaitVisible(chromedp.CSS("#flash .flash-success")),
		idle,
	)
	if got := get("read row", chromedp.Text(chromedp.CSS("#global-list tbody tr .cell-main"))); strings.TrimSpace(got) != address {
		t.Fatalf("listed address = %q, want %q", got, address)
	}
	if got := get("read form", chromedp.Value(chromedp.ID("global-add-email"))); got != "" {
		t.Errorf("add form not emptied after success: %q", got)
	}
	if got := get("marker", chromedp.Evaluate[string](`window.heraldMarker || ""`)); got != "still here" {
		t.Fatalf("the page was reloaded: the add did not go through htmx")
	}

	// Delete it (the confirmation is accepted) and see it gone.
	do("delete",
		chromedp.Click(chromedp.CSS("#global-list button[data-delete]")),
		chromedp.WaitNotPresent(chromedp.CSS("#global-list tbody tr")),
		chromedp.WaitVisible(chromedp.CSS("#global-list .empty")),
	)
	if got := get("marker", chromedp.Evaluate[string](`window.heraldMarker || ""`)); got != "still here" {
		t.Fatalf("the page was reloaded: the delete did not go through htmx")
	}

	// Reloading shows the same: the deletion was stored.
	do("reload",
		chromedp.Navigate(base+"/suppressions/global"),
		idle,
		chromedp.WaitVisible(chromedp.CSS("#global-list .empty")),
	)

	// Unsubscribe groups: create one, edit it in its row, see the
	// validation message beside the field (a 422 that htmx swaps), save.
	do("create group",
		chromedp.Navigate(base+"/suppressions/groups"),
		idle,
		chromedp.WaitVisible(chromedp.ID("group-create-name")),
		chromedp.SendKeys(chromedp.ID("group-create-name"), "Newsletter"),
		chromedp.SendKeys(chromedp.ID("group-create-description"), "The weekly letter"),
		chromedp.Click(chromedp.CSS(`#group-create button[type="submit"]`)),
		chromedp.WaitVisible(chromedp.CSS("#groups-list tbody tr .cell-main a")),
		idle,
		chromedp.Click(chromedp.CSS(`#groups-list tbody tr a[hx-get$="/edit"]`)),
		chromedp.WaitVisible(chromedp.CSS(`#groups-list tr.is-editing input[name="group_name"]`)),
		idle,
		chromedp.Clear(chromedp.CSS(`#groups-list tr.is-editing input[name="group_name"]`)),
		chromedp.Click(chromedp.CSS(`#groups-list tr.is-editing button[type="submit"]`)),
		chromedp.WaitVisible(chromedp.CSS("#groups-list tr.is-editing .field-errors")),
		idle,
	)
	if got := get("read error", chromedp.Text(chromedp.CSS("#groups-list tr.is-editing .field-errors"))); !strings.Contains(got, "group name field is required") {
		t.Fatalf("validation message = %q", got)
	}
	capture("group-edit-error")
	do("save group",
		chromedp.SetValue(chromedp.CSS(`#groups-list tr.is-editing input[name="group_name"]`), "Product news"),
		chromedp.Click(chromedp.CSS(`#groups-list tr.is-editing button[type="submit"]`)),
		chromedp.WaitNotPresent(chromedp.CSS("#groups-list tr.is-editing")),
		idle,
	)
	if got := get("read group", chromedp.Text(chromedp.CSS("#groups-list tbody tr .cell-main a"))); strings.TrimSpace(got) != "Product news" {
		t.Fatalf("group name after edit = %q", got)
	}

	if shots != "" {
		do("open the menu at phone width",
			chromedp.EmulateViewport(390, 800),
			chromedp.Navigate(base+"/dashboard"),
			idle,
			chromedp.Click(chromedp.CSS("[data-nav-toggle]")),
			chromedp.WaitVisible(chromedp.CSS("#sidebar.is-open .nav-link")),
			chromedp.Sleep(300*time.Millisecond), // the drawer slides in
		)
		ctx, cancel := context.WithTimeout(browser, 20*time.Second)
		png, err := chromedp.Run(ctx, chromedp.CaptureScreenshot())
		cancel()
		if err == nil {
			err = os.WriteFile(filepath.Join(shots, "menu-390.png"), png, 0o644)
		}
		if err != nil {
			t.Fatal(err)
		}
		do("desktop width", chromedp.EmulateViewport(1280, 900))

		do("add rows for the screenshot",
			chromedp.Navigate(base+"/suppressions/global"),
			idle,
			chromedp.WaitVisible(chromedp.ID("global-add-email")),
			chromedp.SendKeys(chromedp.ID("global-add-email"), "grace@example.com, alan@example.org\nkatherine@example.net"),
			chromedp.Click(chromedp.CSS(`#global-add button[type="submit"]`)),
			chromedp.WaitVisible(chromedp.CSS("#global-list tbody tr")),
		)
		screenshots("global", "/suppressions/global")
		screenshots("dashboard", "/dashboard")
		screenshots("groups", "/suppressions/groups")
		screenshots("notifications", "/notifications")
		screenshots("account", "/account")
	}
}

// findChromium returns the path of a Chromium binary, or "".
func findChromium() string {
	// Debian's /usr/bin/chromium is a shell wrapper; the binary is here.
	if _, err := os.Stat("/usr/lib/chromium/chromium"); err == nil {
		return "/usr/lib/chromium/chromium"
	}
	for _, name := range []string{"chromium", "chromium-browser", "google-chrome", "google-chrome-stable"} {
		if p, err := exec.LookPath(name); err == nil {
			return p
		}
	}
	return ""
}

// startConsoleServer runs `herald serve` on a free port over a fresh database
// and waits for /healthz; the server is stopped when the test ends.
func startConsoleServer(t *testing.T) string {
	t.Helper()
	return startConsoleServerOn(t, dbtest.DSN(t))
}

// startConsoleServerOn is startConsoleServer over the database at dsn,
// which the test may read too, with extra variables set.
func startConsoleServerOn(t *testing.T, dsn string, extra ...map[string]string) string {
	t.Helper()
	env := map[string]string{}
	for _, m := range extra {
		for k, v := range m {
			env[k] = v
		}
	}
	return startConsoleServerWith(t, dsn, env)
}

// startConsoleServerWith is startConsoleServerOn with more environment.
func startConsoleServerWith(t *testing.T, dsn string, extra map[string]string) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := ln.Addr().String()
	ln.Close()
	base := "http://" + addr
	env := map[string]string{
		"HERALD_ADDR":      addr,
		"HERALD_DATABASE":  dsn,
		"HERALD_LOG_LEVEL": "error",
		"HERALD_BASE_URL":  base,
	}
	for k, v := range extra {
		env[k] = v
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() {
		done <- run(ctx, []string{"herald", "serve"}, func(k string) string { return env[k] }, io.Discard)
	}()
	t.Cleanup(func() {
		cancel()
		select {
		case err := <-done:
			if err != nil {
				t.Errorf("server: %v", err)
			}
		case <-time.After(30 * time.Second):
			t.Error("server did not stop")
		}
	})

	eventually.NoError(t, 30*time.Second, func() error {
		select {
		case err := <-done:
			t.Fatalf("server stopped before answering: %v", err)
		default:
		}
		resp, err := http.Get(base + "/healthz")
		if err != nil {
			return fmt.Errorf("server not healthy: %v", err)
		}
		resp.Body.Close()
		if resp.StatusCode != http.StatusOK {
			return fmt.Errorf("server not healthy: status %d", resp.StatusCode)
		}
		return nil
	})
	return base
}

// browserSlots caps the Chromium instances the parallel browser tests run
// at once: each takes a few hundred MB and a core's worth of work, more
// than two on a small machine starve the servers they drive.
var browserSlots = make(chan struct{}, 2)

// newAllocator starts headless Chromium with the flags that work on this
// kind of machine (NOTES.md): no sandbox as root, no GPU, and none of the
// background connections a closed network refuses. It waits for one of
// browserSlots, held until the test ends (after the browser is stopped:
// the cleanups the caller registers run before this one).
func newAllocator(t testing.TB, chromium string) (context.Context, context.CancelFunc) {
	browserSlots <- struct{}{}
	t.Cleanup(func() { <-browserSlots })
	return chromedp.NewExecAllocator(context.Background(),
		chromedp.ExecPath(chromium),
		chromedp.Headless,
		chromedp.NoSandbox,
		chromedp.DisableGPU,
		chromedp.NoFirstRun,
		chromedp.NoDefaultBrowserCheck,
		chromedp.Flag("disable-dev-shm-usage", true),
		chromedp.Flag("disable-background-networking", true),
		chromedp.Flag("disable-component-update", true),
		chromedp.Flag("disable-sync", true),
		chromedp.WindowSize(1280, 900),
	)
}
