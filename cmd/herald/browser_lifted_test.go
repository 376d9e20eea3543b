package main

import (
	"fmt"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"herald/models"
	"herald/service"
)

// TestBrowserSuppressionReasons opens the pages that say why an address
// is suppressed, what the reports said and what the bounce rules' repair
// lifted, filled with long reasons and unbroken addresses, at phone and
// desktop widths: none scrolls sideways at 390 px, axe-core finds no
// serious violation, and the keyboard reaches every control in order.
func TestBrowserSuppressionReasons(t *testing.T) {
	t.Parallel()
	b, dsn := newBrowserSessionWithDB(t)
	base := b.base
	b.installKeyboardAudit()
	b.signUp()
	_, db, acct := ownerService(t, dsn, service.Config{BaseURL: base, SystemFrom: "no-reply@localhost"})
	create := func(v any) {
		t.Helper()
		if err := db.W.Create(v).Error; err != nil {
			t.Fatal(err)
		}
	}
	at := models.NewTimestamp(time.Date(2026, 3, 4, 10, 0, 0, 0, time.UTC))
	unbroken := "<" + strings.Repeat("averyveryverylonglocalpart", 4) + "@" + strings.Repeat("subdomain", 5) + ".example.com>"
	long := "smtp; 550 5.1.1 " + unbroken + ": Recipient address rejected: " + strings.Repeat("the mailbox does not exist here ", 6)
	create(&models.Suppression{UserID: acct.ID, Email: "gone@example.com", Reason: "5.1.1 " + long + " (dsn)", StatusCode: "5.1.1",
		Diagnostic: long, Source: "dsn", ReasonCode: "userunknown", CreatedAt: at})
	create(&models.Suppression{UserID: acct.ID, Email: strings.Repeat("x", 60) + "@example.com", Reason: "delivery: permanent failure at rcpt: 550 " + unbroken,
		Source: "smtp", CreatedAt: at})
	create(&models.Feedback{UserID: acct.ID, Email: "sender@example.com", Kind: "block", StatusCode: "5.7.1", Diagnostic: long, Source: "dsn",
		ReasonCode: "blocked", CreatedAt: at})
	create(&models.Feedback{UserID: acct.ID, Email: "slow@example.com", Kind: "deferral", StatusCode: "4.4.7", Diagnostic: "Delivery delayed",
		Source: "dsn", ReasonCode: "expired", CreatedAt: at})
	for i := range 55 {
		create(&models.LiftedSuppression{UserID: acct.ID, Email: fmt.Sprintf("lifted%02d@example.com", i), Reason: "5.7.1 " + long + " (dsn)",
			StatusCode: "5.7.1", Diagnostic: long, Source: "dsn", ReasonCode: "blocked", Kind: "block", SuppressedAt: at,
			LiftedAt: models.NewTimestamp(time.Date(2026, 6, 1, 8, 0, 0, 0, time.UTC))})
	}

	for _, path := range []string{"/suppressions/bounced", "/suppressions/reports", "/suppressions/lifted", "/suppressions/lifted?page=2"} {
		for _, width := range []int64{390, 1280} {
			where := fmt.Sprintf("%s at %d px", path, width)
			b.do("open "+where, chromedp.EmulateViewport(width, 800), chromedp.Navigate(base+path), b.idle, chromedp.WaitVisible(chromedp.CSS("#main")))
			if w := b.eval(where, `String(document.documentElement.scrollWidth)`); w != strconv.FormatInt(width, 10) {
				t.Errorf("%s is %s px wide: it scrolls sideways", where, w)
			}
			for _, v := range b.axeCheck(where) {
				t.Errorf("%s: %s", where, v)
			}
			for _, p := range b.keyboardAudit(where) {
				t.Errorf("%s: %s", where, p)
			}
		}
	}
	if got := b.eval("lifted rows", `String(document.querySelectorAll("#lifted-table tbody tr").length)`); got != "5" {
		t.Errorf("%s rows on the second page of lifted suppressions, want 5", got)
	}
}
