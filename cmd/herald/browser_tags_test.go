package main

import (
	"context"
	"fmt"
	"strconv"
	"testing"

	"github.com/chromedp/chromedp"
	"github.com/chromedp/chromedp/kb"

	"herald/service"
)

// TestBrowserContactTags: on the contact list at phone width, two
// contacts are selected and tagged at once (Enter in the tags field adds,
// it does not delete the selection); on a contact's page a tag is added
// with the keyboard alone and another removed. Neither page scrolls
// sideways at 390 px, and both pass axe-core at 390 and 1280 px.
func TestBrowserContactTags(t *testing.T) {
	t.Parallel()
	b, dsn := newBrowserSessionWithDB(t)
	base := b.base
	var problems consoleProblems
	problems.watch(b)
	b.installKeyboardAudit()
	b.signUp()

	ctx := context.Background()
	svc, _, acct := ownerService(t, dsn, service.Config{BaseURL: base, SystemFrom: "no-reply@localhost"})
	ct, err := svc.ContactTypes.Create(ctx, acct.ID, "Customers")
	if err != nil {
		t.Fatal(err)
	}
	ids := map[string]int64{}
	for _, e := range []string{"ann.longname-for-phones@example.com", "bob@example.com", "cy@example.com"} {
		v, err := svc.Contacts.Create(ctx, acct.ID, service.ContactInput{ContactTypeID: strconv.FormatInt(ct.ID, 10), Email: e, FirstName: "N", Country: "FR"})
		if err != nil {
			t.Fatal(err)
		}
		ids[e] = v.ID
	}
	ann, bob, cy := ids["ann.longname-for-phones@example.com"], ids["bob@example.com"], ids["cy@example.com"]
	tagsOf := func(id int64) string {
		v, err := svc.Contacts.Get(ctx, acct.ID, id)
		if err != nil {
			t.Fatal(err)
		}
		return fmt.Sprint(v.Tags)
	}
	wide := func(what string, width int64) {
		t.Helper()
		if w := b.eval("page width", `String(document.documentElement.scrollWidth)`); w != fmt.Sprint(width) {
			t.Errorf("%s at %d px is %s px wide: it scrolls sideways", what, width, w)
		}
	}

	// The list: select Ann and Bob, type two tags, press Enter.
	b.do("the contact list", chromedp.EmulateViewport(390, 800), chromedp.Navigate(base+"/contacts"), b.idle,
		chromedp.WaitVisible(chromedp.CSS("#bulk-tags-input")))
	wide("the contact list", 390)
	b.do("select two",
		chromedp.Click(chromedp.CSS(fmt.Sprintf(`#contact-%d input[name="ids"]`, ann))),
		chromedp.Click(chromedp.CSS(fmt.Sprintf(`#contact-%d input[name="ids"]`, bob))),
		chromedp.Click(chromedp.CSS("#bulk-tags-input")),
	)
	b.typeKeys("tags", "Spring, vip")
	b.do("add", chromedp.KeyEvent(kb.Enter), b.idle, chromedp.WaitVisible(chromedp.CSS(fmt.Sprintf(`#contact-%d .row-tags`, bob))), b.idle)
	if got := b.text("flash", "#flash .flash"); got != "Tagged 2 contacts." {
		t.Errorf("flash %q", got)
	}
	if got := tagsOf(ann) + tagsOf(bob) + tagsOf(cy); got != "[spring vip][spring vip][]" {
		t.Fatalf("tags after the bulk add: %s", got)
	}
	if got := b.eval("row tags", fmt.Sprintf(`[...document.querySelectorAll("#contact-%d .row-tags .badge")].map(e => e.textContent).join(",")`, ann)); got != "spring,vip" {
		t.Errorf("Ann's row shows %q", got)
	}
	wide("the tagged list", 390)
	b.capture("contacts-tagged-390")
	b.do("desktop", chromedp.EmulateViewport(1280, 800), b.idle)
	b.capture("contacts-tagged-1280")

	// The contact's page, by keyboard: Tab to the tags field, type, Enter.
	b.do("Ann's page", chromedp.EmulateViewport(390, 800), chromedp.Navigate(base+"/contacts/"+strconv.FormatInt(ann, 10)+"/edit"), b.idle,
		chromedp.WaitVisible(chromedp.CSS("#contact-tags")))
	wide("the contact's page", 390)
	b.tabTo("#contact-tags-input", false, 120)
	b.typeKeys("a tag", "Trial")
	b.do("add", chromedp.KeyEvent(kb.Enter), b.idle, chromedp.WaitVisible(chromedp.CSS(`#contact-tags button[aria-label="Remove the tag trial"]`)), b.idle)
	if got := tagsOf(ann); got != "[spring trial vip]" {
		t.Fatalf("after adding on the page: %s", got)
	}
	// The swap keeps the focus reachable: Tab to a tag's remove button, Enter.
	b.tabTo(`#contact-tags button[aria-label="Remove the tag spring"]`, false, 120)
	b.do("remove", chromedp.KeyEvent(kb.Enter), b.idle, chromedp.WaitNotPresent(chromedp.CSS(`#contact-tags button[aria-label="Remove the tag spring"]`)), b.idle)
	if got := tagsOf(ann); got != "[trial vip]" {
		t.Fatalf("after removing on the page: %s", got)
	}
	wide("the contact's page with tags", 390)
	b.capture("contact-tags-390")
	b.do("desktop", chromedp.EmulateViewport(1280, 800), b.idle)
	b.capture("contact-tags-1280")
	if p := problems.take(); len(p) > 0 {
		t.Errorf("console problems: %q", p)
	}
}
