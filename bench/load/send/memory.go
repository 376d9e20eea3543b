package send

// `load memory` (memory at scale): herald's peak RSS (VmHWM of
// /proc/<pid>/status, the process's whole life) through a large CSV import
// and a large single send, each in a fresh `herald serve`, on the database
// of the run (an SQLite file, or a fresh schema of HERALD_BENCH_DATABASE).
//
//	set-up   as `load send` (setup.go), with -contacts contacts imported
//	         through the API by the set-up herald; its VmHWM is reported
//	         too (an import of -contacts rows).
//	send     a fresh herald sends one single send to the -contacts
//	         contacts into the sink (its own process); the clock runs from
//	         the API call to the sink's last message; the run checks that
//	         every address got one message and that the API's delivered
//	         counter equals the contacts.
//	import   a fresh herald imports -import-rows contacts into a new
//	         contact type through POST /api/contacts/upload-csv, in CSV
//	         files of -upload-rows contacts uploaded one after the other
//	         (each a streamed multipart body; herald's server gives one
//	         request 60 s, its ReadTimeout, so a 10,000,000-row file of
//	         608 MB in one upload is cut off on this machine); the run
//	         checks the created count; the clock counts the uploads only.
//
// Target (reported, not enforced): peak RSS under 150 MB.

import (
	"context"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"syscall"
	"time"

	"herald/bench/harness"
)

type memoryOptions struct {
	importRows int
	uploadRows int
	skipSend   bool
}

func (m *memoryOptions) flags() {
	flag.IntVar(&m.importRows, "import-rows", 10_000_000, "contacts of the large CSV import (0: skip it)")
	flag.IntVar(&m.uploadRows, "upload-rows", 1_000_000, "contacts per upload of the large import: herald's server reads a request for at most 60 s (its ReadTimeout), so one upload must fit in that")
	flag.BoolVar(&m.skipSend, "skip-send", false, "skip the send of -contacts messages")
}

