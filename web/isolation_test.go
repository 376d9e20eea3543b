package web_test

import (
	"context"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"testing"

	"herald/models"
	"herald/service"
	"herald/web"
)

// Account B can neither see nor change account A's records: every one of
// them is "not found" to B (404), and A's data is left as it was.
func TestAccountsAreIsolated(t *testing.T) {
	a := newTestApp(t, web.Options{})
	ctx := context.Background()
	_, acctA := a.account("Ann", "ann@example.com")
	svc := a.svc

	if _, err := svc.Unsubscribers.Add(ctx, acctA, "secret-global@example.com"); err != nil {
		t.Fatal(err)
	}
	g, err := svc.Groups.Create(ctx, acctA, service.GroupInput{GroupName: "Ann's group", Description: "private", IsDisplay: "1"})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := svc.Groups.AddRecipients(ctx, acctA, service.RecipientsInput{GroupID: strconv.FormatInt(g.ID, 10), EmailAddress: "secret-recipient@example.com"}); err != nil {
		t.Fatal(err)
	}
	if _, err := svc.Notifications.Save(ctx, acctA, service.NotificationInput{EmailAddress: "secret-notify@example.com", EmailOwner: "Ann"}); err != nil {
		t.Fatal(err)
	}
	var unsubID, recipientID, notifyID int64
	_ = svc.Unsubscribers.Each(ctx, acctA, service.ListFilter{}, func(u *models.Unsubscriber) error { unsubID = u.ID; return nil })
	_ = svc.Groups.EachRecipient(ctx, acctA, g.ID, service.ListFilter{}, func(u *models.Unsubscriber) error { recipientID = u.ID; return nil })
	_ = svc.Notifications.Each(ctx, acctA, service.ListFilter{}, func(n *models.NotificationRecipient) error { notifyID = n.ID; return nil })

	b, acctB := a.account("Bob", "bob@example.com")
	defer func() { _ = acctB }()
	ownGroup, err := svc.Groups.Create(ctx, acctB, service.GroupInput{GroupName: "Bob's", Description: "d", IsDisplay: "1"})
	if err != nil {
		t.Fatal(err)
	}
	id := func(n int64) string { return strconv.FormatInt(n, 10) }
	gid := id(g.ID)

	// B's lists do not show A's records.
	for _, path := range []string{"/dashboard", "/suppressions/global", "/suppressions/groups", "/notifications", "/suppressions/global?q=secret"} {
		r := b.get(path)
		wantStatus(t, r, http.StatusOK)
		if strings.Contains(r.body, "secret-") || strings.Contains(r.body, "Ann&#39;s group") || strings.Contains(r.body, "Ann's group") {
			t.Fatalf("%s shows A's data", path)
		}
	}
	if got := text(first(b.get("/dashboard").doc, "#stat-global .stat-value")); got != "0" {
		t.Fatalf("B's dashboard counts A's unsubscribers: %s", got)
	}

	b.get("/suppressions/global")
	tests := []struct {
		method, path string
		form         url.Values
	}{
		{"GET", "/suppressions/groups/" + gid, nil},
		{"GET", "/suppressions/groups/" + gid + "/edit", nil},
		{"GET", "/suppressions/groups/" + gid + "/row", nil},
		{"POST", "/suppressions/groups/" + gid, url.Values{"group_name": {"Taken"}, "description": {"x"}}},
		{"POST", "/suppressions/groups/" + gid + "/recipients", url.Values{"email_address": {"x@example.com"}}},
		{"POST", "/suppressions/groups/" + gid + "/recipients/" + id(recipientID) + "/delete", nil},
		{"POST", "/suppressions/groups/" + gid + "/recipients/bulk-delete", url.Values{"ids": {id(recipientID)}}},
		// Through B's own group, A's recipient is still not B's.
		{"POST", "/suppressions/groups/" + id(ownGroup.ID) + "/recipients/" + id(recipientID) + "/delete", nil},
		{"POST", "/suppressions/groups/" + id(ownGroup.ID) + "/recipients/bulk-delete", url.Values{"ids": {id(recipientID)}}},
		{"POST", "/suppressions/global/" + id(unsubID) + "/delete", nil},
		{"POST", "/suppressions/global/bulk-delete", url.Values{"ids": {id(unsubID)}}},
		{"POST", "/notifications/" + id(notifyID) + "/delete", nil},
		{"POST", "/notifications/bulk-delete", url.Values{"ids": {id(notifyID)}}},
	}
	for _, tt := range tests {
		for _, hx := range []bool{false, true} {
			name := tt.method + " " + tt.path
			if hx {
				name += " (htmx)"
			}
			t.Run(name, func(t *testing.T) {
				var r *response
				if tt.method == "GET" {
					r = b.do("GET", tt.path, nil, hx)
				} else if hx {
					r = b.hxPost(tt.path, tt.form)
				} else {
					r = b.post(tt.path, tt.form)
				}
				wantStatus(t, r, http.StatusNotFound)
				if strings.Contains(r.body, "secret-") || strings.Contains(r.body, "private") {
					t.Fatal("the 404 shows A's data")
				}
			})
		}
	}

	// A's records are all still there, unchanged.
	count := 0
	_ = svc.Unsubscribers.Each(ctx, acctA, service.ListFilter{}, func(*models.Unsubscriber) error { count++; return nil })
	_ = svc.Groups.EachRecipient(ctx, acctA, g.ID, service.ListFilter{}, func(*models.Unsubscriber) error { count++; return nil })
	_ = svc.Notifications.Each(ctx, acctA, service.ListFilter{}, func(*models.NotificationRecipient) error { count++; return nil })
	if count != 3 {
		t.Fatalf("A has %d of 3 records left", count)
	}
	if got, err := svc.Groups.Get(ctx, acctA, g.ID); err != nil || got.GroupName != "Ann's group" {
		t.Fatalf("A's group: %+v %v", got, err)
	}
}
