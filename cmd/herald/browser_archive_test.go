package main

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
	"github.com/chromedp/chromedp/kb"
)

// TestBrowserArchive: a completed send marked archive is on the account's
// public archive (no login); at 390 and 1280 px the list and the send's
// page do not scroll sideways, pass axe-core, and the send opens from the
// list by keyboard alone, its mail in the sandboxed frame.
func TestBrowserArchive(t *testing.T) {
	t.Parallel()
	b, dsn := newBrowserSessionWithDB(t)
	base := b.base
	var problems consoleProblems
	problems.watch(b)
	f := seedAccount(t, b, dsn)
	ctx := context.Background()
	if err := f.svc.Archive.SetArchive(ctx, f.acct, f.completed.Utr, true); err != nil {
		t.Fatal(err)
	}
	url, err := f.svc.Archive.URL(ctx, f.acct)
	if err != nil {
		t.Fatal(err)
	}
	b.do("log out", chromedp.Navigate(base+"/dashboard"), b.idle, chromedp.Click(chromedp.CSS(`form[action="/logout"] button`)), b.idle)
	// The archive's pages load no htmx: loaded waits for the page alone.
	loaded := acrossNavigation(chromedp.Poll[chromedp.Void](`document.readyState === "complete"`, chromedp.WithPollingInterval(20*time.Millisecond)))
	wide := func(what string, width int64) {
		t.Helper()
		if w := b.eval("page width", `String(document.documentElement.scrollWidth)`); w != fmt.Sprint(width) {
			t.Errorf("%s at %d px is %s px wide: it scrolls sideways", what, width, w)
		}
	}
	for _, width := range []int64{390, 1280} {
		b.do("the archive", chromedp.EmulateViewport(width, 800), chromedp.Navigate(url), loaded,
			chromedp.WaitVisible(chromedp.CSS("#archive-list")))
		if lang := b.eval("lang", `document.documentElement.lang`); lang != "en" {
			t.Errorf("html lang %q", lang)
		}
		wide("the archive", width)
		b.capture(fmt.Sprintf("archive-%d", width))
		b.tabTo("#archive-list .archive-subject a", false, 20)
		b.do("open the send by keyboard", chromedp.KeyEvent(kb.Enter), chromedp.WaitVisible(chromedp.CSS("#archive-mail")), loaded)
		if h := b.eval("frame height", `String(document.getElementById("archive-mail").getBoundingClientRect().height >= 400)`); h != "true" {
			t.Errorf("the mail's frame at %d px is too small", width)
		}
		wide("the archived send", width)
		b.capture(fmt.Sprintf("archive-send-%d", width))
		b.tabTo("a.archive-back", true, 20)
	}
	if p := problems.take(); len(p) > 0 {
		t.Errorf("console problems: %q", p)
	}
}
