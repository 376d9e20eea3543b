package service_test

import (
	"go/build"
	"io/fs"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// areaImports is which other areas each area may import: the areas form
// one order (deliverability, identity, audience, engine, campaign), each
// importing only areas before it, so no cycle can form. An area uses
// another through its exported services, never its tables' internals.
var areaImports = map[string][]string{
	"deliverability": nil,
	"identity":       {"deliverability"},
	"audience":       {"identity"},
	"engine":         {"deliverability"},
	"campaign":       {"deliverability", "identity", "audience", "engine"},
}

// TestLayout holds the layout of service/ (docs/ARCHITECTURE.md, "service/ by area"): an area
// imports core, internal/record and the areas areaImports names, never the facade; record
// imports core; core imports nothing of service/. No package of service/ imports an HTTP
// framework or templ.
func TestLayout(t *testing.T) {
	t.Parallel()
	const svc = "herald/service"
	lower := []string{"herald/models", "herald/delivery", "herald/migrations", "herald/templates", "herald/world", "herald/i18n"}
	may := map[string][]string{ // folder below service/ → the herald packages its code may import
		"core":            lower,
		"internal/record": append([]string{svc + "/core"}, lower...),
	}
	for a, others := range areaImports {
		may[a] = append([]string{svc + "/core", svc + "/internal/record"}, lower...)
		for _, o := range others {
			may[a] = append(may[a], svc+"/"+o)
		}
	}
	err := filepath.WalkDir(".", func(dir string, d fs.DirEntry, err error) error {
		if err != nil || !d.IsDir() || strings.HasPrefix(d.Name(), "testdata") {
			return err
		}
		p, err := build.ImportDir(dir, 0)
		if _, none := err.(*build.NoGoError); none {
			return nil
		}
		if err != nil {
			return err
		}
		rel := filepath.ToSlash(dir)
		if slices.Contains(p.Imports, svc+"/servicetest") {
			t.Errorf("service/%s imports servicetest outside its tests", rel)
		}
		if rel == "servicetest" { // the tests' fixture: it may use any part, and only tests use it
			return nil
		}
		allowed, known := may[rel]
		if rel != "." && !known {
			t.Errorf("service/%s is not in the layout: add it here and to ARCHITECTURE.md", rel)
			return nil
		}
		// Code and internal tests alike (an internal test that imports another area is the same tie).
		for _, imp := range append(slices.Clone(p.Imports), p.TestImports...) {
			switch {
			case strings.HasPrefix(imp, "github.com/gofiber/"), strings.HasPrefix(imp, "github.com/a-h/templ"):
				t.Errorf("service/%s imports %s: service/ knows no HTTP framework or templates", rel, imp)
			case !strings.HasPrefix(imp, "herald/"):
			case rel == ".": // the facade: service/... and the lower packages only
				if !strings.HasPrefix(imp, svc+"/") && !slices.Contains(lower, imp) {
					t.Errorf("service imports %s", imp)
				}
			case !slices.Contains(allowed, imp):
				t.Errorf("service/%s imports %s; it may import only %v", rel, imp, allowed)
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
}
