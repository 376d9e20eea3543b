package delivery

import (
	"bufio"
	"context"
	"fmt"
	"net"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"herald/eventually"
	"herald/smtptest"
)

// relaysOver builds Relays over the given HERALD_SMTP_URL with a clock the
// test moves.
func relaysOver(t *testing.T, raw string, clock *testClock, tune func(*RelaysConfig)) *Relays {
	t.Helper()
	cfgs, err := ParseRelays(raw)
	if err != nil {
		t.Fatal(err)
	}
	cfg := RelaysConfig{Relays: cfgs, MaxConns: 2, Now: clock.Now}
	if tune != nil {
		tune(&cfg)
	}
	rs := NewRelays(cfg)
	t.Cleanup(func() { rs.Close() })
	return rs
}

type testClock struct {
	mu sync.Mutex
	t  time.Time
}

func newTestClock() *testClock { return &testClock{t: time.Date(2026, 12, 7, 10, 0, 0, 0, time.UTC)} }

func (c *testClock) Now() time.Time { c.mu.Lock(); defer c.mu.Unlock(); return c.t }

func (c *testClock) Add(d time.Duration) { c.mu.Lock(); c.t = c.t.Add(d); c.mu.Unlock() }

func fromMsg(from string, i int) []byte {
	return []byte(fmt.Sprintf("Date: Mon, 7 Dec 2026 10:00:00 +0000\r\nFrom: \"News, weekly\"\r\n <%s>\r\nTo: r%d@example.test\r\nSubject: n%d\r\n\r\nbody %d\r\n", from, i, i, i))
}

// sendAll sends n messages, conc at once, each to its own recipient, and
// returns the errors by recipient and the carriers by relay.
func sendAll(t *testing.T, rs *Relays, n, conc int, from func(i int) string) (map[string]error, map[string]int) {
	t.Helper()
	var mu sync.Mutex
	errs, carriers := map[string]error{}, map[string]int{}
	sem := make(chan struct{}, conc)
	var wg sync.WaitGroup
	for i := range n {
		wg.Add(1)
		sem <- struct{}{}
		go func() {
			defer wg.Done()
			defer func() { <-sem }()
			to := fmt.Sprintf("r%d@example.test", i)
			ctx, carrier := WithCarrier(context.Background())
			ctx, cancel := context.WithTimeout(ctx, 20*time.Second)
			defer cancel()
			err := rs.Send(ctx, "bounces+x@herald.test", []string{to}, fromMsg(from(i), i))
			mu.Lock()
			defer mu.Unlock()
			if err != nil {
				errs[to] = err
			} else {
				carriers[carrier()]++
			}
		}()
	}
	wg.Wait()
	return errs, carriers
}

func news(int) string { return "news@herald.test" }

// noLossNoDup checks that every recipient got exactly one message across
// the sinks, and that the failed ones got none.
func noLossNoDup(t *testing.T, n int, errs map[string]error, sinks ...*smtptest.Server) {
	t.Helper()
	got := map[string]int{}
	for _, s := range sinks {
		for r, c := range s.PerRecipient() {
			got[r] += c
		}
	}
	for i := range n {
		to := fmt.Sprintf("r%d@example.test", i)
		want := 1
		if errs[to] != nil {
			want = 0
		}
		if got[to] != want {
			t.Errorf("%s received %d times, want %d (error %v)", to, got[to], want, errs[to])
		}
	}
}

func TestRelaysSplitByWeight(t *testing.T) {
	t.Parallel()
	a, b, c := smtptest.Start(t), smtptest.Start(t), smtptest.Start(t)
	rs := relaysOver(t, a.URL()+"&name=a&weight=3 "+b.URL()+"&name=b&weight=2 "+c.URL()+"&name=c", newTestClock(), nil)
	const n = 600
	errs, carriers := sendAll(t, rs, n, 6, news)
	if len(errs) > 0 {
		t.Fatalf("errors: %v", errs)
	}
	// Smooth weighted round robin: the split is the weights' exactly.
	if carriers["a"] != 300 || carriers["b"] != 200 || carriers["c"] != 100 {
		t.Fatalf("carriers %v, want a 300, b 200, c 100", carriers)
	}
	if a.Count() != 300 || b.Count() != 200 || c.Count() != 100 {
		t.Fatalf("sinks got %d, %d, %d", a.Count(), b.Count(), c.Count())
	}
	noLossNoDup(t, n, errs, a, b, c)
}

