package web_test

import (
	"context"
	"net/http"
	"net/url"
	"strings"
	"testing"

	"golang.org/x/net/html"

	"herald/dbtest"
	"herald/delivery"
	"herald/models"
	"herald/service"
	"herald/web"
)

// roleSetup is an account with a record of every kind the console lists,
// its owner and two members: an editor and a viewer.
type roleSetup struct {
	a       *testApp
	clients map[service.Role]*client
	ids     map[string]string // record kind -> id (or utr) for the pages' addresses
}

func newRoleSetup(t *testing.T) *roleSetup {
	t.Helper()
	ctx := context.Background()
	mem := &delivery.MemoryOutbox{}
	svc := dbtest.Service(t, service.Config{Transport: delivery.NewOutbox(mem), EventWebhooksPrivate: true})
	a := newTestAppOn(t, svc, web.Options{})
	owner, acct := a.account("Ada", "ada@example.com")
	s := &roleSetup{a: a, ids: map[string]string{}, clients: map[service.Role]*client{service.RoleOwner: owner}}
	s.clients[service.RoleEditor] = joinTeam(t, a, mem, owner, "ed@example.com", "editor")
	s.clients[service.RoleViewer] = joinTeam(t, a, mem, owner, "vi@example.com", "viewer")

	in := service.SenderInput{FromName: "Shop", FromEmail: "news@shop.example.com", ReplyToEmail: "help@shop.example.com",
		CountryID: "250", CompanyAddress: "1 rue de Rivoli", Nickname: "shop"}
	snd, err := svc.Senders.Create(ctx, acct, in)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := svc.Senders.Verify(ctx, snd.VerifyToken); err != nil {
		t.Fatal(err)
	}
	s.ids["sender"] = itoa(snd.ID)
	in.FromEmail, in.Nickname = "waiting@shop.example.com", "waiting" // unverified: its Resend button shows
	if _, err := svc.Senders.Create(ctx, acct, in); err != nil {
		t.Fatal(err)
	}
	g, err := svc.Groups.Create(ctx, acct, service.GroupInput{GroupName: "News", Description: "Monthly news", IsDisplay: "1"})
	if err != nil {
		t.Fatal(err)
	}
	s.ids["group"] = itoa(g.ID)
	au := a.audience(acct)
	ctype := au.contactType("Customers")
	s.ids["type"] = itoa(ctype)
	s.ids["contact"] = itoa(au.contact(ctype, "ann@example.org", "Ann", "A", "US", nil))
	au.field("plan", "text")
	seg, err := svc.Segments.Create(ctx, acct, service.SegmentInput{ContactTypeID: itoa(ctype), SegmentName: "Org people",
		SelectField: []string{"email"}, SelectOperator: []string{"ends_with"}, Value: []string{"example.org"}})
	if err != nil {
		t.Fatal(err)
	}
	s.ids["segment"] = itoa(seg.ID)
	d, err := svc.Designs.Create(ctx, acct, service.DesignInput{Name: "Own letter", TemplateID: "1", TemplateHTML: autoDesignHTML})
	if err != nil {
		t.Fatal(err)
	}
	s.ids["design"] = itoa(d.ID)
	auto, err := svc.Automations.Create(ctx, acct, service.AutomationInput{Type: "custom", AutomationFor: "contacts_" + itoa(ctype),
		AutomationName: "Welcome", UnsubscribeGroupID: itoa(g.ID)})
	if err != nil {
		t.Fatal(err)
	}
	s.ids["automation"] = auto.Utr
	for _, subject := range []string{"Hello", "Again"} {
		if _, err := svc.Automations.AddSchedule(ctx, acct, service.ScheduleInput{Utr: auto.Utr, SenderID: itoa(snd.ID), Subject: subject,
			WaitingType: "days", WaitingPeriod: "1", TemplateID: "2", PreviewImg: "02-newsletter.png"}); err != nil {
			t.Fatal(err)
		}
	}
	var email models.AutomationSchedule
	if err := svc.DB.R.Where("automation_id = ?", auto.ID).Order("id").First(&email).Error; err != nil {
		t.Fatal(err)
	}
	s.ids["email"] = email.Utr

	// The rest as the owner clicks it.
	owner.get("/dashboard")
	r := owner.post("/single-sends/draft", url.Values{"single_send_name": {"Idea"}})
	wantRedirect(t, r, "/single-sends/")
	s.ids["send"] = strings.TrimPrefix(r.location(), "/single-sends/")
	// A completed send: its page offers the resend to those who did not open.
	r = owner.post("/single-sends/draft", url.Values{"single_send_name": {"Sent"}})
	wantRedirect(t, r, "/single-sends/")
	s.ids["done"] = strings.TrimPrefix(r.location(), "/single-sends/")
	if err := svc.DB.W.Exec("UPDATE single_sends SET status = 3, resolved = 1 WHERE utr = ?", s.ids["done"]).Error; err != nil {
		t.Fatal(err)
	}
	wantRedirect(t, owner.post("/notifications", url.Values{"email_address": {"ops@example.com"}, "email_owner": {"Ops"}}), "/notifications")
	owner.get("/suppressions/global")
	owner.post("/suppressions/global", url.Values{"email_address": {"gone@example.com"}})
	owner.post("/suppressions/groups/"+s.ids["group"]+"/recipients", url.Values{"email_address": {"left@example.com"}})
	wantStatus(t, owner.post("/event-webhooks", url.Values{"url": {"http://127.0.0.1:9/hook"}, "enabled": {"1"}}), http.StatusOK)
	var hook models.EventWebhook
	if err := svc.DB.R.Where("user_id = ?", acct).First(&hook).Error; err != nil {
		t.Fatal(err)
	}
	s.ids["hook"] = itoa(hook.ID)
	r = owner.post("/forms", url.Values{"name": {"Join"}, "contact_type_id": {s.ids["type"]}})
	wantRedirect(t, r, "/forms/")
	s.ids["form"] = strings.TrimPrefix(r.location(), "/forms/")
	owner.get("/account")
	owner.post("/account/api-keys", url.Values{"name": {"Shop"}, "scope": {"read"}})
	return s
}

