package web_test

import (
	"net/http"
	"net/url"
	"slices"
	"testing"

	"herald/web"
)

func TestNotificationRecipients(t *testing.T) {
	t.Parallel()
	a := newTestApp(t, web.Options{})
	c, _ := a.account("Ada", "ada@example.com")
	r := c.get("/notifications")
	wantStatus(t, r, http.StatusOK)
	if first(r.doc, "#notifications-list .empty") == nil {
		t.Fatal("no empty state")
	}

	r = c.hxPost("/notifications", url.Values{"email_address": {"Ops@Example.com"}, "email_owner": {"Ops team"}})
	wantStatus(t, r, http.StatusOK)
	if value(r.doc, "#notification-email") != "" || attr(first(r.doc, "#notifications-list"), "hx-swap-oob") != "true" {
		t.Fatalf("add answer:\n%s", r.body)
	}
	if got := texts(r.doc, "#notifications-list tbody tr td"); len(got) < 3 || got[1] != "ops@example.com" || got[2] != "Ops team" {
		t.Fatalf("row %q", got)
	}
	if got := text(first(r.doc, "#flash .flash")); got != "ops@example.com will be notified." {
		t.Fatalf("flash %q", got)
	}

	// The same address again renames it.
	c.hxPost("/notifications", url.Values{"email_address": {"ops@example.com"}, "email_owner": {"Operations"}})
	c.hxPost("/notifications", url.Values{"email_address": {"cto@example.com"}, "email_owner": {"CTO"}})
	r = c.get("/notifications")
	if got := texts(r.doc, "#notifications-list td.cell-main"); !slices.Equal(got, []string{"ops@example.com", "cto@example.com"}) {
		t.Fatalf("rows %q", got)
	}
	if got := texts(r.doc, `#notifications-list td[data-label="Name"]`); !slices.Equal(got, []string{"Operations", "CTO"}) {
		t.Fatalf("names %q", got)
	}

	// Validation, beside each field.
	r = c.hxPost("/notifications", url.Values{"email_address": {"nope"}, "email_owner": {""}})
	wantStatus(t, r, http.StatusUnprocessableEntity)
	if got := texts(r.doc, "#notification-email-error li"); !slices.Equal(got, []string{"The email address must be a valid email address."}) {
		t.Fatalf("email errors %q", got)
	}
	if got := texts(r.doc, "#notification-owner-error li"); !slices.Equal(got, []string{"The name field is required"}) {
		t.Fatalf("owner errors %q", got)
	}
	if value(r.doc, "#notification-email") != "nope" {
		t.Fatal("input lost")
	}
	r = c.post("/notifications", url.Values{"email_address": {""}, "email_owner": {"x"}})
	wantStatus(t, r, http.StatusUnprocessableEntity)
	if first(r.doc, "nav.nav") == nil || len(texts(r.doc, "#notification-email-error li")) != 1 {
		t.Fatalf("full page 422:\n%s", r.body)
	}

	// Search by name.
	r = c.hxGet("/notifications?q=cto")
	if got := texts(r.doc, "#notifications-list td.cell-main"); !slices.Equal(got, []string{"cto@example.com"}) {
		t.Fatalf("search %q", got)
	}

	// Delete one, then bulk delete.
	r = c.get("/notifications")
	ids := rowIDs(r.doc, "#notifications-list")
	r = c.hxPost("/notifications/"+ids[0]+"/delete", nil)
	wantStatus(t, r, http.StatusOK)
	if got := texts(r.doc, "#notifications-list td.cell-main"); !slices.Equal(got, []string{"cto@example.com"}) {
		t.Fatalf("after delete %q", got)
	}
	if got := text(first(r.doc, "#flash .flash")); got != "Recipient deleted." {
		t.Fatalf("flash %q", got)
	}
	c.hxPost("/notifications", url.Values{"email_address": {"ceo@example.com"}, "email_owner": {"CEO"}})
	ids = rowIDs(c.get("/notifications").doc, "#notifications-list")
	r = c.hxPost("/notifications/bulk-delete", url.Values{"ids": ids})
	wantStatus(t, r, http.StatusOK)
	if first(r.doc, "#notifications-list .empty") == nil {
		t.Fatalf("after bulk delete:\n%s", r.body)
	}
	if got := text(first(r.doc, "#flash .flash")); got != "Deleted 2 recipients." {
		t.Fatalf("flash %q", got)
	}

	// Without htmx: redirects and flashes.
	wantRedirect(t, c.post("/notifications", url.Values{"email_address": {"x@example.com"}, "email_owner": {"X"}}), "/notifications")
	ids = rowIDs(c.get("/notifications").doc, "#notifications-list")
	wantRedirect(t, c.post("/notifications/"+ids[0]+"/delete", nil), "/notifications")
	if got := text(first(c.get("/notifications").doc, "#flash .flash")); got != "Recipient deleted." {
		t.Fatalf("flash %q", got)
	}
}
