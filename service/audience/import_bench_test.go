package audience_test

import (
	"bytes"
	"context"
	"database/sql"
	"fmt"
	"math/rand/v2"
	"os"
	"sort"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/stdlib"

	"herald/dbtest"
	"herald/models"
	"herald/service"
	"herald/service/audience"
)

// importRatioFloor is the least share of a raw insert's rate an import
// through the service must reach on SQLite, read as CPU per row:
// BenchmarkImportRatio fails below it (docs/BENCHMARKS.md).
const importRatioFloor = 0.5

// BenchmarkImportRatio imports HERALD_IMPORT_ROWS rows (default 100,000)
// of a CSV shaped as bin/load audience's (email, first and last name,
// country, two custom fields) through Imports.Import, and inserts the same
// rows, parsed beforehand, with the consent record an import stores, into
// the same contacts table with a plain prepared multi-row INSERT in
// transactions of 5,000 (SQLite) or one COPY per 5,000 rows, each its own
// transaction committed as an import's batches are, without waiting for
// the WAL flush (PostgreSQL): the raw rate of the same database on the
// same machine in the same minute. Each of HERALD_IMPORT_ROUNDS rounds
// (default 3) runs both into contact types of their own, the order
// switching each round, each part from an empty WAL on SQLite. Reported:
// the medians of the rounds' rows per second and of their ratio, and the
// ratio of this process's CPU time per row (raw ÷ import; on SQLite all
// of the work, on PostgreSQL the client's only). On SQLite the median CPU
// ratio must reach importRatioFloor: it is the rows/s ratio of a quiet
// machine, and unlike the wall clock it holds still on a shared one.
//
//	go test -run '^$' -bench BenchmarkImportRatio -benchtime 1x ./service/audience/
//	HERALD_TEST_DATABASE=postgres://… go test -run '^$' -bench BenchmarkImportRatio -benchtime 1x ./service/audience/
func BenchmarkImportRatio(b *testing.B) {
	rows := envInt(b, "HERALD_IMPORT_ROWS", 100_000)
	rounds := envInt(b, "HERALD_IMPORT_ROUNDS", 3)
	ctx := context.Background()
	svc := dbtest.Service(b)
	u, _, err := svc.Accounts.Create(ctx, service.AccountInput{Name: "Big", Email: "big@example.com", Password: "test-passphrase-9"})
	if err != nil {
		b.Fatal(err)
	}
	for _, f := range []audience.FieldInput{{FieldName: "age", FieldType: "number"}, {FieldName: "company", FieldType: "text"}} {
		if _, err := svc.Fields.Create(ctx, u.ID, f); err != nil {
			b.Fatal(err)
		}
	}
	pg := svc.DB.Dialect == "postgres"
	var ratios, imports, raws, cpuRatios []float64
	consent := `{"source":"import","import_id":1,"basis":"api","at":"2026-12-07T05:00:00Z"}`
	for b.Loop() {
		for r := range rounds {
			csv, recs := benchCSV(rows, r)
			var imp, raw float64
			var impCPU, rawCPU time.Duration
			// settle starts each timed part from an empty WAL (SQLite):
			// otherwise the part after another pays its checkpoints.
			settle := func() {
				if !pg {
					if err := svc.DB.W.Exec("PRAGMA wal_checkpoint(TRUNCATE)").Error; err != nil {
						b.Fatal(err)
					}
				}
			}
			runImport := func() {
				ct, err := svc.ContactTypes.Create(ctx, u.ID, fmt.Sprintf("Import %d", r))
				if err != nil {
					b.Fatal(err)
				}
				im, err := svc.Imports.Start(ctx, u.ID, ct.ID, "bench.csv", int64(len(csv)))
				if err != nil {
					b.Fatal(err)
				}
				settle()
				start, cpu := time.Now(), cpuTime()
				if err := svc.Imports.Import(ctx, im, bytes.NewReader(csv)); err != nil {
					b.Fatal(err)
				}
				imp, impCPU = float64(rows)/time.Since(start).Seconds(), cpuTime()-cpu
				if im.Status != "done" || im.Created != int64(rows) {
					b.Fatalf("import: %s, created %d of %d (%s)", im.Status, im.Created, rows, im.Message)
				}
				if err := svc.DB.R.Raw("SELECT consent FROM contacts WHERE contact_type_id = ? LIMIT 1", ct.ID).Row().Scan(&consent); err != nil {
					b.Fatal(err)
				}
			}
			runRaw := func() {
				ct, err := svc.ContactTypes.Create(ctx, u.ID, fmt.Sprintf("Raw %d", r))
				if err != nil {
					b.Fatal(err)
				}
				settle()
				start, cpu := time.Now(), cpuTime()
				if pg {
					rawCopy(b, svc, u.ID, ct.ID, consent, recs)
				} else {
					rawInsert(b, svc, u.ID, ct.ID, consent, recs)
				}
				raw, rawCPU = float64(rows)/time.Since(start).Seconds(), cpuTime()-cpu
			}
			if r%2 == 0 {
				runImport()
				runRaw()
			} else {
				runRaw()
				runImport()
			}
			cpuRatio := float64(rawCPU) / float64(impCPU)
			b.Logf("round %d (%s, load %s): import %.0f rows/s, raw %.0f rows/s, ratio %.2f; this process's CPU per row: import %.1f µs, raw %.1f µs, ratio %.2f",
				r+1, svc.DB.Dialect, loadAvg(), imp, raw, imp/raw, perRow(impCPU, rows), perRow(rawCPU, rows), cpuRatio)
			imports, raws, ratios, cpuRatios = append(imports, imp), append(raws, raw), append(ratios, imp/raw), append(cpuRatios, cpuRatio)
		}
	}
	b.ReportMetric(median(imports), "import-rows/s")
	b.ReportMetric(median(raws), "raw-rows/s")
	b.ReportMetric(median(ratios), "ratio")
	b.ReportMetric(median(cpuRatios), "cpu-ratio")
	// The floor is read on the CPU ratio: on SQLite all the work is this
	// process's, so it is the rate ratio of a quiet machine, and it holds
	// still while other processes' disk and CPU load move the wall clock
	// of either part by ±50 % (docs/BENCHMARKS.md).
	if !pg && median(cpuRatios) < importRatioFloor {
		b.Fatalf("SQLite import at %.2f of a raw insert of the same rows in CPU per row (median of %.2f; rows/s ratios %.2f): below the floor of %.2f",
			median(cpuRatios), cpuRatios, ratios, importRatioFloor)
	}
}

