package web_test

import (
	"net/url"
	"strings"
	"testing"

	"herald/web"
)

// The console refuses text that is not valid UTF-8 (422) in a query or a
// form, before any handler stores it.
func TestConsoleRefusesInvalidUTF8(t *testing.T) {
	t.Parallel()
	a := newTestApp(t, web.Options{})
	c, _ := a.account("Ada", "ada@example.com")
	c.get("/contacts/types") // learn the CSRF token
	r := c.hxPost("/contacts/types", url.Values{"name": {"Bad\xff name"}})
	wantStatus(t, r, 422)
	if !strings.Contains(r.body, "must be valid UTF-8") {
		t.Fatalf("answer: %.500s", r.body)
	}
	wantStatus(t, c.get("/contacts?search=%FF"), 422)
	if r := c.get("/contacts/types"); strings.Contains(r.body, "Bad") {
		t.Fatal("the contact type was stored")
	}
}
