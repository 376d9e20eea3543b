package web_test

import (
	"context"
	"net/http"
	"strings"
	"testing"
	"time"

	"herald/delivery"
	"herald/eventually"
	"herald/models"
	"herald/service"
)

// The console shows what came back after a send: the
// send's soft bounces, complaints and its rates against the providers'
// thresholds, the account's bounces and complaints pages with the code,
// diagnostic and source of each report, filtered by kind.
func TestBouncesAndComplaintsInTheConsole(t *testing.T) {
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
	ss := s.create("Spring")
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
		{Kind: delivery.ReportHardBounce, Source: delivery.SourceDSN, Token: token(ann), Status: "5.1.1", Diagnostic: "smtp; 550 5.1.1 <ann@example.com>: User unknown"},
		{Kind: delivery.ReportComplaint, Source: delivery.SourceARF, Token: token(bob)},
		{Kind: delivery.ReportSoftBounce, Source: delivery.SourceSES, Token: token(cy), Status: "4.2.2", Diagnostic: "Mailbox full"},
	}); err != nil {
		t.Fatal(err)
	}

	// The send's statistics.
	r := c.get("/single-sends/" + ss.Utr)
	wantStatus(t, r, http.StatusOK)
	for id, want := range map[string]string{"#stat-bounces": "1", "#stat-soft-bounces": "1", "#stat-spam-reports": "1"} {
		if got := text(first(r.doc, id+" .send-stat-value")); got != want {
			t.Errorf("%s = %q, want %q", id, got, want)
		}
	}
	health := first(r.doc, "#send-health svg")
	if health == nil || attr(health, "role") != "img" || !strings.Contains(attr(health, "aria-label"), "Hard-bounce rate 33.3 %") {
		t.Fatalf("health chart:\n%s", r.body)
	}
	if !strings.Contains(attr(first(r.doc, "#send-health #health-bounces"), "class"), "health-over") ||
		!strings.Contains(attr(first(r.doc, "#send-health #health-complaints"), "class"), "health-over") {
		t.Fatal("the bars past their thresholds are not marked")
	}

	// The suppressed addresses: code and source.
	r = c.get("/suppressions/bounced")
	wantStatus(t, r, http.StatusOK)
	rows := all(r.doc, "#bounced-list tbody tr")
	if len(rows) != 1 || !strings.Contains(text(rows[0]), "ann@example.com") || !strings.Contains(text(rows[0]), "5.1.1") ||
		!strings.Contains(text(rows[0]), "Bounce report (DSN)") {
		t.Fatalf("suppressed addresses:\n%s", r.body)
	}
	for id, want := range map[string]string{"#summary-hard": "1", "#summary-soft": "1", "#summary-complaints": "1", "#summary-delivered": "3"} {
		if got := text(first(r.doc, id+" .send-stat-value")); got != want {
			t.Errorf("summary %s = %q, want %q", id, got, want)
		}
	}

	// The reports, all and by kind, and as htmx swaps them.
	r = c.get("/suppressions/reports")
	wantStatus(t, r, http.StatusOK)
	if n := len(all(r.doc, "#reports-table tbody tr")); n != 3 {
		t.Fatalf("%d reports listed, want 3:\n%s", n, r.body)
	}
	if link := first(r.doc, "#reports-table a[href='/single-sends/"+ss.Utr+"']"); link == nil {
		t.Fatal("a report does not link its send")
	}
	r = c.get("/suppressions/reports?kind=complaint")
	rows = all(r.doc, "#reports-table tbody tr")
	if len(rows) != 1 || !strings.Contains(text(rows[0]), "bob@example.org") || !strings.Contains(text(rows[0]), "Feedback loop (ARF)") ||
		attr(first(r.doc, "#report-kinds a.is-active"), "href") != "/suppressions/reports?kind=complaint" {
		t.Fatalf("complaints:\n%s", r.body)
	}
	r = c.hxGet("/suppressions/reports?kind=soft_bounce&q=cy")
	if first(r.doc, "nav.nav") != nil || len(all(r.doc, "#reports-table tbody tr")) != 1 || !strings.Contains(r.body, "Mailbox full") {
		t.Fatalf("htmx search of soft bounces:\n%s", r.body)
	}
}
