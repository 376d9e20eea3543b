package web_test

import (
	"context"
	"net/http"
	"net/url"
	"testing"

	"herald/models"
	"herald/service"
	"herald/web"
)

// The send form's dry run answers 204 for a form that would save and 422
// for one that would not, and saves nothing either way: the console asks
// "send now?" only of a form that would save.
func TestSendFormValidate(t *testing.T) {
	t.Parallel()
	s := newSendSetup(t)
	s.c.get("/single-sends/new") // the CSRF token
	for _, tt := range []struct {
		name string
		form url.Values
		want int
	}{
		{"empty", url.Values{"schedule_type": {"0"}}, http.StatusUnprocessableEntity},
		{"valid", s.form("Ready to go"), http.StatusNoContent},
	} {
		r := s.c.hxPost("/single-sends/validate", tt.form)
		if r.status != tt.want {
			t.Errorf("%s: %d, want %d\n%.500s", tt.name, r.status, tt.want, r.body)
		}
	}
	n := 0
	if err := s.a.svc.SingleSends.Each(context.Background(), s.acct, service.ListFilter{}, func(*models.SingleSend) error { n++; return nil }); err != nil {
		t.Fatal(err)
	}
	if n != 0 {
		t.Fatalf("the dry run saved %d sends", n)
	}
}

// An account without an unsubscribe group makes one on the send form,
// and it comes back chosen.
func TestSendFormCreatesGroup(t *testing.T) {
	t.Parallel()
	a := newTestApp(t, web.Options{})
	c, acct := a.account("Ada", "ada@example.com")
	r := c.get("/single-sends/new")
	wantStatus(t, r, http.StatusOK)
	if first(r.doc, "#send-group-field #send-new-group") == nil || attr(first(r.doc, "#send-create-group"), "hx-post") != "/single-sends/group" {
		t.Fatalf("no way to make a group in place:\n%.3000s", text(first(r.doc, "#send-group-field")))
	}
	r = c.hxPost("/single-sends/group", url.Values{"new_group_name": {"  "}})
	wantStatus(t, r, http.StatusUnprocessableEntity)
	if got := text(first(r.doc, "#send-new-group-error li")); got != "Give the group a name." {
		t.Fatalf("empty name: %q", got)
	}
	r = c.hxPost("/single-sends/group", url.Values{"new_group_name": {"Newsletter"}})
	wantStatus(t, r, http.StatusOK)
	sel := first(r.doc, `#send-group-field select#send-group[name="unsubscribe_group_id"]`)
	if sel == nil {
		t.Fatalf("no select:\n%s", r.body)
	}
	if got := text(first(sel, "option[selected]")); got != "Newsletter" {
		t.Fatalf("chosen %q", got)
	}
	var groups []string
	_ = a.svc.Groups.Each(context.Background(), acct, service.ListFilter{}, func(g *models.UnsubscribeGroupCount) error {
		groups = append(groups, g.GroupName)
		return nil
	})
	if len(groups) != 1 || groups[0] != "Newsletter" {
		t.Fatalf("groups %v", groups)
	}
}
