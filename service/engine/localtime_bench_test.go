package engine_test

import (
	"context"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"golang.org/x/crypto/bcrypt"

	"herald/models"
	"herald/service"
	"herald/service/audience"
	"herald/service/core"
	"herald/service/deliverability"
	"herald/service/engine"
	"herald/service/identity"
	"herald/world"
)

// BenchmarkLocalTimeSend measures the scheduler's cost of a local-time
// send on SQLite against a plain send of the same audience:
// the CPU time of the resolution pass (this process's, SQLite included),
// its peak heap above the heap before it, and the scheduler's tick and the
// engine's claim while every row waits for its wave. Run it once per size:
//
//	go test -run '^$' -bench LocalTimeSend -benchtime 1x ./service/
//
// HERALD_BENCH_SIZES (default "100000,1000000") lists the audience sizes.
func BenchmarkLocalTimeSend(b *testing.B) {
	for _, n := range benchSizes(b) {
		b.Run(strconv.Itoa(n), func(b *testing.B) {
			for range b.N {
				benchLocalTime(b, n)
			}
		})
	}
}

// benchSizes are the audience sizes of the send benchmarks:
// HERALD_BENCH_SIZES (comma-separated), by default 100,000 and 1,000,000.
func benchSizes(b *testing.B) []int {
	sizes := []int{100_000, 1_000_000}
	if v := os.Getenv("HERALD_BENCH_SIZES"); v != "" {
		sizes = nil
		for _, f := range strings.Split(v, ",") {
			n, err := strconv.Atoi(strings.TrimSpace(f))
			if err != nil {
				b.Fatal(err)
			}
			sizes = append(sizes, n)
		}
	}
	return sizes
}

