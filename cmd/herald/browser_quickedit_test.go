package main

import (
	"context"
	"strconv"
	"strings"
	"sync"
	"testing"

	"github.com/chromedp/cdproto/network"
	"github.com/chromedp/cdproto/runtime"
	"github.com/chromedp/chromedp"
)

// htmxProblems records, in the page, the htmx error events (an aborted
// request, a failed one) and the console's errors come through the
// session's listener.
const htmxProblems = `(() => { window.__htmxProblems = [];
	for (const ev of ["htmx:sendAbort", "htmx:sendError", "htmx:responseError", "htmx:swapError", "htmx:error"]) {
		document.body.addEventListener(ev, () => window.__htmxProblems.push(ev));
	}
	return ""; })()`

// TestBrowserQuickEditsLogNothing: a person edits the segment builder and
// the compose form faster than their live panels answer (every request
// slowed to 1.5 s), and no htmx error nor console error is logged: a new
// request waits for the one in flight instead of aborting it, and the
// panels end on the last edit's answer.
func TestBrowserQuickEditsLogNothing(t *testing.T) {
	t.Parallel()
	b, dsn := newBrowserSessionWithDB(t)
	base := b.base
	f := seedAccount(t, b, dsn)

	var mu sync.Mutex
	var console []string
	ctx, cancel := context.WithCancel(b.ctx)
	defer cancel()
	chromedp.Listen(ctx, func(ev any) {
		if e, ok := ev.(*runtime.EventConsoleAPICalled); ok && e.Type == runtime.ConsoleAPICalledTypeError {
			mu.Lock()
			defer mu.Unlock()
			for _, a := range e.Args {
				console = append(console, string(a.Value)+a.Description)
			}
		}
	})
	slow := func(step string) {
		if _, err := chromedp.Call(b.ctx, network.Enable, network.EnableParams{}); err != nil {
			t.Fatalf("%s: %v", step, err)
		}
		if _, err := chromedp.Call(b.ctx, network.EmulateNetworkConditionsByRule, network.EmulateNetworkConditionsByRuleParams{
			MatchedNetworkConditions: []*network.Conditions{{Latency: 1500, DownloadThroughput: -1, UploadThroughput: -1}},
		}); err != nil {
			t.Fatalf("%s: %v", step, err)
		}
	}
	// inFlight waits until one of the page's htmx requests is on its way.
	inFlight := chromedp.Poll[chromedp.Void](`!!document.querySelector(".htmx-request")`)

	// The segment builder: its count asks again 400 ms after each key.
	b.do("segment builder", chromedp.Navigate(base+"/segments/"+strconv.FormatInt(f.segment.ID, 10)+"/edit"), b.idle,
		chromedp.WaitVisible(chromedp.ID("segment-form")))
	b.eval("watch htmx", htmxProblems)
	slow("slow network")
	for _, key := range []string{"x", "y", "z"} {
		b.do("type "+key, chromedp.SendKeys(chromedp.ID("cond-0-value"), key), inFlight)
	}
	b.do("the count settles", b.idle)
	if got := b.eval("htmx problems", `window.__htmxProblems.join(",")`); got != "" {
		t.Errorf("segment builder: htmx logged %s", got)
	}

	// Compose: the checklist asks again on every change of the form.
	b.do("compose", chromedp.Navigate(base+"/single-sends/new"), b.idle, chromedp.WaitVisible(chromedp.ID("send-form")))
	b.eval("watch htmx", htmxProblems)
	for _, name := range []string{"Spring", "Spring news", "Spring news 2"} {
		b.do("rename "+name, chromedp.SetValue(chromedp.ID("send-name"), name),
			chromedp.Evaluate[chromedp.Void](`document.getElementById("send-name").dispatchEvent(new Event("change", {bubbles: true}))`), inFlight)
	}
	b.do("the checklist settles", b.idle)
	if got := b.eval("htmx problems", `window.__htmxProblems.join(",")`); got != "" {
		t.Errorf("compose: htmx logged %s", got)
	}
	mu.Lock()
	defer mu.Unlock()
	if len(console) > 0 {
		t.Errorf("console errors: %s", strings.Join(console, " | "))
	}
}
