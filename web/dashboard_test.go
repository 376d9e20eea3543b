package web_test

import (
	"context"
	"net/http"
	"net/netip"
	"net/url"
	"strings"
	"testing"
	"time"

	"herald/delivery"
	"herald/eventually"
	"herald/models"
	"herald/service"
	"herald/web"
)

// The dashboard of an account with a send: the last sends with
// their rates, the 30-day figures, the health against the providers'
// thresholds (a hard bounce and a complaint of three messages are far
// past them), the unverified sender, and the getting-started steps ticked
// as the account did them. A new account sees none of it, and nothing
// ticked.
func TestDashboardShowsRatesHealthAndSteps(t *testing.T) {
	t.Parallel()
	s := newSendSetup(t)
	c := s.c
	ctx, cancel := context.WithCancel(context.Background())
	sg, err := s.a.svc.NewSending(ctx, service.SendingConfig{Conns: 2, Tick: 20 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	done := make(chan struct{})
	go func() { defer close(done); sg.Run(ctx) }()
	t.Cleanup(func() { cancel(); <-done })
	ss := s.create("Spring sale")
	eventually.True(t, 20*time.Second, "the send did not complete", func() bool { return s.get(ss.Utr).Status == models.SendCompleted })
	v, err := s.a.svc.Bounces.VERP(ctx)
	if err != nil {
		t.Fatal(err)
	}
	var msgs []models.SendMessage
	if err := s.a.svc.DB.R.Where("send_id = ?", ss.ID).Order("email").Find(&msgs).Error; err != nil || len(msgs) != 3 {
		t.Fatalf("ledger: %d %v", len(msgs), err)
	}
	token := func(m models.SendMessage) string {
		_, tok, _ := v.ParseMessageID(v.MessageID(m.ID, "shop.example.com"))
		return tok
	}
	ann, bob, cy := msgs[0], msgs[1], msgs[2]
	if err := s.a.svc.Feedback.Handle(ctx, []service.Report{
		{Kind: delivery.ReportHardBounce, Source: delivery.SourceDSN, Token: token(ann), Status: "5.1.1"},
		{Kind: delivery.ReportComplaint, Source: delivery.SourceARF, Token: token(bob)},
	}); err != nil {
		t.Fatal(err)
	}
	// cy opens in a browser, bob's open is a request of unknown shape (a
	// machine's): one human open, two raw.
	person := service.Hit{Method: "GET", IP: netip.MustParseAddr("203.0.113.7"),
		UserAgent: "Mozilla/5.0 (Windows NT 10.0; Win64; x64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/124.0.0.0 Safari/537.36"}
	for m, h := range map[int64]service.Hit{cy.ID: person, bob.ID: {}} {
		tok, err := s.a.svc.Tracking.Token(ctx, m)
		if err != nil {
			t.Fatal(err)
		}
		if err := s.a.svc.Tracking.OpenHit(ctx, tok, h); err != nil {
			t.Fatal(err)
		}
	}

	r := c.get("/dashboard")
	wantStatus(t, r, http.StatusOK)
	for sel, want := range map[string]string{
		"#stat-audience .stat-value": "3",
		"#stat-sent .stat-value":     "3",
		"#stat-opens .stat-value":    "33.3%",
		"#stat-opens .stat-note":     "1 by people; raw 2 (66.7%)",
		"#stat-clicks .stat-value":   "0.0%",
	} {
		if got := text(first(r.doc, sel)); got != want {
			t.Errorf("%s = %q, want %q", sel, got, want)
		}
	}
	rows := all(r.doc, "#recent-sends tbody tr")
	if len(rows) != 1 || attr(rows[0], "data-utr") != ss.Utr || !strings.Contains(text(rows[0]), "Spring sale") {
		t.Fatalf("recent sends: %d rows\n%s", len(rows), r.body)
	}
	for sel, want := range map[string]string{
		".rate-delivered": "100.0%", ".rate-opens .rate-value": "33.3%", ".rate-opens .rate-raw": "raw 66.7%", ".rate-clicks .rate-value": "0.0%",
		".rate-bounces": "33.3%", ".rate-unsubscribes": "33.3%",
	} {
		if got := text(first(rows[0], sel)); got != want {
			t.Errorf("recent send %s = %q, want %q", sel, got, want)
		}
	}
	for id, want := range map[string]string{"#dash-bounces": "danger", "#dash-complaints": "danger", "#dash-senders": "warn"} {
		n := first(r.doc, id)
		if n == nil || attr(n, "data-level") != want {
			t.Errorf("%s: level %q, want %q", id, attr(n, "data-level"), want)
		}
	}
	if got := text(first(r.doc, "#dash-bounces .health-value")); got != "33.3 %" {
		t.Errorf("bounce rate %q", got)
	}
	if !strings.Contains(text(first(r.doc, "#dash-complaints")), "0.3 %") {
		t.Errorf("the complaint warning does not name the limit: %q", text(first(r.doc, "#dash-complaints")))
	}
	// The gauges mark the thresholds the levels above use, in the same words.
	var marks []string
	for _, m := range all(r.doc, "#dash-health-chart text.chart-label") {
		marks = append(marks, text(m))
	}
	if got := strings.Join(marks, "|"); !strings.Contains(got, "1 % keep under|2 % limit") || !strings.Contains(got, "0.1 % asked|0.3 % limit") {
		t.Errorf("health marks %q", got)
	}
	if n := first(r.doc, "#chart-sent svg"); n == nil || !strings.Contains(attr(n, "aria-label"), "3 messages sent, 1 unique human open and 0 unique human clicks (raw, proxies and scanners included: 2 opens") {
		t.Fatalf("sent chart: %v", attr(n, "aria-label"))
	}
	if len(all(r.doc, "#chart-sent rect.chart-bar")) != service.DashboardDays {
		t.Errorf("%d bars, want one per day", len(all(r.doc, "#chart-sent rect.chart-bar")))
	}
	steps := map[string]string{"step-sender": "true", "step-contacts": "true", "step-group": "true", "step-send": "true", "step-notifications": "false"}
	for id, want := range steps {
		if got := attr(first(r.doc, "#"+id), "data-done"); got != want {
			t.Errorf("%s done = %q, want %q", id, got, want)
		}
	}
	if got := text(first(r.doc, "#steps-done")); got != "4 of 5 steps done." {
		t.Errorf("steps done: %q", got)
	}
	items := all(r.doc, "#get-started .steps li")
	if len(items) == 0 || attr(items[0], "id") != "step-sender" || !strings.Contains(text(items[0]), "verify a sender") {
		t.Errorf("the first step is not the sender")
	}

	// A new account: nothing of the first, nothing ticked, health fine.
	b, _ := s.a.account("Bea", "bea@example.com")
	r = b.get("/dashboard")
	wantStatus(t, r, http.StatusOK)
	if strings.Contains(r.body, "Spring sale") || first(r.doc, "#recent-sends") != nil || first(r.doc, "#recent-empty") == nil {
		t.Fatal("the new account's dashboard shows the other's send")
	}
	if got := text(first(r.doc, "#stat-audience .stat-value")); got != "0" {
		t.Errorf("new account's audience %q", got)
	}
	for id := range steps {
		if got := attr(first(r.doc, "#"+id), "data-done"); got != "false" {
			t.Errorf("new account: %s done = %q", id, got)
		}
	}
	for _, id := range []string{"#dash-bounces", "#dash-complaints"} {
		if got := attr(first(r.doc, id), "data-level"); got != "ok" {
			t.Errorf("new account: %s level %q", id, got)
		}
	}
	if got := text(first(r.doc, "#dash-bounces")); !strings.Contains(got, "Nothing sent in the last 30 days.") {
		t.Errorf("new account: bounces say %q", got)
	}
	if first(r.doc, "#dash-senders") != nil {
		t.Error("new account: unverified senders shown")
	}
}

// TestDashboardGreetsTheMember: a member is greeted by their own name, not
// the owner's, and the getting-started card lists only the steps their
// role may do (an editor prepares contacts, but may not add senders,
// groups or notification recipients, nor send); the owner sees them all.
func TestDashboardGreetsTheMember(t *testing.T) {
	t.Parallel()
	a, mem := newMailboxApp(t, web.Options{})
	owner, _ := a.account("Maria Owner", "maria@example.com")
	wantStatus(t, owner.get("/team"), http.StatusOK)
	wantRedirect(t, owner.post("/team/invitations", url.Values{"email": {"eddie@example.com"}, "role": {"editor"}}), "/team")
	var link string
	for _, m := range mem.Messages() {
		if mm := invitationLinkRE.FindStringSubmatch(mailText(t, m.Data)); mm != nil {
			link = mm[1]
		}
	}
	if link == "" {
		t.Fatal("no invitation link mailed")
	}
	eddie := a.client()
	wantStatus(t, eddie.get(link), http.StatusOK)
	wantRedirect(t, eddie.post(link, url.Values{"name": {"Eddie Editor"}, "password": {"eddies-passphrase-1"}}), "/dashboard")

	r := eddie.get("/dashboard")
	wantStatus(t, r, http.StatusOK)
	if got := text(first(r.doc, "h1")); !strings.Contains(got, "Eddie Editor") || strings.Contains(got, "Maria") {
		t.Fatalf("the editor is greeted %q", got)
	}
	for _, id := range []string{"step-sender", "step-group", "step-send", "step-notifications"} {
		if first(r.doc, "#"+id) != nil {
			t.Errorf("the editor is offered %s, which its role may not do", id)
		}
	}
	if first(r.doc, "#step-contacts") == nil {
		t.Error("the editor is not offered to bring contacts, which it may do")
	}

	r = owner.get("/dashboard")
	if got := text(first(r.doc, "h1")); !strings.Contains(got, "Maria Owner") {
		t.Fatalf("the owner is greeted %q", got)
	}
	for _, id := range []string{"step-sender", "step-contacts", "step-group", "step-send", "step-notifications"} {
		if first(r.doc, "#"+id) == nil {
			t.Errorf("the owner is not offered %s", id)
		}
	}
}

// TestDashboardSaysWhereAnABTestStands: a send whose A/B test is still
// trying its variants says so, with its share and when the winner goes
// out, rather than a delivered rate stuck at the test's share.
func TestDashboardSaysWhereAnABTestStands(t *testing.T) {
	t.Parallel()
	s := newSendSetup(t)
	ss := s.create("Split subjects")
	decide := time.Now().Add(2 * time.Hour).UTC()
	s.exec("UPDATE single_sends SET status = ?, sent_at = ?, triggered = 10, delivered = 2, ab_subjects = ?, ab_share = 20, ab_decide_at = ? WHERE id = ?",
		models.SendRunning, models.DateTime{Time: time.Now().UTC()}, `["Spring","Summer"]`, decide.UnixMilli(), ss.ID)
	r := s.c.get("/dashboard")
	wantStatus(t, r, http.StatusOK)
	row := first(r.doc, `#recent-sends tr[data-utr="`+ss.Utr+`"]`)
	if row == nil {
		t.Fatalf("no row:\n%.3000s", r.body)
	}
	if got := text(first(row, ".rate-delivered")); !strings.HasPrefix(got, "A/B test: 20 % sent, winner at ") || strings.Contains(got, "20.0%") {
		t.Fatalf("delivered cell %q", got)
	}
}
