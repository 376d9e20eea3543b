package main

import (
	"context"
	"encoding/json"
	"strconv"
	"sync"
	"testing"
	"time"

	cdplog "github.com/chromedp/cdproto/log"
	"github.com/chromedp/cdproto/runtime"
	"github.com/chromedp/chromedp"

	"herald/api"
	"herald/dbtest"
)

// TestBrowserAPIDocs opens the console's API documentation page in a real
// browser: the vendored Swagger UI, started by its own script under the
// console's content policy, renders one block per operation of the
// document, and the browser reports no policy violation.
func TestBrowserAPIDocs(t *testing.T) {
	t.Parallel()
	chromium := findChromium()
	if chromium == "" {
		dbtest.SkipOrFail(t, "chromium not found: install Debian's chromium to run browser tests")
	}
	base := startConsoleServer(t)
	allocCtx, cancelAlloc := newAllocator(t, chromium)
	defer cancelAlloc()
	browser, cancelBrowser := chromedp.NewContext(allocCtx)
	defer cancelBrowser()
	if err := chromedp.Do(browser, chromedp.Navigate("about:blank")); err != nil {
		t.Fatalf("start chromium: %v", err)
	}
	// Script errors and console errors of the page (a script the policy
	// blocked would leave Swagger UI unstarted: the count below).
	var mu sync.Mutex
	var problems []string
	if err := chromedp.Listen(browser, func(ev any) {
		mu.Lock()
		defer mu.Unlock()
		switch e := ev.(type) {
		case *runtime.EventConsoleAPICalled:
			if e.Type == runtime.ConsoleAPICalledTypeError {
				for _, a := range e.Args {
					problems = append(problems, string(a.Value)+a.Description)
				}
			}
		case *runtime.EventExceptionThrown:
			d := e.ExceptionDetails.Text
			if e.ExceptionDetails.Exception != nil {
				d += " " + e.ExceptionDetails.Exception.Description
			}
			problems = append(problems, d)
		case *cdplog.EventEntryAdded:
			if e.Entry.Level == cdplog.EntryLevelError {
				problems = append(problems, string(e.Entry.Source)+": "+e.Entry.Text+" "+e.Entry.URL)
			}
		}
	}); err != nil {
		t.Fatal(err)
	}
	do := func(step string, actions ...chromedp.Action[chromedp.Void]) {
		t.Helper()
		ctx, cancel := context.WithTimeout(browser, 30*time.Second)
		defer cancel()
		if err := chromedp.Do(ctx, actions...); err != nil {
			t.Fatalf("%s: %v", step, err)
		}
	}
	do("sign up",
		chromedp.Navigate(base+"/signup"),
		chromedp.WaitVisible(chromedp.ID("signup-name")),
		chromedp.SendKeys(chromedp.ID("signup-name"), "Ada Lovelace"),
		chromedp.SendKeys(chromedp.ID("signup-email"), "ada@example.com"),
		chromedp.SendKeys(chromedp.ID("signup-password"), "correct horse battery"),
		chromedp.Click(chromedp.CSS(`#signup-form button[type="submit"]`)),
		chromedp.WaitVisible(chromedp.ID("secret-key")),
	)
	ctx, cancel := context.WithTimeout(browser, 30*time.Second)
	defer cancel()
	if err := chromedp.Do(ctx, chromedp.Click(chromedp.CSS(`a.nav-link[href="/docs/api"]`)), chromedp.WaitVisible(chromedp.CSS("#swagger-ui .opblock"))); err != nil {
		dctx, dcancel := context.WithTimeout(browser, 5*time.Second)
		defer dcancel()
		html, _ := chromedp.Run(dctx, chromedp.Evaluate[string](`location.href + " SwaggerUIBundle: " + typeof window.SwaggerUIBundle + " " + ((document.querySelector("#swagger-ui") || {}).innerHTML || "").slice(0, 300)`))
		mu.Lock()
		defer mu.Unlock()
		t.Fatalf("open the docs from the navigation: %v\npage: %s\nconsole: %q", err, html, problems)
	}
	var doc struct {
		Paths map[string]map[string]any `json:"paths"`
	}
	if err := json.Unmarshal(api.OpenAPI(), &doc); err != nil {
		t.Fatal(err)
	}
	want := 0
	for _, item := range doc.Paths {
		want += len(item)
	}
	n, err := chromedp.Run(ctx, chromedp.Evaluate[int](`document.querySelectorAll("#swagger-ui .opblock").length`))
	if err != nil {
		t.Fatal(err)
	}
	if n != want {
		t.Fatalf("Swagger UI shows %d operations, the document has %d", n, want)
	}
	title, err := chromedp.Run(ctx, chromedp.Evaluate[string](`(document.querySelector("#swagger-ui .title") || {}).textContent || ""`))
	if err != nil || title == "" {
		t.Fatalf("no title rendered: %q %v", title, err)
	}
	mu.Lock()
	defer mu.Unlock()
	if len(problems) > 0 {
		t.Fatalf("console errors: %q", problems)
	}
	t.Logf("rendered %s operations; title %q", strconv.Itoa(n), title)
}
