package main

import (
	"context"
	"strconv"
	"strings"
	"testing"

	"github.com/chromedp/chromedp"

	"herald/dbtest"
	"herald/service"
)

// TestBrowserRoleButtons opens the console's pages at a phone's width (390
// px) as a viewer and as an editor of Ada's account: no page shows them a
// button their role may not use (each selector below must match nothing
// visible and enabled), the compose form shows an editor its send button
// disabled with who may send, and no page scrolls sideways. Pages are
// checked with axe-core too.
func TestBrowserRoleButtons(t *testing.T) {
	t.Parallel()
	if findChromium() == "" {
		dbtest.SkipOrFail(t, "chromium not found: install Debian's chromium to run browser tests")
	}
	dsn := dbtest.DSN(t)
	base := startConsoleServerWith(t, dsn, nil)
	db, err := service.OpenDB(dsn)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	svc := newService(t, db, service.Config{BaseURL: base})
	ctx := context.Background()

	// Ada's account, with a record of each kind whose row has buttons.
	ada, _, err := svc.Accounts.Create(ctx, service.AccountInput{Name: "Ada Lovelace", Email: "ada@example.com", Password: "correct horse battery"})
	if err != nil {
		t.Fatal(err)
	}
	ct, err := svc.ContactTypes.Create(ctx, ada.ID, "Customers")
	if err != nil {
		t.Fatal(err)
	}
	typeID := strconv.FormatInt(ct.ID, 10)
	contact, err := svc.Contacts.Create(ctx, ada.ID, service.ContactInput{ContactTypeID: typeID, FirstName: "Ann", Email: "ann@example.com", Country: "250"})
	if err != nil {
		t.Fatal(err)
	}
	snd, err := svc.Senders.Create(ctx, ada.ID, service.SenderInput{FromName: "Ada at Example", FromEmail: "news@example.com",
		ReplyToEmail: "ada@example.com", CountryID: "250", CompanyAddress: "1 Main Street", Nickname: "News"})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := svc.Senders.Verify(ctx, snd.VerifyToken); err != nil {
		t.Fatal(err)
	}
	// A second sender, not verified: its row has a Resend button.
	if _, err := svc.Senders.Create(ctx, ada.ID, service.SenderInput{FromName: "Ada at Example", FromEmail: "later@example.com",
		ReplyToEmail: "ada@example.com", CountryID: "250", CompanyAddress: "1 Main Street", Nickname: "Later"}); err != nil {
		t.Fatal(err)
	}
	g, err := svc.Groups.Create(ctx, ada.ID, service.GroupInput{GroupName: "Newsletter", Description: "The monthly letter", IsDisplay: "1"})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := svc.Segments.Create(ctx, ada.ID, service.SegmentInput{ContactTypeID: typeID, SegmentName: "Everyone at example.com",
		SelectField: []string{"email"}, SelectOperator: []string{"ends_with"}, Value: []string{"example.com"}}); err != nil {
		t.Fatal(err)
	}
	if _, err := svc.Designs.Create(ctx, ada.ID, service.DesignInput{Name: "Own letter", TemplateID: "1", TemplateHTML: "<html><body><p>Hi</p></body></html>"}); err != nil {
		t.Fatal(err)
	}
	auto, err := svc.Automations.Create(ctx, ada.ID, service.AutomationInput{Type: "custom", AutomationFor: "contacts_" + typeID,
		AutomationName: "Welcome", UnsubscribeGroupID: strconv.FormatInt(g.ID, 10)})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := svc.Automations.AddSchedule(ctx, ada.ID, service.ScheduleInput{Utr: auto.Utr, SenderID: strconv.FormatInt(snd.ID, 10), Subject: "Hello",
		WaitingType: "instantly", WaitingPeriod: "0", TemplateID: "2", PreviewImg: "02-newsletter.png"}); err != nil {
		t.Fatal(err)
	}
	if _, err := svc.Notifications.Save(ctx, ada.ID, service.NotificationInput{EmailAddress: "ops@example.com", EmailOwner: "Ops"}); err != nil {
		t.Fatal(err)
	}

	// Two teammates: a viewer and an editor.
	join := func(email, name string, role service.Role) {
		t.Helper()
		if _, err := svc.Team.Invite(ctx, ada.ID, email, role); err != nil {
			t.Fatal(err)
		}
		link := outboxLink(t, db, base, email, "Ada Lovelace invited you to join their team on Herald", "/invitations/")
		if _, err := svc.Team.Accept(ctx, link[strings.LastIndex(link, "/")+1:], service.AcceptInput{Name: name, Password: name + "'s passphrase"}); err != nil {
			t.Fatal(err)
		}
	}
	join("vera@example.com", "Vera", service.RoleViewer)
	join("eddie@example.com", "Eddie", service.RoleEditor)

	pages := []string{"/dashboard", "/contacts", "/contacts/" + strconv.FormatInt(contact.ID, 10) + "/edit", "/contacts/types", "/contacts/fields",
		"/segments", "/templates", "/single-sends", "/single-sends/new", "/automations", "/automations/" + auto.Utr, "/senders",
		"/senders/" + strconv.FormatInt(snd.ID, 10), "/suppressions/global", "/suppressions/groups", "/notifications", "/event-webhooks", "/account"}
	// What neither may use (settings, senders, sending, the team), and
	// what the viewer may not use besides (preparing).
	both := []string{"#new-sender", "[data-resend]", "[data-check-now]", "[data-rotate-key]", "[data-sign-anyway]", "#webhook-form",
		"#notification-add", "#group-create", "#set-live", "#pause-automation", "#delete-automation", "#time-zone", "#rotate-form",
		"#api-key-form", `.nav a[href="/team"]`, `.nav a[href="/audit-log"]`, "#send-save", "[data-bulk-delete]",
		"#senders-list [data-delete]", "#types-list [data-delete]", "#segments-list [data-delete]", "#sends-list [data-delete]",
		"#notifications-list [data-delete]"}
	viewerOnly := []string{"#new-contact", "#import-contacts", "[data-delete]", "#new-segment", "#new-design", "#new-send", "#new-automation",
		"#send-save-draft", "#send-test", "#add-email", "[data-remove]", "[data-move]", "#type-create", "#field-create",
		"#contact-form button[type=submit]", "#contact-tags-add", "#privacy-erase"}

	for _, m := range []struct {
		email, name string
		forbidden   []string
		note        string
	}{
		{"vera@example.com", "Vera", append(append([]string{}, both...), viewerOnly...), "Your role (Viewer) may not start"},
		{"eddie@example.com", "Eddie", both, "Your role (Editor) may not start"},
	} {
		b := newBrowserSessionOn(t, base)
		var problems consoleProblems
		problems.watch(b)
		phone := chromedp.EmulateViewport(390, 800)
		b.do(m.name+" logs in",
			phone,
			chromedp.Navigate(base+"/login"),
			b.idle,
			chromedp.SendKeys(chromedp.ID("login-email"), m.email),
			chromedp.SendKeys(chromedp.ID("login-password"), m.name+"'s passphrase"),
			chromedp.Click(chromedp.CSS(`#login-form button[type="submit"]`)),
			chromedp.WaitVisible(chromedp.CSS(".whoami")),
			b.idle,
		)
		list := "[" + quoteAll(m.forbidden) + "]"
		for _, p := range pages {
			b.do(m.name+" opens "+p, phone, chromedp.Navigate(base+p), b.idle, chromedp.WaitVisible(chromedp.CSS("#main")))
			// A control counts when it is rendered (has a box) and can be
			// used: not disabled, nor inside a disabled fieldset.
			shown := b.eval(m.name+" on "+p, `(() => {
				const out = [];
				for (const sel of `+list+`) {
					for (const el of document.querySelectorAll(sel)) {
						const usable = !el.matches(":disabled") && !el.closest("fieldset[disabled]");
						if (el.getClientRects().length > 0 && usable) { out.push(sel); break; }
					}
				}
				return out.join(", ");
			})()`)
			if shown != "" {
				t.Errorf("%s on %s sees %s", m.name, p, shown)
			}
			if s := b.sideways(390); s != "" {
				t.Errorf("%s on %s: %s", m.name, p, s)
			}
			if p == "/single-sends/new" {
				if got := b.eval("send button", `document.getElementById("send-save").disabled ? "disabled" : "enabled"`); got != "disabled" {
					t.Errorf("%s: the send button is %s", m.name, got)
				}
				if got := b.text("role note", "#send-role-note"); !strings.Contains(got, m.note) {
					t.Errorf("%s: the compose form says %q", m.name, got)
				}
			}
			// Captured (axe-core, and screenshots with HERALD_SCREENSHOTS):
			// the pages where the most controls give way.
			switch {
			case p == "/single-sends/new", p == "/contacts", p == "/event-webhooks", strings.HasPrefix(p, "/automations/"), strings.HasPrefix(p, "/contacts/") && strings.HasSuffix(p, "/edit"):
				b.capture("roles-" + strings.ToLower(m.name) + strings.NewReplacer("/", "-", auto.Utr, "one", strconv.FormatInt(contact.ID, 10), "one").Replace(p))
			}
		}
		if p := problems.take(); len(p) > 0 {
			t.Errorf("%s: console problems: %v", m.name, p)
		}
	}
}

// quoteAll writes strings as a JavaScript array's items.
func quoteAll(ss []string) string {
	out := make([]string, len(ss))
	for i, s := range ss {
		out[i] = strconv.Quote(s)
	}
	return strings.Join(out, ", ")
}