// page is an address with the record ids filled in: {send} and the like.
func (s *roleSetup) page(tmpl string) string {
	for k, v := range s.ids {
		tmpl = strings.ReplaceAll(tmpl, "{"+k+"}", v)
	}
	return tmpl
}

// target is where a control of a page sends the browser.
type target struct{ method, path, from string }

// disabled reports whether n cannot be used: disabled itself, or inside
// a disabled fieldset.
func disabled(n *html.Node) bool {
	for p := n; p != nil; p = p.Parent {
		if p.Type != html.ElementNode {
			continue
		}
		if _, ok := attrOK(p, "disabled"); ok && (p == n || p.Data == "fieldset") {
			return true
		}
	}
	return false
}

func isSubmit(n *html.Node) bool {
	switch n.Data {
	case "button":
		typ := strings.ToLower(attr(n, "type"))
		return typ == "" || typ == "submit"
	case "input":
		typ := strings.ToLower(attr(n, "type"))
		return typ == "submit" || typ == "image"
	}
	return false
}

func walk(n *html.Node, f func(*html.Node)) {
	if n.Type == html.ElementNode {
		f(n)
	}
	for c := n.FirstChild; c != nil; c = c.NextSibling {
		walk(c, f)
	}
}

func describe(n *html.Node) string {
	var b strings.Builder
	html.Render(&b, &html.Node{Type: html.ElementNode, Data: n.Data, Attr: n.Attr})
	s := b.String()
	if i := strings.Index(s, ">"); i >= 0 {
		s = s[:i+1]
	}
	return s
}

