package web_test

import (
	"net/http"
	"net/url"
	"strings"
	"testing"

	"herald/models"
)

// The compare page: sends not completed are refused with the reason, one
// chosen send waits for more, 2 to 4 completed sends stand side by side
// and a fifth is refused.
func TestCompareSends(t *testing.T) {
	t.Parallel()
	s := newSendSetup(t)
	var utrs []string
	for _, name := range []string{"One", "Two", "Three", "Four", "Five"} {
		utrs = append(utrs, s.create(name).Utr)
	}
	page := func(chosen ...string) *response {
		q := url.Values{"utr": chosen}
		return s.c.get("/single-sends/compare?" + q.Encode())
	}
	r := page(utrs[0], utrs[1])
	wantStatus(t, r, http.StatusUnprocessableEntity)
	if got := text(first(r.doc, "#compare-error")); !strings.Contains(got, "has not completed") {
		t.Fatalf("error %q", got)
	}
	if first(r.doc, "#compare-too-few") == nil {
		t.Fatal("no completed send, yet a choice is offered")
	}
	if err := s.a.svc.DB.W.Model(&models.SingleSend{}).Where("utr IN ?", utrs).Update("status", models.SendCompleted).Error; err != nil {
		t.Fatal(err)
	}
	r = page(utrs[0])
	wantStatus(t, r, http.StatusOK)
	if first(r.doc, "#compare-error") != nil || first(r.doc, "#compare-table") != nil || len(all(r.doc, "#compare-form input[checked]")) != 1 {
		t.Fatal("one send: the choice should wait for more")
	}
	r = page(utrs[0], utrs[1], utrs[2])
	wantStatus(t, r, http.StatusOK)
	if n := len(all(r.doc, "#compare-table tbody tr")); n != 3 {
		t.Fatalf("%d rows", n)
	}
	if first(r.doc, "#compare-chart-empty") == nil {
		t.Fatal("sends without opens draw a chart")
	}
	r = page(utrs...)
	wantStatus(t, r, http.StatusUnprocessableEntity)
	if got := text(first(r.doc, "#compare-error")); !strings.Contains(got, "Choose from 2 to 4") {
		t.Fatalf("five sends: %q", got)
	}
}
