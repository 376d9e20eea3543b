package main

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/cdproto/page"
	"github.com/chromedp/chromedp"
	"github.com/chromedp/chromedp/kb"

	"herald/eventually"
	"herald/models"
)

// keyboardScript is the keyboard audit (testdata/keyboard.js), added to
// every page the session opens.
const keyboardScript = "testdata/keyboard.js"

// kbStop is one focus move the audit recorded.
type kbStop struct {
	ID      int    `json:"id"`
	Key     string `json:"key"`
	Desc    string `json:"desc"`
	Visible bool   `json:"visible"`
	Frame   bool   `json:"frame"`
	Ring    *bool  `json:"ring"`
}

// installKeyboardAudit makes every page the session opens from now on
// carry the audit.
func (b *browserSession) installKeyboardAudit() {
	b.t.Helper()
	src, err := os.ReadFile(keyboardScript)
	if err != nil {
		b.t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(b.ctx, 30*time.Second)
	defer cancel()
	if _, err := chromedp.Call(ctx, page.AddScriptToEvaluateOnNewDocument, page.AddScriptToEvaluateOnNewDocumentParams{Source: string(src)}); err != nil {
		b.t.Fatalf("install the keyboard audit: %v", err)
	}
}

// evalJSON evaluates js (which returns a JSON string) into v.
func (b *browserSession) evalJSON(step, js string, v any) {
	b.t.Helper()
	if err := json.Unmarshal([]byte(b.eval(step, js)), v); err != nil {
		b.t.Fatalf("%s: %v", step, err)
	}
}

// press sends real key events (Input.dispatchKeyEvent): n presses of key,
// with Shift held when shift is set.
func (b *browserSession) press(step, key string, n int, shift bool) {
	b.t.Helper()
	var opts []chromedp.KeyOption
	if shift {
		opts = append(opts, chromedp.KeyModifiers(chromedp.ModifierShift))
	}
	acts := make([]chromedp.Action[chromedp.Void], n)
	for i := range acts {
		acts[i] = chromedp.KeyEvent(key, opts...)
	}
	b.do(step, acts...)
}

// kbNow is where the focus is (keyboard.js's now).
type kbNow struct {
	State string `json:"state"` // "stop", "none" or "left"
	kbStop
}

// tabWalk presses Tab (or Shift+Tab) one key at a time from the focused
// stop (from; 0: from the top of the page, the first stop met counts as
// it) until the focus comes back to it, or leaves the page (past its last
// stop a browser goes to its own toolbar, and comes back to the first
// stop after it). It returns the stops met, in order, without the one it
// started from unless from is 0. ok is false when neither happened
// within limit presses: the focus is trapped, or the page has more stops
// than limit.
func (b *browserSession) tabWalk(step string, from int, shift bool, limit int) (stops []kbStop, ok bool) {
	b.t.Helper()
	for range limit {
		b.press(step, kb.Tab, 1, shift)
		var now kbNow
		b.evalJSON(step, `JSON.stringify(__kb.now())`, &now)
		switch {
		case now.State == "left":
			return stops, true
		case now.State != "stop":
			continue
		case from == 0:
			from = now.ID
		case now.ID == from:
			return stops, true
		case len(stops) > 0 && stops[len(stops)-1].ID == now.ID:
			continue // still inside a frame
		}
		stops = append(stops, now.kbStop)
	}
	return stops, false
}

// keyboardAudit checks the page the session shows: nothing acts on a
// click without taking focus, Tab meets every visible control once, in
// the page's order, and comes back round (no trap); Shift+Tab meets them
// in the reverse order; every focused element is visible and shows a
// focus indicator. It returns the problems, one line each.
func (b *browserSession) keyboardAudit(where string) []string {
	b.t.Helper()
	var problems []string
	var clicks []string
	b.evalJSON(where, `JSON.stringify(__kb.clickProblems())`, &clicks)
	problems = append(problems, clicks...)

	var expected []kbStop
	b.evalJSON(where, `JSON.stringify(__kb.expected())`, &expected)
	if len(expected) == 0 {
		return append(problems, "nothing on the page takes the keyboard's focus")
	}
	// The walk starts from the top of the page (the page may have
	// focused a field of its own).
	b.eval(where, `(__kb.top(), "")`)
	limit := 3*len(expected) + 24
	fwd, ok := b.tabWalk(where+": Tab", 0, false, limit)
	if !ok || len(fwd) == 0 {
		return append(problems, fmt.Sprintf("Tab never came back to the first stop within %d presses (a trap?): the focus went %s", limit, stopList(fwd, 12)))
	}
	first := fwd[0]
	if fwd[len(fwd)-1].Frame {
		fwd = fwd[:len(fwd)-1] // the walk left the page from inside a frame
	}
	last := fwd[len(fwd)-1]
	seen := map[string]bool{}
	var ids []int
	for _, s := range fwd {
		if seen[s.Key] && !strings.HasPrefix(s.Key, "radio:") {
			problems = append(problems, "Tab meets "+s.Desc+" twice in one round")
		}
		seen[s.Key] = true
		ids = append(ids, s.ID)
		if !s.Visible {
			problems = append(problems, "the focus lands on "+s.Desc+", which is not visible")
		}
	}
	for _, e := range expected {
		if !seen[e.Key] {
			problems = append(problems, "Tab never reaches "+e.Desc)
		}
	}
	idsJSON, _ := json.Marshal(ids)
	var order []string
	b.evalJSON(where, `JSON.stringify(__kb.orderProblems(`+string(idsJSON)+`))`, &order)
	problems = append(problems, order...)

	// The focus indicators, known once the focus has left each stop.
	b.eval(where, `(__kb.settle(), "")`)
	var log []kbStop
	b.evalJSON(where, `JSON.stringify(__kb.log)`, &log)
	ring := map[int]bool{}
	for _, s := range log {
		if s.Ring != nil && *s.Ring {
			ring[s.ID] = true
		}
	}
	for _, s := range fwd {
		if !s.Frame && !ring[s.ID] {
			problems = append(problems, "no visible focus indicator on "+s.Desc)
		}
	}

	// Back: from the last stop, Shift+Tab meets them all in reverse up to
	// the first.
	b.eval(where, fmt.Sprintf(`(__kb.reset(), __kb.els.get(%d).focus(), "")`, last.ID))
	bwd, ok := b.tabWalk(where+": Shift+Tab", last.ID, true, limit)
	if !ok {
		return append(problems, fmt.Sprintf("Shift+Tab never came back to the last stop within %d presses: the focus went %s", limit, stopList(bwd, 12)))
	}
	// Frames are passed through (their inside is out of the page's
	// sight, and the focus enters them a moment late).
	var fk, bk []string
	for _, s := range fwd[:len(fwd)-1] {
		if !s.Frame {
			fk = append(fk, s.Key)
		}
	}
	for _, s := range bwd {
		if !s.Frame {
			bk = append(bk, s.Key)
		}
	}
	if i := slices.Index(bk, first.Key); i >= 0 {
		bk = bk[:i+1] // Shift+Tab wrapped round past the first stop
	}
	if !slices.Equal(fk, reversed(bk)) {
		problems = append(problems, fmt.Sprintf("Shift+Tab from the last stop does not meet the stops of Tab in reverse: Tab went %s; Shift+Tab went %s", stopList(fwd, 40), stopList(bwd, 40)))
	}
	b.eval(where, `(__kb.settle(), "")`)
	return problems
}

func reversed(s []string) []string {
	out := slices.Clone(s)
	slices.Reverse(out)
	return out
}

// stopList names the first n stops.
func stopList(stops []kbStop, n int) string {
	var names []string
	for i, s := range stops {
		if i == n {
			names = append(names, fmt.Sprintf("… %d more", len(stops)-n))
			break
		}
		names = append(names, s.Desc)
	}
	return strings.Join(names, " → ")
}

// TestBrowserKeyboard checks that every action of the console can be
// done with the keyboard, with real key events:
//
//   - every page, at 390 and 1280 px, passes keyboardAudit: the pages
//     before login, every page of the menu, and the pages of records (a
//     contact and its history, a segment, a send's form, a scheduled send
//     and a completed one with its statistics, an automation and its
//     email, a sender, a group, an outbox message, the team with an
//     invitation, the account with a named API key), the API documentation
//     (Swagger UI) and the design editor (GrapesJS) pages;
//   - the phone's menu opens with Enter and the space bar, Tab meets all
//     its links, and Escape (or tabbing past its end) closes it;
//   - a delete confirmation opens with Enter, is dismissed with nothing
//     deleted and the focus kept, then accepted with the focus kept in the
//     list;
//   - two flows done with the keyboard alone: a single send written and
//     scheduled (its "Send now?" question dismissed first), and a contact
//     added to a contact type (its refused form putting the focus on the
//     field in error); and a panel button of the design editor pressed
//     with Enter.
func TestBrowserKeyboard(t *testing.T) {
	t.Parallel()
	b, dsn := newBrowserSessionWithDB(t)
	base := b.base
	b.installKeyboardAudit()

	audit := func(path string, ready string) {
		t.Helper()
		for _, width := range []int64{390, 1280} {
			b.do("open "+path, chromedp.EmulateViewport(width, 800), chromedp.Navigate(base+path), b.idle, chromedp.WaitVisible(chromedp.CSS(ready)))
			for _, p := range b.keyboardAudit(fmt.Sprintf("%s at %d px", path, width)) {
				t.Errorf("%s at %d px: %s", path, width, p)
			}
			if p := b.sideways(width); p != "" {
				t.Errorf("%s at %d px: %s", path, width, p)
			}
		}
	}
	for _, path := range []string{"/login", "/signup", "/login/forgot"} {
		audit(path, "main")
	}
	f := seedAccount(t, b, dsn)
	var outboxID int64
	if err := f.db.R.Model(&models.OutboxMessage{}).Where("rcpt_to = ?", "ann@example.com").Pluck("id", &outboxID).Error; err != nil || outboxID == 0 {
		t.Fatalf("no outbox message: %v", err)
	}
	itoa := func(n int64) string { return strconv.FormatInt(n, 10) }

	d := &dialogLog{b: b, accept: true}
	d.install()
	keyboardMenu(t, b)
	keyboardDialogs(t, b, f, d)
	keyboardCompose(t, b, f, d)
	keyboardContact(t, b, f)
	keyboardEditor(t, b)

	for _, path := range []string{
		"/dashboard", "/account", "/account/keys",
		"/suppressions/global", "/suppressions/groups", "/suppressions/groups/" + itoa(f.group.ID), "/suppressions/bounced", "/suppressions/reports", "/suppressions/setup", "/suppressions/lifted",
		"/contacts", "/contacts/new", "/contacts/" + itoa(f.contact.ID) + "/edit", "/contacts/" + itoa(f.contact.ID) + "/history",
		"/contacts/types", "/contacts/fields", "/contacts/import",
		"/segments", "/segments/new", "/segments/" + itoa(f.segment.ID), "/segments/" + itoa(f.segment.ID) + "/edit",
		"/senders", "/senders/new", "/senders/" + itoa(f.sender.ID),
		"/outbox", "/outbox/" + itoa(outboxID), "/templates",
		"/single-sends", "/single-sends/new", "/single-sends/calendar",
		"/single-sends/" + f.scheduled.Utr, "/single-sends/" + f.scheduled.Utr + "/edit", "/single-sends/" + f.completed.Utr,
		"/automations", "/automations/" + f.auto.Utr, "/automations/" + f.auto.Utr + "/emails/" + f.email.Utr + "/edit",
		"/notifications", "/event-webhooks", "/team", "/audit-log", "/account/2fa", "/help/people-and-machines",
		"/templates/editor", "/templates/designs/" + itoa(f.design.ID) + "/edit", "/automations/" + f.auto.Utr + "/emails/" + f.email.Utr + "/design",
	} {
		audit(path, "#main")
	}
	// Swagger UI draws the operations once it has fetched the document
	// (slower under -race): the walk starts when they are there, or the
	// stops would change under it.
	audit("/docs/api", ".swagger-ui .opblock")
}

// tabTo presses Tab (Shift+Tab with shift) until the focused element
// matches css, at most limit times.
func (b *browserSession) tabTo(css string, shift bool, limit int) {
	b.t.Helper()
	for range limit {
		b.press("tab to "+css, kb.Tab, 1, shift)
		if b.eval("focused", fmt.Sprintf(`String(!!document.activeElement && document.activeElement.matches(%q))`, css)) == "true" {
			return
		}
	}
	b.t.Fatalf("Tab never reached %s in %d presses (the focus is on %s)", css, limit, b.focused())
}

// focused describes the focused element.
func (b *browserSession) focused() string {
	b.t.Helper()
	var now kbNow
	b.evalJSON("focused", `JSON.stringify(__kb.now())`, &now)
	if now.State != "stop" {
		return now.State
	}
	return now.Desc
}

// typeKeys types text into the focused element, key by key.
func (b *browserSession) typeKeys(step, text string) {
	b.t.Helper()
	b.do(step, chromedp.KeyEvent(text))
}

// finishAnimations ends the page's transitions (the drawer sliding in).
var finishAnimations = chromedp.Evaluate[chromedp.Void](`document.getAnimations().forEach(a => { try { a.finish() } catch (e) {} })`)

// dialogLog records the confirmation dialogs the page opened and answers
// them as told.
type dialogLog struct {
	b      *browserSession
	accept bool
	seen   []string
}

func (d *dialogLog) install() {
	d.b.answerDialogs(func(m string) bool {
		d.seen = append(d.seen, m)
		return d.accept
	})
}

// count is how many dialogs were opened so far.
func (d *dialogLog) count() int {
	d.b.mu.Lock()
	defer d.b.mu.Unlock()
	return len(d.seen)
}

// waitDialogs waits until n dialogs have been opened.
func (d *dialogLog) waitDialogs(step string, n int) {
	d.b.t.Helper()
	eventually.True(d.b.t, 6*time.Second, step+": no confirmation dialog opened", func() bool { return d.count() >= n })
}

func (d *dialogLog) setAccept(v bool) {
	d.b.mu.Lock()
	d.accept = v
	d.b.mu.Unlock()
}

// keyboardMenu opens the phone's menu with the keyboard (Enter, and the
// space bar on the next round), meets each of its links with Tab, and
// closes it with Escape and by tabbing past its end.
func keyboardMenu(t *testing.T, b *browserSession) {
	b.do("a phone", chromedp.EmulateViewport(390, 800), chromedp.Navigate(b.base+"/dashboard"), b.idle, chromedp.WaitVisible(chromedp.CSS("#main")))
	if got := b.eval("drawer hidden", `String(document.getElementById("sidebar").checkVisibility({visibilityProperty: true}))`); got != "false" {
		t.Fatal("at 390 px the menu shows before it is opened")
	}
	b.eval("top", `(__kb.top(), "")`)
	b.tabTo("[data-nav-toggle]", false, 10)
	b.press("open the menu with Enter", kb.Enter, 1, false)
	b.do("the drawer opens", chromedp.WaitVisible(chromedp.CSS("#sidebar.is-open .nav-link")), finishAnimations)
	if got := b.eval("expanded", `document.querySelector("[data-nav-toggle]").getAttribute("aria-expanded")`); got != "true" {
		t.Errorf("the open menu's button says aria-expanded=%s", got)
	}
	var links []string
	b.evalJSON("menu links", `JSON.stringify([...document.querySelectorAll("#sidebar .nav a[href], #sidebar .sidebar-footer button")].map(a => a.textContent.trim()))`, &links)
	if len(links) < 10 {
		t.Fatalf("the menu has %d links: %q", len(links), links)
	}
	// The focus is on the first link; Tab meets the others, each visible
	// with its focus ring, then leaves the drawer, which closes.
	var met []string
	for range len(links) + 5 {
		in := b.eval("in the drawer", `String(document.getElementById("sidebar").contains(document.activeElement))`)
		if in != "true" {
			break
		}
		b.do("finish", finishAnimations)
		var st struct {
			Text    string `json:"text"`
			Visible bool   `json:"visible"`
			Ring    bool   `json:"ring"`
		}
		b.evalJSON("focused link", `(() => { const a = document.activeElement, r = a.getBoundingClientRect(), cs = getComputedStyle(a);
			return JSON.stringify({text: a.textContent.trim(), visible: a.checkVisibility({visibilityProperty: true}) && r.left >= 0 && r.right <= innerWidth,
				ring: cs.outlineStyle !== "none" && parseFloat(cs.outlineWidth) > 0}); })()`, &st)
		if !st.Visible || !st.Ring {
			t.Errorf("in the open menu, %q has the focus visible=%v, focus ring=%v", st.Text, st.Visible, st.Ring)
		}
		met = append(met, st.Text)
		b.press("next link", kb.Tab, 1, false)
	}
	if !slices.Equal(met, links) {
		t.Errorf("Tab in the open menu met %q, want %q", met, links)
	}
	b.do("tabbing out closes the drawer", chromedp.WaitNotPresent(chromedp.CSS("#sidebar.is-open")))
	if got := b.eval("focus in main", `String(document.getElementById("main").contains(document.activeElement))`); got != "true" {
		t.Errorf("after the menu's last link, Tab went to %s, want the page's content", b.focused())
	}

	// The space bar opens it too (the button is a link that plays a
	// button), and Escape closes it, giving the focus back to the button.
	b.tabTo("[data-nav-toggle]", true, 30)
	b.press("open the menu with the space bar", " ", 1, false)
	b.do("the drawer opens", chromedp.WaitVisible(chromedp.CSS("#sidebar.is-open .nav-link")), finishAnimations)
	b.press("down the menu", kb.Tab, 2, false)
	b.press("close the menu with Escape", kb.Escape, 1, false)
	b.do("the drawer closes", chromedp.WaitNotPresent(chromedp.CSS("#sidebar.is-open")))
	if got := b.eval("focus back", `String(document.activeElement.matches("[data-nav-toggle]"))`); got != "true" {
		t.Errorf("after Escape closed the menu the focus is on %s, want the menu button", b.focused())
	}
	if got := b.eval("expanded", `document.querySelector("[data-nav-toggle]").getAttribute("aria-expanded")`); got != "false" {
		t.Errorf("the closed menu's button says aria-expanded=%s", got)
	}
	b.do("desktop", chromedp.EmulateViewport(1280, 800))
}

// keyboardDialogs asks to delete a contact type with the keyboard: Enter
// on its delete button opens the confirmation; dismissing it (Escape)
// leaves the row and the focus where they were; accepting it deletes the
// row and the focus stays in the list, where the next Tab carries on.
func keyboardDialogs(t *testing.T, b *browserSession, f *kbFixture, d *dialogLog) {
	if _, err := f.svc.ContactTypes.Create(context.Background(), f.acct, "Old list"); err != nil {
		t.Fatal(err)
	}
	del := `#types-list button[aria-label="Delete Old list"]`
	b.do("contact types", chromedp.Navigate(b.base+"/contacts/types"), b.idle, chromedp.WaitVisible(chromedp.CSS(del)))
	b.eval("top", `(__kb.top(), "")`)
	b.tabTo(del, false, 80)
	n := d.count()
	d.setAccept(false)
	b.press("ask to delete", kb.Enter, 1, false)
	d.waitDialogs("ask to delete", n+1)
	b.do("dismissed", b.idle)
	if got := b.eval("still focused", fmt.Sprintf(`String(document.activeElement.matches(%q))`, del)); got != "true" {
		t.Errorf("after the confirmation was dismissed the focus is on %s, want the delete button", b.focused())
	}
	if got := b.eval("row kept", fmt.Sprintf(`String(!!document.querySelector(%q))`, del)); got != "true" {
		t.Fatal("the contact type went although the confirmation was dismissed")
	}
	d.setAccept(true)
	b.press("delete", kb.Enter, 1, false)
	d.waitDialogs("delete", n+2)
	b.do("deleted", chromedp.WaitNotPresent(chromedp.CSS(del)), b.idle)
	if got := b.eval("focus kept in the list", `String(!!document.activeElement.closest("#types-list"))`); got != "true" {
		t.Errorf("after the row was deleted the focus is on %s, want the list", b.focused())
	}
	b.press("carry on", kb.Tab, 1, false)
	if got := b.eval("next stop", `String(!!document.activeElement.closest("#types-list"))`); got != "true" {
		t.Errorf("after the row was deleted, Tab went to %s, want the list's next control", b.focused())
	}
}

// keyboardCompose writes a single send with the keyboard alone: from the
// list's "New single send" to a send scheduled next year. Saving it set to
// go now first asks "Send now?", which is dismissed with nothing saved.
func keyboardCompose(t *testing.T, b *browserSession, f *kbFixture, d *dialogLog) {
	countSends := func() int64 {
		var n int64
		if err := f.db.R.Model(&models.SingleSend{}).Where("user_id = ? AND single_send_name = ?", f.acct, "Keyboard news").Count(&n).Error; err != nil {
			t.Fatal(err)
		}
		return n
	}
	b.do("single sends", chromedp.EmulateViewport(1280, 800), chromedp.Navigate(b.base+"/single-sends"), b.idle, chromedp.WaitVisible(chromedp.ID("new-send")))
	b.eval("top", `(__kb.top(), "")`)
	b.tabTo("#new-send", false, 60)
	b.press("open the form", kb.Enter, 1, false)
	b.do("the form", chromedp.WaitVisible(chromedp.ID("send-name")), b.idle)
	b.eval("top", `(__kb.top(), "")`)
	b.tabTo("#send-name", false, 60)
	b.typeKeys("name", "Keyboard news")
	b.tabTo("#send-template", false, 5)
	b.typeKeys("choose the design by its name", "Autumn")
	b.do("the preview", chromedp.WaitVisible(chromedp.ID("send-preview-frame")), b.idle)
	if got := b.eval("design", `document.getElementById("send-template").value`); got != "design-"+strconv.FormatInt(f.design.ID, 10) {
		t.Fatalf("typing the design's name chose %q", got)
	}
	to := fmt.Sprintf("#send-to-contacts_%d", f.ct.ID)
	b.tabTo(to, false, 20)
	b.press("tick the contact type", " ", 1, false)
	b.do("counted", chromedp.Poll[chromedp.Void](`(document.querySelector("#send-count-value") || {}).textContent === "3"`, chromedp.WithPollingInterval(50*time.Millisecond)), b.idle)
	b.tabTo("#send-subject", false, 20)
	b.typeKeys("subject", "Hello from the keyboard")
	b.tabTo("#send-preheader", false, 5)
	b.typeKeys("preheader", "Typed, not clicked")

	// Set to go now, saving asks first; Escape (dismiss) saves nothing.
	b.tabTo("#send-save", false, 40)
	n := d.count()
	d.setAccept(false)
	b.press("save and send now", kb.Enter, 1, false)
	d.waitDialogs("send now?", n+1)
	b.do("dismissed", b.idle)
	if !strings.Contains(d.seen[n], "send now") {
		t.Errorf("the question was %q", d.seen[n])
	}
	if got := countSends(); got != 0 {
		t.Fatalf("%d sends saved although the question was dismissed", got)
	}
	if got := b.eval("focus", `String(document.activeElement.id)`); got != "send-save" {
		t.Errorf("after the question was dismissed the focus is on %s, want the save button", b.focused())
	}

	// Schedule it instead: the arrow key moves the choice to "Schedule".
	b.tabTo("#send-now, #send-later", true, 40)
	b.press("schedule", kb.ArrowRight, 1, false)
	if got := b.eval("later", `String(document.getElementById("send-later").checked)`); got != "true" {
		t.Fatal("the arrow key did not choose Schedule")
	}
	year := time.Now().Year() + 1
	b.tabTo("#send-date", false, 5)
	b.typeKeys("date", fmt.Sprintf("0320%d", year))
	b.tabTo("#send-time", false, 5)
	b.typeKeys("time", "0930AM")
	if got := b.eval("date", `document.getElementById("send-date").value + " " + document.getElementById("send-time").value`); got != fmt.Sprintf("%d-03-20 09:30", year) {
		t.Fatalf("typed date and time %q", got)
	}
	b.tabTo("#send-save", false, 40)
	b.press("save and schedule", kb.Enter, 1, false)
	b.do("the send's page", chromedp.WaitVisible(chromedp.ID("send-status")), b.idle)
	var ss models.SingleSend
	if err := f.db.R.Where("user_id = ? AND single_send_name = ?", f.acct, "Keyboard news").First(&ss).Error; err != nil {
		t.Fatalf("the send was not saved: %v", err)
	}
	if ss.ScheduleType != 1 || ss.ScheduleDate != fmt.Sprintf("%d-03-20", year) || !strings.HasPrefix(ss.ScheduleTime, "09:30") || ss.Subject != "Hello from the keyboard" {
		t.Errorf("saved: schedule %d %s %s, subject %q", ss.ScheduleType, ss.ScheduleDate, ss.ScheduleTime, ss.Subject)
	}
	if got := d.count(); got != n+1 {
		t.Errorf("scheduling asked %d more questions, want none", got-n-1)
	}
}

// keyboardContact adds a contact to a contact type with the keyboard
// alone, from the contacts list's "Add contact".
func keyboardContact(t *testing.T, b *browserSession, f *kbFixture) {
	b.do("contacts", chromedp.Navigate(b.base+"/contacts"), b.idle, chromedp.WaitVisible(chromedp.ID("new-contact")))
	b.eval("top", `(__kb.top(), "")`)
	b.tabTo("#new-contact", false, 60)
	b.press("open the form", kb.Enter, 1, false)
	b.do("the form", chromedp.WaitVisible(chromedp.ID("contact-email")), b.idle)
	b.eval("top", `(__kb.top(), "")`)
	b.tabTo("#contact-type", false, 60)
	b.typeKeys("choose the type by its name", "Cu")
	if got := b.eval("type", `document.getElementById("contact-type").value`); got != strconv.FormatInt(f.ct.ID, 10) {
		t.Fatalf("typing the type's name chose %q", got)
	}
	b.tabTo("#contact-email", false, 3)
	b.typeKeys("email", "kay@example.com")
	b.tabTo("#contact-first-name", false, 3)
	b.typeKeys("first name", "Kay")
	b.tabTo(`#contact-form button[type="submit"]`, false, 40)
	b.press("add", kb.Enter, 1, false)
	// Refused (no country): the focus goes to the field in error.
	b.do("refused", chromedp.WaitVisible(chromedp.ID("contact-country-error")), b.idle)
	if got := b.eval("focus on the error", `document.activeElement.id`); got != "contact-country" {
		t.Errorf("the refused form put the focus on %s, want the country", b.focused())
	}
	b.typeKeys("choose the country by its name", "Germ")
	b.do("its states", chromedp.Poll[chromedp.Void](`document.querySelectorAll("#contact-state option").length > 1`, chromedp.WithPollingInterval(50*time.Millisecond)), b.idle)
	b.tabTo(`#contact-form button[type="submit"]`, false, 40)
	b.press("add", kb.Enter, 1, false)
	b.waitPath("/contacts")
	var c models.Contact
	if err := f.db.R.Where("user_id = ? AND email = ?", f.acct, "kay@example.com").First(&c).Error; err != nil {
		t.Fatalf("the contact was not added: %v", err)
	}
	if c.ContactTypeID != f.ct.ID || c.FirstName != "Kay" {
		t.Errorf("added with type %d, first name %q", c.ContactTypeID, c.FirstName)
	}
}

// waitPath waits until the page shown is at path and loaded: a navigation
// may replace the page under a check, which then runs again.
func (b *browserSession) waitPath(path string) {
	b.t.Helper()
	var last string
	for range 600 {
		ctx, cancel := context.WithTimeout(b.ctx, 5*time.Second)
		v, err := chromedp.Run(ctx, chromedp.Evaluate[string](`document.readyState === "complete" ? location.pathname : ""`))
		cancel()
		if err == nil && v == path {
			b.do("loaded", b.idle)
			return
		}
		last = v
		time.Sleep(20 * time.Millisecond)
	}
	b.t.Fatalf("the page never got to %s (it is at %q)", path, last)
}

// keyboardEditor presses one of the design editor's panel buttons (a
// GrapesJS view: layers, styles, blocks) with Enter: it becomes the
// active view, as a click makes it.
func keyboardEditor(t *testing.T, b *browserSession) {
	b.do("the editor", chromedp.EmulateViewport(1280, 800), chromedp.Navigate(b.base+"/templates/editor"), b.idle,
		chromedp.WaitVisible(chromedp.CSS("#gjs .gjs-pn-views .gjs-pn-btn[tabindex]")))
	css := "#gjs .gjs-pn-views .gjs-pn-btn:not(.gjs-pn-active)"
	label := b.eval("a view", fmt.Sprintf(`document.querySelector(%q).getAttribute("aria-label")`, css))
	target := fmt.Sprintf(`#gjs .gjs-pn-views .gjs-pn-btn[aria-label=%q]`, label)
	b.eval("top", `(__kb.top(), "")`)
	b.tabTo(target, false, 80)
	b.press("press it", kb.Enter, 1, false)
	if got := b.eval("active", fmt.Sprintf(`String(document.querySelector(%q).classList.contains("gjs-pn-active"))`, target)); got != "true" {
		t.Errorf("Enter on the editor's %q button did not open its view", label)
	}
}