// targets lists what a person can set off from a page: each usable POST
// form's action (through an enabled submit button, its formaction, or
// Enter in a form without buttons), each usable hx-post (hx-put,
// hx-patch, hx-delete), and each link, GET form and hx-get.
func targets(doc *html.Node) []target {
	var out []target
	add := func(method, raw string, n *html.Node) {
		if raw == "" {
			return
		}
		u, err := url.Parse(raw)
		if err != nil || u.Host != "" || !strings.HasPrefix(u.Path, "/") {
			return
		}
		out = append(out, target{method, u.Path, describe(n)})
	}
	walk(doc, func(n *html.Node) {
		for _, verb := range []string{"post", "put", "patch", "delete"} {
			if v := attr(n, "hx-"+verb); v != "" && n.Data != "form" && !isSubmit(n) && !disabled(n) {
				add(strings.ToUpper(verb), v, n)
			}
		}
		if v := attr(n, "hx-get"); v != "" && !disabled(n) {
			add("GET", v, n)
		}
		if n.Data == "a" {
			add("GET", attr(n, "href"), n)
		}
		if n.Data != "form" {
			return
		}
		if !strings.EqualFold(attr(n, "method"), "post") {
			add("GET", attr(n, "action"), n)
			return
		}
		var submits, fields int
		walk(n, func(c *html.Node) {
			switch {
			case isSubmit(c):
				submits++
				if disabled(c) {
					return
				}
				if v := attr(c, "hx-post"); v != "" {
					add("POST", v, c)
				} else {
					add("POST", attr(n, "hx-post"), n)
				}
				if v := attr(c, "formaction"); v != "" {
					add("POST", v, c)
				} else {
					add("POST", attr(n, "action"), n)
				}
			case (c.Data == "input" && attr(c, "type") != "hidden") || c.Data == "select" || c.Data == "textarea":
				if !disabled(c) {
					fields++
				}
			}
		})
		if submits == 0 && fields > 0 {
			add("POST", attr(n, "action"), n)
			add("POST", attr(n, "hx-post"), n)
		}
	})
	return out
}

