package audience_test

import (
	"context"
	"database/sql"
	"fmt"
	"io"
	"strings"
	"sync"
	"testing"

	"herald/dbtest"
	"herald/service"
	"herald/service/audience"
	"herald/service/servicetest"
)

// endlessCSV is a CSV of contacts that never ends; it closes reached once
// it has handed out more than after bytes.
type endlessCSV struct {
	n, bytes, after int
	reached         chan struct{}
	pending         []byte
}

func (e *endlessCSV) Read(p []byte) (int, error) {
	if len(e.pending) == 0 {
		if e.n == 0 {
			e.pending = []byte("email,first_name\n")
		} else {
			e.pending = fmt.Appendf(nil, "endless%d@example.com,Name %d\n", e.n, e.n)
		}
		e.n++
	}
	n := copy(p, e.pending)
	e.pending = e.pending[n:]
	if e.bytes += n; e.bytes > e.after && e.reached != nil {
		close(e.reached)
		e.reached = nil
	}
	return n, nil
}

// statements collects the statements imports prepare.
func statements(t *testing.T) func() []*sql.Stmt {
	var mu sync.Mutex
	var got []*sql.Stmt
	t.Cleanup(audience.OnStmtPrepared(func(s *sql.Stmt) {
		mu.Lock()
		got = append(got, s)
		mu.Unlock()
	}))
	return func() []*sql.Stmt {
		mu.Lock()
		defer mu.Unlock()
		return append([]*sql.Stmt(nil), got...)
	}
}

func assertClosed(t *testing.T, stmts []*sql.Stmt) {
	t.Helper()
	if len(stmts) == 0 {
		t.Fatal("the import prepared no statement: the test proves nothing")
	}
	for i, s := range stmts {
		if _, err := s.Exec(); err == nil || !strings.Contains(err.Error(), "statement is closed") {
			t.Errorf("statement %d is still open after the import (%v)", i, err)
		}
	}
}

// Shutdown cuts short an import under way, returns only once its
// goroutine has ended, and leaves it failed (never "running"), with its
// prepared statement closed; an import handed over after it is failed at
// once.
func TestImportsShutdownStopsRunningImport(t *testing.T) {
	svc := dbtest.Service(t)
	ctx := context.Background()
	acct := servicetest.NewAccount(t, svc, "runner@example.com")
	ct, err := svc.ContactTypes.Create(ctx, acct, "Type")
	if err != nil {
		t.Fatal(err)
	}
	stmts := statements(t)
	imp, err := svc.Imports.Start(ctx, acct, ct.ID, "endless.csv", -1)
	if err != nil {
		t.Fatal(err)
	}
	// 1.5 MB handed out, at most 256 KB of it buffered: tens of full
	// batches parsed, so the writer has prepared its statement.
	reached := make(chan struct{})
	ended := make(chan struct{})
	svc.Imports.Go(imp, &endlessCSV{after: 3 << 19, reached: reached}, func() { close(ended) })
	<-reached
	if err := svc.Imports.Shutdown(ctx); err != nil {
		t.Fatal(err)
	}
	select {
	case <-ended:
	default:
		t.Fatal("Shutdown returned before the import's goroutine ended")
	}
	got, err := svc.Imports.Get(ctx, acct, imp.ID)
	if err != nil {
		t.Fatal(err)
	}
	if got.Status != "failed" || got.FinishedAt == nil || !strings.Contains(got.Message, "herald was stopped") {
		t.Fatalf("import after shutdown: status %q, finished %v, message %q", got.Status, got.FinishedAt, got.Message)
	}
	assertClosed(t, stmts())

	// After Shutdown: not started, failed before Go returns.
	late, err := svc.Imports.Start(ctx, acct, ct.ID, "late.csv", -1)
	if err != nil {
		t.Fatal(err)
	}
	lateEnded := false
	svc.Imports.Go(late, strings.NewReader("email\na@example.com\n"), func() { lateEnded = true })
	if !lateEnded {
		t.Fatal("an import handed over after Shutdown was left to run")
	}
	if got, _ := svc.Imports.Get(ctx, acct, late.ID); got == nil || got.Status != "failed" {
		t.Fatalf("late import: %+v", got)
	}
	// The API's in-request import is refused the same way.
	api, _ := svc.Imports.Start(ctx, acct, ct.ID, "api.csv", -1)
	if err := svc.Imports.Import(ctx, api, strings.NewReader("email\nb@example.com\n")); service.ErrorCode(err) != service.CodeUnavailable {
		t.Fatalf("an in-request import after Shutdown: %v", err)
	}
	if got, _ := svc.Imports.Get(ctx, acct, api.ID); got == nil || got.Status != "failed" {
		t.Fatalf("api import: %+v", got)
	}
}

