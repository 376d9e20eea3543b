package api_test

import (
	"context"
	"strconv"
	"testing"

	"herald/service"
)

// A cached list is never stale: a change made without the API (another
// process, the console) is seen by the next list call.
func TestListCacheFollowsEveryChange(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	other, err := service.New(e.svc.DB, service.Config{}) // another service over the same database
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	count := func(path, key string) int {
		return len(list[unsubscriber](t, e.a.send("GET", path, nil), key))
	}
	if n := count("/api/global-unsubscribes", "unSubscribers"); n != 0 {
		t.Fatal(n)
	}
	if _, err := other.Unsubscribers.Add(ctx, e.a.id, "x@example.com,y@example.com"); err != nil {
		t.Fatal(err)
	}
	if n := count("/api/global-unsubscribes", "unSubscribers"); n != 2 {
		t.Fatalf("after add: %d", n)
	}
	rows := globalList(t, e.a)
	if err := other.Unsubscribers.Delete(ctx, e.a.id, rows[0].ID); err != nil {
		t.Fatal(err)
	}
	if n := count("/api/global-unsubscribes", "unSubscribers"); n != 1 {
		t.Fatalf("after delete: %d", n)
	}

	g, err := other.Groups.Create(ctx, e.a.id, service.GroupInput{GroupName: "G", Description: "D", IsDisplay: "1"})
	if err != nil {
		t.Fatal(err)
	}
	groups := func() []group {
		return list[group](t, e.a.send("GET", "/api/unsubscribes-groups", nil), "unsubscribesGroups")
	}
	if gs := groups(); len(gs) != 1 || *gs[0].UnsubscribeClientsCount != 0 {
		t.Fatalf("after group create: %+v", gs)
	}
	gid := strconv.FormatInt(g.ID, 10)
	if _, err := other.Groups.AddRecipients(ctx, e.a.id, service.RecipientsInput{GroupID: gid, EmailAddress: "r@example.com"}); err != nil {
		t.Fatal(err)
	}
	if gs := groups(); *gs[0].UnsubscribeClientsCount != 1 {
		t.Fatalf("count after recipient add: %+v", gs)
	}
	if n := count("/api/unsubscribes-groups/recipients-list?groupId="+gid, "recipients"); n != 1 {
		t.Fatalf("recipients: %d", n)
	}
	if _, err := other.Groups.Update(ctx, e.a.id, g.ID, service.GroupInput{GroupName: "Renamed", Description: "D", IsDisplay: "0"}); err != nil {
		t.Fatal(err)
	}
	if gs := groups(); gs[0].GroupName != "Renamed" {
		t.Fatalf("after update: %+v", gs)
	}

	ns := func() int {
		return len(list[notification](t, e.a.send("GET", "/api/notification-recipients", nil), "notifications"))
	}
	if ns() != 0 {
		t.Fatal("notifications")
	}
	if _, err := other.Notifications.Save(ctx, e.a.id, service.NotificationInput{EmailAddress: "n@example.com", EmailOwner: "N"}); err != nil {
		t.Fatal(err)
	}
	if ns() != 1 {
		t.Fatal("notification not seen")
	}
	// Another account's change does not mix in.
	if n := count("/api/global-unsubscribes", "unSubscribers"); n != 1 {
		t.Fatal(n)
	}
	if _, err := other.Unsubscribers.Add(ctx, e.b.id, "b@example.com"); err != nil {
		t.Fatal(err)
	}
	if n := count("/api/global-unsubscribes", "unSubscribers"); n != 1 {
		t.Fatalf("b's add seen by a: %d", n)
	}
}
