package main

import (
	"strings"
	"sync"
	"testing"

	"github.com/chromedp/cdproto/log"
	"github.com/chromedp/cdproto/runtime"
	"github.com/chromedp/chromedp"
)

// consoleProblems collects what the browser logs as errors (CSP
// violations among them) and the uncaught exceptions of the page.
type consoleProblems struct {
	mu   sync.Mutex
	msgs []string
}

func (p *consoleProblems) watch(b *browserSession) {
	go func() {
		for ev, err := range chromedp.Events(b.ctx, log.EntryAdded) {
			if err != nil {
				return
			}
			if ev.Entry.Level == log.EntryLevelError && !strings.Contains(ev.Entry.Text, "favicon") {
				p.add(ev.Entry.Text + " " + ev.Entry.URL)
			}
		}
	}()
	go func() {
		for ev, err := range chromedp.Events(b.ctx, runtime.ExceptionThrown) {
			if err != nil {
				return
			}
			msg := ev.ExceptionDetails.Text
			if ev.ExceptionDetails.Exception != nil {
				msg += " " + ev.ExceptionDetails.Exception.Description
			}
			p.add(msg)
		}
	}()
}

func (p *consoleProblems) add(s string) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.msgs = append(p.msgs, s)
}

// take returns the problems so far and forgets them.
func (p *consoleProblems) take() []string {
	p.mu.Lock()
	defer p.mu.Unlock()
	out := p.msgs
	p.msgs = nil
	return out
}

