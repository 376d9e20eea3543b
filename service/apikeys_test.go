package service_test

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"herald/dbtest"
	"herald/service"
	"herald/service/servicetest"
)

func TestAPIKeysCreateListRevoke(t *testing.T) {
	t.Parallel()
	svc, clock := clockedService(t, service.Config{})
	clock.Set(time.Date(2026, 11, 27, 10, 0, 0, 0, time.UTC))
	ctx := context.Background()
	a := servicetest.NewAccount(t, svc, "a@example.com")
	b := servicetest.NewAccount(t, svc, "b@example.com")

	key, pair, err := svc.APIKeys.Create(ctx, a, service.APIKeyInput{Name: " Reporting ", Scope: service.ScopeRead})
	if err != nil {
		t.Fatal(err)
	}
	if key.Name != "Reporting" || !strings.HasPrefix(pair.PublicKey, "pkn_") || !strings.HasPrefix(pair.SecretKey, "skn_") || key.PublicKey != pair.PublicKey {
		t.Fatalf("key %+v pair %+v", key, pair)
	}
	areaKey, _, err := svc.APIKeys.Create(ctx, a, service.APIKeyInput{Name: "Shop", Scope: service.ScopeAreas, Areas: []string{"segments", "contacts", "contacts"}})
	if err != nil {
		t.Fatal(err)
	}
	if got := areaKey.Scope.String(); got != "contacts,segments" {
		t.Fatalf("areas stored as %q", got)
	}
	// Read-only areas: stored with ":read" in the console's order, an area
	// given both ways read and changed; read back as made.
	mixed, _, err := svc.APIKeys.Create(ctx, b, service.APIKeyInput{Name: "Dashboards", Scope: service.ScopeAreas,
		Areas: []string{"senders"}, ReadAreas: []string{"segments", "contacts", "senders"}})
	if err != nil {
		t.Fatal(err)
	}
	if got := mixed.Scope.String(); got != "contacts:read,segments:read,senders" {
		t.Fatalf("mixed areas stored as %q", got)
	}
	if got := mixed.Scope.Describe(); got != "Contacts (read only), Segments (read only), Senders" {
		t.Fatalf("mixed areas described as %q", got)
	}
	if bl, err := svc.APIKeys.List(ctx, b); err != nil || len(bl) != 1 || bl[0].Scope.String() != "contacts:read,segments:read,senders" ||
		!bl[0].Scope.Allows("segments", false) || bl[0].Scope.Allows("segments", true) || !bl[0].Scope.Allows("senders", true) {
		t.Fatalf("mixed areas read back: %+v %v", bl, err)
	}
	if _, _, err := svc.APIKeys.Create(ctx, b, service.APIKeyInput{Name: "Reporting", Scope: service.ScopeFull}); err != nil {
		t.Fatalf("another account's key of the same name: %v", err)
	}

	list, err := svc.APIKeys.List(ctx, a)
	if err != nil {
		t.Fatal(err)
	}
	if len(list) != 2 || list[0].Name != "Reporting" || list[1].Name != "Shop" || list[1].Scope.Describe() != "Contacts, Segments" || list[0].LastUsedOn != "" {
		t.Fatalf("list %+v", list)
	}
	if !list[0].CreatedAt.Equal(time.Date(2026, 11, 27, 10, 0, 0, 0, time.UTC)) {
		t.Fatalf("created %v", list[0].CreatedAt)
	}

	// The check: right secret, wrong secret, the day of use recorded.
	acc, err := svc.APIKeys.Check(ctx, pair.PublicKey, pair.SecretKey)
	if err != nil || acc.AccountID != a || acc.KeyID != key.ID || acc.Scope.Kind != service.ScopeRead {
		t.Fatalf("check: %+v %v", acc, err)
	}
	if _, err := svc.APIKeys.Check(ctx, pair.PublicKey, pair.SecretKey+"x"); !errors.Is(err, service.ErrUnauthorized) {
		t.Fatalf("wrong secret: %v", err)
	}
	if _, err := svc.APIKeys.Check(ctx, "pkn_nope", pair.SecretKey); !errors.Is(err, service.ErrUnauthorized) {
		t.Fatalf("unknown key: %v", err)
	}
	list, _ = svc.APIKeys.List(ctx, a)
	if list[0].LastUsedOn != "2026-11-27" || list[1].LastUsedOn != "" {
		t.Fatalf("last used: %q %q", list[0].LastUsedOn, list[1].LastUsedOn)
	}
	clock.Advance(24 * time.Hour)
	if _, err := svc.APIKeys.Check(ctx, pair.PublicKey, pair.SecretKey); err != nil {
		t.Fatal(err)
	}
	list, _ = svc.APIKeys.List(ctx, a)
	if list[0].LastUsedOn != "2026-11-28" {
		t.Fatalf("last used the next day: %q", list[0].LastUsedOn)
	}

	// Revoke: another account's key is not found; the own one goes at once.
	if err := svc.APIKeys.Revoke(ctx, b, key.ID); !errors.Is(err, service.ErrNotFound) {
		t.Fatalf("revoke of another account's key: %v", err)
	}
	if err := svc.APIKeys.Revoke(ctx, a, key.ID); err != nil {
		t.Fatal(err)
	}
	if _, err := svc.APIKeys.Check(ctx, pair.PublicKey, pair.SecretKey); !errors.Is(err, service.ErrUnauthorized) {
		t.Fatalf("revoked key: %v", err)
	}
	if err := svc.APIKeys.Revoke(ctx, a, key.ID); !errors.Is(err, service.ErrNotFound) {
		t.Fatalf("second revoke: %v", err)
	}
	list, _ = svc.APIKeys.List(ctx, a)
	if len(list) != 1 || list[0].Name != "Shop" {
		t.Fatalf("list after revoke %+v", list)
	}
}

