package service_test

import (
	"context"
	"reflect"
	"strconv"
	"testing"
	"time"

	"herald/dbtest"
	"herald/models"
	"herald/service"
	"herald/service/servicetest"
)

// Sorting and status filters of the console's lists: each key sorts both
// ways, a page at a time, within the account; the filters keep the rows
// of one state.
func TestListsSortAndFilterWithinTheAccount(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	svc := dbtest.Service(t)
	acct := servicetest.NewAccount(t, svc, "sort@herald.test")
	other := servicetest.NewAccount(t, svc, "other@herald.test")
	draft := func(acct int64, name string) *models.SingleSend {
		t.Helper()
		ss, err := svc.SingleSends.SaveDraft(ctx, acct, service.SingleSendInput{SingleSendName: name})
		if err != nil {
			t.Fatal(err)
		}
		return ss
	}
	exec := func(sql string, args ...any) {
		t.Helper()
		if err := svc.DB.W.Exec(sql, args...).Error; err != nil {
			t.Fatal(err)
		}
	}
	// Created in this order, an hour apart: bravo, alpha, delta, charlie.
	base := time.Date(2030, 1, 1, 12, 0, 0, 0, time.UTC)
	names := []string{"bravo", "alpha", "delta", "charlie"}
	sends := map[string]*models.SingleSend{}
	for i, n := range names {
		sends[n] = draft(acct, n)
		exec("UPDATE single_sends SET created_at = ? WHERE id = ?", models.NewTimestamp(base.Add(time.Duration(i)*time.Hour)), sends[n].ID)
	}
	draft(other, "aaa another account's")
	exec("UPDATE single_sends SET status = 3, sent_at = ? WHERE id = ?", models.NewTimestamp(base.Add(5*time.Hour)), sends["alpha"].ID)
	exec("UPDATE single_sends SET status = 3, sent_at = ? WHERE id = ?", models.NewTimestamp(base.Add(4*time.Hour)), sends["delta"].ID)
	exec("UPDATE single_sends SET status = 1, armed = 1 WHERE id = ?", sends["charlie"].ID)

	list := func(f service.ListFilter) []string {
		t.Helper()
		var out []string
		if err := svc.SingleSends.Each(ctx, acct, f, func(s *models.SingleSend) error {
			out = append(out, s.SingleSendName)
			return nil
		}); err != nil {
			t.Fatal(err)
		}
		return out
	}
	for _, c := range []struct {
		f    service.ListFilter
		want []string
	}{
		{service.ListFilter{Sort: "name", PerPage: 50}, []string{"alpha", "bravo", "charlie", "delta"}},
		{service.ListFilter{Sort: "name", Desc: true, PerPage: 50}, []string{"delta", "charlie", "bravo", "alpha"}},
		{service.ListFilter{Sort: "name", PerPage: 3, Page: 2}, []string{"delta"}},
		{service.ListFilter{Sort: "created", PerPage: 50}, []string{"bravo", "alpha", "delta", "charlie"}},
		{service.ListFilter{Sort: "created", Desc: true, PerPage: 2}, []string{"charlie", "delta"}},
		{service.ListFilter{Sort: "sent", Desc: true, PerPage: 50, Status: "completed"}, []string{"alpha", "delta"}},
		{service.ListFilter{Sort: "sent", PerPage: 50, Status: "completed"}, []string{"delta", "alpha"}},
		{service.ListFilter{Sort: "status", Desc: true, PerPage: 2}, []string{"delta", "alpha"}},
		{service.ListFilter{Sort: "name", PerPage: 50, Status: "draft"}, []string{"bravo"}},
		{service.ListFilter{PerPage: 50, Status: "scheduled"}, []string{"charlie"}},
		{service.ListFilter{PerPage: 50, Status: "running"}, nil},
		{service.ListFilter{Sort: "name", PerPage: 50, Search: "a", Status: "completed"}, []string{"alpha", "delta"}},
		// An unknown key keeps the order by id; the whole-collection read ignores sorting.
		{service.ListFilter{Sort: "id; DROP TABLE users", PerPage: 50}, []string{"bravo", "alpha", "delta", "charlie"}},
		{service.ListFilter{Sort: "name", Status: "nonsense"}, []string{"bravo", "alpha", "delta", "charlie"}},
	} {
		if got := list(c.f); !reflect.DeepEqual(got, c.want) {
			t.Errorf("%+v: got %v, want %v", c.f, got, c.want)
		}
	}

	// Contacts: by email, name and creation, within the account.
	ct, err := svc.ContactTypes.Create(ctx, acct, "People")
	if err != nil {
		t.Fatal(err)
	}
	oct, err := svc.ContactTypes.Create(ctx, other, "People")
	if err != nil {
		t.Fatal(err)
	}
	for i, p := range [][2]string{{"carol@example.com", "ann"}, {"adam@example.com", "zoe"}, {"bea@example.com", "mia"}} {
		if _, err := svc.Contacts.Create(ctx, acct, service.ContactInput{ContactTypeID: strconv.FormatInt(ct.ID, 10), FirstName: p[1], LastName: "x", Email: p[0], Country: "250"}); err != nil {
			t.Fatal(err)
		}
		exec("UPDATE contacts SET created_at = ? WHERE email = ?", models.NewTimestamp(base.Add(-time.Duration(i)*time.Hour)), p[0])
	}
	if _, err := svc.Contacts.Create(ctx, other, service.ContactInput{ContactTypeID: strconv.FormatInt(oct.ID, 10), FirstName: "aaa", LastName: "x", Email: "aaa@example.com", Country: "250"}); err != nil {
		t.Fatal(err)
	}
	contacts := func(f service.ListFilter) []string {
		t.Helper()
		var out []string
		if err := svc.Contacts.Each(ctx, acct, service.ContactFilter{ListFilter: f}, func(c *models.ContactView) error {
			out = append(out, c.Email)
			return nil
		}); err != nil {
			t.Fatal(err)
		}
		return out
	}
	for _, c := range []struct {
		f    service.ListFilter
		want []string
	}{
		{service.ListFilter{Sort: "email", PerPage: 50}, []string{"adam@example.com", "bea@example.com", "carol@example.com"}},
		{service.ListFilter{Sort: "email", Desc: true, PerPage: 50}, []string{"carol@example.com", "bea@example.com", "adam@example.com"}},
		{service.ListFilter{Sort: "name", PerPage: 50}, []string{"carol@example.com", "bea@example.com", "adam@example.com"}},
		{service.ListFilter{Sort: "created", PerPage: 50}, []string{"bea@example.com", "adam@example.com", "carol@example.com"}},
		{service.ListFilter{Sort: "created", PerPage: 1, Page: 3}, []string{"carol@example.com"}},
	} {
		if got := contacts(c.f); !reflect.DeepEqual(got, c.want) {
			t.Errorf("contacts %+v: got %v, want %v", c.f, got, c.want)
		}
	}
}