func benchLocalTime(b *testing.B, n int) {
	ctx := context.Background()
	db, err := core.OpenDB(filepath.Join(b.TempDir(), "herald.db"))
	if err != nil {
		b.Fatal(err)
	}
	defer db.Close()
	if err := db.Migrate(ctx); err != nil {
		b.Fatal(err)
	}
	start := time.Date(2030, 5, 1, 10, 0, 0, 0, time.UTC)
	var clock atomic.Int64 // Unix ms
	clock.Store(start.UnixMilli())
	svc, err := service.New(db, service.Config{PasswordCost: bcrypt.MinCost, Now: func() time.Time { return time.UnixMilli(clock.Load()) }})
	if err != nil {
		b.Fatal(err)
	}
	u, _, err := svc.Accounts.Create(ctx, identity.AccountInput{Name: "B", Email: "bench@herald.test", Password: "bench-passphrase-9"})
	if err != nil {
		b.Fatal(err)
	}
	acct := u.ID
	snd, err := svc.Senders.Create(ctx, acct, deliverability.SenderInput{FromName: "Shop", FromEmail: "news@shop.example.com",
		ReplyToEmail: "help@shop.example.com", CountryID: "250", CompanyAddress: "1 rue de Rivoli", Nickname: "shop"})
	if err != nil {
		b.Fatal(err)
	}
	if _, err := svc.Senders.Verify(ctx, snd.VerifyToken); err != nil {
		b.Fatal(err)
	}
	g, err := svc.Groups.Create(ctx, acct, audience.GroupInput{GroupName: "News", Description: "News", IsDisplay: "1"})
	if err != nil {
		b.Fatal(err)
	}
	if _, err := svc.Fields.Create(ctx, acct, audience.FieldInput{FieldName: "tz", FieldType: "text"}); err != nil {
		b.Fatal(err)
	}
	ct, err := svc.ContactTypes.Create(ctx, acct, "Everyone")
	if err != nil {
		b.Fatal(err)
	}
	world.CityZone(1) // the zones load once per process, not in the measure
	t0 := time.Now()
	benchContacts(b, db, acct, ct.ID, n)
	b.Logf("%d contacts inserted in %v", n, time.Since(t0).Round(time.Millisecond))

	newSend := func(name string, local *service.LocalTimeInput) *models.SingleSend {
		ss, err := svc.SingleSends.Create(ctx, acct, service.SingleSendInput{
			TemplateID: "1", TemplateHTML: `<html><body><p>Hello</p><a href="((unsubscribe_preferences))">Preferences</a></body></html>`,
			SenderID: strconv.FormatInt(snd.ID, 10), UnsubscribeGroupID: strconv.FormatInt(g.ID, 10),
			SingleSendName: name, Subject: "Hi", Preheader: "News", ScheduleType: "0",
			RecipientID: []string{"contacts_" + strconv.FormatInt(ct.ID, 10)}, Local: local,
		})
		if err != nil {
			b.Fatal(err)
		}
		// Out of the scheduler's reach: the benchmark resolves it itself.
		if err := db.W.Exec("UPDATE single_sends SET armed = 0 WHERE id = ?", ss.ID).Error; err != nil {
			b.Fatal(err)
		}
		return ss
	}
	sg, err := svc.NewSending(ctx, service.SendingConfig{})
	if err != nil {
		b.Fatal(err)
	}
	aud := sg

	resolve := func(ss *models.SingleSend) (cpu, wall time.Duration, peak uint64) {
		runtime.GC()
		var ms runtime.MemStats
		runtime.ReadMemStats(&ms)
		base := ms.HeapAlloc
		var top atomic.Uint64
		stop := make(chan struct{})
		var wg sync.WaitGroup
		wg.Go(func() {
			t := time.NewTicker(20 * time.Millisecond)
			defer t.Stop()
			for {
				var m runtime.MemStats
				runtime.ReadMemStats(&m)
				if m.HeapAlloc > top.Load() {
					top.Store(m.HeapAlloc)
				}
				select {
				case <-stop:
					return
				case <-t.C:
				}
			}
		})
		c0, w0 := cpuTime(), time.Now()
		if err := engine.Resolve(ctx, aud, ss.ID); err != nil {
			b.Fatal(err)
		}
		cpu, wall = cpuTime()-c0, time.Since(w0)
		close(stop)
		wg.Wait()
		if top.Load() > base {
			peak = top.Load() - base
		}
		return cpu, wall, peak
	}

	plain := newSend("Plain", nil)
	pc, pw, ph := resolve(plain)
	// The plain send is done with: out of the claim's sends.
	if err := db.W.Exec("UPDATE single_sends SET status = ? WHERE id = ?", models.SendCompleted, plain.ID).Error; err != nil {
		b.Fatal(err)
	}
	local := newSend("Local", &service.LocalTimeInput{On: true, Clock: "09:00", ZoneField: "tz"})
	lc, lw, lh := resolve(local)
	var rows int64
	db.R.Raw("SELECT COUNT(*) FROM send_messages WHERE send_id = ? AND next_at >= ?", local.ID, start.UnixMilli()).Scan(&rows)
	if rows != int64(n) {
		b.Fatalf("%d of %d local rows wait for a wave", rows, n)
	}
	var waves, zones int64
	db.R.Raw("SELECT COUNT(DISTINCT release_at), COUNT(*) FROM send_waves WHERE send_id = ?", local.ID).Row().Scan(&waves, &zones)

	// Every row waits (a minute before the start, when even the zones
	// whose 09:00 is the start wait): the scheduler's tick and the
	// engine's claim.
	clock.Store(start.Add(-time.Minute).UnixMilli())
	if err := db.W.Exec("UPDATE single_sends SET status = ? WHERE id = ?", models.SendRunning, local.ID).Error; err != nil {
		b.Fatal(err)
	}
	if err := engine.Beat(ctx, sg); err != nil {
		b.Fatal(err)
	}
	const rounds = 50
	t1 := time.Now()
	for range rounds {
		if err := sg.Tick(ctx); err != nil {
			b.Fatal(err)
		}
	}
	tick := time.Since(t1) / rounds
	t2 := time.Now()
	for range rounds {
		jobs, err := engine.Claim(ctx, sg, 64)
		if err != nil || len(jobs) != 0 {
			b.Fatalf("claim while every row waits: %d jobs, %v", len(jobs), err)
		}
	}
	claim := time.Since(t2) / rounds
	var status models.SendStatus
	if err := db.R.Raw("SELECT status FROM single_sends WHERE id = ?", local.ID).Scan(&status).Error; err != nil || status != models.SendRunning {
		b.Fatalf("status %d while every row waits (%v)", status, err)
	}

	ms := func(d time.Duration) float64 { return float64(d.Microseconds()) / 1000 }
	b.ReportMetric(ms(pc), "plain-cpu-ms")
	b.ReportMetric(ms(lc), "local-cpu-ms")
	b.ReportMetric(float64(ph)/(1<<20), "plain-peak-heap-MB")
	b.ReportMetric(float64(lh)/(1<<20), "local-peak-heap-MB")
	b.ReportMetric(ms(tick), "tick-ms")
	b.ReportMetric(ms(claim), "claim-ms")
	b.Logf("n=%d plain: cpu %v wall %v peak heap +%.1f MB; local: cpu %v wall %v peak heap +%.1f MB (%.2fx cpu); %d waves, %d zones; tick %v, claim %v with every row waiting",
		n, pc.Round(time.Millisecond), pw.Round(time.Millisecond), float64(ph)/(1<<20), lc.Round(time.Millisecond), lw.Round(time.Millisecond),
		float64(lh)/(1<<20), float64(lc)/float64(pc), waves, zones, tick.Round(time.Microsecond), claim.Round(time.Microsecond))
}

