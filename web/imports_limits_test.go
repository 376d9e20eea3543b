package web_test

import (
	"context"
	"net/http"
	"os"
	"strings"
	"testing"
	"time"

	"herald/eventually"
	"herald/service"
	"herald/web"
)

// The console's upload follows the API's rules (finding 5): a type after
// the file is checked when it arrives, nothing is left in the temporary
// folder, and uploads share the account's slots with the API's.
func TestImportUploadSpoolAndSlots(t *testing.T) {
	dir := t.TempDir()
	t.Setenv("TMPDIR", dir)
	a := newTestApp(t, web.Options{})
	c, acct := a.account("Ada", "ada@example.com")
	typeID := a.audience(acct).contactType("Customers")
	c.get("/contacts/import")
	empty := func() {
		t.Helper()
		if entries, _ := os.ReadDir(dir); len(entries) != 0 {
			t.Fatalf("the temporary folder holds %v", entries)
		}
	}

	// A type after the file that names nothing.
	r := c.upload("999999", "email\nx@example.com\n", uploadOpts{hx: true, typeAfter: true, fileName: "x.csv"})
	wantStatus(t, r, http.StatusNotFound)
	empty()

	// A type after the file that is right: imported.
	r = c.upload(itoa(typeID), "email\nlate@example.com\n", uploadOpts{hx: true, typeAfter: true, fileName: "late.csv"})
	wantStatus(t, r, http.StatusOK)
	if r = c.waitImport(startedImport(t, r)); attr(first(r.doc, "#import-progress"), "data-status") != "done" {
		t.Fatalf("import:\n%s", r.body)
	}
	empty()

	// Two uploads in progress elsewhere (the API, another process): the
	// console's is refused.
	ctx := context.Background()
	held := holdSlots(t, a.svc, acct)
	r1, r2 := held[0], held[1]
	r = c.upload(itoa(typeID), "email\nthird@example.com\n", uploadOpts{hx: true, fileName: "third.csv"})
	wantStatus(t, r, http.StatusTooManyRequests)
	if got := text(first(r.doc, ".flash-error")); got != "Too many uploads at once. Wait for one to finish and try again." {
		t.Fatalf("refusal %q:\n%s", got, r.body)
	}
	r1()
	r = c.upload(itoa(typeID), "email\nthird@example.com\n", uploadOpts{hx: true, fileName: "third.csv"})
	wantStatus(t, r, http.StatusOK)
	c.waitImport(startedImport(t, r))
	r2()
	// The console's import gives its slot back when it ends: both are free.
	for _, release := range holdSlots(t, a.svc, acct) {
		release()
	}
	empty()
	n, _ := a.svc.Contacts.Count(ctx, acct, service.ContactFilter{})
	if n != 2 {
		t.Fatalf("%d contacts, want 2", n)
	}
}

// startedImport is the id of the import an upload's answer shows running
// (its panel polls /contacts/import/<id>/progress).
func startedImport(t *testing.T, r *response) string {
	t.Helper()
	id, _, ok := strings.Cut(strings.TrimPrefix(attr(first(r.doc, "#import-progress"), "hx-get"), "/contacts/import/"), "/")
	if !ok || id == "" {
		t.Fatalf("no running import in:\n%.2000s", r.body)
	}
	return id
}

// holdSlots takes all the account's upload slots. A console import frees
// its slot just after it records its end, so this waits for that.
func holdSlots(t *testing.T, svc *service.Service, acct int64) []func() {
	t.Helper()
	var held []func()
	eventually.True(t, 30*time.Second, "the upload slots were not freed", func() bool {
		held = nil
		for len(held) < service.MaxUploads {
			release, err := svc.Imports.AcquireUpload(context.Background(), acct)
			if err != nil {
				break
			}
			held = append(held, release)
		}
		if len(held) == service.MaxUploads {
			return true
		}
		for _, release := range held {
			release()
		}
		return false
	})
	return held
}
