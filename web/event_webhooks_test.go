package web_test

import (
	"context"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"sync/atomic"
	"testing"

	"herald/dbtest"
	"herald/models"
	"herald/service"
	"herald/web"
)

func TestEventWebhooksConsole(t *testing.T) {
	t.Parallel()
	a := newTestAppOn(t, dbtest.Service(t, service.Config{EventWebhooksPrivate: true}), web.Options{}) // the receiver is on loopback
	c, acct := a.account("Ada", "ada@example.com")
	var pings atomic.Int32
	rcv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if strings.HasPrefix(r.Header.Get("Herald-Signature"), "t=") {
			pings.Add(1)
		}
	}))
	t.Cleanup(rcv.Close)

	r := c.get("/event-webhooks")
	wantStatus(t, r, http.StatusOK)
	if first(r.doc, "#webhooks-list .empty") == nil || first(r.doc, `a[href="/event-webhooks"]`) == nil {
		t.Fatalf("empty list or nav link missing:\n%.2000s", r.body)
	}

	// Validation, beside the field.
	r = c.post("/event-webhooks", url.Values{"url": {"ftp://nope"}, "enabled": {"1"}})
	wantStatus(t, r, http.StatusUnprocessableEntity)
	if got := texts(r.doc, "#webhook-url-error li"); len(got) != 1 || got[0] != "The url must start with http:// or https://." {
		t.Fatalf("url errors %q", got)
	}

	// Saved: the secret shows this once.
	r = c.post("/event-webhooks", url.Values{"url": {rcv.URL + "/hook"}, "events": {"delivered", "click"}, "enabled": {"1"}})
	wantStatus(t, r, http.StatusOK)
	secret := text(first(r.doc, "#webhook-secret code.secret"))
	var w models.EventWebhook
	if err := a.svc.DB.R.Where("user_id = ?", acct).First(&w).Error; err != nil {
		t.Fatal(err)
	}
	if len(secret) != 64 || secret != w.Secret {
		t.Fatalf("secret shown %q", secret)
	}
	r = c.get("/event-webhooks")
	if strings.Contains(r.body, secret) || first(r.doc, "#webhook-secret") != nil {
		t.Fatal("the secret shows again")
	}
	if got := texts(r.doc, "#webhooks-list td"); len(got) < 3 || got[0] != rcv.URL+"/hook" || got[1] != "delivered, click" || got[2] != "Active" {
		t.Fatalf("row %q", got)
	}
	detail := "/event-webhooks/" + itoa(w.ID)

	// A test ping: posted at once, signed, listed among the deliveries.
	wantRedirect(t, c.post(detail+"/ping", nil), detail)
	r = c.get(detail)
	if pings.Load() != 1 || !strings.HasPrefix(text(first(r.doc, "#flash .flash")), "The endpoint answered HTTP 200 in") {
		t.Fatalf("ping: %d, flash %q", pings.Load(), text(first(r.doc, "#flash .flash")))
	}
	if got := texts(r.doc, "#deliveries-list tbody td"); len(got) < 4 || got[1] != "Test ping" || got[2] != "HTTP 200" || !strings.HasSuffix(got[3], " ms") {
		t.Fatalf("delivery row %q", got)
	}

	// Events dispatched, then one delivery resent.
	for i := 0; i < 3; i++ {
		if err := a.svc.DB.W.Create(&models.Event{WebhookID: w.ID, UserID: acct, Kind: "delivered", Email: "r@example.com", CreatedAt: models.NewTimestamp(models.Now())}).Error; err != nil {
			t.Fatal(err)
		}
	}
	d, _, err := a.svc.NewEventDispatcher(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if err := d.Pass(context.Background()); err != nil {
		t.Fatal(err)
	}
	r = c.get(detail)
	rows := all(r.doc, "#deliveries-list tbody tr")
	if got := texts(rows[0], "td"); len(rows) != 2 || len(got) < 3 || got[1] != "3 events" || got[2] != "HTTP 200" {
		t.Fatalf("dispatch row %q", got)
	}
	resend := first(r.doc, "#deliveries-list tbody tr form")
	wantRedirect(t, c.post(attr(resend, "action"), nil), detail)
	r = c.get(detail)
	if got := text(first(r.doc, "#flash .flash")); got != "3 events queued again: they go out within a second or two." {
		t.Fatalf("resend flash %q", got)
	}

	// Edit: disabled, every event.
	wantRedirect(t, c.post(detail, url.Values{"url": {rcv.URL + "/other"}}), detail)
	r = c.get("/event-webhooks")
	if got := texts(r.doc, "#webhooks-list td"); got[0] != rcv.URL+"/other" || got[1] != "All events" || got[2] != "Disabled" {
		t.Fatalf("after edit %q", got)
	}

	// Another account sees nothing of it.
	other, _ := a.account("Bob", "bob@example.com")
	wantStatus(t, other.get(detail), http.StatusNotFound)
	wantStatus(t, other.post(detail+"/delete", nil), http.StatusNotFound)
	wantStatus(t, other.post(detail+"/ping", nil), http.StatusNotFound)

	wantRedirect(t, c.post(detail+"/delete", nil), "/event-webhooks")
	if r = c.get("/event-webhooks"); first(r.doc, "#webhooks-list .empty") == nil {
		t.Fatal("not deleted")
	}
}
