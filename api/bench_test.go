package api

// Micro-benchmarks of the API list endpoints and of the key check, driving
// the real Fiber app in-process through app.Handler() with one reused
// fasthttp.RequestCtx (no network, no HTTP parsing), beside a bare Fiber
// handler for scale. The load benchmark over loopback is `bin/load api` (make
// bench); docs/BENCHMARKS.md records both. Nothing here asserts a time.
//
//	go test -run '^$' -bench . -benchmem ./api/
//
// Each benchmark also reports queries/op: the database queries a request
// costs through GORM (the key check is a prepared statement of its own).

import (
	"context"
	"fmt"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/gofiber/fiber/v2"
	"github.com/valyala/fasthttp"
	"gorm.io/gorm"

	"herald/dbtest"
	"herald/service"
)

// benchFixture is a migrated database with one account, its keys, and a
// counter of the queries run on it.
type benchFixture struct {
	svc     *service.Service
	other   *service.Service
	account int64
	keys    service.Keys
	queries atomic.Int64
}

func newBenchFixture(tb testing.TB) *benchFixture {
	tb.Helper()
	procs := dbtest.Processes(tb, 2) // the second: another process on the same database
	f := &benchFixture{svc: procs[0], other: procs[1]}
	ctx := context.Background()
	u, keys, err := f.svc.Accounts.Create(ctx, service.AccountInput{Name: "Bench", Email: "bench@example.com", Password: "bench-password-1"})
	if err != nil {
		tb.Fatalf("create account: %v", err)
	}
	f.account, f.keys = u.ID, keys
	count := func(*gorm.DB) { f.queries.Add(1) }
	for _, g := range []*gorm.DB{f.svc.DB.R, f.svc.DB.W} {
		if err := g.Callback().Query().After("gorm:query").Register("bench:count_query", count); err != nil {
			tb.Fatal(err)
		}
		if err := g.Callback().Row().After("gorm:row").Register("bench:count_row", count); err != nil {
			tb.Fatal(err)
		}
		if g == f.svc.DB.R && f.svc.DB.W == f.svc.DB.R { // PostgreSQL: one pool
			break
		}
	}
	return f
}

// seed adds n global unsubscribers and m unsubscribe groups.
func (f *benchFixture) seed(tb testing.TB, n, m int) {
	tb.Helper()
	ctx := context.Background()
	if n > 0 {
		emails := make([]string, n)
		for i := range emails {
			emails[i] = fmt.Sprintf("unsubscribed%03d@example.com", i+1)
		}
		if added, err := f.svc.Unsubscribers.Add(ctx, f.account, strings.Join(emails, ",")); err != nil || added != n {
			tb.Fatalf("seed unsubscribers: added %d of %d: %v", added, n, err)
		}
	}
	for i := range m {
		in := service.GroupInput{GroupName: fmt.Sprintf("Group %02d", i+1), Description: fmt.Sprintf("Benchmark group number %d", i+1), IsDisplay: "1"}
		if _, err := f.svc.Groups.Create(ctx, f.account, in); err != nil {
			tb.Fatalf("seed groups: %v", err)
		}
	}
}

// app is the API mounted as cmd/herald mounts it (without the process-wide
// logging and metrics middleware, and with no rate limit).
func (f *benchFixture) app() *fiber.App {
	app := fiber.New(fiber.Config{ErrorHandler: ErrorHandler, DisableStartupMessage: true})
	New(f.svc, Options{}).Mount(app.Group("/api"))
	return app
}

// benchRequest runs GET uri through h once per iteration, with the keys
// when given, failing on any status but want.
func benchRequest(b *testing.B, h fasthttp.RequestHandler, uri string, keys *service.Keys, want int, queries *atomic.Int64) {
	b.Helper()
	var req fasthttp.Request
	req.Header.SetMethod(fiber.MethodGet)
	req.SetRequestURI(uri)
	if keys != nil {
		req.Header.Set("PublicKey", keys.PublicKey)
		req.Header.Set("SecretKey", keys.SecretKey)
	}
	var rc fasthttp.RequestCtx
	rc.Init(&req, nil, nil)
	h(&rc) // the first request checks the key against the database
	if got := rc.Response.StatusCode(); got != want {
		b.Fatalf("GET %s: status %d, want %d: %s", uri, got, want, rc.Response.Body())
	}
	b.ReportAllocs()
	var before int64
	if queries != nil {
		before = queries.Load()
	}
	n := 0
	for b.Loop() {
		rc.Response.Reset()
		h(&rc)
		if rc.Response.StatusCode() != want {
			b.Fatalf("GET %s: status %d, want %d: %s", uri, rc.Response.StatusCode(), want, rc.Response.Body())
		}
		n++
	}
	if queries != nil && n > 0 {
		b.ReportMetric(float64(queries.Load()-before)/float64(n), "queries/op")
	}
	b.ReportMetric(float64(len(rc.Response.Body())), "resp-bytes")
}