// benchRow is one generated contact.
type benchRow struct {
	email, first, last, country, custom string
}

// benchCSV is n contacts with addresses unique to round r, as CSV and as
// the values a raw insert writes.
func benchCSV(n, r int) ([]byte, []benchRow) {
	firsts := []string{"Ada", "Grace", "Alan", "Edsger", "Barbara", "Donald", "Margaret", "Ken"}
	lasts := []string{"Lovelace", "Hopper", "Turing", "Dijkstra", "Liskov", "Knuth", "Hamilton", "Thompson"}
	countries := []string{"US", "GB", "DE", "FR", "IN", "BR", "JP", "CA"}
	words := []string{"Acme", "Globex", "Initech", "Umbrella", "Hooli", "Vandelay"}
	rng := rand.New(rand.NewPCG(1, uint64(r)))
	var buf bytes.Buffer
	buf.WriteString("email,first_name,last_name,country,age,company\n")
	recs := make([]benchRow, n)
	for i := range n {
		age := strconv.Itoa(18 + rng.IntN(63))
		company := words[rng.IntN(len(words))] + " " + strconv.Itoa(rng.IntN(10000))
		row := benchRow{
			email: "r" + strconv.Itoa(r) + "c" + strconv.Itoa(i) + "@example.com", first: firsts[rng.IntN(len(firsts))],
			last: lasts[rng.IntN(len(lasts))], country: countries[rng.IntN(len(countries))],
			custom: `{"age":"` + age + `","company":"` + company + `"}`,
		}
		recs[i] = row
		buf.WriteString(strings.Join([]string{row.email, row.first, row.last, row.country, age, company}, ",") + "\n")
	}
	return buf.Bytes(), recs
}

