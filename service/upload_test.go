package service_test

import (
	"context"
	"errors"
	"io"
	"os"
	"testing"
	"time"

	"herald/dbtest"
	"herald/service"
	"herald/service/servicetest"
)

// Spool's file is gone from the folder as soon as it is made, and still
// usable.
func TestSpoolUnlinked(t *testing.T) {
	dir := t.TempDir()
	t.Setenv("TMPDIR", dir)
	f, err := service.Spool()
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if _, err := io.WriteString(f, "email\na@example.com\n"); err != nil {
		t.Fatal(err)
	}
	if entries, _ := os.ReadDir(dir); len(entries) != 0 {
		t.Fatalf("the folder holds %v", entries)
	}
	if _, err := f.Seek(0, io.SeekStart); err != nil {
		t.Fatal(err)
	}
	if b, err := io.ReadAll(f); err != nil || string(b) != "email\na@example.com\n" {
		t.Fatalf("read back %q %v", b, err)
	}
}

// At most MaxUploads uploads per account at once, counted in the database
// so that every process shares the count; a slot its process left behind
// (a crash) is free once stale.
func TestUploadSlots(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	svcs := dbtest.Processes(t, 2)
	one, two := svcs[0], svcs[1]
	acct := servicetest.NewAccount(t, one, "owner@herald.test")
	other := servicetest.NewAccount(t, one, "other@herald.test")

	r1, err := one.Imports.AcquireUpload(ctx, acct)
	if err != nil {
		t.Fatal(err)
	}
	r2, err := two.Imports.AcquireUpload(ctx, acct)
	if err != nil {
		t.Fatal(err)
	}
	for _, svc := range []*service.Service{one, two} {
		if _, err := svc.Imports.AcquireUpload(ctx, acct); !errors.Is(err, service.ErrTooManyUploads) || service.ErrorCode(err) != service.CodeRateLimited {
			t.Fatalf("third upload: %v", err)
		}
	}
	r3, err := one.Imports.AcquireUpload(ctx, other)
	if err != nil {
		t.Fatalf("another account: %v", err)
	}
	r3()
	r1()
	r1() // twice is harmless
	r4, err := two.Imports.AcquireUpload(ctx, acct)
	if err != nil {
		t.Fatalf("after a release: %v", err)
	}
	r2()
	r4()

	// A process killed while uploading left its slots: stale after two
	// minutes without a refresh.
	old := time.Now().UTC().Add(-3 * time.Minute)
	for slot := 1; slot <= service.MaxUploads; slot++ {
		if err := one.DB.W.Exec("INSERT INTO upload_slots (user_id, slot, holder, seen_at) VALUES (?, ?, ?, ?)", acct, slot, "dead", old).Error; err != nil {
			t.Fatal(err)
		}
	}
	r5, err := one.Imports.AcquireUpload(ctx, acct)
	if err != nil {
		t.Fatalf("over stale slots: %v", err)
	}
	r5()
}
