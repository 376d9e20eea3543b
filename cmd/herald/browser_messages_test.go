package main

import (
	"context"
	"fmt"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"herald/eventually"
	"herald/service"
)

// TestBrowserMessages: single messages sent through the service reach the
// console's Messages page (linked from the sidebar) with their outcome once
// the server's engine has sent them to its outbox; a long unbroken address
// and subject do not make the page scroll sideways at 390 px, and axe-core
// finds no serious violation at phone and desktop widths.
func TestBrowserMessages(t *testing.T) {
	t.Parallel()
	b, dsn := newBrowserSessionWithDB(t)
	base := b.base
	b.signUp()
	ctx := context.Background()
	svc, _, acct := ownerService(t, dsn, service.Config{BaseURL: base, SystemFrom: "no-reply@localhost"})
	snd, err := svc.Senders.Create(ctx, acct.ID, service.SenderInput{FromName: "Shop", FromEmail: "news@shop.example.com",
		ReplyToEmail: "help@shop.example.com", CountryID: "250", CompanyAddress: "1 rue de Rivoli", Nickname: "shop"})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := svc.Senders.Verify(ctx, snd.VerifyToken); err != nil {
		t.Fatal(err)
	}
	long := strings.Repeat("averyverylonglocalpart", 2) + "@" + strings.Repeat("subdomain", 6) + ".example.com"
	ids := map[string]bool{}
	for i, to := range []string{"ann@example.com", "bob@example.com", long} {
		m, err := svc.Messages.Send(ctx, acct.ID, service.MessageInput{SenderID: strconv.FormatInt(snd.ID, 10), To: to,
			Subject:      fmt.Sprintf("Your receipt %d %s", i, strings.Repeat("withaverylongunbrokenword", 4)),
			TemplateHTML: "<p>Hello ((name))</p>", Data: map[string]string{"name": "Ann"}})
		if err != nil {
			t.Fatal(err)
		}
		ids[m.ID] = true
	}

	// The server's engine sends them (to its outbox) on its next lane claim.
	eventually.NoError(t, 30*time.Second, func() error {
		b.do("open the messages page", chromedp.EmulateViewport(1280, 800), chromedp.Navigate(base+"/messages"), b.idle, chromedp.WaitVisible(chromedp.CSS("#main")))
		if got := b.eval("delivered", `String(document.querySelectorAll("#messages-list [data-outcome=delivered]").length)`); got != "3" {
			return fmt.Errorf("%s messages delivered on the page, want 3", got)
		}
		return nil
	})
	for _, id := range strings.Split(b.eval("ids", `Array.from(document.querySelectorAll(".message-row")).map(r => r.dataset.id).join(" ")`), " ") {
		if !ids[id] {
			t.Errorf("row %q is not one of the messages sent %v", id, ids)
		}
	}
	if got := b.eval("sidebar", `String(document.querySelectorAll('nav a[href="/messages"][aria-current="page"]').length)`); got != "1" {
		t.Errorf("the sidebar's Messages entry is not marked current (%s)", got)
	}
	for _, width := range []int64{390, 1280} {
		where := fmt.Sprintf("/messages at %d px", width)
		b.do("open "+where, chromedp.EmulateViewport(width, 800), chromedp.Navigate(base+"/messages"), b.idle, chromedp.WaitVisible(chromedp.CSS("#main")))
		if w := b.eval(where, `String(document.documentElement.scrollWidth)`); w != strconv.FormatInt(width, 10) {
			t.Errorf("%s is %s px wide: it scrolls sideways", where, w)
		}
		for _, v := range b.axeCheck(where) {
			t.Errorf("%s: %s", where, v)
		}
	}
}