func TestRelaysRouteByFromDomain(t *testing.T) {
	t.Parallel()
	shop, general, second := smtptest.Start(t), smtptest.Start(t), smtptest.Start(t)
	rs := relaysOver(t, shop.URL()+"&name=shop&from_domains=Shop.example|deals.example "+general.URL()+"&name=general&weight=3 "+second.URL()+"&name=second",
		newTestClock(), nil)
	domains := []string{"shop.example", "other.example", "DEALS.example", "herald.test"}
	errs, carriers := sendAll(t, rs, 80, 1, func(i int) string { return "news@" + domains[i%4] })
	if len(errs) > 0 {
		t.Fatalf("errors: %v", errs)
	}
	// The shop's mail interleaved with the others' leaves their split
	// by weight as it is.
	if carriers["shop"] != 40 || carriers["general"] != 30 || carriers["second"] != 10 {
		t.Fatalf("carriers %v", carriers)
	}
	for _, m := range shop.Messages() {
		if d := headerFromDomain(m.Data); d != "shop.example" && d != "deals.example" {
			t.Errorf("the shop relay carried mail from %q", d)
		}
	}
	for _, m := range append(general.Messages(), second.Messages()...) {
		if d := headerFromDomain(m.Data); d == "shop.example" || d == "deals.example" {
			t.Errorf("the general relay carried mail from %q", d)
		}
	}
	// Mail of the shop's domains waits for the shop's relay: it does not
	// leave through the general one.
	shop.Refuse(smtptest.AtMail, "*", 421, "4.3.2", "closing")
	err := rs.Send(context.Background(), "bounces+x@herald.test", []string{"late@example.test"}, fromMsg("news@shop.example", 99))
	if se := asSendError(t, err); !se.Temporary {
		t.Fatalf("shop mail with its relay down: %v", err)
	}
	if general.PerRecipient()["late@example.test"] != 0 {
		t.Fatal("shop mail went out through the general relay")
	}
}

func TestRelaysFailover(t *testing.T) {
	t.Parallel()
	for _, tt := range []struct {
		name   string
		break_ func(t *testing.T, s *smtptest.Server) string // makes the relay fail; returns its URL
		want   string                                        // in the paused relay's last error
	}{
		{"refuses connections", func(t *testing.T, s *smtptest.Server) string {
			s.Close()
			return s.URL()
		}, "connect:"},
		{"answers 421", func(t *testing.T, s *smtptest.Server) string {
			s.Refuse(smtptest.AtMail, "*", 421, "4.3.2", "service shutting down")
			return s.URL()
		}, "421 4.3.2 service shutting down"},
		{"421 at RCPT", func(t *testing.T, s *smtptest.Server) string {
			s.Refuse(smtptest.AtRcpt, "*", 421, "", "too busy")
			return s.URL()
		}, "421"},
		{"times out", func(t *testing.T, s *smtptest.Server) string {
			return "smtp://" + silentServer(t) + "?tls=none"
		}, "connect:"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			bad, good := smtptest.Start(t), smtptest.Start(t)
			badURL := tt.break_(t, bad)
			clock := newTestClock()
			rs := relaysOver(t, badURL+"&name=bad&weight=5 "+good.URL()+"&name=good", clock, func(c *RelaysConfig) {
				for i := range c.Relays {
					c.Relays[i].SMTP.DialTimeout = 300 * time.Millisecond
				}
			})
			const n = 30
			errs, carriers := sendAll(t, rs, n, 3, news)
			if len(errs) > 0 {
				t.Fatalf("errors: %v", errs)
			}
			if carriers["good"] != n {
				t.Fatalf("carriers %v", carriers)
			}
			noLossNoDup(t, n, errs, bad, good)
			st, err := rs.Status(context.Background())
			if err != nil {
				t.Fatal(err)
			}
			if !st[0].Paused || !strings.Contains(st[0].LastError, tt.want) || st[1].Paused {
				t.Fatalf("status %+v", st)
			}
			if !st[0].PausedUntil.Equal(clock.Now().Add(5 * time.Second)) {
				t.Fatalf("paused until %v, want 5 s", st[0].PausedUntil)
			}
		})
	}
}