// TestButtonsFollowRoles logs in as the owner, an editor and a viewer and
// opens every console page: each control a page shows a role points at a
// route that role may use (by the route's own declared action and the
// service's role table, so a button added later without its check fails
// here), and the buttons each role must and must not see are pinned.
func TestButtonsFollowRoles(t *testing.T) {
	t.Parallel()
	s := newRoleSetup(t)
	pages := []string{
		"/dashboard", "/contacts", "/contacts?type={type}", "/contacts/new", "/contacts/{contact}/edit", "/contacts/types", "/contacts/types/{type}/edit",
		"/contacts/fields", "/contacts/import", "/segments", "/segments/new", "/segments/{segment}", "/segments/{segment}/edit",
		"/exports", "/forms", "/forms/{form}", "/single-sends", "/single-sends/new", "/single-sends/{send}", "/single-sends/{send}/edit",
		"/single-sends/calendar", "/automations", "/automations/{automation}", "/automations/{automation}/emails/new",
		"/automations/{automation}/emails/{email}/edit", "/automations/{automation}/emails/{email}/design", "/templates",
		"/templates/editor", "/templates/designs/{design}/edit", "/senders", "/senders/new", "/senders/{sender}", "/senders/{sender}/edit",
		"/outbox", "/suppressions/global", "/suppressions/groups", "/suppressions/groups/{group}", "/suppressions/groups/{group}/edit",
		"/suppressions/bounced", "/suppressions/reports", "/suppressions/setup", "/notifications", "/event-webhooks", "/event-webhooks/{hook}",
		"/account", "/docs/api", "/team", "/audit-log", "/suppressions/lifted", "/segments/{segment}/why",
		"/templates/designs/{design}/preview", "/contacts/{contact}/history", "/relays", "/help/people-and-machines", "/messages",
		"/single-sends/{done}", "/single-sends/{done}/resend",
	}
	seen := map[service.Role]int{}
	for _, role := range []service.Role{service.RoleOwner, service.RoleEditor, service.RoleViewer} {
		c := s.clients[role]
		for _, p := range pages {
			path := s.page(p)
			r := c.get(path)
			u, _ := url.Parse(path)
			act, found := s.a.web.RouteAction("GET", u.Path)
			if !found {
				t.Fatalf("GET %s: no route", path)
			}
			if !service.Can(role, act) {
				wantStatus(t, r, http.StatusForbidden)
				continue
			}
			if r.status != http.StatusOK {
				t.Errorf("%s: GET %s: %d", role, path, r.status)
				continue
			}
			for _, tg := range targets(r.doc) {
				act, found := s.a.web.RouteAction(tg.method, tg.path)
				if !found {
					if tg.method != "GET" {
						t.Errorf("%s on %s: %s %s serves nothing: %s", role, path, tg.method, tg.path, tg.from)
					}
					continue
				}
				if tg.method != "GET" && act != service.ActRead {
					seen[role]++
				}
				if act != "" && !service.Can(role, act) {
					t.Errorf("%s on %s: shown %s %s, which needs %q: %s", role, path, tg.method, tg.path, act, tg.from)
				}
			}
		}
	}
	// The crawl saw buttons: the owner's pages are full of them, the
	// editor's have some, the viewer's (beside its own login) none.
	if seen[service.RoleOwner] < 60 || seen[service.RoleEditor] < 30 || seen[service.RoleEditor] >= seen[service.RoleOwner] {
		t.Errorf("state-changing controls seen: %v", seen)
	}

	// What each role sees, pinned: present for the roles listed, absent
	// for the others.
	O, E, V := service.RoleOwner, service.RoleEditor, service.RoleViewer
	for _, tc := range []struct {
		page, sel string
		roles     []service.Role
	}{
		{"/contacts", "#new-contact", []service.Role{O, E}},
		{"/contacts", "#import-contacts", []service.Role{O, E}},
		{"/contacts", "[data-delete]", []service.Role{O, E}},
		{"/contacts", "[data-bulk-delete]", []service.Role{O, E}},
		{"/contacts", "#bulk-tags-add", []service.Role{O, E}},
		{"/contacts", `input[name="ids"]`, []service.Role{O, E}},
		{"/contacts/{contact}/edit", "#contact-form button[type=submit]", []service.Role{O, E}},
		{"/contacts/{contact}/edit", "#contact-tags-add", []service.Role{O, E}},
		{"/contacts/{contact}/edit", "#privacy-erase", []service.Role{O, E}},
		{"/contacts/{contact}/edit", "#privacy-export", []service.Role{O, E, V}},
		{"/contacts/{contact}/edit", "fieldset.read-only[disabled]", []service.Role{V}},
		{"/contacts/types", "#type-create", []service.Role{O, E}},
		{"/contacts/types", "[data-delete]", []service.Role{O}},
		{"/contacts/fields", "#field-create", []service.Role{O, E}},
		{"/contacts/import", "#import-form", []service.Role{O, E}},
		{"/segments", "#new-segment", []service.Role{O, E}},
		{"/segments", "[data-delete]", []service.Role{O}},
		{"/segments/{segment}", "#edit-segment", []service.Role{O, E}},
		{"/segments/{segment}", "#segment-recipient-add", []service.Role{O, E}},
		{"/segments/{segment}/edit", "#segment-save", []service.Role{O, E}},
		{"/templates", "#new-design", []service.Role{O, E}},
		{"/templates", "[data-use]", []service.Role{O, E}},
		{"/templates", "[data-delete]", []service.Role{O, E}},
		{"/templates/designs/{design}/edit", "#design-save", []service.Role{O, E}},
		{"/single-sends", "#new-send", []service.Role{O, E}},
		{"/single-sends/new", `#checklist-summary a[href="/account#checklist"]`, []service.Role{O}},
		{"/single-sends", "[data-duplicate]", []service.Role{O, E}},
		{"/single-sends", "[data-delete]", []service.Role{O}},
		{"/single-sends", "[data-bulk-delete]", []service.Role{O}},
		{"/single-sends", "[data-edit]", []service.Role{O, E}},
		{"/single-sends/{send}", "#delete-send", []service.Role{O}},
		{"/single-sends/{done}", "#send-resend", []service.Role{O, E, V}},
		{"/single-sends/{done}/resend", "#resend-form", []service.Role{O}},
		{"/single-sends/{done}/resend", "#resend-count", []service.Role{O, E, V}},
		{"/single-sends/{done}/resend", `#send-resend [data-role-note="send"]`, []service.Role{E, V}},
		{"/single-sends/{send}", "#duplicate-send", []service.Role{O, E}},
		{"/single-sends/new", "#send-save", []service.Role{O, E, V}},
		{"/single-sends/new", "#send-save[disabled]", []service.Role{E, V}},
		{"/single-sends/new", "#send-role-note", []service.Role{E, V}},
		{"/single-sends/new", "#send-save-draft", []service.Role{O, E}},
		{"/single-sends/new", "#send-test", []service.Role{O, E}},
		{"/automations", "#new-automation", []service.Role{O, E}},
		{"/automations", "[data-duplicate]", []service.Role{O, E}},
		{"/automations", "[data-delete]", []service.Role{O}},
		{"/automations/{automation}", "#set-live", []service.Role{O}},
		{"/automations/{automation}", "#delete-automation", []service.Role{O}},
		{"/automations/{automation}", "#add-email", []service.Role{O, E}},
		{"/automations/{automation}", "[data-remove]", []service.Role{O, E}},
		{"/automations/{automation}", "[data-move]", []service.Role{O, E}},
		{"/automations/{automation}", `[data-role-note="run_automation"]`, []service.Role{E, V}},
		{"/senders", "#new-sender", []service.Role{O}},
		{"/senders", "[data-delete]", []service.Role{O}},
		{"/senders", "[data-resend]", []service.Role{O}},
		{"/senders/{sender}", "[data-check-now]", []service.Role{O}},
		{"/senders/{sender}", "[data-rotate-key]", []service.Role{O}},
		{"/senders/{sender}", "[data-sign-anyway]", []service.Role{O}},
		{"/event-webhooks", "#webhook-form", []service.Role{O}},
		{"/event-webhooks", `.role-card [data-role-note="settings"]`, []service.Role{E, V}},
		{"/event-webhooks/{hook}", "#webhook-ping", []service.Role{O}},
		{"/event-webhooks/{hook}", "#webhook-delete", []service.Role{O}},
		{"/notifications", "#notification-add", []service.Role{O}},
		{"/notifications", "[data-delete]", []service.Role{O}},
		{"/suppressions/global", "[data-delete]", []service.Role{O}},
		{"/suppressions/groups", "#group-create", []service.Role{O}},
		{"/suppressions/groups/{group}", "[data-delete]", []service.Role{O}},
		{"/forms", "#form-settings", []service.Role{O, E}},
		{"/forms/{form}", "#form-delete", []service.Role{O, E}},
		{"/account", "#time-zone", []service.Role{O}},
		{"/account", "#rotate-form", []service.Role{O}},
		{"/account", "#api-key-form", []service.Role{O}},
		{"/account", "#password-form", []service.Role{O, E, V}},
		{"/dashboard", `a[href="/team"]`, []service.Role{O}},
		{"/dashboard", `a[href="/audit-log"]`, []service.Role{O}},
	} {
		for _, role := range []service.Role{O, E, V} {
			r := s.clients[role].get(s.page(tc.page))
			want := false
			for _, x := range tc.roles {
				want = want || x == role
			}
			if got := first(r.doc, tc.sel) != nil; got != want {
				t.Errorf("%s on %s: %s shown %v, want %v", role, tc.page, tc.sel, got, want)
			}
		}
	}
}

// TestRouteAction pins the lookup the crawl above relies on: the most
// specific pattern wins, open routes declare nothing, an unknown address
// is not found.
func TestRouteAction(t *testing.T) {
	t.Parallel()
	a := newTestApp(t, web.Options{})
	for _, tc := range []struct {
		method, path string
		want         service.Action
		found        bool
	}{
		{"POST", "/single-sends/draft", service.ActPrepare, true},
		{"POST", "/single-sends/abc123", service.ActSend, true},
		{"POST", "/contacts/7/delete", service.ActPrepare, true},
		{"POST", "/contacts/types/7/delete", service.ActDeleteList, true},
		{"GET", "/team", service.ActTeam, true},
		{"POST", "/logout", "", true},
		{"POST", "/nowhere/at/all", "", false},
		{"GET", "/contacts/7/delete", "", false},
	} {
		got, found := a.web.RouteAction(tc.method, tc.path)
		if got != tc.want || found != tc.found {
			t.Errorf("%s %s: %q %v, want %q %v", tc.method, tc.path, got, found, tc.want, tc.found)
		}
	}
}
