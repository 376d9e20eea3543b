package web_test

import (
	"context"
	"fmt"
	"net/http"
	"net/netip"
	"strings"
	"testing"
	"time"

	"golang.org/x/net/html"

	"herald/models"
	"herald/service"
	"herald/web"
)

// The contact page loads the contact's mail history (htmx), twenty mails
// a page, newest first, each with its outcome; another account's contact
// is not found.
func TestContactHistoryPage(t *testing.T) {
	t.Parallel()
	a := newTestApp(t, web.Options{})
	c, acct := a.account("Ada", "ada@example.com")
	other, _ := a.account("Bob", "bob@example.com")
	au := a.audience(acct)
	typeID := au.contactType("Customers")
	id := au.contact(typeID, "ann@example.com", "Ann", "Lee", "US", nil)
	empty := au.contact(typeID, "new@example.com", "New", "Lee", "US", nil)

	now := models.NewTimestamp(models.Now().Add(-time.Hour))
	const link = `https://shop.example.com/?q=<script>alert(1)</script>&x="y"`
	var newest models.SendMessage
	for i := range 25 {
		ss := models.SingleSend{UserID: acct, SingleSendName: fmt.Sprintf("Letter %02d", i), Subject: "News", Utr: fmt.Sprintf("u%02d", i), CreatedAt: now, UpdatedAt: now}
		if i == 24 {
			ss.Links = models.StringArray{link}
		}
		if err := a.svc.DB.W.Create(&ss).Error; err != nil {
			t.Fatal(err)
		}
		m := models.SendMessage{SendID: ss.ID, UserID: acct, Email: "ann@example.com", State: models.MessageDelivered, SentAt: &now}
		if i == 23 {
			m.OpenedAt = &now // an open recorded by an older herald
		}
		if err := a.svc.DB.W.Create(&m).Error; err != nil {
			t.Fatal(err)
		}
		newest = m
	}
	// The newest: Apple's proxy opens it, then the person clicks its link.
	ctx := context.Background()
	tok, err := a.svc.Tracking.Token(ctx, newest.ID)
	if err != nil {
		t.Fatal(err)
	}
	if err := a.svc.Tracking.OpenHit(ctx, tok, service.Hit{Method: "GET", IP: netip.MustParseAddr("17.58.101.12"), UserAgent: "Mozilla/5.0"}); err != nil {
		t.Fatal(err)
	}
	person := service.Hit{Method: "GET", IP: netip.MustParseAddr("203.0.113.7"),
		UserAgent: "Mozilla/5.0 (Windows NT 10.0; Win64; x64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/124.0.0.0 Safari/537.36"}
	if _, err := a.svc.Tracking.ClickHit(ctx, tok, 0, person); err != nil {
		t.Fatal(err)
	}

	r := c.get(fmt.Sprintf("/contacts/%d/edit", id))
	wantStatus(t, r, http.StatusOK)
	if got := attr(first(r.doc, "#contact-history-body"), "hx-get"); got != fmt.Sprintf("/contacts/%d/history", id) {
		t.Fatalf("history loader %q", got)
	}
	r = c.hxGet(fmt.Sprintf("/contacts/%d/history", id))
	wantStatus(t, r, http.StatusOK)
	items := all(r.doc, ".history-item")
	if len(items) != 20 || attr(items[0], "data-outcome") != "clicked" || attr(items[1], "data-outcome") != "opened" || attr(items[2], "data-outcome") != "delivered" {
		t.Fatalf("%d items, first %q\n%.1500s", len(items), attr(items[0], "data-outcome"), r.body)
	}
	// Each mail's timeline: the newest's events in order, the proxy's
	// open marked a machine's, the link as text (escaped, not a link);
	// the older herald's open as "first only", with the page's note.
	kinds := func(n *html.Node) string {
		var out []string
		for _, e := range all(n, ".mail-event") {
			out = append(out, attr(e, "data-kind")+"/"+attr(e, "data-machine")+"/"+attr(e, "data-ledger"))
		}
		return strings.Join(out, " ")
	}
	if got := kinds(items[0]); got != "delivered/false/false open/true/false click/false/false" {
		t.Errorf("newest timeline: %s", got)
	}
	// Times in the account's zone (none set: UTC), named.
	if got := text(first(items[0], ".mail-event-time")); got != now.UTC().Format("Jan 2, 2006, 15:04:05 UTC") {
		t.Errorf("event time %q, want the send's time in UTC", got)
	}
	if got := text(first(items[0], ".mail-event-machine")); got != "machine" {
		t.Errorf("machine mark %q", got)
	}
	if got := text(first(items[0], ".mail-event-url")); got != link {
		t.Errorf("link %q", got)
	}
	if first(items[0], ".mail-timeline a") != nil || first(r.doc, "script") != nil || strings.Contains(r.body, "<script>alert") {
		t.Errorf("the clicked link is not shown as escaped text\n%s", r.body)
	}
	if got := kinds(items[1]); got != "delivered/false/false open/false/true" {
		t.Errorf("older herald's timeline: %s", got)
	}
	if first(r.doc, "#timeline-ledger-note") == nil {
		t.Error("no note on opens recorded before per-event history")
	}
	if got := text(first(items[0], ".history-main a")); got != "Letter 24" {
		t.Fatalf("newest first: %q", got)
	}
	more := attr(first(r.doc, "#contact-history-more button"), "hx-get")
	if more == "" {
		t.Fatal("no way to older mails")
	}
	r = c.hxGet(more)
	if n := len(all(r.doc, ".history-item")); n != 5 || first(r.doc, "#contact-history-more") != nil {
		t.Fatalf("second page: %d items\n%.1500s", n, r.body)
	}
	// In the account's zone once it has one.
	if err := a.svc.Accounts.SetTimeZone(ctx, acct, "Asia/Tokyo"); err != nil {
		t.Fatal(err)
	}
	r = c.hxGet(fmt.Sprintf("/contacts/%d/history", id))
	tokyo, _ := time.LoadLocation("Asia/Tokyo")
	if got := text(first(r.doc, ".history-item .mail-event-time")); got != now.In(tokyo).Format("Jan 2, 2006, 15:04:05 MST") {
		t.Errorf("event time in Tokyo %q", got)
	}
	r = c.hxGet(fmt.Sprintf("/contacts/%d/history", empty))
	if first(r.doc, "#contact-history-empty") == nil {
		t.Fatal("no empty history message")
	}
	r = other.hxGet(fmt.Sprintf("/contacts/%d/history", id))
	wantStatus(t, r, http.StatusNotFound)
}
