package service_test

import (
	"context"
	"strings"
	"testing"

	"herald/dbtest"
	"herald/models"
	"herald/service"
	"herald/service/servicetest"
)

// The console's view of a message shows it as its recipient got it, less
// what would count: no open pixel, every tracked link pointing where its
// click goes; nothing is counted, and another account's tokens resolve
// to nothing.
func TestUntrackedCountsNothing(t *testing.T) {
	t.Parallel()
	svc := dbtest.Service(t, service.Config{BaseURL: "http://herald.test"})
	ctx := context.Background()
	acct := servicetest.NewAccount(t, svc, "view@example.com")
	other := servicetest.NewAccount(t, svc, "other@example.com")
	now := models.NewTimestamp(models.Now())
	ss := models.SingleSend{UserID: acct, SingleSendName: "Sale", Utr: "sale", CreatedAt: now, UpdatedAt: now,
		Links: []string{"https://shop.example.com/a", "https://shop.example.com/b?u=((email))"}}
	if err := svc.DB.W.Create(&ss).Error; err != nil {
		t.Fatal(err)
	}
	m := models.SendMessage{SendID: ss.ID, UserID: acct, Email: "ann@example.com", State: models.MessageDelivered, SentAt: &now}
	if err := svc.DB.W.Create(&m).Error; err != nil {
		t.Fatal(err)
	}
	tok, err := svc.Tracking.Token(ctx, m.ID)
	if err != nil {
		t.Fatal(err)
	}
	html := `<html><body><p><a href="http://herald.test/t/c/` + tok + `/0">Shop</a> <a href="http://herald.test/t/c/` + tok + `/1">Mine</a> <a href="https://elsewhere.example/x">x</a></p>` +
		`<img src="http://herald.test/t/o/` + tok + `.gif" width="1" height="1" alt="" style="display:block;width:1px;height:1px;border:0"></body></html>`
	got := svc.Tracking.Untracked(ctx, acct, html)
	for _, want := range []string{`href="https://shop.example.com/a"`, `href="https://shop.example.com/b?u=ann@example.com"`, `href="https://elsewhere.example/x"`} {
		if !strings.Contains(got, want) {
			t.Errorf("untracked HTML lacks %s:\n%s", want, got)
		}
	}
	if strings.Contains(got, "/t/o/") || strings.Contains(got, "/t/c/") {
		t.Fatalf("tracking left in:\n%s", got)
	}
	text := svc.Tracking.UntrackedText(ctx, acct, "Shop: http://herald.test/t/c/"+tok+"/0 now.")
	if text != "Shop: https://shop.example.com/a now." {
		t.Fatalf("text: %q", text)
	}
	if theirs := svc.Tracking.Untracked(ctx, other, html); strings.Contains(theirs, "shop.example.com") || strings.Contains(theirs, "/t/c/") {
		t.Fatalf("another account's view resolves the links:\n%s", theirs)
	}
	var after models.SingleSend
	if err := svc.DB.R.First(&after, ss.ID).Error; err != nil {
		t.Fatal(err)
	}
	if after.TotalOpens != 0 || after.UniqueOpens != 0 || after.TotalClicks != 0 || after.UniqueClicks != 0 {
		t.Fatalf("viewing counted: %+v", after)
	}
}
