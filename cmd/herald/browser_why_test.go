package main

import (
	"context"
	"strconv"
	"strings"
	"testing"

	"github.com/chromedp/chromedp"

	"herald/service"
)

// TestBrowserSegmentWhy asks, on a phone-wide screen (390 px), why one
// address is out of a segment and another in: from the segment's page,
// then again on the explain page (htmx swaps the result, the address goes
// into the URL), then from a contact's page through its Segments card.
// Nothing overflows the screen's width.
func TestBrowserSegmentWhy(t *testing.T) {
	t.Parallel()
	b, dsn := newBrowserSessionWithDB(t)
	base := b.base
	var problems consoleProblems
	problems.watch(b)

	b.do("sign up",
		chromedp.EmulateViewport(390, 800),
		chromedp.Navigate(base+"/signup"),
		b.idle,
		chromedp.WaitVisible(chromedp.ID("signup-name")),
		chromedp.SendKeys(chromedp.ID("signup-name"), "Ada Lovelace"),
		chromedp.SendKeys(chromedp.ID("signup-email"), "ada@example.com"),
		chromedp.SendKeys(chromedp.ID("signup-password"), "correct horse battery"),
		chromedp.Click(chromedp.CSS(`#signup-form button[type="submit"]`)),
		chromedp.WaitVisible(chromedp.ID("secret-key")),
	)

	// The audience, through the service on the server's database.
	ctx := context.Background()
	svc, _, acct := ownerService(t, dsn, service.Config{BaseURL: base, SystemFrom: "no-reply@localhost"})
	itoa := func(n int64) string { return strconv.FormatInt(n, 10) }
	ct, err := svc.ContactTypes.Create(ctx, acct.ID, "Customers")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := svc.Fields.Create(ctx, acct.ID, service.FieldInput{FieldName: "loyalty_points", FieldType: "number"}); err != nil {
		t.Fatal(err)
	}
	var ann int64
	for _, p := range []struct{ email, points string }{{"ann.longname-for-phones@example.com", "420"}, {"bob@example.com", "12"}} {
		v, err := svc.Contacts.Create(ctx, acct.ID, service.ContactInput{ContactTypeID: itoa(ct.ID), Email: p.email, FirstName: "N", Country: "FR",
			City: "Paris", Custom: map[string]string{"loyalty_points": p.points}})
		if err != nil {
			t.Fatal(err)
		}
		if ann == 0 {
			ann = v.ID
		}
	}
	seg, err := svc.Segments.Create(ctx, acct.ID, service.SegmentInput{ContactTypeID: itoa(ct.ID), SegmentName: "Loyal Parisians",
		SelectField: []string{"city", "loyalty_points"}, SelectOperator: []string{"equals", "greater_than"}, Value: []string{"Paris", "100"}})
	if err != nil {
		t.Fatal(err)
	}

	noOverflow := func(step string) {
		t.Helper()
		if w := b.eval(step, `String(document.documentElement.scrollWidth)`); w != "390" {
			t.Errorf("%s: the page is %s px wide on a 390 px screen", step, w)
		}
	}

	b.do("open the segment's page",
		chromedp.Navigate(base+"/segments/"+itoa(seg.ID)),
		b.idle,
		chromedp.WaitVisible(chromedp.ID("why-ask-email")),
	)
	noOverflow("segment page")
	b.capture("segment-why-ask")
	b.do("phone again", chromedp.EmulateViewport(390, 800)) // capture ends at desktop width
	b.do("ask from the segment's page",
		chromedp.SendKeys(chromedp.ID("why-ask-email"), "bob@example.com"),
		chromedp.Click(chromedp.ID("why-ask-submit")),
		chromedp.WaitVisible(chromedp.CSS(`#why-verdict[data-in="false"]`)),
		b.idle,
	)
	if got := b.text("verdict", "#why-verdict"); !strings.Contains(got, "bob@example.com is not in this segment") || !strings.Contains(got, "fails one condition") {
		t.Errorf("verdict %q", got)
	}
	if got := b.text("failed row", `#why-table tr[data-met="false"]`); !strings.Contains(got, "Loyalty Points") || !strings.Contains(got, "12") || !strings.Contains(got, "Not met") {
		t.Errorf("failed condition %q", got)
	}
	noOverflow("bob's answer")
	b.capture("segment-why-out")
	b.do("phone again", chromedp.EmulateViewport(390, 800)) // capture ends at desktop width

	b.do("ask again on the explain page",
		chromedp.Evaluate[chromedp.Void](`window.heraldMarker = "still here"`),
		chromedp.Evaluate[chromedp.Void](`document.getElementById("why-email").value = ""`),
		chromedp.SendKeys(chromedp.ID("why-email"), "ann.longname-for-phones@example.com"),
		chromedp.Click(chromedp.ID("why-submit")),
		chromedp.WaitVisible(chromedp.CSS(`#why-verdict[data-in="true"]`)),
		b.idle,
	)
	if got := b.eval("marker", `window.heraldMarker || ""`); got != "still here" {
		t.Error("the page was reloaded: the form did not go through htmx")
	}
	if got := b.eval("url", `location.search`); got != "?email=ann.longname-for-phones%40example.com" {
		t.Errorf("the address is not in the URL: %q", got)
	}
	if got := b.eval("met rows", `String(document.querySelectorAll('#why-table tr[data-met="true"]').length)`); got != "2" {
		t.Errorf("%s conditions met, want 2", got)
	}
	noOverflow("ann's answer")
	b.capture("segment-why-in")
	b.do("phone again", chromedp.EmulateViewport(390, 800)) // capture ends at desktop width

	b.do("from the contact's page",
		chromedp.Navigate(base+"/contacts/"+itoa(ann)+"/edit"),
		b.idle,
		chromedp.WaitVisible(chromedp.CSS(`#contact-segments tr[data-in="true"] a[data-why]`)),
	)
	noOverflow("contact page")
	b.capture("contact-segments")
	b.do("phone again", chromedp.EmulateViewport(390, 800)) // capture ends at desktop width
	b.do("follow Why?",
		chromedp.Click(chromedp.CSS(`#contact-segments a[data-why]`)),
		chromedp.WaitVisible(chromedp.CSS(`#why-verdict[data-in="true"]`)),
		b.idle,
	)
	if got := b.text("verdict", "#why-verdict"); !strings.Contains(got, "ann.longname-for-phones@example.com is in this segment") {
		t.Errorf("verdict from the contact's page %q", got)
	}
	if p := problems.take(); len(p) > 0 {
		t.Errorf("console problems: %q", p)
	}
}
