package service_test

import (
	"context"
	"fmt"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"herald/dbtest"
	"herald/models"
	"herald/service"
	"herald/service/servicetest"
)

func TestNormalizeEmail(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		in, want string
		ok       bool
	}{
		{" Ann@Example.COM ", "ann@example.com", true},
		{"a.b+tag@sub.example.co", "a.b+tag@sub.example.co", true},
		{"", "", false},
		{"plain", "plain", false},
		{"a@b", "a@b", false},
		{"a@b.", "a@b.", false},
		{"a@.b.com", "a@.b.com", false},
		{"a@b..com", "a@b..com", false},
		{"Ann <ann@example.com>", "", false},
		{"a b@example.com", "", false},
		{"@example.com", "@example.com", false},
		{strings.Repeat("x", 65) + "@example.com", "", false},
	} {
		got, ok := service.NormalizeEmail(tc.in)
		if ok != tc.ok || (ok && got != tc.want) {
			t.Errorf("NormalizeEmail(%q) = %q, %v; want %q, %v", tc.in, got, ok, tc.want, tc.ok)
		}
	}
}

func TestLabel(t *testing.T) {
	t.Parallel()
	for in, want := range map[string]string{
		"email_address": "email address", "strIds": "str ids", "PublicKey": "public key",
		"is_display": "is display", "unsubscribe_groups_id": "unsubscribe groups id", "groupId": "group id",
	} {
		if got := service.Label(in); got != want {
			t.Errorf("Label(%q) = %q, want %q", in, got, want)
		}
	}
}

func TestParseIDs(t *testing.T) {
	t.Parallel()
	ids, err := service.ParseIDs("strIds", []string{"3", " 1", "3"})
	if err != nil || fmt.Sprint(ids) != "[3 1]" {
		t.Fatalf("got %v %v", ids, err)
	}
	for _, bad := range [][]string{{"1", "x"}, {"0"}, {"-2"}, {"9999999999999999999999"}} {
		if _, err := service.ParseIDs("strIds", bad); !service.IsNotFound(err) {
			t.Errorf("%v: want not found, got %v", bad, err)
		}
	}
	if _, err := service.ParseIDs("strIds", nil); service.ErrorCode(err) != service.CodeValidation {
		t.Errorf("empty: want validation, got %v", err)
	}
}

func count(t *testing.T, svc *service.Service, acct int64) int {
	t.Helper()
	n := 0
	if err := svc.Unsubscribers.Each(context.Background(), acct, service.ListFilter{}, func(*models.Unsubscriber) error { n++; return nil }); err != nil {
		t.Fatal(err)
	}
	return n
}

// Concurrent saves of overlapping lists never duplicate an address, on
// SQLite's single writer and on PostgreSQL's unique index alike.
func TestConcurrentAddsDoNotDuplicate(t *testing.T) {
	t.Parallel()
	svc := dbtest.Service(t)
	acct := servicetest.NewAccount(t, svc, "c@example.com")
	var addrs []string
	for i := 0; i < 300; i++ {
		addrs = append(addrs, fmt.Sprintf("p%d@example.com", i))
	}
	var wg sync.WaitGroup
	errs := make(chan error, 8)
	for w := 0; w < 8; w++ {
		wg.Add(1)
		go func(w int) {
			defer wg.Done()
			// Each worker adds the list rotated differently, in upper case.
			rot := append(append([]string{}, addrs[w*30:]...), addrs[:w*30]...)
			_, err := svc.Unsubscribers.Add(context.Background(), acct, strings.ToUpper(strings.Join(rot, ",")))
			errs <- err
		}(w)
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		if err != nil {
			t.Fatal(err)
		}
	}
	if n := count(t, svc, acct); n != 300 {
		t.Fatalf("want 300 addresses, got %d", n)
	}
}

