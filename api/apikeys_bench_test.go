package api

import (
	"context"
	"testing"

	"github.com/gofiber/fiber/v2"

	"herald/service"
)

// namedKey makes a named key of the fixture's account.
func (f *benchFixture) namedKey(tb testing.TB, scope string) service.Keys {
	tb.Helper()
	_, pair, err := f.svc.APIKeys.Create(context.Background(), f.account, service.APIKeyInput{Name: "Bench " + scope, Scope: scope})
	if err != nil {
		tb.Fatal(err)
	}
	return pair
}

// BenchmarkAuthNamedKey is BenchmarkAuth with a full named key: one
// prepared read of the key's row joined to its account's (keyread.go, no
// GORM query: queries/op 0).
func BenchmarkAuthNamedKey(b *testing.B) {
	f := newBenchFixture(b)
	keys := f.namedKey(b, service.ScopeFull)
	a := New(f.svc, Options{})
	app := fiber.New(fiber.Config{ErrorHandler: ErrorHandler, DisableStartupMessage: true})
	app.Get("/api/ping", a.auth, func(c *fiber.Ctx) error { return c.SendStatus(fiber.StatusNoContent) })
	benchRequest(b, app.Handler(), "/api/ping", &keys, fiber.StatusNoContent, &f.queries)
}

// BenchmarkListGlobalUnsubscribes100ReadKey is
// BenchmarkListGlobalUnsubscribes100 with a read-only named key: the key's
// read, the scope's look-up in the route table, the cached answer.
func BenchmarkListGlobalUnsubscribes100ReadKey(b *testing.B) {
	f := newBenchFixture(b)
	f.seed(b, 100, 0)
	keys := f.namedKey(b, service.ScopeRead)
	benchRequest(b, f.app().Handler(), "/api/global-unsubscribes", &keys, fiber.StatusOK, &f.queries)
}

// BenchmarkRefusedOutOfScope is a read-only key refused a change (401
// before the handler).
func BenchmarkRefusedOutOfScope(b *testing.B) {
	f := newBenchFixture(b)
	keys := f.namedKey(b, service.ScopeRead)
	benchRequest(b, f.app().Handler(), "/api/automations/pause?id=1", &keys, fiber.StatusUnauthorized, &f.queries)
}
