package main

import (
	"context"
	"fmt"
	"testing"

	"github.com/chromedp/chromedp"

	"herald/service"
)

// TestBrowserWarmupPage: the Warm-up page with a plan's chart does not
// scroll sideways at 390 px, and a plan started from its form shows up
// as a second chart.
func TestBrowserWarmupPage(t *testing.T) {
	t.Parallel()
	b, dsn := newBrowserSessionWithDB(t)
	base := b.base
	var problems consoleProblems
	problems.watch(b)
	b.signUp()

	ctx := context.Background()
	svc, _, acct := ownerService(t, dsn, service.Config{BaseURL: base, SystemFrom: "no-reply@localhost"})
	for _, from := range []string{"news@a-rather-long-sending-domain.example.com", "news@second.example.com"} {
		if _, err := svc.Senders.Create(ctx, acct.ID, service.SenderInput{FromName: "Shop", FromEmail: from, ReplyToEmail: "help@shop.example.com",
			CountryID: "250", CompanyAddress: "1 rue de Rivoli", Nickname: "shop"}); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := svc.Warmups.Start(ctx, acct.ID, service.WarmupInput{Domain: "a-rather-long-sending-domain.example.com", Start: "20", Growth: "1.3", Until: "5000"}); err != nil {
		t.Fatal(err)
	}
	wide := func(what string, width int64) {
		t.Helper()
		if w := b.eval("page width", `String(document.documentElement.scrollWidth)`); w != fmt.Sprint(width) {
			t.Errorf("%s at %d px is %s px wide: it scrolls sideways", what, width, w)
		}
	}
	b.do("the warm-up page", chromedp.EmulateViewport(390, 800), chromedp.Navigate(base+"/senders/warmup"), b.idle,
		chromedp.WaitVisible(chromedp.CSS("#chart-warmup-0")))
	wide("the warm-up page", 390)
	b.do("start a plan", chromedp.SetValue(chromedp.CSS("#warmup-domain"), "second.example.com"),
		chromedp.Click(chromedp.CSS("#warmup-submit")), b.idle, chromedp.WaitVisible(chromedp.CSS("#chart-warmup-1")))
	wide("the page with two plans", 390)
	b.capture("warmup-390")
	if got := b.eval("plans", `String(document.querySelectorAll(".warmup-plan").length)`); got != "2" {
		t.Errorf("plans shown: %s", got)
	}
	if p := problems.take(); len(p) > 0 {
		t.Errorf("console problems: %q", p)
	}
}