func TestEachReadsInBatches(t *testing.T) {
	t.Parallel()
	svc := dbtest.Service(t)
	a := servicetest.NewAccount(t, svc, "a@example.com")
	b := servicetest.NewAccount(t, svc, "b@example.com")
	var list []string
	for i := 0; i < 2345; i++ {
		list = append(list, fmt.Sprintf("r%05d@example.com", i))
	}
	ctx := context.Background()
	if added, err := svc.Unsubscribers.Add(ctx, a, strings.Join(list, "\n")); err != nil || added != 2345 {
		t.Fatalf("added %d, %v", added, err)
	}
	if added, err := svc.Unsubscribers.Add(ctx, a, list[0]+","+list[1]); err != nil || added != 0 {
		t.Fatalf("re-adding: added %d, %v", added, err)
	}
	if _, err := svc.Unsubscribers.Add(ctx, b, "other@example.com"); err != nil {
		t.Fatal(err)
	}
	if n := count(t, svc, a); n != 2345 {
		t.Fatalf("a: %d", n)
	}
	if n := count(t, svc, b); n != 1 {
		t.Fatalf("b: %d", n)
	}
	var found []string
	_ = svc.Unsubscribers.Each(ctx, a, service.ListFilter{Search: "R0012"}, func(u *models.Unsubscriber) error {
		found = append(found, u.EmailAddress)
		return nil
	})
	if len(found) != 10 || found[0] != "r00120@example.com" {
		t.Fatalf("search: %v", found)
	}
	// LIKE wildcards in the search text are literal.
	n := 0
	_ = svc.Unsubscribers.Each(ctx, a, service.ListFilter{Search: "%"}, func(*models.Unsubscriber) error { n++; return nil })
	if n != 0 {
		t.Fatalf("search %%: %d rows", n)
	}
}

func TestSettingsSecretIsShared(t *testing.T) {
	t.Parallel()
	svc := dbtest.Service(t)
	ctx := context.Background()
	var wg sync.WaitGroup
	got := make([]string, 6)
	for i := range got {
		wg.Add(1)
		go func(i int) {
			defer wg.Done()
			v, err := svc.Settings.Secret(ctx, "k", 16)
			if err != nil {
				t.Error(err)
			}
			got[i] = v
		}(i)
	}
	wg.Wait()
	for _, v := range got {
		if v != got[0] || len(v) != 32 {
			t.Fatalf("secrets differ or wrong size: %v", got)
		}
	}
}

func TestLogin(t *testing.T) {
	t.Parallel()
	svc := dbtest.Service(t)
	ctx := context.Background()
	servicetest.NewAccount(t, svc, "who@example.com")
	login := func(email, password string) (*models.User, error) {
		return svc.Accounts.Login(ctx, service.LoginInput{Email: email, Password: password, IP: "192.0.2.1"})
	}
	if u, err := login(" WHO@example.com", "test-passphrase-9"); err != nil || u.Email != "who@example.com" {
		t.Fatalf("login: %v %v", u, err)
	}
	if _, err := login("nobody@example.com", "test-passphrase-9"); service.ErrorCode(err) != service.CodeValidation {
		t.Fatalf("unknown address: %v", err)
	}
	for i := 0; i < 6; i++ {
		if _, err := login("who@example.com", "wrong"); service.ErrorCode(err) != service.CodeValidation {
			t.Fatalf("wrong password %d: %v", i, err)
		}
	}
	// Now even the right password is refused for a while.
	if _, err := login("who@example.com", "test-passphrase-9"); service.ErrorCode(err) != service.CodeRateLimited {
		t.Fatalf("after 6 failures: %v", err)
	}
}

func TestCreateAccountValidation(t *testing.T) {
	t.Parallel()
	svc := dbtest.Service(t)
	ctx := context.Background()
	_, _, err := svc.Accounts.Create(ctx, service.AccountInput{})
	e, ok := err.(*service.Error)
	if !ok || len(e.Fields) != 3 || e.Fields["email"][0] != "The email field is required." {
		t.Fatalf("empty: %v", err)
	}
	_, _, err = svc.Accounts.Create(ctx, service.AccountInput{Name: "x", Email: "x@example.com", Password: "short"})
	if e, _ := err.(*service.Error); e == nil || e.Fields["password"][0] != "The password must be at least 10 characters." {
		t.Fatalf("short password: %v", err)
	}
	servicetest.NewAccount(t, svc, "x@example.com")
	_, _, err = svc.Accounts.Create(ctx, service.AccountInput{Name: "x", Email: "X@example.com", Password: "test-passphrase-9"})
	if e, _ := err.(*service.Error); e == nil || e.Fields["email"][0] != "The email has already been taken." {
		t.Fatalf("taken: %v", err)
	}
}

