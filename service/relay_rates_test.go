package service_test

import (
	"context"
	"fmt"
	"sync"
	"testing"
	"time"

	"herald/dbtest"
	"herald/delivery"
	"herald/service"
	"herald/smtptest"
)

// Two processes sharing the database send through one relay with rate=:
// together they hand it no more than its limit, concurrently, and the
// store's count is what the relay received once they give back their
// unused tokens.
func TestRelayRatesHoldAcrossProcesses(t *testing.T) {
	t.Parallel()
	procs := dbtest.Processes(t, 2)
	sink := smtptest.Start(t)
	cfgs, err := delivery.ParseRelays(sink.URL() + "&name=shared&rate=23/d")
	if err != nil {
		t.Fatal(err)
	}
	var relays []*delivery.Relays
	for _, p := range procs {
		rs := delivery.NewRelays(delivery.RelaysConfig{Relays: cfgs, Rates: service.NewRelayRates(p.DB), MaxWait: time.Nanosecond, Batch: 4})
		relays = append(relays, rs)
	}
	var wg sync.WaitGroup
	var mu sync.Mutex
	sent, refused := 0, 0
	for i := range 60 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			err := relays[i%2].Send(context.Background(), "b@herald.test", []string{fmt.Sprintf("r%d@example.test", i)},
				[]byte(fmt.Sprintf("From: news@herald.test\r\nTo: r%d@example.test\r\nSubject: x\r\n\r\nbody\r\n", i)))
			mu.Lock()
			defer mu.Unlock()
			if err == nil {
				sent++
				return
			}
			var se *delivery.SendError
			if !asSendError(err, &se) || !se.Temporary {
				t.Errorf("send %d: %v", i, err)
			}
			refused++
		}()
	}
	wg.Wait()
	if sent != 23 || sink.Count() != 23 || refused != 37 {
		t.Fatalf("sent %d (the relay got %d), refused %d; the limit is 23 a day", sent, sink.Count(), refused)
	}
	for _, rs := range relays {
		rs.Close()
	}
	st, err := delivery.NewRelays(delivery.RelaysConfig{Relays: cfgs, Rates: service.NewRelayRates(procs[0].DB)}).Status(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if st[0].Today != 23 || st[0].LastHour != 23 || st[0].DayQuota != 23 {
		t.Fatalf("status %+v", st[0])
	}
}

// Batches counted by one process and given back unused leave room for
// the other; a window's tokens are used only within it.
func TestRelayRatesGiveBack(t *testing.T) {
	t.Parallel()
	procs := dbtest.Processes(t, 2)
	one, two := service.NewRelayRates(procs[0].DB), service.NewRelayRates(procs[1].DB)
	ctx := context.Background()
	at := time.Date(2026, 12, 7, 10, 0, 0, 0, time.UTC)
	limits := []delivery.RateLimit{{N: 5, Per: time.Second}, {N: 12, Per: 24 * time.Hour}, {Per: time.Minute}}
	got, _, err := one.Take(ctx, "r", limits, at, 4)
	if err != nil || got != 4 {
		t.Fatalf("take 4: %d, %v", got, err)
	}
	got, retry, err := two.Take(ctx, "r", limits, at, 4)
	if err != nil || got != 1 || !retry.Equal(at.Add(time.Second)) {
		t.Fatalf("the second's take: %d until %v, %v", got, retry, err)
	}
	if err := one.Return(ctx, "r", limits, at, 3); err != nil {
		t.Fatal(err)
	}
	if got, _, _ = two.Take(ctx, "r", limits, at, 10); got != 3 {
		t.Fatalf("after the give-back: %d", got)
	}
	// The next second: the day leaves 12 - 5 = 7.
	got, retry, err = one.Take(ctx, "r", limits, at.Add(time.Second), 10)
	if err != nil || got != 5 || !retry.Equal(at.Add(2*time.Second)) {
		t.Fatalf("next second: %d until %v, %v", got, retry, err)
	}
	got, retry, _ = one.Take(ctx, "r", limits, at.Add(2*time.Second), 10)
	if got != 2 || !retry.Equal(time.Date(2026, 12, 8, 0, 0, 0, 0, time.UTC)) {
		t.Fatalf("the day's last: %d until %v", got, retry)
	}
	if n, _ := two.Count(ctx, "r", time.Minute, at, at.Add(time.Hour)); n != 12 {
		t.Fatalf("minutes count %d", n)
	}
}

func asSendError(err error, se **delivery.SendError) bool {
	e, ok := err.(*delivery.SendError)
	*se = e
	return ok
}