// silentServer accepts connections and never says a word.
func silentServer(t *testing.T) string {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	var conns []net.Conn
	var mu sync.Mutex
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			mu.Lock()
			conns = append(conns, c)
			mu.Unlock()
		}
	}()
	t.Cleanup(func() {
		ln.Close()
		mu.Lock()
		for _, c := range conns {
			c.Close()
		}
		mu.Unlock()
	})
	return ln.Addr().String()
}

// A relay paused after failures is probed when its pause ends, with
// pauses that double while the probe fails, and carries its share again
// once it answers.
func TestRelaysPausedRelayComesBack(t *testing.T) {
	t.Parallel()
	flaky, steady := smtptest.Start(t), smtptest.Start(t)
	clock := newTestClock()
	rs := relaysOver(t, flaky.URL()+"&name=flaky "+steady.URL()+"&name=steady", clock, nil)
	flaky.Refuse(smtptest.AtMail, "*", 421, "", "later")
	total := 0
	sendSome := func(n int) map[string]int {
		t.Helper()
		carriers := map[string]int{}
		for i := range n {
			ctx, carrier := WithCarrier(context.Background())
			if err := rs.Send(ctx, "b@herald.test", []string{fmt.Sprintf("r%d@example.test", total+i)}, fromMsg("news@herald.test", i)); err != nil {
				t.Fatal(err)
			}
			carriers[carrier()]++
		}
		total += n
		return carriers
	}
	pausedFor := func() time.Duration {
		st, _ := rs.Status(context.Background())
		return st[0].PausedUntil.Sub(clock.Now())
	}
	if c := sendSome(10); c["steady"] != 10 {
		t.Fatalf("carriers %v", c)
	}
	if d := pausedFor(); d != 5*time.Second {
		t.Fatalf("first pause %v", d)
	}
	// The pause ends; the probe fails: twice as long.
	clock.Add(5 * time.Second)
	if c := sendSome(4); c["steady"] != 4 {
		t.Fatalf("carriers %v", c)
	}
	if d := pausedFor(); d != 10*time.Second {
		t.Fatalf("second pause %v", d)
	}
	clock.Add(10 * time.Second)
	sendSome(2)
	if d := pausedFor(); d != 20*time.Second {
		t.Fatalf("third pause %v", d)
	}
	// It answers again: the probe after the pause goes through, and the
	// relay carries its half.
	flaky.Lift(smtptest.AtMail, "*")
	clock.Add(20 * time.Second)
	if c := sendSome(20); c["flaky"] != 10 || c["steady"] != 10 {
		t.Fatalf("carriers after the relay came back %v", c)
	}
	st, _ := rs.Status(context.Background())
	if st[0].Paused {
		t.Fatalf("still paused: %+v", st[0])
	}
	// Its next failure starts again at 5 s.
	flaky.Refuse(smtptest.AtMail, "*", 421, "", "later")
	sendSome(2)
	if d := pausedFor(); d != 5*time.Second {
		t.Fatalf("pause after a recovery %v", d)
	}
	if flaky.Count()+steady.Count() != total {
		t.Fatalf("sinks got %d + %d of %d", flaky.Count(), steady.Count(), total)
	}
}