// BenchmarkBareHandler is the scale: a Fiber handler answering a small
// JSON envelope, nothing else.
func BenchmarkBareHandler(b *testing.B) {
	app := fiber.New(fiber.Config{DisableStartupMessage: true})
	app.Get("/", func(c *fiber.Ctx) error { return c.JSON(envelope{Status: "success", Message: "ok"}) })
	benchRequest(b, app.Handler(), "/", nil, fiber.StatusOK, nil)
}

// BenchmarkListGlobalUnsubscribes100 is GET /api/global-unsubscribes with
// 100 rows and a seen key.
func BenchmarkListGlobalUnsubscribes100(b *testing.B) {
	f := newBenchFixture(b)
	f.seed(b, 100, 0)
	benchRequest(b, f.app().Handler(), "/api/global-unsubscribes", &f.keys, fiber.StatusOK, &f.queries)
}

// BenchmarkListGroups10 is GET /api/unsubscribes-groups with 10 groups and
// a seen key.
func BenchmarkListGroups10(b *testing.B) {
	f := newBenchFixture(b)
	f.seed(b, 0, 10)
	benchRequest(b, f.app().Handler(), "/api/unsubscribes-groups", &f.keys, fiber.StatusOK, &f.queries)
}

// BenchmarkAuth is the key check alone (the auth middleware in front of a
// handler that answers 204): one prepared read of the account's row by its
// public key per request, and no GORM query (queries/op 0), so that a
// rotation anywhere takes effect at the next request.
func BenchmarkAuth(b *testing.B) {
	f := newBenchFixture(b)
	a := New(f.svc, Options{})
	app := fiber.New(fiber.Config{ErrorHandler: ErrorHandler, DisableStartupMessage: true})
	app.Get("/api/ping", a.auth, func(c *fiber.Ctx) error { return c.SendStatus(fiber.StatusNoContent) })
	benchRequest(b, app.Handler(), "/api/ping", &f.keys, fiber.StatusNoContent, &f.queries)
}

// TestAuthSeesRotationAtOnce checks the rule the benchmark measures: every
// request checks its key pair against the stored row, without a GORM
// query, so that keys rotated by another process (another service over
// the same database) are refused by the very next request (before, a
// key seen once was trusted from memory for 30 s).
func TestAuthSeesRotationAtOnce(t *testing.T) {
	t.Parallel()
	f := newBenchFixture(t)
	a := New(f.svc, Options{})
	app := fiber.New(fiber.Config{ErrorHandler: ErrorHandler, DisableStartupMessage: true})
	app.Get("/api/ping", a.auth, func(c *fiber.Ctx) error { return c.SendStatus(fiber.StatusNoContent) })
	h := app.Handler()
	get := func(keys service.Keys) int {
		var rc fasthttp.RequestCtx
		var req fasthttp.Request
		req.Header.SetMethod(fiber.MethodGet)
		req.SetRequestURI("/api/ping")
		req.Header.Set("PublicKey", keys.PublicKey)
		req.Header.Set("SecretKey", keys.SecretKey)
		rc.Init(&req, nil, nil)
		h(&rc)
		return rc.Response.StatusCode()
	}
	start := f.queries.Load()
	for range 20 {
		if got := get(f.keys); got != fiber.StatusNoContent {
			t.Fatalf("status %d, want 204", got)
		}
	}
	if got := get(service.Keys{PublicKey: f.keys.PublicKey, SecretKey: "sk_wrong"}); got != fiber.StatusUnauthorized {
		t.Fatalf("wrong secret: status %d, want 401", got)
	}
	if n := f.queries.Load() - start; n != 0 {
		t.Fatalf("21 key checks ran %d GORM queries, want 0", n)
	}
	fresh, err := f.other.Accounts.RotateKeys(context.Background(), f.account)
	if err != nil {
		t.Fatal(err)
	}
	if got := get(f.keys); got != fiber.StatusUnauthorized {
		t.Fatalf("old keys right after another process rotated them: status %d, want 401", got)
	}
	if got := get(fresh); got != fiber.StatusNoContent {
		t.Fatalf("new keys: status %d, want 204", got)
	}
}
