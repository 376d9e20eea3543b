package service_test

import (
	"go/ast"
	"go/parser"
	"go/token"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"
)

// clockAllowed are the functions that may read the wall clock, and why:
// none of them is a time of the domain (nothing written as a row's time,
// nothing due, no lifetime of a session or link).
var clockAllowed = map[string]string{
	"service.go:New":    "time.Now is the default of Config.Now",
	"core/db.go:OpenDB": "models.Now is GORM's clock until New gives the database the service's",
	"internal/record/events.go:(*Events).Wanted":     "the age of a cache of which accounts want events",
	"audience/export_jobs.go:(*partWriter).progress": "how long since the last progress was written (elapsed time)",
	"audience/imports.go:(*Imports).writeAll":        "how long since the last progress was written (elapsed time)",
	"engine/ledger.go:(*Ledger).reclaim":             "how long since the last sweep of dead claims (elapsed time)",
	"engine/liveness.go:(*liveness).beat":            "heartbeats: the wall clock, which processes agree on",
	"engine/liveness.go:(*liveness).aliveSince":      "heartbeats: the wall clock, which processes agree on",
	"engine/running.go:(*runningSends).list":         "the age of the list of running sends (elapsed time)",
	"engine/warmup.go:(*warmups).read":               "the age of the cache of warm-up plans (elapsed time)",
	"audience/upload.go:PacedReader":                 "the start of an upload's rate measure (elapsed time)",
}

// TestOneClock: in service/ and its packages, times come from the area's clock (Config.Now,
// handed out by New), never from time.Now or models.Now, except in the
// functions of clockAllowed. A test's clock then moves every rule at once.
func TestOneClock(t *testing.T) {
	var files []string
	err := filepath.WalkDir(".", func(path string, d fs.DirEntry, err error) error {
		if err == nil && d.IsDir() && path == "servicetest" {
			return fs.SkipDir // the tests' fixture, which sets the clocks
		}
		if err == nil && !d.IsDir() && strings.HasSuffix(path, ".go") && !strings.HasSuffix(path, "_test.go") {
			files = append(files, path)
		}
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	used := map[string]bool{}
	var bad []string
	fset := token.NewFileSet()
	for _, path := range files {
		name := filepath.ToSlash(path)
		src, err := os.ReadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		f, err := parser.ParseFile(fset, path, src, 0)
		if err != nil {
			t.Fatal(err)
		}
		for _, d := range f.Decls {
			fn, ok := d.(*ast.FuncDecl)
			if !ok || fn.Body == nil {
				continue
			}
			key := name + ":" + funcName(fn)
			ast.Inspect(fn.Body, func(n ast.Node) bool {
				sel, ok := n.(*ast.SelectorExpr)
				if !ok || sel.Sel.Name != "Now" {
					return true
				}
				if id, ok := sel.X.(*ast.Ident); ok && (id.Name == "time" || id.Name == "models") {
					if _, ok := clockAllowed[key]; ok {
						used[key] = true
					} else {
						bad = append(bad, fset.Position(sel.Pos()).String()+": "+id.Name+".Now in "+funcName(fn))
					}
				}
				return true
			})
		}
	}
	sort.Strings(bad)
	for _, b := range bad {
		t.Errorf("%s: use the area's clock (the now New hands it)", b)
	}
	for k := range clockAllowed {
		if !used[k] {
			t.Errorf("%s is allowed the wall clock but no longer reads it: drop it from clockAllowed", k)
		}
	}
}

func funcName(fn *ast.FuncDecl) string {
	if fn.Recv == nil || len(fn.Recv.List) == 0 {
		return fn.Name.Name
	}
	var recv string
	switch x := fn.Recv.List[0].Type.(type) {
	case *ast.StarExpr:
		if id, ok := x.X.(*ast.Ident); ok {
			recv = "(*" + id.Name + ")"
		}
	case *ast.Ident:
		recv = x.Name
	}
	return recv + "." + fn.Name.Name
}