// A relay that closed and listens again on its address is used again.
func TestRelaysClosedRelayComesBack(t *testing.T) {
	t.Parallel()
	gone, steady := smtptest.Start(t), smtptest.Start(t)
	addr := gone.Addr
	gone.Close()
	clock := newTestClock()
	rs := relaysOver(t, "smtp://"+addr+"?tls=none&name=gone "+steady.URL()+"&name=steady", clock, nil)
	errs, carriers := sendAll(t, rs, 6, 2, news)
	if len(errs) > 0 || carriers["steady"] != 6 {
		t.Fatalf("errors %v, carriers %v", errs, carriers)
	}
	back, err := smtptest.Listen(addr)
	if err != nil {
		t.Skipf("the port was taken meanwhile: %v", err)
	}
	t.Cleanup(func() { back.Close() })
	clock.Add(5 * time.Second)
	ctx, carrier := WithCarrier(context.Background())
	if err := rs.Send(ctx, "b@herald.test", []string{"probe@example.test"}, fromMsg("news@herald.test", 0)); err != nil || carrier() != "gone" {
		t.Fatalf("probe: %v, carried by %q", err, carrier())
	}
	if back.Count() != 1 {
		t.Fatalf("the relay that came back got %d", back.Count())
	}
}

// When every relay is down, Send answers a temporary failure (the
// ledger's retry), and a relay's failures are not the message's.
func TestRelaysAllDown(t *testing.T) {
	t.Parallel()
	a, b := smtptest.Start(t), smtptest.Start(t)
	a.Refuse(smtptest.AtMail, "*", 421, "", "a is busy")
	b.Close()
	rs := relaysOver(t, a.URL()+"&name=a "+b.URL()+"&name=b", newTestClock(), nil)
	err := rs.Send(context.Background(), "b@herald.test", []string{"x@example.test"}, fromMsg("news@herald.test", 0))
	se := asSendError(t, err)
	if !se.Temporary {
		t.Fatalf("%v is not temporary", err)
	}
	// Both paused now: the next message does not even try.
	err = rs.Send(context.Background(), "b@herald.test", []string{"y@example.test"}, fromMsg("news@herald.test", 1))
	se = asSendError(t, err)
	if !se.Temporary || se.Stage != StageConnect || !strings.Contains(se.Message, "a paused") || !strings.Contains(se.Message, "b paused") {
		t.Fatalf("second send: %v", err)
	}
	if v := ClassifyError(err, false); v != VerdictRetry {
		t.Fatalf("verdict %v, want a retry", v)
	}
}

// A refusal of the recipient is the message's answer: no failover, no
// pause.
func TestRelaysRecipientRefusalIsNotARelayFault(t *testing.T) {
	t.Parallel()
	a, b := smtptest.Start(t), smtptest.Start(t)
	a.Always("r0@example.test", 550)
	b.Always("r0@example.test", 550)
	rs := relaysOver(t, a.URL()+"&name=a "+b.URL()+"&name=b", newTestClock(), nil)
	err := rs.Send(context.Background(), "b@herald.test", []string{"r0@example.test"}, fromMsg("news@herald.test", 0))
	if se := asSendError(t, err); se.Temporary || se.Code != 550 {
		t.Fatalf("err %v", err)
	}
	st, _ := rs.Status(context.Background())
	if st[0].Paused || st[1].Paused {
		t.Fatalf("a recipient's refusal paused a relay: %+v", st)
	}
}

