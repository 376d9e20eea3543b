package api

import (
	"strings"
	"testing"

	"github.com/gofiber/fiber/v2"

	"herald/service"
)

// TestEveryRouteHasAScope fails when a route of Mount has no entry in
// routeScopes (a named key that is not full could not use it), or when an
// entry names no route or no known area.
func TestEveryRouteHasAScope(t *testing.T) {
	t.Parallel()
	app := fiber.New()
	New(nil, Options{}).Mount(app.Group("/api"))
	seen := map[routeKey]bool{}
	n := 0
	for _, r := range app.GetRoutes(true) {
		if r.Method == fiber.MethodHead || !strings.HasPrefix(r.Path, "/api/") {
			continue
		}
		n++
		k := routeKey{r.Method, strings.TrimPrefix(r.Path, "/api")}
		seen[k] = true
		if _, ok := routeScopes[k]; !ok {
			t.Errorf("route %s %s has no entry in routeScopes (api/scopes.go)", k.method, k.path)
		}
	}
	if n < 70 {
		t.Fatalf("only %d routes found: the walk of the routes is broken", n)
	}
	for k, acc := range routeScopes {
		if !seen[k] {
			t.Errorf("routeScopes entry %s %s names no route", k.method, k.path)
		}
		if acc.area != service.AreaReference && !service.IsArea(acc.area) {
			t.Errorf("routeScopes entry %s %s: unknown area %q", k.method, k.path, acc.area)
		}
		if acc.area == service.AreaReference && acc.write {
			t.Errorf("routeScopes entry %s %s: reference data is read only", k.method, k.path)
		}
	}
	// Every area has at least one route, so that choosing it means something.
	for _, a := range service.Areas {
		found := false
		for _, acc := range routeScopes {
			found = found || acc.area == a.Name
		}
		if !found {
			t.Errorf("area %s has no route", a.Name)
		}
	}
}
