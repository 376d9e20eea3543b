package service_test

import (
	"os"
	"slices"
	"strconv"
	"testing"
	"time"

	"herald/models"
	"herald/service/servicetest"
)

// BenchmarkMessageLatencyDuringLargeSend measures how long a single
// message takes from the service call (Messages.Send, what POST
// api/mail/send calls) to the relay's 250 while a single send to 100,000
// contacts (HERALD_BENCH_CONTACTS) is going out through the same engine
// and the same 4 SMTP connections, into a loopback sink in this process.
// Each iteration sends one message and waits for the sink to accept it;
// the percentiles of those latencies, and how many of them fell while the
// large send was still sending, are reported as metrics. On PostgreSQL
// with HERALD_TEST_DATABASE. HERALD_BENCH_CONTACTS=0 is the reference: the
// same messages with no send beside them.
//
//	go test -run '^$' -bench BenchmarkMessageLatencyDuringLargeSend -benchtime 300x ./service/
func BenchmarkMessageLatencyDuringLargeSend(b *testing.B) {
	contacts := 100_000
	if v, err := strconv.Atoi(os.Getenv("HERALD_BENCH_CONTACTS")); err == nil && v >= 0 {
		contacts = v
	}
	f := servicetest.NewSendFixture(b, true)
	f.SMTP.Discard = true // counts and acceptance times only: 100,000 bodies are not kept
	ct, err := f.Svc.ContactTypes.Create(f.Ctx, f.Acct, "Everyone")
	if err != nil {
		b.Fatal(err)
	}
	ss := &models.SingleSend{Utr: "none"}
	// With no contacts, the reference: the same messages with no send
	// beside them.
	if contacts > 0 {
		now := models.NewTimestamp(time.Now())
		if err := f.Svc.DB.W.Exec(`WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n WHERE i < ?)
			INSERT INTO contacts (user_id, contact_type_id, first_name, last_name, email, created_at, updated_at)
			SELECT ?, ?, 'First', 'Last', 'c' || i || '@bulk.example.com', ?, ? FROM n`, contacts, f.Acct, ct.ID, now, now).Error; err != nil {
			b.Fatal(err)
		}
		ss = f.Create(f.Input("Large", []string{"contacts_" + strconv.FormatInt(ct.ID, 10)}, nil))
		// In full flow: a thousand of its messages accepted.
		f.WaitFor("the large send sending", 5*time.Minute, func() bool { return f.SMTP.Count() > 1000 })
	}

	lat := make([]time.Duration, 0, b.N)
	during := 0
	b.ResetTimer()
	for i := range b.N {
		to := "m" + strconv.Itoa(i) + "@latency.example.com"
		in := messageInput(f, to)
		start := time.Now()
		if _, err := f.Svc.Messages.Send(f.Ctx, f.Acct, in); err != nil {
			b.Fatal(err)
		}
		var at time.Time
		f.WaitFor("message "+to, time.Minute, func() bool {
			var ok bool
			at, ok = f.SMTP.AcceptedAt(to)
			return ok
		})
		lat = append(lat, at.Sub(start))
		if contacts > 0 && f.SMTP.Count() < contacts+i {
			during++ // the large send had not finished when this one was accepted
		}
	}
	b.StopTimer()
	slices.Sort(lat)
	pct := func(p float64) float64 {
		k := min(len(lat)-1, int(float64(len(lat))*p))
		return float64(lat[k].Microseconds()) / 1000
	}
	b.ReportMetric(pct(0.50), "p50-ms")
	b.ReportMetric(pct(0.99), "p99-ms")
	b.ReportMetric(float64(lat[len(lat)-1].Microseconds())/1000, "max-ms")
	b.ReportMetric(float64(during), "during-send")
	b.Logf("%d messages, %d while the send of %d was sending (sink count %d): p50 %.1f ms, p99 %.1f ms, max %.1f ms (send %s)",
		len(lat), during, contacts, f.SMTP.Count(), pct(0.50), pct(0.99), float64(lat[len(lat)-1].Microseconds())/1000, ss.Utr)
}
