package main

import (
	"context"
	"strconv"
	"strings"
	"testing"

	"github.com/chromedp/cdproto/cdp"
	"github.com/chromedp/cdproto/network"
	"github.com/chromedp/chromedp"

	"herald/dbtest"
	"herald/service"
)

// editorReady waits for GrapesJS to have loaded the design and herald's
// tools beside it to be shown.
var editorReady = chromedp.Poll[chromedp.Void](`!!window.heraldEditor && window.heraldEditor.getComponents().length > 0 &&
	!!document.querySelector("#gjs .gjs-frame") && !document.getElementById("editor-tools").hidden`)

// TestBrowserEditorTools drives the design editor's merge-tag picker and
// saved blocks as an editor and as a viewer of Ada's account, at 390 and
// 1280 px: the picker in the canvas's text toolbar puts a placeholder at
// the cursor of the text being edited; the picker beside the canvas adds
// the unsubscribe link after the chosen block; the editor saves the chosen
// block under a name, inserts it into a blank design and saves that
// design, then deletes the block; the viewer sees the blocks and the
// picker (inserting changes only the page) but no save form or Delete
// button. Each state is checked with axe-core and for sideways scrolling.
func TestBrowserEditorTools(t *testing.T) {
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
	ada, _, err := svc.Accounts.Create(ctx, service.AccountInput{Name: "Ada Lovelace", Email: "ada@example.com", Password: "correct horse battery"})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := svc.Fields.Create(ctx, ada.ID, service.FieldInput{FieldName: "member_code", FieldType: "text"}); err != nil {
		t.Fatal(err)
	}
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

	// One browser for every role, one after the other (each login in a
	// fresh cookie jar): a test that held two browsers at once could wait
	// forever for a slot another such test holds.
	login := func(b *browserSession, email, name string) {
		t.Helper()
		b.do(name+" leaves the previous session", chromedp.Navigate("about:blank"))
		if _, err := chromedp.Call(b.ctx, network.ClearBrowserCookies, cdp.Empty{}); err != nil {
			t.Fatal(err)
		}
		b.do(name+" logs in",
			chromedp.Navigate(base+"/login"),
			b.idle,
			chromedp.SendKeys(chromedp.ID("login-email"), email),
			chromedp.SendKeys(chromedp.ID("login-password"), name+"'s passphrase"),
			chromedp.Click(chromedp.CSS(`#login-form button[type="submit"]`)),
			chromedp.WaitVisible(chromedp.CSS(".whoami")),
			b.idle,
		)
	}
	check := func(b *browserSession, step string, width int64) {
		t.Helper()
		for _, v := range b.axeCheck(step) {
			t.Errorf("accessibility of %s: %s", step, v)
		}
		if s := b.sideways(width); s != "" {
			t.Errorf("%s: %s", step, s)
		}
	}
	html := func(b *browserSession) string {
		t.Helper()
		return b.eval("the design's HTML", `window.heraldEditor.getHtml()`)
	}
	// textAt is where the n-th text of the canvas that shows words is
	// on the page.
	textAt := func(b *browserSession, step string, n int) (x, y float64) {
		t.Helper()
		var at struct{ X, Y float64 }
		b.evalJSON(step, `(() => {
			const ed = window.heraldEditor;
			const shown = c => c.getEl() && c.getEl().textContent.trim().length > 0 && c.getEl().getBoundingClientRect().width > 0;
			const el = ed.getWrapper().findType("text").filter(shown)[`+strconv.Itoa(n)+`].getEl();
			el.scrollIntoView({block: "center"});
			const f = el.ownerDocument.defaultView.frameElement.getBoundingClientRect(), r = el.getBoundingClientRect();
			return JSON.stringify({X: f.left + r.left + r.width / 2, Y: f.top + r.top + r.height / 2});
		})()`, &at)
		return at.X, at.Y
	}
	// editText double-clicks the first text of the canvas that shows
	// words, as a person starts editing it, and puts the cursor at its end.
	editText := func(b *browserSession, step string) {
		t.Helper()
		x, y := textAt(b, step, 0)
		b.do(step,
			chromedp.MouseClickXY(x, y),
			chromedp.MouseClickXY(x, y, chromedp.ClickCount(2)),
			chromedp.Poll[chromedp.Void](`!!window.heraldEditor.getEditing()`),
			chromedp.Evaluate[chromedp.Void](`(() => {
				const el = window.heraldEditor.getEditing().getEl(), doc = el.ownerDocument, r = doc.createRange();
				r.selectNodeContents(el);
				r.collapse(false);
				doc.getSelection().removeAllRanges();
				doc.getSelection().addRange(r);
			})()`),
		)
	}
	// clickOtherText chooses the second text with the mouse, which ends
	// the editing of the first.
	clickOtherText := func(b *browserSession, step string) {
		t.Helper()
		x, y := textAt(b, step, 1)
		b.do(step, chromedp.MouseClickXY(x, y), chromedp.Poll[chromedp.Void](`!window.heraldEditor.getEditing()`))
	}
	// chooseFirstSection chooses the table (a section of the library
	// design) around the text that holds the merge tag, or the first
	// table of the design that shows words.
	chooseFirstSection := chromedp.Evaluate[chromedp.Void](`(() => {
		const ed = window.heraldEditor;
		const shown = c => c.getEl() && c.getEl().getBoundingClientRect().width > 0 && c.getEl().textContent.trim().length > 0;
		let c = ed.getWrapper().findType("text").find(c => shown(c) && c.getEl().textContent.includes("((member_code))")) ||
			ed.getWrapper().find("table").find(shown);
		while (c.getEl().tagName !== "TABLE" && c.parent()) c = c.parent();
		ed.select(c);
	})()`)

	// The editor: both pickers and a saved block, at each width.
	b := newBrowserSessionOn(t, base)
	var problems consoleProblems
	problems.watch(b)
	b.do("desktop", chromedp.EmulateViewport(1280, 900))
	login(b, "eddie@example.com", "Eddie")
	for _, width := range []int64{1280, 390} {
		w := strconv.FormatInt(width, 10)
		b.do("open the editor at "+w,
			chromedp.EmulateViewport(width, 900),
			chromedp.Navigate(base+"/templates/editor?from=2"),
			editorReady,
		)
		if got := b.eval("custom field offered", `String(!!document.querySelector('#merge-tag-pick option[value="((member_code))"]'))`); got != "true" {
			t.Fatalf("%s px: the account's custom field is not offered", w)
		}
		check(b, "editor tools at "+w, width)

		// The picker in the canvas's text toolbar.
		editText(b, "edit a text at "+w)
		// A click on the toolbar's select takes the focus and leaves the
		// text in editing, with its cursor (GrapesJS ends the editing on a
		// mouse press anywhere else).
		b.do("click the toolbar's picker at "+w,
			chromedp.WaitVisible(chromedp.CSS("#gjs .gjs-rte-toolbar select.rte-merge-tag")),
			chromedp.Click(chromedp.CSS("#gjs .gjs-rte-toolbar select.rte-merge-tag")),
		)
		if got := b.eval("picker focused", `String(document.activeElement.matches(".rte-merge-tag") && !!window.heraldEditor.getEditing())`); got != "true" {
			t.Fatalf("%s px: clicking the toolbar's picker: focused and editing = %s", w, got)
		}
		b.do("pick in the toolbar at "+w,
			choose("#gjs .gjs-rte-toolbar select.rte-merge-tag", "((member_code))"),
		)
		if got := b.eval("text being edited", `window.heraldEditor.getEditing().getEl().textContent`); !strings.HasSuffix(got, "((member_code))") {
			t.Fatalf("%s px: the toolbar's merge tag is not at the cursor: %q", w, got)
		}
		if got := b.eval("toolbar select reset", `document.querySelector("#gjs .gjs-rte-toolbar select.rte-merge-tag").value`); got != "" {
			t.Errorf("%s px: the toolbar's picker still shows %q", w, got)
		}
		check(b, "text toolbar picker at "+w, width)
		clickOtherText(b, "stop editing at "+w)
		if got := html(b); !strings.Contains(got, "((member_code))") {
			t.Fatalf("%s px: the inserted tag is not in the design", w)
		}

		// The picker beside the canvas, by keyboard: an address becomes a
		// link after the chosen block.
		b.do("pick the unsubscribe link at "+w,
			chromedp.Focus(chromedp.ID("merge-tag-pick")),
			choose("#merge-tag-pick", "((unsubscribe_preferences))"),
			chromedp.Focus(chromedp.ID("merge-tag-insert")),
			chromedp.KeyEvent("\r"),
			chromedp.WaitVisible(chromedp.CSS("#editor-status.flash-success")),
		)
		if got := html(b); !strings.Contains(got, `href="((unsubscribe_preferences))"`) {
			t.Fatalf("%s px: no unsubscribe link in the design", w)
		}

		if width == 1280 {
			// Save the chosen block (the first section, with the tag).
			b.do("save the block",
				chooseFirstSection,
				chromedp.SendKeys(chromedp.ID("block-name"), "Member header"),
				chromedp.Click(chromedp.ID("block-save")),
				chromedp.WaitVisible(chromedp.CSS("#saved-blocks .block-item")),
				b.idle,
			)
			if got := b.text("block listed", "#saved-blocks .block-name"); got != "Member header" {
				t.Fatalf("listed block %q", got)
			}
			var saved string
			if err := db.W.Raw(`SELECT html FROM saved_blocks WHERE user_id = ? AND name = ?`, ada.ID, "Member header").Scan(&saved).Error; err != nil || !strings.Contains(saved, "((member_code))") {
				t.Fatalf("the saved block lacks its tag: %.300q (%v)", saved, err)
			}
			// A name taken: the form says so.
			b.do("save it again",
				chooseFirstSection,
				chromedp.SendKeys(chromedp.ID("block-name"), "member HEADER"),
				chromedp.Click(chromedp.ID("block-save")),
				chromedp.WaitVisible(chromedp.ID("block-name-error")),
				b.idle,
			)
			check(b, "a refused block", width)
			// The browser logs the refusal's status; nothing else.
			for _, m := range problems.take() {
				if !strings.Contains(m, "422") || !strings.Contains(m, "/templates/blocks") {
					t.Errorf("logged: %s", m)
				}
			}
		}

		// Insert the saved block into a blank design.
		b.do("open a blank design at "+w,
			chromedp.Navigate(base+"/templates/editor?from=1"),
			chromedp.Poll[chromedp.Void](`!!window.heraldEditor && !!document.querySelector("#gjs .gjs-frame") && !document.getElementById("editor-tools").hidden`),
			chromedp.WaitVisible(chromedp.CSS("[data-block-insert]")),
		)
		if got := html(b); strings.Contains(got, "((member_code))") {
			t.Fatal("the blank design already has the tag")
		}
		b.do("insert the block at "+w,
			chromedp.Click(chromedp.CSS("[data-block-insert]")),
			chromedp.WaitVisible(chromedp.CSS("#editor-status.flash-success")),
		)
		if got := html(b); !strings.Contains(got, "((member_code))") {
			t.Fatalf("%s px: the block is not in the blank design", w)
		}
		check(b, "block inserted at "+w, width)
		if width == 1280 {
			b.do("save the design",
				chromedp.Evaluate[chromedp.Void](`document.getElementById("design-name").value = "From a block"`),
				chromedp.Click(chromedp.ID("design-save")),
				chromedp.WaitVisible(chromedp.CSS("#flash .flash-success")),
				editorReady,
			)
			var stored string
			if err := db.W.Raw(`SELECT template_html FROM designs WHERE user_id = ? AND name = ?`, ada.ID, "From a block").Scan(&stored).Error; err != nil {
				t.Fatal(err)
			}
			if !strings.Contains(stored, "((member_code))") {
				t.Fatalf("the saved design lacks the block: %.300q", stored)
			}
		}
	}
	if msgs := problems.take(); len(msgs) > 0 {
		t.Errorf("the editor logged errors:\n%s", strings.Join(msgs, "\n"))
	}

	// The viewer: the blocks and the picker, no save form nor Delete.
	login(b, "vera@example.com", "Vera")
	for _, width := range []int64{390, 1280} {
		w := strconv.FormatInt(width, 10)
		b.do("viewer opens the editor at "+w,
			chromedp.EmulateViewport(width, 900),
			chromedp.Navigate(base+"/templates/editor?from=2"),
			editorReady,
			chromedp.WaitVisible(chromedp.CSS("[data-block-insert]")),
		)
		if got := b.eval("viewer's controls", `String(document.querySelectorAll("#block-save-form, [data-block-delete], #design-save").length)`); got != "0" {
			t.Fatalf("%s px: the viewer sees %s save or delete controls", w, got)
		}
		b.do("viewer inserts a tag and the block at "+w,
			chooseFirstSection,
			choose("#merge-tag-pick", "((view_in_browser))"),
			chromedp.Click(chromedp.ID("merge-tag-insert")),
			chromedp.Click(chromedp.CSS("[data-block-insert]")),
			chromedp.Poll[chromedp.Void](`window.heraldEditor.getHtml().includes("((member_code))")`),
		)
		if got := html(b); !strings.Contains(got, `href="((view_in_browser))"`) || !strings.Contains(got, "((member_code))") {
			t.Fatalf("%s px: the viewer's page lacks the inserted tag or block", w)
		}
		check(b, "viewer's editor at "+w, width)
	}
	if msgs := problems.take(); len(msgs) > 0 {
		t.Errorf("errors logged:\n%s", strings.Join(msgs, "\n"))
	}

	// The editor deletes the block.
	login(b, "eddie@example.com", "Eddie")
	b.do("delete the block",
		chromedp.EmulateViewport(1280, 900),
		chromedp.Navigate(base+"/templates/editor?from=1"),
		editorReady,
		chromedp.Click(chromedp.CSS("[data-block-delete]")),
		chromedp.WaitVisible(chromedp.ID("saved-blocks-empty")),
	)
	var n int64
	if err := db.W.Raw(`SELECT COUNT(*) FROM saved_blocks WHERE user_id = ?`, ada.ID).Scan(&n).Error; err != nil || n != 0 {
		t.Fatalf("%d blocks left (%v)", n, err)
	}
}