func runMemory(ctx context.Context, o options, mo memoryOptions) error {
	if _, err := os.Stat(o.herald); err != nil {
		return fmt.Errorf("%s is missing: build it first (make bench-memory builds bin/herald)", o.herald)
	}
	dir, cleanup, err := begin(o, "herald memory at scale", "herald-memory-")
	if err != nil {
		return err
	}
	defer cleanup()
	start := time.Now()
	dsn, drop, err := database(o, dir)
	if err != nil {
		return err
	}
	defer drop()
	b := &bench{o: o, dir: dir, dsn: dsn, bin: o.herald, pgPort: localPostgresPort(o.database)}
	f, err := b.prepare(ctx, o.contacts, o.dkim)
	if err != nil {
		return fmt.Errorf("prepare the database: %w", err)
	}
	type row struct{ work, figure, rss, load string }
	var rows []row
	rows = append(rows, row{fmt.Sprintf("set-up herald: import of %s contacts (CSV through the API)", harness.Thousands(float64(o.contacts))),
		fmt.Sprintf("%.1f s = %s rows/s", f.importElapsed.Seconds(), harness.Thousands(float64(o.contacts)/f.importElapsed.Seconds())), mib(f.importHWM), harness.LoadAvg()})
	fmt.Printf("set-up: %s contacts imported in %.1f s; set-up herald's peak RSS %s\n", harness.Thousands(float64(o.contacts)), f.importElapsed.Seconds(), mib(f.importHWM))

	if !mo.skipSend {
		sink, err := startSink()
		if err != nil {
			return err
		}
		defer sink.Stop()
		b.sink = sink
		h, err := b.startHerald(ctx, "send", "smtp://"+sink.Addr+"?tls=none")
		if err != nil {
			return err
		}
		time.Sleep(time.Second)
		load := harness.LoadAvg()
		if err := sink.reset(); err != nil {
			h.proc.Stop()
			return err
		}
		sampler := sampleRSS(h.pid(), o.sample)
		t0 := time.Now()
		utr, err := b.createSend(ctx, h, "Memory", f.audience)
		if err != nil {
			sampler.end()
			h.proc.Stop()
			return err
		}
		want := int64(o.contacts)
		st, err := b.waitDistinct(ctx, want, func() error {
			if syscall.Kill(h.pid(), 0) != nil {
				return fmt.Errorf("herald exited: %s", h.proc.Tail())
			}
			return nil
		})
		if err != nil {
			sampler.end()
			h.proc.Stop()
			return err
		}
		d, err := b.waitCompleted(ctx, []*heraldProc{h}, utr)
		samples, largest := sampler.end()
		_, hwm, _ := harness.ProcMem(h.pid())
		h.proc.Stop()
		if err != nil {
			return err
		}
		end, _ := sink.stats()
		elapsed := st.last.Sub(t0)
		fmt.Printf("send: %s messages in %.1f s = %s msg/s; sink %d distinct, %d duplicates; API delivered %d; peak RSS %s (largest of %d VmRSS samples %s)\n",
			harness.Thousands(float64(want)), elapsed.Seconds(), harness.Thousands(float64(want)/elapsed.Seconds()), end.distinct, end.dups, d.Delivered, mib(hwm), samples, mib(largest))
		if end.distinct != want || end.dups != 0 || d.Delivered != want {
			return fmt.Errorf("send: sink %d distinct, %d duplicates, API delivered %d; want %d, 0, %d", end.distinct, end.dups, d.Delivered, want, want)
		}
		rows = append(rows, row{fmt.Sprintf("single send to %s contacts (fresh herald)", harness.Thousands(float64(want))),
			fmt.Sprintf("%.1f s = %s msg/s", elapsed.Seconds(), harness.Thousands(float64(want)/elapsed.Seconds())), mib(hwm), load})
	}

	if mo.importRows > 0 {
		h, err := b.startHerald(ctx, "import", "smtp://127.0.0.1:9?tls=none")
		if err != nil {
			return err
		}
		defer h.proc.Stop()
		if _, err := b.call(ctx, h, "POST", "/contacts-type/add", map[string][]string{"name": {"Big import"}}); err != nil {
			return err
		}
		typeID, err := b.idOf(ctx, h, "/contacts-type", "contactTypes", "name", "Big import")
		if err != nil {
			return err
		}
		load := harness.LoadAvg()
		sampler := sampleRSS(h.pid(), o.sample)
		var elapsed time.Duration
		var created, size int64
		parts := 0
		for done := 0; done < mo.importRows; done += mo.uploadRows {
			n := min(mo.uploadRows, mo.importRows-done)
			path := filepath.Join(dir, "big.csv")
			psize, err := writeContactsCSV(path, fmt.Sprintf("m%d-", parts), n, int64(99+parts))
			if err != nil {
				sampler.end()
				return err
			}
			t0 := time.Now()
			c, err := b.upload(ctx, h, typeID, path, psize)
			elapsed += time.Since(t0)
			os.Remove(path)
			if err != nil {
				sampler.end()
				return fmt.Errorf("import, upload %d: %w; herald log: %s", parts+1, err, h.proc.Tail())
			}
			created += c
			size += psize
			parts++
			_, hwm, _ := harness.ProcMem(h.pid())
			fmt.Printf("  upload %d: %s contacts in %.1f s (total %s, %.1f s); herald VmHWM %s\n", parts, harness.Thousands(float64(n)),
				time.Since(t0).Seconds(), harness.Thousands(float64(created)), elapsed.Seconds(), mib(hwm))
		}
		samples, largest := sampler.end()
		_, hwm, _ := harness.ProcMem(h.pid())
		fmt.Printf("import: %s contacts created of %s in %d uploads, %.1f s = %s rows/s; peak RSS %s (largest of %d VmRSS samples %s)\n",
			harness.Thousands(float64(created)), harness.Thousands(float64(mo.importRows)), parts, elapsed.Seconds(),
			harness.Thousands(float64(mo.importRows)/elapsed.Seconds()), mib(hwm), samples, mib(largest))
		if created != int64(mo.importRows) {
			return fmt.Errorf("import: %d contacts created, want %d", created, mo.importRows)
		}
		rows = append(rows, row{fmt.Sprintf("CSV import of %s contacts into one type, %d uploads, %.0f MB in all (fresh herald)", harness.Thousands(float64(mo.importRows)), parts, float64(size)/1e6),
			fmt.Sprintf("%.1f s = %s rows/s", elapsed.Seconds(), harness.Thousands(float64(mo.importRows)/elapsed.Seconds())), mib(hwm), load})
	}

	dialect := "SQLite"
	if o.database != "" {
		dialect = "PostgreSQL"
	}
	fmt.Printf("\n| work (%s) | time | herald peak RSS (VmHWM) | target | load average at start |\n|---|---|---:|---|---|\n", dialect)
	for _, r := range rows {
		fmt.Printf("| %s | %s | %s | < 150 MB | %s |\n", r.work, r.figure, r.rss, r.load)
	}
	fmt.Printf("\nwhole run %s\n", time.Since(start).Round(time.Second))
	return nil
}