func TestAPIKeysValidation(t *testing.T) {
	t.Parallel()
	svc := dbtest.Service(t)
	ctx := context.Background()
	a := servicetest.NewAccount(t, svc, "a@example.com")
	if _, _, err := svc.APIKeys.Create(ctx, a, service.APIKeyInput{Name: "Taken", Scope: service.ScopeFull}); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		in    service.APIKeyInput
		field string
		want  string
	}{
		{service.APIKeyInput{Scope: service.ScopeFull}, "name", "The name field is required."},
		{service.APIKeyInput{Name: "x\ny", Scope: service.ScopeFull}, "name", "The name must not contain line breaks."},
		{service.APIKeyInput{Name: strings.Repeat("n", 101), Scope: service.ScopeFull}, "name", "The name may not be greater than 100 characters."},
		{service.APIKeyInput{Name: "Taken", Scope: service.ScopeRead}, "name", "The name has already been taken."},
		{service.APIKeyInput{Name: "k"}, "scope", "The scope field is required."},
		{service.APIKeyInput{Name: "k", Scope: "admin"}, "scope", "The selected scope is invalid."},
		{service.APIKeyInput{Name: "k", Scope: service.ScopeAreas}, "areas", "Choose at least one area."},
		{service.APIKeyInput{Name: "k", Scope: service.ScopeAreas, Areas: []string{"contacts", "billing"}}, "areas", "The selected areas is invalid."},
		{service.APIKeyInput{Name: "k\xff", Scope: service.ScopeRead}, "name", "The name must be valid UTF-8."},
		{service.APIKeyInput{Name: "k\x00", Scope: service.ScopeRead}, "name", "The name must not contain line breaks."},
	} {
		_, _, err := svc.APIKeys.Create(ctx, a, tc.in)
		var e *service.Error
		if !errors.As(err, &e) || len(e.Fields[tc.field]) == 0 || e.Fields[tc.field][0] != tc.want {
			t.Errorf("%+v: want %s %q, got %v", tc.in, tc.field, tc.want, err)
		}
	}
	if list, _ := svc.APIKeys.List(ctx, a); len(list) != 1 {
		t.Fatalf("a refused key was stored: %+v", list)
	}
}

func TestAPIKeyScopeAllows(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		scope       service.Scope
		area        string
		write, want bool
	}{
		{service.FullScope, "contacts", true, true},
		{service.Scope{Kind: service.ScopeRead}, "contacts", false, true},
		{service.Scope{Kind: service.ScopeRead}, "contacts", true, false},
		{service.Scope{Kind: service.ScopeAreas, Areas: []string{"contacts"}}, "contacts", true, true},
		{service.Scope{Kind: service.ScopeAreas, Areas: []string{"contacts"}}, "contacts", false, true},
		{service.Scope{Kind: service.ScopeAreas, Areas: []string{"contacts"}}, "segments", false, false},
		{service.Scope{Kind: service.ScopeAreas, Areas: []string{"contacts"}}, service.AreaReference, false, true},
		{service.Scope{Kind: service.ScopeAreas, Areas: []string{"contacts"}}, service.AreaReference, true, false},
		{service.Scope{Kind: service.ScopeAreas, Areas: []string{"contacts"}, ReadAreas: []string{"segments"}}, "segments", false, true},
		{service.Scope{Kind: service.ScopeAreas, Areas: []string{"contacts"}, ReadAreas: []string{"segments"}}, "segments", true, false},
		{service.Scope{Kind: service.ScopeAreas, Areas: []string{"contacts"}, ReadAreas: []string{"segments"}}, "contacts", true, true},
		{service.Scope{Kind: service.ScopeAreas, ReadAreas: []string{"segments"}}, "senders", false, false},
		{service.Scope{Kind: "unknown"}, "contacts", false, false},
	} {
		if got := tc.scope.Allows(tc.area, tc.write); got != tc.want {
			t.Errorf("%+v Allows(%s, write=%v) = %v", tc.scope, tc.area, tc.write, got)
		}
	}
}

// TestAPIKeyRevokedOnEveryProcess: a key revoked through one process is
// refused by another on the same database at its next check.
func TestAPIKeyRevokedOnEveryProcess(t *testing.T) {
	t.Parallel()
	procs := dbtest.Processes(t, 2)
	ctx := context.Background()
	a := servicetest.NewAccount(t, procs[0], "a@example.com")
	key, pair, err := procs[0].APIKeys.Create(ctx, a, service.APIKeyInput{Name: "CI", Scope: service.ScopeFull})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := procs[1].APIKeys.Check(ctx, pair.PublicKey, pair.SecretKey); err != nil {
		t.Fatal(err)
	}
	if err := procs[0].APIKeys.Revoke(ctx, a, key.ID); err != nil {
		t.Fatal(err)
	}
	if _, err := procs[1].APIKeys.Check(ctx, pair.PublicKey, pair.SecretKey); !errors.Is(err, service.ErrUnauthorized) {
		t.Fatalf("the other process still accepts the revoked key: %v", err)
	}
}
