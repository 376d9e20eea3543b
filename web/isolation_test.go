package web_test

import (
	"context"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"testing"
	"time"

	"herald/models"
	"herald/service"
	"herald/web"
)

// Account B can neither see nor change account A's records: every one of
// them is "not found" to B (404), and A's data is left as it was.
func TestAccountsAreIsolated(t *testing.T) {
	t.Parallel()
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
	if got := attr(first(b.get("/dashboard").doc, "#step-notifications"), "data-done"); got != "false" {
		t.Fatalf("B's dashboard ticks A's notification recipients: %s", got)
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

// Account B can neither see, preview, test, count, change, copy nor
// delete account A's single sends, nor lift A's bounced addresses: each
// is "not found" to B (404), and A's records stay as they were.
func TestSingleSendsAreIsolated(t *testing.T) {
	t.Parallel()
	s := newSendSetup(t)
	ctx := context.Background()
	sendA := s.create("Secret send", func(in *service.SingleSendInput) {
		in.TemplateID, in.TemplateHTML = "1", `<p>secret design</p>`
	})
	bounce := models.Suppression{UserID: s.acct, Email: "secret-bounce@example.com", Reason: "secret reason", CreatedAt: models.NewTimestamp(time.Now())}
	if err := s.a.svc.DB.W.Create(&bounce).Error; err != nil {
		t.Fatal(err)
	}

	b, acctB := s.a.account("Bob", "bob@example.com")
	ownB, err := s.a.svc.Groups.Create(ctx, acctB, service.GroupInput{GroupName: "Bob's", Description: "d", IsDisplay: "1"})
	if err != nil {
		t.Fatal(err)
	}

	// B's pages show none of A's sends, senders, groups, audience or designs.
	for _, path := range []string{"/single-sends", "/single-sends?q=send", "/single-sends/new", "/suppressions/bounced"} {
		r := b.get(path)
		wantStatus(t, r, http.StatusOK)
		for _, leak := range []string{"Secret send", "secret", "Customers", "Org people", "Sale letter", "news@shop.example.com", "Members only"} {
			if strings.Contains(r.body, leak) {
				t.Fatalf("%s shows A's %q", path, leak)
			}
		}
	}
	// A's contact type counts nothing for B; A's design previews nothing.
	if r := b.hxPost("/single-sends/count", url.Values{"recipient_id": {"contacts_" + itoa(s.ctype)}}); text(first(r.doc, "#send-count-value")) != "0" {
		t.Fatal("B counts A's contacts")
	}
	// Nor do A's group and A's hand-added segment addresses: they would
	// tell B whether an address of B's is on A's lists.
	if _, err := s.a.svc.Groups.AddRecipients(ctx, s.acct, service.RecipientsInput{GroupID: itoa(s.group), EmailAddress: "shared@example.com"}); err != nil {
		t.Fatal(err)
	}
	if _, err := s.a.svc.Segments.AddEmail(ctx, s.acct, service.SegmentEmailInput{SegmentID: itoa(s.segment), FirstName: "Sha", LastName: "Red", Email: "shared@example.com"}); err != nil {
		t.Fatal(err)
	}
	typeB := s.a.audience(acctB).contactType("Bob's people")
	s.a.audience(acctB).contact(typeB, "shared@example.com", "Sha", "Red", "US", nil)
	for _, form := range []url.Values{
		{"recipient_id": {"contacts_" + itoa(typeB)}, "unsubscribe_group_id": {itoa(s.group)}},
		{"recipient_id": {"contacts_" + itoa(typeB)}, "exclude_specific_recipient_id": {"segments_" + itoa(s.segment)}},
	} {
		if r := b.hxPost("/single-sends/count", form); text(first(r.doc, "#send-count-value")) != "1" {
			t.Fatalf("A's lists change B's count (%v): %s", form, text(first(r.doc, "#send-count-value")))
		}
	}
	if r := b.hxGet("/single-sends/preview?template=design-" + itoa(s.design)); first(r.doc, "iframe") != nil {
		t.Fatal("B previews A's design")
	}
	// A send of B's made of A's pieces is refused, field by field.
	r := b.hxPost("/single-sends", url.Values{
		"single_send_name": {"Taken"}, "template": {"design-" + itoa(s.design)}, "sender_id": {itoa(s.sender)},
		"unsubscribe_group_id": {itoa(s.group)}, "subject": {"x"}, "preheader": {"x"},
		"recipient_id": {"contacts_" + itoa(s.ctype)}, "schedule_type": {"0"},
	})
	wantStatus(t, r, http.StatusUnprocessableEntity)
	for _, id := range []string{"send-template-error", "send-sender-error", "send-group-error", "send-to-error"} {
		if first(r.doc, "#"+id) == nil {
			t.Errorf("no %s", id)
		}
	}

	utr := sendA.Utr
	full := s.form("Taken over")
	full.Set("sender_id", "")
	full.Set("unsubscribe_group_id", itoa(ownB.ID))
	testForm := url.Values{"utr": {utr}, "template": {"current"}, "subject": {"x"}, "preheader": {"x"}, "test_email": {"bob@example.com"}}
	tests := []struct {
		method, path string
		form         url.Values
	}{
		{"GET", "/single-sends/" + utr, nil},
		{"GET", "/single-sends/" + utr + "/edit", nil},
		{"GET", "/single-sends/" + utr + "/click-map", nil},
		{"GET", "/single-sends/compare?utr=" + utr + "&utr=" + utr, nil},
		{"GET", "/single-sends/" + utr + "/progress", nil},
		{"GET", "/single-sends/" + itoa(sendA.ID), nil}, // by id, as the service also finds sends
		{"GET", "/single-sends/preview?template=current&utr=" + utr, nil},
		{"POST", "/single-sends/" + utr, full},
		{"POST", "/single-sends/" + utr + "/duplicate", nil},
		{"POST", "/single-sends/" + utr + "/delete", nil},
		{"POST", "/single-sends/bulk-delete", url.Values{"ids": {utr}}},
		{"POST", "/single-sends/test", testForm},
		{"POST", "/suppressions/bounced/" + itoa(bounce.ID) + "/lift", nil},
		{"POST", "/suppressions/bounced/lift", url.Values{"ids": {itoa(bounce.ID)}}},
	}
	b.get("/single-sends")
	for _, tt := range tests {
		for _, hx := range []bool{false, true} {
			name := tt.method + " " + tt.path
			if hx {
				name += " (htmx)"
			}
			t.Run(name, func(t *testing.T) {
				var r *response
				switch {
				case tt.method == "GET":
					r = b.do("GET", tt.path, nil, hx)
				case hx:
					r = b.hxPost(tt.path, tt.form)
				default:
					r = b.post(tt.path, tt.form)
				}
				wantStatus(t, r, http.StatusNotFound)
				if strings.Contains(r.body, "secret") || strings.Contains(r.body, "Secret") {
					t.Fatal("the 404 shows A's data")
				}
			})
		}
	}

	// A's send and bounced address are still there, unchanged; B got no test.
	got := s.get(utr)
	if got.SingleSendName != "Secret send" || got.TemplateHTML == nil || *got.TemplateHTML != "<p>secret design</p>" {
		t.Fatalf("A's send: %+v", got)
	}
	n := 0
	_ = s.a.svc.SingleSends.Each(ctx, s.acct, service.ListFilter{}, func(*models.SingleSend) error { n++; return nil })
	if n != 1 {
		t.Fatalf("A has %d sends", n)
	}
	if c, _ := s.a.svc.Suppressions.Count(ctx, s.acct); c != 1 {
		t.Fatalf("A has %d bounced addresses", c)
	}
	_ = s.a.svc.SingleSends.Each(ctx, acctB, service.ListFilter{}, func(*models.SingleSend) error { n++; return nil })
	if n != 1 {
		t.Fatal("B has a send (a duplicate of A's?)")
	}
	_ = s.a.svc.Outbox.Each(ctx, acctB, service.ListFilter{}, func(m *models.OutboxMessage) error {
		t.Fatalf("B mailed %q", m.Subject)
		return nil
	})
}
