package web_test

import (
	"net/http"
	"net/url"
	"slices"
	"strings"
	"testing"

	"herald/web"
)

// The account page's named keys: made without JavaScript (the answer is
// the page with the secret, once) and with htmx (the card alone), refused
// forms answered 422 with their messages, another account's key not
// found, revocation by both routes.
func TestConsoleAPIKeys(t *testing.T) {
	t.Parallel()
	a := newTestApp(t, web.Options{})
	c, id := a.account("Ada", "ada@example.com")
	other, _ := a.account("Bob", "bob@example.com")
	c.get("/account")

	r := c.post("/account/api-keys", url.Values{"name": {"Shop"}, "scope": {"areas"}, "areas": {"contacts", "segments"}})
	wantStatus(t, r, http.StatusOK)
	sec := value(r.doc, "#new-api-key-secret")
	if !strings.HasPrefix(sec, "skn_") || !strings.Contains(r.body, "<title>") {
		t.Fatalf("no secret, or not the page: %q", sec)
	}
	if got := r.header.Get("Cache-Control"); got != "no-store" {
		t.Fatalf("Cache-Control %q on the answer with a secret", got)
	}
	if got := texts(r.doc, `#api-keys-list td[data-label="Scope"]`); len(got) != 1 || got[0] != "Contacts, Segments" {
		t.Fatalf("scope listed %q", got)
	}
	if r := c.get("/account"); strings.Contains(r.body, sec) || len(all(r.doc, "#new-api-key-secret")) != 0 {
		t.Fatal("the secret is shown again")
	}

	// Each area's access chosen in its own field: read only, or read and
	// change.
	r = c.post("/account/api-keys", url.Values{"name": {"Dashboards"}, "scope": {"areas"}, "area_contacts": {"read"}, "area_senders": {"write"}, "area_segments": {""}})
	wantStatus(t, r, http.StatusOK)
	if got := texts(r.doc, `#api-keys-list td[data-label="Scope"]`); len(got) != 2 || !slices.Contains(got, "Contacts (read only), Senders") {
		t.Fatalf("scopes listed %q", got)
	}
	if got := value(r.doc, "#api-key-area-contacts"); got != "" {
		t.Fatalf("the form after a key was made keeps %q", got)
	}
	r = c.hxPost("/account/api-keys", url.Values{"name": {""}, "scope": {"areas"}, "area_contacts": {"read"}})
	wantStatus(t, r, http.StatusUnprocessableEntity)
	if got := attr(first(r.doc, `#api-key-area-contacts option[selected]`), "value"); got != "read" {
		t.Fatalf("a refused form lost the area's access: %q\n%.2000s", got, r.body)
	}
	if ks, err := a.svc.APIKeys.List(t.Context(), id); err != nil || len(ks) != 2 || ks[1].Name != "Dashboards" {
		t.Fatal(ks, err)
	} else if err := a.svc.APIKeys.Revoke(t.Context(), id, ks[1].ID); err != nil {
		t.Fatal(err)
	}

	r = c.hxPost("/account/api-keys", url.Values{"name": {"Shop"}, "scope": {"read"}})
	wantStatus(t, r, http.StatusUnprocessableEntity)
	if got := texts(r.doc, "#api-key-name-error li"); len(got) != 1 || got[0] != "The name has already been taken." {
		t.Fatalf("taken name: %q\n%s", got, r.body)
	}
	if strings.Contains(r.body, "<title>") {
		t.Fatal("htmx got the whole page")
	}

	r = c.hxPost("/account/api-keys", url.Values{"name": {"Reports"}, "scope": {"read"}})
	wantStatus(t, r, http.StatusOK)
	if !strings.HasPrefix(value(r.doc, "#new-api-key-secret"), "skn_") || len(all(r.doc, "#api-keys-list tbody tr")) != 2 {
		t.Fatalf("htmx create:\n%s", r.body)
	}

	keys, err := a.svc.APIKeys.List(t.Context(), id)
	if err != nil || len(keys) != 2 {
		t.Fatal(keys, err)
	}
	// Another account cannot revoke them.
	other.get("/account")
	wantStatus(t, other.hxPost("/account/api-keys/"+itoa(keys[0].ID)+"/revoke", nil), http.StatusNotFound)

	wantRedirect(t, c.post("/account/api-keys/"+itoa(keys[0].ID)+"/revoke", nil), "/account")
	c.get("/account")
	r = c.hxPost("/account/api-keys/"+itoa(keys[1].ID)+"/revoke", nil)
	wantStatus(t, r, http.StatusOK)
	if len(all(r.doc, "#api-keys-list")) != 0 || len(all(r.doc, "#api-keys-notice")) != 1 {
		t.Fatalf("after revoking both:\n%s", r.body)
	}
	if keys, _ := a.svc.APIKeys.List(t.Context(), id); len(keys) != 0 {
		t.Fatalf("left: %+v", keys)
	}
}