func TestFailAbandonedImports(t *testing.T) {
	t.Parallel()
	svc := dbtest.Service(t)
	ctx := context.Background()
	acct := servicetest.NewAccount(t, svc, "i@example.com")
	ct, _ := svc.ContactTypes.Create(ctx, acct, "Type")
	imp, err := svc.Imports.Start(ctx, acct, ct.ID, "x.csv", 10)
	if err != nil {
		t.Fatal(err)
	}
	if n, _ := svc.Imports.FailAbandoned(ctx, time.Hour); n != 0 {
		t.Fatalf("a fresh import was marked failed (%d)", n)
	}
	if n, _ := svc.Imports.FailAbandoned(ctx, -time.Second); n != 1 {
		t.Fatalf("the idle import was not marked failed (%d)", n)
	}
	got, _ := svc.Imports.Get(ctx, acct, imp.ID)
	if got.Status != "failed" || got.FinishedAt == nil {
		t.Fatalf("%+v", got)
	}
}

// The console deletes a recipient from the page of one group or segment:
// another group's or segment's recipient is not found there.
func TestScopedRecipientDeletes(t *testing.T) {
	t.Parallel()
	svc := dbtest.Service(t)
	ctx := context.Background()
	acct := servicetest.NewAccount(t, svc, "s@example.com")
	g1, _ := svc.Groups.Create(ctx, acct, service.GroupInput{GroupName: "One", Description: "d", IsDisplay: "1"})
	g2, _ := svc.Groups.Create(ctx, acct, service.GroupInput{GroupName: "Two", Description: "d", IsDisplay: "1"})
	if _, err := svc.Groups.AddRecipients(ctx, acct, service.RecipientsInput{GroupID: strconv.FormatInt(g1.ID, 10), EmailAddress: "r@example.com"}); err != nil {
		t.Fatal(err)
	}
	var rid int64
	_ = svc.Groups.EachRecipient(ctx, acct, g1.ID, service.ListFilter{}, func(u *models.Unsubscriber) error { rid = u.ID; return nil })
	if err := svc.Groups.DeleteRecipientsOf(ctx, acct, g2.ID, []int64{rid}); !service.IsNotFound(err) {
		t.Fatalf("deleted group one's recipient through group two: %v", err)
	}
	if err := svc.Groups.DeleteRecipientsOf(ctx, acct, g1.ID, []int64{rid}); err != nil {
		t.Fatal(err)
	}

	ct, _ := svc.ContactTypes.Create(ctx, acct, "Type")
	typeID := strconv.FormatInt(ct.ID, 10)
	s1, _ := svc.Segments.Create(ctx, acct, service.SegmentInput{ContactTypeID: typeID, SegmentName: "A"})
	s2, _ := svc.Segments.Create(ctx, acct, service.SegmentInput{ContactTypeID: typeID, SegmentName: "B"})
	row, err := svc.Segments.AddEmail(ctx, acct, service.SegmentEmailInput{SegmentID: strconv.FormatInt(s1.ID, 10), FirstName: "A", LastName: "B", Email: "e@example.com"})
	if err != nil {
		t.Fatal(err)
	}
	if err := svc.Segments.DeleteEmailOf(ctx, acct, s2.ID, row.ID); !service.IsNotFound(err) {
		t.Fatalf("deleted segment A's recipient through segment B: %v", err)
	}
	if err := svc.Segments.DeleteEmailOf(ctx, acct, s1.ID, row.ID); err != nil {
		t.Fatal(err)
	}
}
