package web_test

import (
	"fmt"
	"net/http"
	"strings"
	"testing"
	"time"

	"herald/models"
	"herald/web"
)

// TestSuppressionReasonsAndLiftedPage: the suppressed addresses say why
// in one line ("suppressed: <reason>, <status> <the server's words>", cut
// with the whole in the title; the reason text of a suppression made
// before reasons were kept); the reports list each report's reason beside
// its status and words, and names blocks and deferrals; the page of the
// suppressions the bounce rules' repair lifted lists the account's, newest
// first, by pages and searched, linked from the suppressed addresses only
// when there are any.
func TestSuppressionReasonsAndLiftedPage(t *testing.T) {
	t.Parallel()
	a := newTestApp(t, web.Options{})
	c, acct := a.account("Ada", "ada@example.com")
	other, otherAcct := a.account("Bob", "bob@example.com")
	at := models.NewTimestamp(time.Date(2026, 3, 4, 10, 0, 0, 0, time.UTC))
	create := func(v any) {
		t.Helper()
		if err := a.svc.DB.W.Create(v).Error; err != nil {
			t.Fatal(err)
		}
	}
	long := "smtp; 550 5.1.1 <long@example.com>: Recipient address rejected: " + strings.Repeat("the mailbox does not exist here ", 8)
	sups := []models.Suppression{
		{UserID: acct, Email: "gone@example.com", Reason: "5.1.1 smtp; 550 5.1.1 User unknown (dsn)", StatusCode: "5.1.1",
			Diagnostic: "smtp; 550 5.1.1 User unknown", Source: "dsn", ReasonCode: "userunknown", CreatedAt: at},
		{UserID: acct, Email: "long@example.com", Reason: "5.1.1 " + long + " (dsn)", StatusCode: "5.1.1", Diagnostic: long, Source: "dsn",
			ReasonCode: "userunknown", CreatedAt: at},
		{UserID: acct, Email: "sent@example.com", Reason: "delivery: permanent failure at rcpt: 550 No such user", StatusCode: "550",
			Diagnostic: "550 No such user", Source: "smtp", ReasonCode: "userunknown", CreatedAt: at},
		{UserID: acct, Email: "older@example.com", Reason: "Asked by phone\nnever to mail her again", Source: "smtp", CreatedAt: at},
	}
	for i := range sups {
		create(&sups[i])
	}
	reasonOf := func(r *response, id int64) (string, string) {
		t.Helper()
		span := first(r.doc, "#bounced-"+itoa(id)+" td[data-label=Reason] span.reason-text")
		if span == nil {
			t.Fatalf("no reason in row %d:\n%s", id, r.body)
		}
		return text(span), attr(span, "title")
	}
	r := c.get("/suppressions/bounced")
	wantStatus(t, r, http.StatusOK)
	for i, want := range []string{
		"suppressed: userunknown, 550 5.1.1 User unknown",
		"",
		"suppressed: userunknown, 550 No such user",
		"Asked by phone never to mail her again",
	} {
		got, title := reasonOf(r, sups[i].ID)
		if want == "" {
			continue
		}
		if got != want || title != "" {
			t.Errorf("%s: reason %q title %q, want %q and no title", sups[i].Email, got, title, want)
		}
	}
	got, title := reasonOf(r, sups[1].ID)
	whole := "suppressed: userunknown, " + strings.Join(strings.Fields(strings.TrimPrefix(long, "smtp; ")), " ")
	if title != whole || !strings.HasSuffix(got, "…") || len([]rune(got)) != 120 || !strings.HasPrefix(whole, strings.TrimSuffix(got, "…")) {
		t.Errorf("a long reason: %q (title %q)", got, title)
	}
	if first(r.doc, "#lifted-note") != nil {
		t.Fatal("a link to lifted suppressions with none lifted")
	}

	// The reports: reasons and kinds.
	fb := []models.Feedback{
		{UserID: acct, Email: "full@example.com", Kind: "soft_bounce", StatusCode: "4.2.2", Diagnostic: "Mailbox full", Source: "ses", ReasonCode: "mailboxfull", CreatedAt: at},
		{UserID: acct, Email: "sender@example.com", Kind: "block", StatusCode: "5.1.8", Diagnostic: "smtp; 501 5.1.8 Sender address rejected", Source: "dsn", ReasonCode: "rejected", CreatedAt: at},
		{UserID: acct, Email: "slow@example.com", Kind: "deferral", StatusCode: "4.4.7", Diagnostic: "", Source: "dsn", ReasonCode: "expired", CreatedAt: at},
		{UserID: acct, Email: "before@example.com", Kind: "hard_bounce", StatusCode: "5.1.1", Diagnostic: "User unknown", Source: "dsn", CreatedAt: at},
	}
	for i := range fb {
		create(&fb[i])
	}
	r = c.get("/suppressions/reports")
	wantStatus(t, r, http.StatusOK)
	for _, tc := range []struct {
		f            models.Feedback
		kind, reason string
	}{
		{fb[0], "Soft bounce", "mailboxfull, 4.2.2 Mailbox full"},
		{fb[1], "Block (policy)", "rejected, 501 5.1.8 Sender address rejected"},
		{fb[2], "Deferral (still trying)", "expired, 4.4.7"},
		{fb[3], "Hard bounce", "5.1.1 User unknown"},
	} {
		row := first(r.doc, "#report-"+itoa(tc.f.ID))
		if k := text(first(row, "td[data-label=Kind] .badge")); k != tc.kind {
			t.Errorf("%s: kind %q, want %q", tc.f.Email, k, tc.kind)
		}
		if got := text(first(row, "td[data-label=Reason]")); got != tc.reason {
			t.Errorf("%s: reason %q, want %q", tc.f.Email, got, tc.reason)
		}
	}
	if first(r.doc, "#report-kinds a[href='/suppressions/reports?kind=deferral']") == nil {
		t.Error("no filter for deferrals")
	}
	r = c.get("/suppressions/reports?kind=deferral")
	if got := texts(r.doc, "#reports-table tbody td.cell-main"); len(got) != 1 || got[0] != "slow@example.com" {
		t.Errorf("deferrals: %q", got)
	}

	// What the repair lifted: 52 of Ada's, lifted in two rounds; one of Bob's.
	round := time.Date(2026, 6, 1, 8, 0, 0, 0, time.UTC)
	var lifted []models.LiftedSuppression
	for i := range 52 {
		l := models.LiftedSuppression{UserID: acct, Email: fmt.Sprintf("lifted%02d@example.com", i), Reason: "5.1.8 smtp; 501 5.1.8 Sender address rejected (dsn)",
			StatusCode: "5.1.8", Diagnostic: "smtp; 501 5.1.8 Sender address rejected", Source: "dsn", ReasonCode: "rejected", Kind: "block",
			SuppressedAt: at, LiftedAt: models.NewTimestamp(round)}
		if i >= 50 {
			l.LiftedAt = models.NewTimestamp(round.Add(time.Hour))
			l.Kind, l.ReasonCode = "soft_bounce", "mailboxfull"
			l.Reason = "delivery: temporary failure at rcpt: 452 4.2.2 Mailbox full"
		}
		create(&l)
		lifted = append(lifted, l)
	}
	create(&models.LiftedSuppression{UserID: otherAcct, Email: "bobs@example.org", Reason: "x (text)", Source: "text", ReasonCode: "onhold",
		Kind: "soft_bounce", SuppressedAt: at, LiftedAt: models.NewTimestamp(round)})

	r = c.get("/suppressions/bounced")
	link := first(r.doc, "#lifted-note a[href='/suppressions/lifted']")
	if link == nil || !strings.Contains(text(first(r.doc, "#lifted-note")), "52 addresses were lifted") {
		t.Fatalf("no link to the lifted suppressions:\n%s", r.body)
	}

	r = c.get("/suppressions/lifted")
	wantStatus(t, r, http.StatusOK)
	if first(r.doc, `a.nav-link.is-active[href="/suppressions/bounced"]`) == nil || first(r.doc, "#lifted-list .empty") != nil {
		t.Fatalf("lifted page:\n%.3000s", r.body)
	}
	rows := all(r.doc, "#lifted-table tbody tr")
	if len(rows) != 50 {
		t.Fatalf("%d rows on the first page, want 50", len(rows))
	}
	// The newest round first, the last made first within a round.
	wantFirst := []string{"lifted51@example.com", "lifted50@example.com", "lifted49@example.com"}
	for i, w := range wantFirst {
		if got := text(first(rows[i], "td.cell-main")); got != w {
			t.Errorf("row %d: %q, want %q", i, got, w)
		}
	}
	row := first(r.doc, "#lifted-"+itoa(lifted[51].ID))
	if got := text(first(row, "td[data-label=Was]")); got != "delivery: temporary failure at rcpt: 452 4.2.2 Mailbox full" {
		t.Errorf("was %q", got)
	}
	if got := text(first(row, "td[data-label=Now]")); got != "Soft bounce mailboxfull" {
		t.Errorf("now %q", got)
	}
	if got := text(first(row, "td[data-label=Suppressed] time")); got != "Mar 4, 2026" {
		t.Errorf("suppressed %q", got)
	}
	if got := attr(first(row, "td[data-label=Lifted] time"), "datetime"); got != "2026-06-01T09:00:00Z" {
		t.Errorf("lifted %q", got)
	}
	next := first(r.doc, "#lifted-list nav.pager a[rel=next]")
	if next == nil || attr(next, "href") != "/suppressions/lifted?page=2" {
		t.Fatalf("no next page:\n%s", text(first(r.doc, "#lifted-list nav.pager")))
	}
	r = c.hxGet("/suppressions/lifted?page=2")
	if first(r.doc, "nav.nav") != nil {
		t.Fatal("htmx got the whole page")
	}
	if got := texts(r.doc, "#lifted-table tbody td.cell-main"); fmt.Sprint(got) != "[lifted01@example.com lifted00@example.com]" {
		t.Errorf("page 2: %q", got)
	}
	r = c.hxGet("/suppressions/lifted?q=lifted4")
	if got := texts(r.doc, "#lifted-table tbody td.cell-main"); len(got) != 10 || got[0] != "lifted49@example.com" {
		t.Errorf("search: %q", got)
	}
	if strings.Contains(c.get("/suppressions/lifted?q=bobs").body, "bobs@example.org") {
		t.Error("another account's lifted suppression shown")
	}

	// Bob's own.
	r = other.get("/suppressions/lifted")
	if got := texts(r.doc, "#lifted-table tbody td.cell-main"); fmt.Sprint(got) != "[bobs@example.org]" {
		t.Errorf("bob's: %q", got)
	}
	if first(other.get("/suppressions/bounced").doc, "#lifted-note") == nil {
		t.Error("bob has a lifted suppression and no link to it")
	}
}