// An import that ends normally closes every statement it prepared.
func TestImportClosesPreparedStatements(t *testing.T) {
	svc := dbtest.Service(t)
	ctx := context.Background()
	acct := servicetest.NewAccount(t, svc, "stmts@example.com")
	ct, err := svc.ContactTypes.Create(ctx, acct, "Type")
	if err != nil {
		t.Fatal(err)
	}
	stmts := statements(t)
	var b strings.Builder
	b.WriteString("email,first_name\n")
	for i := range 2500 {
		fmt.Fprintf(&b, "s%d@example.com,N%d\n", i, i)
	}
	imp, err := svc.Imports.Start(ctx, acct, ct.ID, "s.csv", int64(b.Len()))
	if err != nil {
		t.Fatal(err)
	}
	if err := svc.Imports.Import(ctx, imp, strings.NewReader(b.String())); err != nil {
		t.Fatal(err)
	}
	if imp.Status != "done" || imp.Created != 2500 {
		t.Fatalf("import: %q, created %d", imp.Status, imp.Created)
	}
	assertClosed(t, stmts())
}

// panicReader hands out data, then panics: a bug met while the file is
// read.
type panicReader struct{ data []byte }

func (p *panicReader) Read(b []byte) (int, error) {
	if len(p.data) == 0 {
		panic("reader broke")
	}
	n := copy(b, p.data)
	p.data = p.data[n:]
	return n, nil
}

// A bug met by an import (a panic while it starts, reads or writes) ends
// it failed, with a message saying so, instead of leaving it running
// with the console polling it for ever; and a panic of its writer does
// not take the process down.
func TestImportPanicEndsFailed(t *testing.T) {
	var rows strings.Builder
	rows.WriteString("email,first_name\n")
	for i := range 2000 { // past the 64 KB read ahead for the delimiter
		fmt.Fprintf(&rows, "panic%d@example.com,Name %d\n", i, i)
	}
	for _, tt := range []struct {
		name    string
		file    io.Reader
		onBatch bool // the writer's hook panics
	}{
		{"starting", &panicReader{}, false},
		{"reading", &panicReader{data: []byte(rows.String())}, false},
		{"writing", strings.NewReader("email\nann@example.com\n"), true},
	} {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			svc := dbtest.Service(t)
			ctx := context.Background()
			acct := servicetest.NewAccount(t, svc, "panic@example.com")
			ct, err := svc.ContactTypes.Create(ctx, acct, "Type")
			if err != nil {
				t.Fatal(err)
			}
			if tt.onBatch {
				svc.Imports.OnBatch = func(context.Context, int64, int64, []int64) { panic("hook broke") }
			}
			imp, err := svc.Imports.Start(ctx, acct, ct.ID, "panic.csv", -1)
			if err != nil {
				t.Fatal(err)
			}
			ended := make(chan struct{})
			svc.Imports.Go(imp, tt.file, func() { close(ended) })
			<-ended
			got, err := svc.Imports.Get(ctx, acct, imp.ID)
			if err != nil {
				t.Fatal(err)
			}
			if got.Status != "failed" || got.FinishedAt == nil || !strings.HasPrefix(got.Message, "The import stopped: herald met an internal error") {
				t.Fatalf("import: status %q, finished %v, message %q", got.Status, got.FinishedAt, got.Message)
			}
		})
	}
}
