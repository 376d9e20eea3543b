package api_test

import (
	"net/http"
	"testing"

	"github.com/gofiber/fiber/v2"

	"herald/api"
	"herald/dbtest"
	"herald/service"
)

const textKeyScope = "This API key may not do that."

// namedKey makes a named key of c's account and a client that sends it.
func (e *env) namedKey(t *testing.T, c *client, name string, in service.APIKeyInput) (*client, int64) {
	t.Helper()
	in.Name = name
	key, pair, err := e.svc.APIKeys.Create(t.Context(), c.id, in)
	if err != nil {
		t.Fatal(err)
	}
	return &client{t: t, app: c.app, keys: pair, id: c.id}, key.ID
}

func expectRefused(t *testing.T, r reply, what string) {
	t.Helper()
	if r.Code != http.StatusUnauthorized || r.Status != "failed" || r.text(r.Errors) != textKeyScope ||
		r.raw != `{"status":"failed","errors":"This API key may not do that."}` {
		t.Fatalf("%s: want 401 %q, got %d %s", what, textKeyScope, r.Code, r.raw)
	}
}

func TestReadOnlyKey(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	ro, _ := e.namedKey(t, e.a, "Reports", service.APIKeyInput{Scope: service.ScopeRead})
	if r := e.a.send("POST", "/api/contacts-type/add", form("name", "Customers")); r.Code != 200 {
		t.Fatal(r.raw)
	}
	// Reads of every area work, and see the account's data.
	r := ro.send("GET", "/api/contacts-type", nil)
	if r.Code != 200 || len(list[map[string]any](t, r, "contactTypes")) != 1 {
		t.Fatalf("read-only GET: %d %s", r.Code, r.raw)
	}
	for _, p := range []string{"/api/global-unsubscribes", "/api/senders", "/api/segment/list", "/api/get-design/template", "/API/Senders/"} {
		if r := ro.send("GET", p, nil); r.Code != 200 {
			t.Fatalf("read-only GET %s: %d %s", p, r.Code, r.raw)
		}
	}
	// The sender list by POST is a read.
	if r := ro.send("POST", "/api/senders", nil); r.Code != 200 {
		t.Fatalf("read-only POST senders (a list): %d %s", r.Code, r.raw)
	}
	// Changes are refused, whatever the method; nothing changes.
	expectRefused(t, ro.send("POST", "/api/contacts-type/add", form("name", "Leads")), "POST")
	expectRefused(t, ro.send("DELETE", "/api/contacts-type/delete?id=1", nil), "DELETE")
	expectRefused(t, ro.send("GET", "/api/automations/pause?id=1", nil), "GET that changes state")
	if r := doRaw(t, ro, "HEAD", "/api/automations/set-live?id=1"); r.code != http.StatusUnauthorized {
		t.Fatalf("HEAD that changes state: %d", r.code)
	}
	if r := doRaw(t, ro, "HEAD", "/api/segment/list"); r.code != http.StatusOK {
		t.Fatalf("HEAD of a read: %d", r.code)
	}
	expectRefused(t, ro.send("GET", "/api/no-such-route", nil), "unknown route")
	if r := e.a.send("GET", "/api/contacts-type", nil); len(list[map[string]any](t, r, "contactTypes")) != 1 {
		t.Fatalf("a refused request changed something: %s", r.raw)
	}
	// A wrong secret is still the spec's answer, not the scope's.
	bad := *ro
	bad.keys.SecretKey = "skn_wrong"
	if r := bad.send("GET", "/api/contacts-type", nil); r.Code != 401 || r.text(r.Errors) != "Invalid PublicKey or SecretKey." {
		t.Fatalf("wrong secret of a named key: %d %s", r.Code, r.raw)
	}
}

func TestAreaKey(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	k, _ := e.namedKey(t, e.a, "Shop", service.APIKeyInput{Scope: service.ScopeAreas, Areas: []string{"contact_types", "suppressions"}})
	if r := k.send("POST", "/api/contacts-type/add", form("name", "Customers")); r.Code != 200 {
		t.Fatalf("area key in its area: %d %s", r.Code, r.raw)
	}
	if r := k.send("POST", "/api/global-unsubscribes/save", form("email_address", "x@example.com")); r.Code != 200 {
		t.Fatalf("area key in its second area: %d %s", r.Code, r.raw)
	}
	if r := k.send("GET", "/api/unsubscribes-groups", nil); r.Code != 200 {
		t.Fatalf("area key reading its area: %d %s", r.Code, r.raw)
	}
	if r := k.send("GET", "/api/get/country-state-city", nil); r.Code != 200 {
		t.Fatalf("area key reading reference data: %d %s", r.Code, r.raw)
	}
	expectRefused(t, k.send("GET", "/api/segment/list", nil), "read outside the areas")
	expectRefused(t, k.send("POST", "/api/notification-recipient/save", form("email", "n@example.com")), "write outside the areas")
	expectRefused(t, k.send("GET", "/api/contacts/list", nil), "contacts are not contact types")
	// It acts for its own account only.
	if r := e.b.send("GET", "/api/contacts-type", nil); len(list[map[string]any](t, r, "contactTypes")) != 0 {
		t.Fatalf("the key wrote into another account: %s", r.raw)
	}
}

