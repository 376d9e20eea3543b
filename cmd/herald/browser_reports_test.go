package main

import (
	"context"
	"fmt"
	"net/netip"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"herald/service"
)

// reportsDesign has two tracked links, for the click map.
const reportsDesign = `<html><body><h1>Spring sale</h1><p>Hello ((first_name)).</p>` +
	`<p><a href="https://shop.example.com/sale">See the sale</a></p><p><a href="https://shop.example.com/new">New in</a></p>` +
	`<p>((sender_address))</p><a href="((unsubscribe_preferences))">Unsubscribe</a></body></html>`

// TestBrowserReports: a completed send with opens from Apple Mail on an
// iPhone and Outlook, a click, and Apple's privacy proxy shows its
// people by mail client and device (machines apart), its click map (each
// link's clicks drawn at the link, in the sandboxed frame), and compares
// with a second send side by side; at 390 and 1280 px the three pages
// pass axe-core and do not scroll sideways.
func TestBrowserReports(t *testing.T) {
	t.Parallel()
	b, dsn := newBrowserSessionWithDB(t)
	base := b.base
	var problems consoleProblems
	problems.watch(b)
	f := seedAccount(t, b, dsn)
	ctx := context.Background()
	itoa := func(n int64) string { return strconv.FormatInt(n, 10) }
	ss, err := f.svc.SingleSends.Create(ctx, f.acct, service.SingleSendInput{TemplateID: "1", TemplateHTML: reportsDesign,
		SenderID: itoa(f.sender.ID), UnsubscribeGroupID: itoa(f.group.ID), SingleSendName: "Spring sale", Subject: "Spring sale",
		Preheader: "Ten days only", RecipientID: []string{"contacts_" + itoa(f.ct.ID)}, ScheduleType: "0"})
	if err != nil {
		t.Fatal(err)
	}
	b.do("the second send completes",
		chromedp.Navigate(base+"/single-sends/"+ss.Utr), b.idle,
		chromedp.Poll[chromedp.Void](`(document.getElementById("send-status") || {}).dataset.status === "Completed"`, chromedp.WithPollingInterval(100*time.Millisecond)),
	)
	var ids []int64
	if err := f.db.R.Table("send_messages").Where("send_id = ?", ss.ID).Order("id").Pluck("id", &ids).Error; err != nil || len(ids) != 3 {
		t.Fatalf("messages %v %v", ids, err)
	}
	tok := func(i int) string {
		k, err := f.svc.Tracking.Token(ctx, ids[i])
		if err != nil {
			t.Fatal(err)
		}
		return k
	}
	iPhone := service.Hit{Method: "GET", IP: netip.MustParseAddr("203.0.113.9"),
		UserAgent: "Mozilla/5.0 (iPhone; CPU iPhone OS 17_4 like Mac OS X) AppleWebKit/605.1.15 (KHTML, like Gecko) Mobile/15E148"}
	outlook := service.Hit{Method: "GET", IP: netip.MustParseAddr("203.0.113.10"),
		UserAgent: "Microsoft Office/16.0 (Windows NT 10.0; Microsoft Outlook 16.0.17425; Pro)"}
	proxy := service.Hit{Method: "GET", IP: netip.MustParseAddr("17.58.101.12"), UserAgent: "Mozilla/5.0"}
	for i, h := range []service.Hit{iPhone, outlook, proxy} {
		if err := f.svc.Tracking.OpenHit(ctx, tok(i), h); err != nil {
			t.Fatal(err)
		}
	}
	// The click comes later than a scanner would (the machine rules
	// take a click within 10 s of delivery for a scanner's).
	if err := f.db.W.Exec("UPDATE send_messages SET sent_at = ? WHERE id = ?", time.Now().Add(-time.Hour), ids[0]).Error; err != nil {
		t.Fatal(err)
	}
	if _, err := f.svc.Tracking.ClickHit(ctx, tok(0), 1, iPhone); err != nil {
		t.Fatal(err)
	}

	check := func(what string, width int64) {
		t.Helper()
		for _, v := range b.axeCheck(what) {
			t.Errorf("accessibility of %s at %d px: %s", what, width, v)
		}
		if p := b.sideways(width); p != "" {
			t.Errorf("%s at %d px: %s", what, width, p)
		}
	}
	for _, width := range []int64{390, 1280} {
		b.do("the send's page", chromedp.EmulateViewport(width, 900), chromedp.Navigate(base+"/single-sends/"+ss.Utr), b.idle,
			chromedp.WaitVisible(chromedp.ID("reach-clients")))
		clients := b.eval("clients", `[...document.querySelectorAll("#reach-clients tbody tr")].map(r => r.querySelector(".reach-label").textContent.trim() + "=" + r.cells[1].textContent.trim().split(" ")[0]).join(", ")`)
		if !strings.Contains(clients, "Apple Mail=1") || !strings.Contains(clients, "Outlook=1") {
			t.Errorf("clients at %d px: %s", width, clients)
		}
		devices := b.eval("devices", `[...document.querySelectorAll("#reach-devices tbody tr .reach-label")].map(c => c.textContent.trim()).join(", ")`)
		if devices != "Desktop, Mobile" && devices != "Mobile, Desktop" {
			t.Errorf("devices at %d px: %s", width, devices)
		}
		if m := b.eval("machines", `document.getElementById("reach-machines").textContent`); !strings.Contains(m, "opens 1,") {
			t.Errorf("machines at %d px: %q", width, m)
		}
		check("the send's report", width)
		b.capture(fmt.Sprintf("reports-send-%d", width))

		b.do("the click map", chromedp.Click(chromedp.ID("open-click-map")), chromedp.WaitVisible(chromedp.ID("click-map-frame")), b.idle)
		badges := b.eval("badges", `(() => { const d = new DOMParser().parseFromString(document.getElementById("click-map-frame").getAttribute("srcdoc"), "text/html");
			return [...d.querySelectorAll("a > span[data-link]")].map(s => s.parentElement.textContent.trim()).join(" | "); })()`)
		if badges != "1: 0 clicksSee the sale | 2: 1 clickNew in" {
			t.Errorf("click map at %d px: %q", width, badges)
		}
		check("the click map", width)
		b.capture(fmt.Sprintf("reports-clickmap-%d", width))

		b.do("compare", chromedp.Navigate(base+"/single-sends/"+ss.Utr), b.idle, chromedp.Click(chromedp.ID("open-compare")),
			chromedp.WaitVisible(chromedp.ID("compare-form")), b.idle)
		if b.eval("chosen", `String(document.querySelectorAll("#compare-form input:checked").length)`) != "1" {
			t.Errorf("compare at %d px: the send is not chosen", width)
		}
		b.do("choose the other", chromedp.Click(chromedp.CSS(`#compare-form input[value="`+f.completed.Utr+`"]`)),
			chromedp.Click(chromedp.ID("compare-submit")), chromedp.WaitVisible(chromedp.ID("compare-table")), b.idle)
		if n := b.eval("rows", `String(document.querySelectorAll("#compare-table tbody tr").length)`); n != "2" {
			t.Errorf("compare at %d px: %s rows", width, n)
		}
		if o := b.eval("opened", `document.querySelector("#compare-table tbody tr .compare-opened").textContent.trim()`); o != "66.7%" {
			t.Errorf("compare at %d px: Spring sale opened by people %q", width, o)
		}
		if n := b.eval("lines", `String(document.querySelectorAll("#compare-chart polyline.compare-line").length)`); n != "2" {
			t.Errorf("compare chart at %d px: %s lines", width, n)
		}
		check("the compare page", width)
		b.capture(fmt.Sprintf("reports-compare-%d", width))
	}
	if p := problems.take(); len(p) > 0 {
		t.Errorf("console problems: %v", p)
	}
}
