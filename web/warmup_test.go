package web_test

import (
	"context"
	"net/http"
	"net/url"
	"strings"
	"testing"

	"herald/dbtest"
	"herald/delivery"
	"herald/service"
	"herald/web"
)

// The Warm-up page: an owner starts a plan (a refused one shows the
// problem beside its field), sees it as a chart with today's remaining,
// and ends it; a viewer sees the plan without the buttons and may not
// start or end one.
func TestWarmupPage(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	mem := &delivery.MemoryOutbox{}
	svc := dbtest.Service(t, service.Config{Transport: delivery.NewOutbox(mem)})
	a := newTestAppOn(t, svc, web.Options{})
	owner, acct := a.account("Ada", "ada@example.com")
	viewer := joinTeam(t, a, mem, owner, "vi@example.com", "viewer")
	if _, err := svc.Senders.Create(ctx, acct, service.SenderInput{FromName: "Shop", FromEmail: "news@shop.example.com", ReplyToEmail: "help@shop.example.com",
		CountryID: "250", CompanyAddress: "1 rue de Rivoli", Nickname: "shop"}); err != nil {
		t.Fatal(err)
	}
	r := owner.get("/senders/warmup")
	wantStatus(t, r, http.StatusOK)
	if !strings.Contains(r.body, "No warm-up plans") || !strings.Contains(r.body, `id="warmup-form"`) || !strings.Contains(r.body, `<option value="shop.example.com"`) {
		t.Fatalf("empty page: %s", r.body)
	}
	r = owner.post("/senders/warmup", url.Values{"domain": {"shop.example.com"}, "start": {"50"}, "growth": {"1"}, "until": {"1000"}})
	wantStatus(t, r, http.StatusUnprocessableEntity)
	if !strings.Contains(r.body, "The growth must be greater than 1 and at most 10.") {
		t.Fatalf("refused start: %s", r.body)
	}
	wantRedirect(t, owner.post("/senders/warmup", url.Values{"domain": {"shop.example.com"}, "start": {"50"}, "growth": {"1.5"}, "until": {"1000"}}), "/senders/warmup")
	r = owner.get("/senders/warmup")
	for _, want := range []string{"Warm-up plan started.", `id="chart-warmup-0"`, "Day 1 of 9: today&#39;s cap is 50, 0 sent, 50 left.", "polyline class=\"chart-line chart-cap\"", "warmup-end"} {
		if !strings.Contains(r.body, want) {
			t.Fatalf("the plan's page lacks %q: %s", want, r.body)
		}
	}
	if strings.Count(r.body, `class="chart-bar"`) != 9 {
		t.Fatalf("want a bar per day (9): %d", strings.Count(r.body, `class="chart-bar"`))
	}
	r = viewer.get("/senders/warmup")
	wantStatus(t, r, http.StatusOK)
	if !strings.Contains(r.body, `id="chart-warmup-0"`) || strings.Contains(r.body, "warmup-end") || strings.Contains(r.body, `id="warmup-form"`) {
		t.Fatalf("the viewer's page: %s", r.body)
	}
	if r := viewer.post("/senders/warmup/end", url.Values{"domain": {"shop.example.com"}}); r.status != http.StatusForbidden {
		t.Fatalf("a viewer ends the plan: %d", r.status)
	}
	wantRedirect(t, owner.post("/senders/warmup/end", url.Values{"domain": {"shop.example.com"}}), "/senders/warmup")
	if r := owner.get("/senders/warmup"); !strings.Contains(r.body, "No warm-up plans") {
		t.Fatalf("after the end: %s", r.body)
	}
}
