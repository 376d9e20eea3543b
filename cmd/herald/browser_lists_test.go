package main

import (
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
)

// TestBrowserDraftsAndLists saves two single sends as drafts from the
// compose page (nothing else is needed for a draft), finds them in the
// list with their Draft badge, filters the list by status, sorts it by
// name both ways through the column header, and opens the calendar at
// phone and desktop widths (axe-core checks every captured state).
func TestBrowserDraftsAndLists(t *testing.T) {
	t.Parallel()
	b := newBrowserSession(t)
	base := b.base
	var problems consoleProblems
	problems.watch(b)

	b.signUp()
	for _, name := range []string{"Zeta idea", "Alpha idea"} {
		b.do("save a draft: "+name,
			chromedp.Navigate(base+"/single-sends/new"),
			b.idle,
			chromedp.WaitVisible(chromedp.ID("send-name")),
			chromedp.SendKeys(chromedp.ID("send-name"), name),
			chromedp.Click(chromedp.ID("send-save-draft")),
			chromedp.WaitVisible(chromedp.CSS("p#send-draft")), // the send's page says it is a draft
			b.idle,
		)
		if got := b.text("status", "#send-status .badge"); got != "Draft" {
			t.Fatalf("%s saved as %q", name, got)
		}
	}
	b.capture("single-send-draft")

	names := func(step string) string {
		return b.eval(step, `[...document.querySelectorAll("#sends-list td.cell-main a")].map(a => a.textContent.trim()).join(",")`)
	}
	b.do("open the list",
		chromedp.Navigate(base+"/single-sends"),
		b.idle,
		chromedp.WaitVisible(chromedp.CSS("#sends-list tbody tr")),
	)
	if got := names("list"); got != "Zeta idea,Alpha idea" {
		t.Fatalf("list %q", got)
	}
	if got := b.eval("badges", `[...document.querySelectorAll("#sends-list .badge")].map(b => b.textContent.trim()).join(",")`); got != "Draft,Draft" {
		t.Fatalf("badges %q", got)
	}
	// Filter: scheduled keeps nothing, drafts keep both (htmx swaps the list
	// and pushes the address).
	b.do("filter scheduled",
		chromedp.Click(chromedp.CSS(`#sends-status a[data-status-filter="scheduled"]`)),
		chromedp.WaitVisible(chromedp.CSS("#sends-list .empty")),
		b.idle,
	)
	if got := b.eval("url", `location.search`); got != "?status=scheduled" {
		t.Fatalf("address after filtering: %q", got)
	}
	b.do("filter drafts",
		chromedp.Click(chromedp.CSS(`#sends-status a[data-status-filter="draft"]`)),
		chromedp.WaitVisible(chromedp.CSS("#sends-list tbody tr")),
		b.idle,
	)
	b.capture("single-sends-drafts")
	b.do("sort by name",
		chromedp.Click(chromedp.CSS(`#sends-list th a[data-sort="name"]`)),
		chromedp.Poll[chromedp.Void](`!!document.querySelector('#sends-list th[aria-sort="ascending"] a[data-sort="name"]')`, chromedp.WithPollingInterval(50*time.Millisecond)),
		b.idle,
	)
	if got := names("by name"); got != "Alpha idea,Zeta idea" {
		t.Fatalf("by name %q", got)
	}
	if got := b.eval("url", `location.search`); !strings.Contains(got, "status=draft") || !strings.Contains(got, "sort=name") {
		t.Fatalf("address after sorting: %q", got)
	}
	b.do("sort by name descending",
		chromedp.Click(chromedp.CSS(`#sends-list th a[data-sort="name"]`)),
		chromedp.Poll[chromedp.Void](`!!document.querySelector('#sends-list th[aria-sort="descending"] a[data-sort="name"]')`, chromedp.WithPollingInterval(50*time.Millisecond)),
		b.idle,
	)
	if got := names("by name descending"); got != "Zeta idea,Alpha idea" {
		t.Fatalf("by name descending %q", got)
	}
	b.capture("single-sends-sorted")

	// A draft opens in the form again.
	b.do("open a draft",
		chromedp.Click(chromedp.CSS(`#sends-list a[data-edit]`)),
		chromedp.WaitVisible(chromedp.ID("send-form")),
		b.idle,
	)
	if got := b.eval("name", `document.getElementById("send-name").value`); got != "Zeta idea" {
		t.Fatalf("the draft opened as %q", got)
	}

	// On a phone the headers are hidden: the select sorts.
	b.do("sort on a phone",
		chromedp.EmulateViewport(390, 800),
		chromedp.Navigate(base+"/single-sends?status=draft"),
		b.idle,
		chromedp.WaitVisible(chromedp.ID("sends-sort")),
		choose("#sends-sort", "name:asc"),
		chromedp.Poll[chromedp.Void](`!!document.querySelector('#sends-list th[aria-sort="ascending"] a[data-sort="name"]')`, chromedp.WithPollingInterval(50*time.Millisecond)),
		b.idle,
	)
	if got := names("by name on a phone"); got != "Alpha idea,Zeta idea" {
		t.Fatalf("by name on a phone %q", got)
	}
	b.capture("single-sends-sorted-phone")

	// The calendar, at both widths: today marked, no sideways scrolling.
	for _, width := range []int64{390, 1280} {
		w := strconv.FormatInt(width, 10)
		b.do("calendar at "+w,
			chromedp.EmulateViewport(width, 800),
			chromedp.Navigate(base+"/single-sends"),
			b.idle,
			chromedp.Click(chromedp.ID("sends-calendar")),
			chromedp.WaitVisible(chromedp.CSS("li.cal-day.is-today")),
			b.idle,
		)
		if got := b.eval("overflow", `String(document.documentElement.scrollWidth <= window.innerWidth)`); got != "true" {
			t.Fatalf("the calendar is wider than %s px", w)
		}
		b.capture("single-sends-calendar-" + w)
		b.do("next month", chromedp.Click(chromedp.ID("cal-next")), chromedp.WaitVisible(chromedp.ID("cal-title")), b.idle)
		b.do("previous month", chromedp.Click(chromedp.ID("cal-prev")), chromedp.WaitVisible(chromedp.CSS("li.cal-day.is-today")), b.idle)
	}
	b.do("desktop again", chromedp.EmulateViewport(1280, 900))
	if msgs := problems.take(); len(msgs) > 0 {
		t.Fatalf("the browser logged errors:\n%s", strings.Join(msgs, "\n"))
	}
}
