package web_test

import (
	"context"
	"fmt"
	"net/http"
	"net/netip"
	"slices"
	"strings"
	"testing"
	"time"

	"herald/models"
	"herald/service"
	"herald/web"
)

// The contact page shows the contact's engagement: ann, whose mail a
// person clicked, is engaged, with the click's time; a privacy proxy's
// open of bob's mail leaves him new. The segment builder offers the
// level as a field whose value is chosen from the levels, and its live
// count matches the contact page.
func TestContactEngagement(t *testing.T) {
	t.Parallel()
	a := newTestApp(t, web.Options{})
	c, acct := a.account("Ada", "ada@example.com")
	au := a.audience(acct)
	typeID := au.contactType("Customers")
	ann := au.contact(typeID, "ann@example.com", "Ann", "Lee", "US", nil)
	bob := au.contact(typeID, "bob@example.com", "Bob", "Lee", "US", nil)

	ctx := context.Background()
	now := models.NewTimestamp(models.Now().Add(-time.Hour))
	ss := models.SingleSend{UserID: acct, SingleSendName: "Letter", Subject: "News", Utr: "u1", Links: models.StringArray{"https://shop.example.com/"}, CreatedAt: now, UpdatedAt: now}
	if err := a.svc.DB.W.Create(&ss).Error; err != nil {
		t.Fatal(err)
	}
	token := func(email string) string {
		m := models.SendMessage{SendID: ss.ID, UserID: acct, Email: email, State: models.MessageDelivered, SentAt: &now}
		if err := a.svc.DB.W.Create(&m).Error; err != nil {
			t.Fatal(err)
		}
		tok, err := a.svc.Tracking.Token(ctx, m.ID)
		if err != nil {
			t.Fatal(err)
		}
		return tok
	}
	person := service.Hit{Method: "GET", IP: netip.MustParseAddr("203.0.113.7"),
		UserAgent: "Mozilla/5.0 (Windows NT 10.0; Win64; x64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/124.0.0.0 Safari/537.36"}
	if _, err := a.svc.Tracking.ClickHit(ctx, token("ann@example.com"), 0, person); err != nil {
		t.Fatal(err)
	}
	if err := a.svc.Tracking.OpenHit(ctx, token("bob@example.com"), service.Hit{Method: "GET", IP: netip.MustParseAddr("17.58.101.12"), UserAgent: "Mozilla/5.0"}); err != nil {
		t.Fatal(err)
	}

	r := c.get(fmt.Sprintf("/contacts/%d/edit", ann))
	wantStatus(t, r, http.StatusOK)
	if lvl := first(r.doc, "#engagement-level"); attr(lvl, "data-level") != "engaged" || text(lvl) != "Engaged" {
		t.Fatalf("ann's level:\n%s", r.body)
	}
	if last := first(r.doc, "#engagement-last time"); last == nil || !strings.HasPrefix(text(last), "A person last opened or clicked on ") || attr(last, "datetime") == "" {
		t.Fatalf("ann's last engagement:\n%s", r.body)
	}
	if got := texts(r.doc, "#engagement-levels dt"); !slices.Equal(got, []string{"Engaged", "Lapsing", "Not engaged", "New"}) {
		t.Fatalf("levels explained %q", got)
	}
	r = c.get(fmt.Sprintf("/contacts/%d/edit", bob))
	if lvl := first(r.doc, "#engagement-level"); attr(lvl, "data-level") != "new" || text(first(r.doc, "#engagement-last")) != "No open or click by a person has been recorded." {
		t.Fatalf("bob's engagement:\n%s", r.body)
	}

	// The contact list shows each row's level as a badge.
	r = c.get("/contacts")
	for id, want := range map[int64]string{ann: "Engaged", bob: "New"} {
		if got := text(first(r.doc, fmt.Sprintf(`#contact-%d td[data-label="Engagement"] .badge`, id))); got != want {
			t.Errorf("the list shows contact %d as %q, want %q", id, got, want)
		}
	}

	r = c.hxPost("/segments/conditions", segmentForm(typeID, "", "and", [3]string{"engagement", "equals", ""}))
	wantStatus(t, r, http.StatusOK)
	if got := texts(r.doc, "#cond-0-value option"); !slices.Equal(got, []string{"Engaged", "Lapsing", "Not engaged", "New"}) {
		t.Fatalf("engagement values %q\n%s", got, r.body)
	}
	r = c.hxPost("/segments/count", segmentForm(typeID, "", "and", [3]string{"engagement", "equals", "engaged"}))
	if got := text(first(r.doc, "#segment-count-value")); got != "1" {
		t.Fatalf("engaged count %q\n%s", got, r.body)
	}
	r = c.hxPost("/segments/count", segmentForm(typeID, "", "and", [3]string{"engagement", "in", "new|lapsing"}))
	if got := text(first(r.doc, "#segment-count-value")); got != "1" {
		t.Fatalf("new or lapsing count %q\n%s", got, r.body)
	}
	// "Why in or out?" names the levels as the contact page does.
	seg, err := a.svc.Segments.Create(ctx, acct, service.SegmentInput{ContactTypeID: itoa(typeID), SegmentName: "Lapsing or new",
		SelectField: []string{"engagement"}, SelectOperator: []string{"in"}, Value: []string{"lapsing|new"}})
	if err != nil {
		t.Fatal(err)
	}
	r = c.get("/segments/" + itoa(seg.ID) + "/why?email=ann@example.com")
	wantStatus(t, r, http.StatusOK)
	if rows := all(r.doc, "#why-table tbody tr"); len(rows) != 1 || !slices.Equal(texts(rows[0], "td"), []string{"Engagement is one of", "Lapsing or New", "Engaged", "Not met"}) {
		t.Fatalf("why ann:\n%s", r.body)
	}
}