// TestBrowserTemplates drives the templates and senders pages with a
// real browser: sign up, open the gallery, a public preview, the editor
// on a library design (GrapesJS starts under the editor page's policy,
// with no error in the console), rename and save the design and find it
// listed; then add a sender and read its verification mail in the outbox.
func TestBrowserTemplates(t *testing.T) {
	t.Parallel()
	b := newBrowserSession(t)
	base := b.base
	var problems consoleProblems
	problems.watch(b)

	b.signUp()

	b.do("open the gallery from the menu",
		chromedp.Navigate(base+"/dashboard"),
		b.idle,
		chromedp.Click(chromedp.CSS(`.nav a.nav-link[href="/templates"]`)),
		chromedp.WaitVisible(chromedp.CSS("#library .gallery-card img")),
		b.idle,
	)
	if n := b.eval("count cards", `String(document.querySelectorAll("#library .gallery-card").length)`); n < "7" {
		t.Fatalf("%s library cards", n)
	}
	if loaded := b.eval("thumbnails", `String([...document.querySelectorAll("#library img")].every(i => i.complete && i.naturalWidth > 0))`); loaded != "true" {
		t.Fatal("a thumbnail did not load")
	}
	b.capture("templates-gallery")

	// The console preview of a library design: the frame renders it.
	b.do("open a preview",
		chromedp.Click(chromedp.CSS(`#library-2 a[data-preview]`)),
		chromedp.WaitVisible(chromedp.ID("preview-frame")),
		b.idle,
	)
	if got := b.eval("frame text", `(() => { const f = document.getElementById("preview-frame"); return f.contentDocument ? "readable" : "opaque"; })()`); got != "opaque" {
		t.Fatalf("the sandboxed frame is %s from the page", got)
	}
	b.capture("templates-preview")

	// The public preview, without the console around it.
	b.do("public preview",
		chromedp.Navigate(base+"/designs/2/preview"),
		chromedp.WaitReady(chromedp.CSS("body")),
	)
	if got := b.eval("public body", `document.body.innerText.length > 50 ? "ok" : document.body.innerText`); got != "ok" {
		t.Fatalf("public preview: %q", got)
	}
	if got := b.eval("no placeholders", `document.body.innerHTML.includes("((") ? "left" : "none"`); got != "none" {
		t.Fatal("placeholders left in the public preview")
	}
	problems.take() // the sandboxed public page may log its own blocked bits

	// The editor from a design: GrapesJS starts, nothing is refused.
	b.do("open the editor",
		chromedp.Navigate(base+"/templates"),
		b.idle,
		chromedp.Click(chromedp.CSS(`#library-2 a[data-use]`)),
		chromedp.WaitVisible(chromedp.CSS("#gjs .gjs-frame")),
		chromedp.Poll[chromedp.Void](`!!window.heraldEditor && window.heraldEditor.getComponents().length > 0`),
	)
	if msgs := problems.take(); len(msgs) > 0 {
		t.Fatalf("the editor page logged errors:\n%s", strings.Join(msgs, "\n"))
	}
	b.capture("templates-editor")
	b.do("rename and save",
		chromedp.Evaluate[chromedp.Void](`document.getElementById("design-name").value = ""`),
		chromedp.SendKeys(chromedp.ID("design-name"), "Browser news"),
		chromedp.Click(chromedp.ID("design-save")),
		chromedp.WaitVisible(chromedp.CSS("#flash .flash-success")),
		chromedp.WaitVisible(chromedp.CSS("#gjs .gjs-frame")),
	)
	if got := b.eval("url", `location.pathname`); !strings.HasPrefix(got, "/templates/designs/") || !strings.HasSuffix(got, "/edit") {
		t.Fatalf("after saving: %s", got)
	}
	// A second save updates in place.
	b.do("save again",
		chromedp.Poll[chromedp.Void](`!!window.heraldEditor`),
		chromedp.Click(chromedp.ID("design-save")),
		chromedp.WaitVisible(chromedp.CSS("#editor-status.flash-success")),
	)
	b.do("see it listed",
		chromedp.Navigate(base+"/templates"),
		b.idle,
		chromedp.WaitVisible(chromedp.CSS("#designs-list tbody tr")),
	)
	if got := b.text("read design", "#designs-list tbody tr .cell-main"); got != "Browser news" {
		t.Fatalf("listed %q", got)
	}
	if msgs := problems.take(); len(msgs) > 0 {
		t.Fatalf("errors logged:\n%s", strings.Join(msgs, "\n"))
	}

	// A sender, with the chained selects; its verification mail is in the outbox.
	b.do("add a sender",
		chromedp.Navigate(base+"/senders"),
		b.idle,
		chromedp.Click(chromedp.ID("new-sender")),
		chromedp.WaitVisible(chromedp.ID("sender-from-name")),
		b.idle,
		chromedp.SendKeys(chromedp.ID("sender-from-name"), "Ada at Example"),
		chromedp.SendKeys(chromedp.ID("sender-from-email"), "news@example.com"),
		chromedp.SendKeys(chromedp.ID("sender-reply-to"), "ada@example.com"),
		chromedp.SendKeys(chromedp.ID("sender-nickname"), "News"),
		chromedp.SendKeys(chromedp.ID("sender-address1"), "1 Main Street"),
	)
	b.do("choose a country",
		choose("#sender-country", b.eval("germany", `[...document.querySelectorAll("#sender-country option")].find(o => o.textContent === "Germany").value`)),
		chromedp.Poll[chromedp.Void](`document.querySelectorAll("#sender-state option").length > 1`),
		b.idle,
	)
	b.do("choose a state and a city",
		choose("#sender-state", b.eval("a state", `document.querySelectorAll("#sender-state option")[1].value`)),
		chromedp.Poll[chromedp.Void](`document.querySelectorAll("#sender-city option").length > 1`),
		b.idle,
	)
	b.do("save the sender",
		choose("#sender-city", b.eval("a city", `document.querySelectorAll("#sender-city option")[1].value`)),
		chromedp.Click(chromedp.CSS(`#sender-form button[type="submit"]`)),
		chromedp.WaitVisible(chromedp.CSS("#dns-DKIM")),
		b.idle,
	)
	if got := b.text("badge", ".sender-status .badge"); got != "Waiting for verification" {
		t.Fatalf("badge %q", got)
	}
	b.capture("sender")
	b.do("resend",
		chromedp.Click(chromedp.CSS("[data-resend]")),
		chromedp.WaitVisible(chromedp.CSS("#flash .flash-success")),
		b.idle,
	)
	b.do("open the outbox",
		chromedp.Click(chromedp.CSS(`.nav a.nav-link[href="/outbox"]`)),
		chromedp.WaitVisible(chromedp.CSS("#outbox-list tbody tr")),
		b.idle,
	)
	if got := b.text("recipient", "#outbox-list tbody tr td"); got != "news@example.com" {
		t.Fatalf("outbox to %q", got)
	}
	b.capture("outbox")
	b.do("open the mail",
		chromedp.Click(chromedp.CSS("#outbox-list tbody tr .cell-main a")),
		chromedp.WaitVisible(chromedp.ID("message-html")),
		b.idle,
	)
	if got := b.text("text part", "#message-text"); !strings.Contains(got, "/senders/verify/") {
		t.Fatalf("text part lacks the link: %q", got)
	}
	b.capture("outbox-message")
	if msgs := problems.take(); len(msgs) > 0 {
		t.Fatalf("errors logged:\n%s", strings.Join(msgs, "\n"))
	}
}