// A key that only reads some areas and changes others: its reads pass,
// its changes in a read-only area are refused.
func TestAreaKeyReadOnlyAreas(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	k, _ := e.namedKey(t, e.a, "Reports", service.APIKeyInput{Scope: service.ScopeAreas, Areas: []string{"suppressions"}, ReadAreas: []string{"contact_types"}})
	if r := e.a.send("POST", "/api/contacts-type/add", form("name", "Customers")); r.Code != 200 {
		t.Fatalf("account key: %d %s", r.Code, r.raw)
	}
	if r := k.send("GET", "/api/contacts-type", nil); r.Code != 200 || len(list[map[string]any](t, r, "contactTypes")) != 1 {
		t.Fatalf("reading its read-only area: %d %s", r.Code, r.raw)
	}
	expectRefused(t, k.send("POST", "/api/contacts-type/add", form("name", "Other")), "change in a read-only area")
	if r := k.send("POST", "/api/global-unsubscribes/save", form("email_address", "x@example.com")); r.Code != 200 {
		t.Fatalf("change in its read-and-change area: %d %s", r.Code, r.raw)
	}
	expectRefused(t, k.send("GET", "/api/segment/list", nil), "read outside the areas")
}

func TestFullNamedKeyAndAccountKeys(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	full, _ := e.namedKey(t, e.a, "Everything", service.APIKeyInput{Scope: service.ScopeFull})
	ro, _ := e.namedKey(t, e.a, "Reports", service.APIKeyInput{Scope: service.ScopeRead})
	if r := full.send("POST", "/api/contacts-type/add", form("name", "Customers")); r.Code != 200 {
		t.Fatalf("full key: %d %s", r.Code, r.raw)
	}
	if r := full.send("GET", "/api/no-such-route", nil); r.Code != 404 {
		t.Fatalf("full key on an unknown route: %d %s", r.Code, r.raw)
	}
	// The account's own pair keeps every right, named keys or not.
	if r := e.a.send("POST", "/api/contacts-type/add", form("name", "Leads")); r.Code != 200 {
		t.Fatalf("account keys: %d %s", r.Code, r.raw)
	}
	if r := e.a.send("GET", "/api/automations/pause?id=999", nil); r.Code != 404 {
		t.Fatalf("account keys on a state change: %d %s", r.Code, r.raw)
	}
	// Rotating the account's pair leaves the named keys alone.
	newKeys, err := e.svc.Accounts.RotateKeys(t.Context(), e.a.id)
	if err != nil {
		t.Fatal(err)
	}
	e.a.keys = newKeys
	if r := ro.send("GET", "/api/contacts-type", nil); r.Code != 200 {
		t.Fatalf("named key after a rotation of the account's pair: %d %s", r.Code, r.raw)
	}
}

// TestRevokedKeyRefusedEverywhere: two API processes over one database;
// a key revoked through one is refused by both at their next request,
// including a list answer the other process has cached.
func TestRevokedKeyRefusedEverywhere(t *testing.T) {
	t.Parallel()
	e, other := newEnvOf2(t)
	k, id := e.namedKey(t, e.a, "CI", service.APIKeyInput{Scope: service.ScopeRead})
	k2 := *k
	k2.app = other
	// The suppression lists are cached per account (api/cache.go).
	for _, c := range []*client{k, &k2} {
		for range 2 {
			if r := c.send("GET", "/api/global-unsubscribes", nil); r.Code != 200 {
				t.Fatal(r.raw)
			}
		}
	}
	if err := e.svc.APIKeys.Revoke(t.Context(), e.a.id, id); err != nil {
		t.Fatal(err)
	}
	for i, c := range []*client{k, &k2} {
		if r := c.send("GET", "/api/global-unsubscribes", nil); r.Code != 401 || r.text(r.Errors) != "Invalid PublicKey or SecretKey." {
			t.Fatalf("process %d: revoked key answered %d %s", i, r.Code, r.raw)
		}
	}
	if r := e.a.send("GET", "/api/global-unsubscribes", nil); r.Code != 200 {
		t.Fatalf("account keys after a revocation: %d %s", r.Code, r.raw)
	}
}

// newEnvOf2 is newEnv with a second API process: its own service and
// connections over the same database (dbtest.Processes).
func newEnvOf2(t *testing.T) (*env, *fiber.App) {
	t.Helper()
	procs := dbtest.Processes(t, 2)
	apps := make([]*fiber.App, 2)
	for i, svc := range procs {
		apps[i] = fiber.New(fiber.Config{ErrorHandler: api.ErrorHandler, DisableStartupMessage: true})
		api.New(svc, api.Options{}).Mount(apps[i].Group("/api"))
	}
	e := &env{app: apps[0], svc: procs[0]}
	e.a = e.account(t, "a@example.com")
	e.b = e.account(t, "b@example.com")
	return e, apps[1]
}
