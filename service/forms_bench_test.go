package service_test

import (
	"context"
	"fmt"
	"slices"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"herald/dbtest"
	"herald/models"
	"herald/service"
	"herald/service/servicetest"
)

// formBench is a service whose one form takes posts from PerIP 10 a
// minute per address (the default) and a per-form limit set by the
// benchmark; now, if given, is the service's clock.
func formBench(b *testing.B, perForm int, double bool, now ...func() time.Time) (*service.Service, *models.Form) {
	b.Helper()
	cfg := service.Config{BaseURL: "http://herald.test", FormLimits: service.FormLimits{PerIP: 10, PerForm: perForm, Window: time.Minute}}
	if len(now) > 0 {
		cfg.Now = now[0]
	}
	svc := dbtest.Service(b, cfg)
	ctx := context.Background()
	acct := servicetest.NewAccount(&testing.T{}, svc, "owner@herald.test")
	ct, err := svc.ContactTypes.Create(ctx, acct, "Readers")
	if err != nil {
		b.Fatal(err)
	}
	opt := "0"
	if double {
		opt = "1"
	}
	fm, err := svc.Forms.Save(ctx, acct, service.FormInput{Name: "Bench", ContactTypeID: idStr(ct.ID), DoubleOptIn: opt})
	if err != nil {
		b.Fatal(err)
	}
	return svc, fm
}

var benchSeq atomic.Int64

// normalPost is one person's sign-up: a new address from an address of
// its own.
func normalPost(svc *service.Service, fm *models.Form) error {
	n := benchSeq.Add(1)
	in := service.SignupInput{Email: fmt.Sprintf("p%d@example.com", n), FirstName: "P", UserAgent: personUA,
		IP: fmt.Sprintf("10.%d.%d.%d", (n>>16)&255, (n>>8)&255, n&255)}
	_, err := svc.Forms.Submit(context.Background(), fm.PublicID, in)
	return err
}

// BenchmarkFormSignup: new sign-ups, each from its own address, as fast
// as one process takes them (single and double opt-in: the latter writes
// the confirmation and mails it to the outbox).
func BenchmarkFormSignup(b *testing.B) {
	for _, double := range []bool{false, true} {
		b.Run(fmt.Sprintf("double=%v", double), func(b *testing.B) {
			svc, fm := formBench(b, 1<<30, double)
			for b.Loop() {
				if err := normalPost(svc, fm); err != nil {
					b.Fatal(err)
				}
			}
			b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "posts/s")
		})
	}
}

// BenchmarkFormLimitReached: posts to a form past its limit, as a flood
// sees them: refused (429) without a write. The clock stands still: a
// run crossing into the next minute would start a fresh window and take
// posts again.
func BenchmarkFormLimitReached(b *testing.B) {
	at := time.Now()
	svc, fm := formBench(b, 5, false, func() time.Time { return at })
	for range 5 {
		if err := normalPost(svc, fm); err != nil {
			b.Fatal(err)
		}
	}
	for b.Loop() {
		if err := normalPost(svc, fm); service.ErrorCode(err) != service.CodeRateLimited {
			b.Fatalf("want 429, got %v", err)
		}
	}
	b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "posts/s")
}

// BenchmarkFormFlood: people's sign-ups, alone and beside a flood of
// 5,000 posts a second from one address (8 goroutines, each paced; the
// address is refused after its 10 a minute); reports the people's
// median and p99 latency. (An unpaced flood of in-process calls measures
// only the Go scheduler: a real one pays its HTTP parsing too.)
func BenchmarkFormFlood(b *testing.B) {
	for _, flood := range []bool{false, true} {
		b.Run(fmt.Sprintf("flood=%v", flood), func(b *testing.B) {
			svc, fm := formBench(b, 1<<30, false)
			stop := make(chan struct{})
			var wg sync.WaitGroup
			var flooded atomic.Int64
			if flood {
				for range 8 {
					wg.Add(1)
					go func() {
						defer wg.Done()
						tick := time.NewTicker(8 * time.Second / 5000)
						defer tick.Stop()
						for {
							select {
							case <-stop:
								return
							case <-tick.C:
							}
							in := service.SignupInput{Email: fmt.Sprintf("bot%d@example.com", benchSeq.Add(1)), IP: "192.0.2.66", UserAgent: "bot"}
							_, _ = svc.Forms.Submit(context.Background(), fm.PublicID, in)
							flooded.Add(1)
						}
					}()
				}
			}
			var lat []time.Duration
			for b.Loop() {
				t0 := time.Now()
				if err := normalPost(svc, fm); err != nil {
					b.Fatal(err)
				}
				lat = append(lat, time.Since(t0))
			}
			close(stop)
			wg.Wait()
			slices.Sort(lat)
			b.ReportMetric(float64(lat[len(lat)/2].Microseconds()), "p50-µs")
			b.ReportMetric(float64(lat[len(lat)*99/100].Microseconds()), "p99-µs")
			b.ReportMetric(float64(flooded.Load())/b.Elapsed().Seconds(), "flood-posts/s")
		})
	}
}

// BenchmarkFormCounterLogging (PostgreSQL only): the sign-ups of
// BenchmarkFormSignup with the post counters' table (form_hits) switched
// between LOGGED and UNLOGGED every 50 posts in one run, so that both are
// measured under the same load of a shared machine; reports each one's
// posts/s. Logged, every counted post is a commit waiting for a WAL flush.
func BenchmarkFormCounterLogging(b *testing.B) {
	for _, double := range []bool{false, true} {
		b.Run(fmt.Sprintf("double=%v", double), func(b *testing.B) {
			svc, fm := formBench(b, 1<<30, double)
			if svc.DB.Dialect != "postgres" {
				b.Skip("UNLOGGED tables are PostgreSQL's")
			}
			modes := []string{"UNLOGGED", "LOGGED"}
			var spent [2]time.Duration
			var posts [2]int
			i := 0
			for b.Loop() {
				m := (i / 50) % 2
				if i%50 == 0 {
					if err := svc.DB.W.Exec("ALTER TABLE form_hits SET " + modes[m]).Error; err != nil {
						b.Fatal(err)
					}
				}
				i++
				t0 := time.Now()
				if err := normalPost(svc, fm); err != nil {
					b.Fatal(err)
				}
				spent[m] += time.Since(t0)
				posts[m]++
			}
			for m, name := range []string{"unlogged", "logged"} {
				if posts[m] > 0 {
					b.ReportMetric(float64(posts[m])/spent[m].Seconds(), name+"-posts/s")
				}
			}
		})
	}
}
