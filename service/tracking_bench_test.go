package service_test

import (
	"context"
	"strconv"
	"testing"
	"time"

	"herald/dbtest"
	"herald/models"
	"herald/service"
)

// trackBench is a delivered send of n messages with two tracked links,
// delivered an hour before the clock, and the tracking token of each
// message. The clock moves past the once-a-minute window between hits so
// that every hit counts (the recording path's longest way).
func trackBench(b *testing.B, n int) (*service.Service, *dbtest.Clock, []string) {
	b.Helper()
	ctx := context.Background()
	clock := dbtest.NewClock(time.Now())
	svc := dbtest.Service(b, service.Config{BaseURL: "http://herald.test", Now: clock.Now})
	u, _, err := svc.Accounts.Create(ctx, service.AccountInput{Name: "T", Email: "bench@example.com", Password: "test-passphrase-9"})
	if err != nil {
		b.Fatal(err)
	}
	sent := models.NewTimestamp(time.Now().Add(-time.Hour))
	ss := models.SingleSend{UserID: u.ID, SingleSendName: "Bench", Utr: "bench-" + strconv.FormatInt(u.ID, 10), Status: models.SendCompleted,
		Links: models.StringArray{"https://shop.example.com/a", "https://shop.example.com/b"}, UniqueOpenToken: "{}",
		CreatedAt: sent, UpdatedAt: sent}
	if err := svc.DB.W.Create(&ss).Error; err != nil {
		b.Fatal(err)
	}
	toks := make([]string, n)
	for i := range n {
		var id int64
		if err := svc.DB.W.Raw("INSERT INTO send_messages (send_id, user_id, email, state, sent_at) VALUES (?, ?, ?, 2, ?) RETURNING id",
			ss.ID, u.ID, "r"+strconv.Itoa(i)+"@example.com", sent).Scan(&id).Error; err != nil {
			b.Fatal(err)
		}
		if toks[i], err = svc.Tracking.Token(ctx, id); err != nil {
			b.Fatal(err)
		}
	}
	return svc, clock, toks
}

// BenchmarkTrackOpen records opens through Tracking.Open (the request's
// shape unknown): the raw counters, and the machine rules'
// bookkeeping. Each hit counts.
func BenchmarkTrackOpen(b *testing.B) {
	svc, clock, toks := trackBench(b, 100)
	ctx := context.Background()
	i := 0
	for b.Loop() {
		clock.Advance(61 * time.Second / time.Duration(len(toks)))
		if err := svc.Tracking.Open(ctx, toks[i%len(toks)]); err != nil {
			b.Fatal(err)
		}
		i++
	}
}

// BenchmarkTrackClick records clicks through Tracking.Click, alternating
// the two links.
func BenchmarkTrackClick(b *testing.B) {
	svc, clock, toks := trackBench(b, 100)
	ctx := context.Background()
	i := 0
	for b.Loop() {
		clock.Advance(61 * time.Second / time.Duration(len(toks)))
		if _, err := svc.Tracking.Click(ctx, toks[i%len(toks)], (i/len(toks))%2); err != nil {
			b.Fatal(err)
		}
		i++
	}
}