// A relay that takes the whole message and never answers may have taken
// it: the message is not resent on another relay (the in-flight case),
// the relay is paused.
func TestRelaysNoResendAfterTheDot(t *testing.T) {
	t.Parallel()
	good := smtptest.Start(t)
	mute, dots := muteAfterDot(t)
	rs := relaysOver(t, "smtp://"+mute+"?tls=none&name=mute&weight=100 "+good.URL()+"&name=good", newTestClock(), func(c *RelaysConfig) {
		c.Relays[0].SMTP.DataTimeout = 300 * time.Millisecond
	})
	err := rs.Send(context.Background(), "b@herald.test", []string{"x@example.test"}, fromMsg("news@herald.test", 0))
	se := asSendError(t, err)
	if !se.Temporary || !se.InFlight || se.Stage != StageData {
		t.Fatalf("err %+v", se)
	}
	if dots.Load() != 1 || good.Count() != 0 {
		t.Fatalf("the mute relay got %d messages, the good one %d", dots.Load(), good.Count())
	}
	st, _ := rs.Status(context.Background())
	if !st[0].Paused {
		t.Fatal("the mute relay is not paused")
	}
}

// muteAfterDot is a relay that takes a message and never answers its dot.
func muteAfterDot(t *testing.T) (string, *atomic.Int64) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	var dots atomic.Int64
	var conns sync.WaitGroup
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			conns.Add(1)
			go func() {
				defer conns.Done()
				defer c.Close()
				r := bufio.NewReader(c)
				fmt.Fprint(c, "220 mute.test\r\n")
				data := false
				for {
					line, err := r.ReadString('\n')
					if err != nil {
						return
					}
					cmd := strings.ToUpper(strings.TrimSpace(line))
					switch {
					case data && cmd == ".":
						dots.Add(1)
						r.ReadString('\n') // never answered; waits for the client to hang up
						return
					case data:
					case strings.HasPrefix(cmd, "EHLO"):
						fmt.Fprint(c, "250 mute.test\r\n")
					case cmd == "DATA":
						data = true
						fmt.Fprint(c, "354 go on\r\n")
					default:
						fmt.Fprint(c, "250 ok\r\n")
					}
				}
			}()
		}
	}()
	t.Cleanup(func() { ln.Close(); conns.Wait() })
	return ln.Addr().String(), &dots
}

