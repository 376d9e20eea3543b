package web_test

import (
	"context"
	"net/http"
	"testing"
	"time"

	"herald/models"
)

// TestSendPageShowsPeopleBesideRaw: opens and clicks go through the real
// tracking links with the request shapes of a person (a browser), a HEAD
// request, Gmail's image proxy and an HTTP library; the send's page shows
// the raw counts of the spec and, beside each, the part made by people,
// per link too.
func TestSendPageShowsPeopleBesideRaw(t *testing.T) {
	t.Parallel()
	s := newSendSetup(t)
	c := s.c
	ss := s.create("Human")
	sent := models.NewTimestamp(time.Now().Add(-time.Hour))
	s.exec("UPDATE single_sends SET status = 3, resolved = 1, triggered = 2, delivered = 2, links = ?, sent_at = ? WHERE id = ?",
		`["https://shop.example.com/a","https://shop.example.com/b"]`, sent, ss.ID)
	tok := map[string]string{}
	for _, email := range []string{"ann@example.com", "bob@example.org"} {
		s.exec("INSERT INTO send_messages (send_id, user_id, email, state, sent_at) VALUES (?, ?, ?, 2, ?)", ss.ID, s.acct, email, sent)
		var m models.SendMessage
		if err := s.a.svc.DB.R.Where("send_id = ? AND email = ?", ss.ID, email).First(&m).Error; err != nil {
			t.Fatal(err)
		}
		k, err := s.a.svc.Tracking.Token(context.Background(), m.ID)
		if err != nil {
			t.Fatal(err)
		}
		tok[email] = k
	}
	const chrome = "Mozilla/5.0 (Windows NT 10.0; Win64; x64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/124.0.0.0 Safari/537.36"
	hit := func(method, path, agent string, status int) {
		t.Helper()
		r := c.do(method, path, nil, false, "User-Agent", agent)
		if r.status != status {
			t.Fatalf("%s %s: %d, want %d", method, path, r.status, status)
		}
	}
	hit("GET", "/t/o/"+tok["ann@example.com"]+".gif", chrome, http.StatusOK)
	hit("HEAD", "/t/o/"+tok["bob@example.org"]+".gif", chrome, http.StatusOK)
	hit("GET", "/t/o/"+tok["bob@example.org"]+".gif", "Mozilla/5.0 (Windows NT 5.1; rv:11.0) Gecko Firefox/11.0 (via ggpht.com GoogleImageProxy)", http.StatusOK)
	hit("GET", "/t/c/"+tok["ann@example.com"]+"/1", chrome, http.StatusFound)
	hit("GET", "/t/c/"+tok["bob@example.org"]+"/0", "python-requests/2.31.0", http.StatusFound)

	got := s.get(ss.Utr)
	if got.UniqueOpens != 2 || got.TotalOpens != 2 || got.HumanUniqueOpens != 1 || got.HumanTotalOpens != 1 ||
		got.UniqueClicks != 2 || got.TotalClicks != 2 || got.HumanUniqueClicks != 1 || got.HumanTotalClicks != 1 {
		t.Fatalf("counters %+v", got)
	}
	r := c.get("/single-sends/" + ss.Utr)
	wantStatus(t, r, http.StatusOK)
	stats := map[string]string{}
	for _, d := range all(r.doc, "#send-statistics .send-stat") {
		if h := first(d, ".send-stat-human-value"); h != nil {
			stats[attr(d, "id")] = text(first(d, ".send-stat-value")) + " / " + text(h)
		}
	}
	want := map[string]string{"stat-unique-opens": "2 / 1", "stat-total-opens": "2 / 1", "stat-unique-clicks": "2 / 1", "stat-total-clicks": "2 / 1"}
	if len(stats) != len(want) {
		t.Fatalf("stats with people %v, want %v", stats, want)
	}
	for k, v := range want {
		if stats[k] != v {
			t.Fatalf("%s = %q, want %q", k, stats[k], v)
		}
	}
	links := map[string]string{}
	for _, tr := range all(r.doc, "#send-links tbody tr") {
		links[text(first(tr, "td.link-url"))] = text(first(tr, "td.cell-num")) + " / " + text(first(tr, "td.link-human"))
	}
	if links["https://shop.example.com/a"] != "1 / 0" || links["https://shop.example.com/b"] != "1 / 1" {
		t.Fatalf("links %q", links)
	}
}

// TestAutomationStepShowsPeople: an automation step's statistics show the
// opens and clicks by people beside the raw counts.
func TestAutomationStepShowsPeople(t *testing.T) {
	t.Parallel()
	s := newAutoSetup(t)
	live := s.create("custom", "Onboarding", itoa(s.group), [3]string{"instantly", "0", "One"}, [3]string{"days", "2", "Two"})
	if err := s.a.svc.Automations.SetLive(context.Background(), s.acct, live.Utr); err != nil {
		t.Fatal(err)
	}
	var sendID int64
	if err := s.a.svc.DB.R.Model(&models.AutomationSchedule{}).Select("send_id").Where("automation_id = ?", live.ID).Order("position").Limit(1).Scan(&sendID).Error; err != nil {
		t.Fatal(err)
	}
	if err := s.a.svc.DB.W.Exec("UPDATE single_sends SET triggered = 12, delivered = 11, unique_opens = 9, human_unique_opens = 4, unique_clicks = 6, human_unique_clicks = 2 WHERE id = ?", sendID).Error; err != nil {
		t.Fatal(err)
	}
	r := s.c.get("/automations/" + live.Utr)
	wantStatus(t, r, http.StatusOK)
	stats := all(r.doc, ".email-stats")
	if len(stats) != 2 {
		t.Fatalf("%d step statistics", len(stats))
	}
	if got := text(first(stats[0], "[data-opens]")); got != "9 (4 by people)" {
		t.Fatalf("opens %q", got)
	}
	if got := text(first(stats[0], "[data-clicks]")); got != "6 (2 by people)" {
		t.Fatalf("clicks %q", got)
	}
	if got := text(first(stats[1], "[data-human-opens]")); got != "(0 by people)" {
		t.Fatalf("second step %q", got)
	}
}
