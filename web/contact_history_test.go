package web_test

import (
	"fmt"
	"net/http"
	"testing"

	"herald/models"
	"herald/web"
)

// The contact page loads the contact's mail history (htmx), twenty mails
// a page, newest first, each with its outcome; another account's contact
// is not found (issue 15, part 2).
func TestContactHistoryPage(t *testing.T) {
	a := newTestApp(t, web.Options{})
	c, acct := a.account("Ada", "ada@example.com")
	other, _ := a.account("Bob", "bob@example.com")
	au := a.audience(acct)
	typeID := au.contactType("Customers")
	id := au.contact(typeID, "ann@example.com", "Ann", "Lee", "US", nil)
	empty := au.contact(typeID, "new@example.com", "New", "Lee", "US", nil)

	now := models.NewTimestamp(models.Now())
	for i := range 25 {
		ss := models.SingleSend{UserID: acct, SingleSendName: fmt.Sprintf("Letter %02d", i), Subject: "News", Utr: fmt.Sprintf("u%02d", i), CreatedAt: now, UpdatedAt: now}
		if err := a.svc.DB.W.Create(&ss).Error; err != nil {
			t.Fatal(err)
		}
		m := models.SendMessage{SendID: ss.ID, UserID: acct, Email: "ann@example.com", State: models.MessageDelivered, SentAt: &now}
		if i == 24 {
			m.OpenedAt = &now
		}
		if err := a.svc.DB.W.Create(&m).Error; err != nil {
			t.Fatal(err)
		}
	}

	r := c.get(fmt.Sprintf("/contacts/%d/edit", id))
	wantStatus(t, r, http.StatusOK)
	if got := attr(first(r.doc, "#contact-history-body"), "hx-get"); got != fmt.Sprintf("/contacts/%d/history", id) {
		t.Fatalf("history loader %q", got)
	}
	r = c.hxGet(fmt.Sprintf("/contacts/%d/history", id))
	wantStatus(t, r, http.StatusOK)
	items := all(r.doc, ".history-item")
	if len(items) != 20 || attr(items[0], "data-outcome") != "opened" || attr(items[1], "data-outcome") != "delivered" {
		t.Fatalf("%d items, first %q\n%.1500s", len(items), attr(items[0], "data-outcome"), r.body)
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
	r = c.hxGet(fmt.Sprintf("/contacts/%d/history", empty))
	if first(r.doc, "#contact-history-empty") == nil {
		t.Fatal("no empty history message")
	}
	r = other.hxGet(fmt.Sprintf("/contacts/%d/history", id))
	wantStatus(t, r, http.StatusNotFound)
}