// cpuTime is this process's user and system CPU time.
func cpuTime() time.Duration {
	var ru syscall.Rusage
	_ = syscall.Getrusage(syscall.RUSAGE_SELF, &ru)
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// benchContacts inserts n contacts of a contact type with places drawn
// from the world data: 80 % a city (with its state and country), 8 % a
// state, 5 % a country only, 4 % a zone in the custom field tz, 3 %
// nothing (the account's zone).
func benchContacts(b *testing.B, db *core.DB, acct, typeID int64, n int) {
	rng := rand.New(rand.NewPCG(1, 2))
	all := world.Cities(0, 0)
	type place struct{ country, state, city, custom string }
	places := make([]place, 0, 3000)
	for range 3000 {
		c := all[rng.IntN(len(all))]
		p := place{country: strconv.FormatInt(c.CountryID, 10), custom: "{}"}
		if st, ok := world.StateByID(c.StateID); ok {
			p.state = st.Name
		}
		switch r := rng.IntN(100); {
		case r < 80:
			p.city = c.Name
		case r < 88:
		case r < 93:
			p.state = ""
		case r < 97:
			p.custom = `{"tz":"Asia/Tokyo"}`
		default:
			p.country, p.state = "", ""
		}
		places = append(places, p)
	}
	now := models.NewTimestamp(time.Now())
	const batch = 500
	err := db.W.Exec("SELECT 1").Error // the writer is up
	if err != nil {
		b.Fatal(err)
	}
	tx := db.W.Begin()
	defer tx.Rollback()
	head := "INSERT INTO contacts (user_id, contact_type_id, email, country, state, city, custom_fields, created_at, updated_at) VALUES "
	for lo := 0; lo < n; lo += batch {
		hi := min(lo+batch, n)
		var sb strings.Builder
		sb.WriteString(head)
		args := make([]any, 0, (hi-lo)*9)
		for i := lo; i < hi; i++ {
			if i > lo {
				sb.WriteString(",")
			}
			sb.WriteString("(?,?,?,?,?,?,?,?,?)")
			p := places[rng.IntN(len(places))]
			args = append(args, acct, typeID, fmt.Sprintf("c%07d@example.com", i), p.country, p.state, p.city, p.custom, now, now)
		}
		if err := tx.Exec(sb.String(), args...).Error; err != nil {
			b.Fatal(err)
		}
	}
	if err := tx.Commit().Error; err != nil {
		b.Fatal(err)
	}
}
