package audience_test

import (
	"context"
	"os"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"herald/dbtest"
	"herald/models"
	"herald/service"
	"herald/service/audience"
)

// BenchmarkExportBackground compares, in one run, the streamed export of
// a contact type of HERALD_EXPORT_ROWS contacts (default 1,000,000, one
// custom field) with the background export of the same contacts: the
// runner writing the file into the database's parts, then the download
// reading them back. Each is timed with its peak live heap (sampled every
// 10 ms) and the process's peak RSS (VmHWM, reset before each). Two rounds,
// the order swapped in the second (docs/BENCHMARKS.md).
//
//	go test -run '^$' -bench BenchmarkExportBackground -benchtime 1x ./service/
//	HERALD_TEST_DATABASE=postgres://… go test -run '^$' -bench BenchmarkExportBackground -benchtime 1x ./service/
func BenchmarkExportBackground(b *testing.B) {
	n := 1_000_000
	if v := os.Getenv("HERALD_EXPORT_ROWS"); v != "" {
		var err error
		if n, err = strconv.Atoi(v); err != nil {
			b.Fatal(err)
		}
	}
	ctx := context.Background()
	svc := dbtest.Service(b)
	u, _, err := svc.Accounts.Create(ctx, service.AccountInput{Name: "Big", Email: "big@example.com", Password: "test-passphrase-9"})
	if err != nil {
		b.Fatal(err)
	}
	ct, err := svc.ContactTypes.Create(ctx, u.ID, "Everyone")
	if err != nil {
		b.Fatal(err)
	}
	if _, err := svc.Fields.Create(ctx, u.ID, audience.FieldInput{FieldName: "company", FieldType: "text"}); err != nil {
		b.Fatal(err)
	}
	custom := `'{"company":"Company ' || i || '"}'`
	if svc.DB.Dialect == "postgres" {
		custom = "CAST(" + custom + " AS jsonb)"
	}
	now := models.NewTimestamp(models.Now())
	start := time.Now()
	if err := svc.DB.W.WithContext(ctx).Exec(`WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n WHERE i < ?)
		INSERT INTO contacts (user_id, contact_type_id, first_name, last_name, email, city, postal_code, custom_fields, created_at, updated_at)
		SELECT ?, ?, 'First', 'Last', 'c' || i || '@example.com', 'Springfield', '12345', `+custom+`, ?, ? FROM n`,
		n, u.ID, ct.ID, now, now).Error; err != nil {
		b.Fatal(err)
	}
	if svc.DB.Dialect == "postgres" {
		svc.DB.W.Exec("ANALYZE contacts")
	}
	b.Logf("%d contacts on %s in %v", n, svc.DB.Dialect, time.Since(start).Round(time.Millisecond))
	in := audience.ExportInput{ContactTypeID: strconv.FormatInt(ct.ID, 10)}

	streamed := func() (int64, error) {
		exp, err := svc.Contacts.Export(ctx, u.ID, in)
		if err != nil {
			return 0, err
		}
		var w countingWriter
		err = exp.WriteCSV(ctx, &w)
		return w.n, err
	}
	var jobID int64
	write := func() (int64, error) {
		job, err := svc.Exports.StartContacts(ctx, u.ID, in)
		if err != nil {
			return 0, err
		}
		if _, err := svc.Exports.RunDue(ctx); err != nil {
			return 0, err
		}
		got, err := svc.Exports.Get(ctx, u.ID, job.ID)
		if err != nil || got.State != audience.ExportDone {
			b.Fatalf("background export: %+v, %v", got, err)
		}
		jobID = job.ID
		return got.Bytes, nil
	}
	download := func() (int64, error) {
		_, wr, err := svc.Exports.Download(ctx, u.ID, jobID)
		if err != nil {
			return 0, err
		}
		var w countingWriter
		err = wr(ctx, &w)
		return w.n, err
	}
	for b.Loop() {
		for round := range 2 {
			order := []string{"streamed", "background"}
			if round == 1 {
				order = []string{"background", "streamed"}
			}
			for _, which := range order {
				if which == "streamed" {
					measureExport(b, "streamed export", n, streamed)
					continue
				}
				w := measureExport(b, "background: write into parts", n, write)
				d := measureExport(b, "background: download of the parts", n, download)
				if w != d {
					b.Fatalf("wrote %d bytes, downloaded %d", w, d)
				}
			}
		}
	}
}

type countingWriter struct{ n int64 }

func (w *countingWriter) Write(p []byte) (int, error) { w.n += int64(len(p)); return len(p), nil }

// measureExport runs fn once and logs its time, rows/s, peak live heap
// and peak RSS; it returns the bytes fn wrote.
func measureExport(b *testing.B, name string, rows int, fn func() (int64, error)) int64 {
	b.Helper()
	runtime.GC()
	var before runtime.MemStats
	runtime.ReadMemStats(&before)
	_ = os.WriteFile("/proc/self/clear_refs", []byte("5"), 0) // resets VmHWM (Linux)
	rssStart := procStatus("VmRSS")
	var peak uint64
	stop := make(chan struct{})
	var wg sync.WaitGroup
	wg.Go(func() {
		t := time.NewTicker(10 * time.Millisecond)
		defer t.Stop()
		var m runtime.MemStats
		for {
			runtime.ReadMemStats(&m)
			peak = max(peak, m.HeapAlloc)
			select {
			case <-stop:
				return
			case <-t.C:
			}
		}
	})
	start := time.Now()
	bytes, err := fn()
	el := time.Since(start)
	close(stop)
	wg.Wait()
	if err != nil {
		b.Fatalf("%s: %v", name, err)
	}
	b.Logf("%-36s %7.2f s  %9.0f rows/s  %6.1f MB  peak heap %6.1f MB (%.1f MB before)  RSS %s kB at start, peak %s kB",
		name, el.Seconds(), float64(rows)/el.Seconds(), float64(bytes)/1e6, float64(peak)/1e6, float64(before.HeapAlloc)/1e6,
		rssStart, procStatus("VmHWM"))
	return bytes
}

// procStatus is a field of /proc/self/status, in kB, or "?".
func procStatus(field string) string {
	data, err := os.ReadFile("/proc/self/status")
	if err != nil {
		return "?"
	}
	for line := range strings.SplitSeq(string(data), "\n") {
		if v, ok := strings.CutPrefix(line, field+":"); ok {
			return strings.TrimSuffix(strings.TrimSpace(v), " kB")
		}
	}
	return "?"
}