// rawInsert writes the rows with a prepared multi-row INSERT of 500 rows
// (the account, the type and the time bound once per statement) on the
// writer's connection, 5,000 rows per transaction: the plainest fast way
// into SQLite, with none of an import's rules.
func rawInsert(b *testing.B, svc *service.Service, accountID, typeID int64, consent string, recs []benchRow) {
	b.Helper()
	db, err := svc.DB.W.DB()
	if err != nil {
		b.Fatal(err)
	}
	now := models.NewTimestamp(svc.DB.Now())
	const per, perTx = 500, 5000
	statement := func(n int) string {
		var q strings.Builder
		q.WriteString("INSERT INTO contacts (user_id, contact_type_id, created_at, updated_at, consent, first_name, last_name, email, country, custom_fields) VALUES ")
		for i := range n {
			if i > 0 {
				q.WriteByte(',')
			}
			q.WriteString("(?1, ?2, ?3, ?3, ?4, ?, ?, ?, ?, ?)")
		}
		return q.String()
	}
	full, err := db.Prepare(statement(per))
	if err != nil {
		b.Fatal(err)
	}
	defer full.Close()
	args := make([]any, 0, 4+5*per)
	for start := 0; start < len(recs); start += perTx {
		tx, err := db.Begin()
		if err != nil {
			b.Fatal(err)
		}
		chunk := recs[start:min(start+perTx, len(recs))]
		for len(chunk) > 0 {
			part := chunk[:min(per, len(chunk))]
			chunk = chunk[len(part):]
			args = append(args[:0], accountID, typeID, now, consent)
			for _, r := range part {
				args = append(args, r.first, r.last, r.email, r.country, r.custom)
			}
			if len(part) == per {
				_, err = tx.Stmt(full).Exec(args...)
			} else {
				_, err = tx.Exec(statement(len(part)), args...)
			}
			if err != nil {
				b.Fatal(err)
			}
		}
		if err := tx.Commit(); err != nil {
			b.Fatal(err)
		}
	}
}

// rawCopy writes the rows with COPY (PostgreSQL's fastest way in), 5,000
// rows per COPY, each its own transaction.
func rawCopy(b *testing.B, svc *service.Service, accountID, typeID int64, consent string, recs []benchRow) {
	b.Helper()
	db, err := svc.DB.W.DB()
	if err != nil {
		b.Fatal(err)
	}
	now := svc.DB.Now()
	conn, err := db.Conn(context.Background())
	if err != nil {
		b.Fatal(err)
	}
	defer conn.Close()
	for start := 0; start < len(recs); start += 5000 {
		part := recs[start:min(start+5000, len(recs))]
		if err := pgCopyContacts(conn, accountID, typeID, now, consent, part); err != nil {
			b.Fatal(err)
		}
	}
}

// pgCopyContacts copies rows into contacts in one transaction.
func pgCopyContacts(conn *sql.Conn, accountID, typeID int64, now time.Time, consent string, recs []benchRow) error {
	return conn.Raw(func(dc any) error {
		c := dc.(*stdlib.Conn).Conn()
		ctx := context.Background()
		tx, err := c.Begin(ctx)
		if err != nil {
			return err
		}
		defer tx.Rollback(ctx)
		// The durability of an import's batches (imports_pg.go).
		if _, err := tx.Exec(ctx, "SET LOCAL synchronous_commit = off"); err != nil {
			return err
		}
		cols := []string{"user_id", "contact_type_id", "first_name", "last_name", "email", "country", "custom_fields", "created_at", "updated_at", "consent"}
		if _, err := tx.CopyFrom(ctx, pgx.Identifier{"contacts"}, cols, pgx.CopyFromSlice(len(recs), func(i int) ([]any, error) {
			r := &recs[i]
			return []any{accountID, typeID, r.first, r.last, r.email, r.country, r.custom, now, now, consent}, nil
		})); err != nil {
			return err
		}
		return tx.Commit(ctx)
	})
}

func envInt(b *testing.B, name string, def int) int {
	b.Helper()
	v := os.Getenv(name)
	if v == "" {
		return def
	}
	n, err := strconv.Atoi(v)
	if err != nil {
		b.Fatalf("%s: %v", name, err)
	}
	return n
}

func median(xs []float64) float64 {
	if len(xs) == 0 {
		return 0
	}
	s := append([]float64(nil), xs...)
	sort.Float64s(s)
	if len(s)%2 == 1 {
		return s[len(s)/2]
	}
	return (s[len(s)/2-1] + s[len(s)/2]) / 2
}

// cpuTime is the CPU time (user and system) this process has used.
func cpuTime() time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

func perRow(d time.Duration, rows int) float64 { return float64(d.Microseconds()) / float64(rows) }

// loadAvg is the first field of /proc/loadavg ("?" elsewhere).
func loadAvg() string {
	b, err := os.ReadFile("/proc/loadavg")
	if err != nil {
		return "?"
	}
	return strings.Fields(string(b))[0]
}