// A relay over its rate passes its mail to the others; when all are over,
// Send answers a temporary failure. The counts are the messages handed
// over: the batch's unused tokens go back.
func TestRelaysRateLimits(t *testing.T) {
	t.Parallel()
	a, b := smtptest.Start(t), smtptest.Start(t)
	clock := newTestClock()
	rs := relaysOver(t, a.URL()+"&name=a&rate=3/s,5/d "+b.URL()+"&name=b&rate=4/m", clock, func(c *RelaysConfig) {
		c.MaxWait = time.Nanosecond
	})
	send := func(i int) error {
		return rs.Send(context.Background(), "b@herald.test", []string{fmt.Sprintf("r%d@example.test", i)}, fromMsg("news@herald.test", i))
	}
	var failed []error
	for i := range 10 {
		if err := send(i); err != nil {
			failed = append(failed, err)
		}
	}
	// This second: a takes 3, b 4; three are refused.
	if a.Count() != 3 || b.Count() != 4 || len(failed) != 3 {
		t.Fatalf("a %d, b %d, failed %v", a.Count(), b.Count(), failed)
	}
	if se := asSendError(t, failed[0]); !se.Temporary || !strings.Contains(se.Message, "over its rate") {
		t.Fatalf("err %v", failed[0])
	}
	// The next second: a's day leaves 2; b's minute is full.
	clock.Add(time.Second)
	for i := 10; i < 15; i++ {
		send(i)
	}
	if a.Count() != 5 || b.Count() != 4 {
		t.Fatalf("a %d, b %d", a.Count(), b.Count())
	}
	st, err := rs.Status(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if st[0].Today != 5 || st[0].DayQuota != 5 || st[1].Today != 4 || st[1].LastHour != 4 {
		t.Fatalf("status %+v", st)
	}
	// A minute on, b has room again; a is done for the day.
	clock.Add(time.Minute)
	for i := 15; i < 20; i++ {
		send(i)
	}
	if a.Count() != 5 || b.Count() != 8 {
		t.Fatalf("a %d, b %d", a.Count(), b.Count())
	}
}

// Tokens of a relay shared by two Relays over one store: the limit holds
// for both together, and the unused ones go back on Close.
func TestRelaysShareOneStore(t *testing.T) {
	t.Parallel()
	s := smtptest.Start(t)
	clock := newTestClock()
	store := NewMemoryRates()
	url := s.URL() + "&name=shared&rate=7/d"
	tune := func(c *RelaysConfig) { c.Rates, c.MaxWait = store, time.Nanosecond }
	one, two := relaysOver(t, url, clock, tune), relaysOver(t, url, clock, tune)
	ok := 0
	for i := range 20 {
		rs := one
		if i%2 == 1 {
			rs = two
		}
		if rs.Send(context.Background(), "b@herald.test", []string{fmt.Sprintf("r%d@example.test", i)}, fromMsg("news@herald.test", i)) == nil {
			ok++
		}
	}
	if ok != 7 || s.Count() != 7 {
		t.Fatalf("%d sent, the relay got %d; the limit is 7 a day", ok, s.Count())
	}
	one.Close()
	two.Close()
	if n, _ := store.Count(context.Background(), "shared", 24*time.Hour, WindowStart(clock.Now(), 24*time.Hour), clock.Now().Add(time.Hour)); n != 7 {
		t.Fatalf("the store counts %d", n)
	}
}

func TestHeaderFromDomain(t *testing.T) {
	t.Parallel()
	for msg, want := range map[string]string{
		"From: a@Example.COM\r\n\r\nFrom: b@other.test\r\n":           "example.com",
		"Subject: x\r\nfrom: \"A, B\" <a@b.test>\r\nTo: c@d.test\r\n": "b.test",
		"From: =?utf-8?q?J=C3=B6rg?=\r\n\t<j@umlaut.test>\r\n\r\n":    "umlaut.test",
		"Subject: none\r\n\r\nFrom: a@body.test\r\n":                  "",
		"From: not an address\r\n\r\n":                                "",
	} {
		if got := headerFromDomain([]byte(msg)); got != want {
			t.Errorf("headerFromDomain(%q) = %q, want %q", msg, got, want)
		}
	}
}

// With ProbeEvery, a paused relay is probed on its own when its pause
// ends (pauses doubling while it fails) and comes back without a message
// having to try it.
func TestRelaysProbeInBackground(t *testing.T) {
	t.Parallel()
	flaky, steady := smtptest.Start(t), smtptest.Start(t)
	flaky.Refuse(smtptest.AtMail, "*", 421, "", "later")
	rs := relaysOver(t, flaky.URL()+"&name=flaky&weight=5 "+steady.URL()+"&name=steady", &testClock{}, func(c *RelaysConfig) {
		c.Now, c.PauseMin, c.ProbeEvery = time.Now, 20*time.Millisecond, 5*time.Millisecond
	})
	ctx, carrier := WithCarrier(context.Background())
	if err := rs.Send(ctx, "b@herald.test", []string{"first@example.test"}, fromMsg("news@herald.test", 0)); err != nil || carrier() != "steady" {
		t.Fatalf("first: %v by %q", err, carrier())
	}
	status := func() RelayStatus {
		st, err := rs.Status(context.Background())
		if err != nil {
			t.Fatal(err)
		}
		return st[0]
	}
	// The background probes fail: the pause grows past its first 20 ms.
	eventually.True(t, 10*time.Second, "a longer pause", func() bool {
		s := status()
		return s.Paused && s.PausedUntil.Sub(s.LastErrorAt) >= 80*time.Millisecond
	})
	flaky.Lift(smtptest.AtMail, "*")
	eventually.True(t, 10*time.Second, "flaky back in use", func() bool { return !status().Paused })
	if flaky.Count() != 0 {
		t.Fatalf("the probes sent %d messages", flaky.Count())
	}
	_, carriers := sendAll(t, rs, 12, 1, news)
	if carriers["flaky"] != 10 || carriers["steady"] != 2 {
		t.Fatalf("carriers after the probe %v", carriers)
	}
}
