// Package eventually waits, in tests, for what another goroutine or process
// brings about: one polling loop with a short interval and a generous
// deadline, instead of a hand-written loop in each test. It imports
// nothing of herald's, so that any package's tests may use it (dbtest
// imports service, which delivery's own tests cannot).
package eventually

import (
	"testing"
	"time"
)

// The pause between two checks starts at FirstInterval and grows by half
// after each check up to MaxInterval: a condition that holds soon is seen
// at once, and a long wait (a send, an import) does not spend the CPU the
// parallel tests share on checks a hundred times a second.
const (
	FirstInterval = 10 * time.Millisecond
	MaxInterval   = 50 * time.Millisecond
)

// True checks cond at once and then at short intervals until it holds; when it
// still does not hold after within, the test fails with what (Fatal: call
// it from the test's goroutine).
func True(t testing.TB, within time.Duration, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(within)
	for pause := FirstInterval; !cond(); pause = next(pause) {
		if time.Now().After(deadline) {
			t.Fatalf("%s (waited %v)", what, within)
		}
		time.Sleep(pause)
	}
}

// NoError calls f at once and then at short intervals until it returns nil;
// when it still returns an error after within, the test fails with that
// last error, which says what was awaited and what was found instead.
func NoError(t testing.TB, within time.Duration, f func() error) {
	t.Helper()
	if err := Wait(within, f); err != nil {
		t.Fatalf("after %v: %v", within, err)
	}
}

// Wait calls f at once and then at short intervals until it returns nil, and
// returns nil, or f's last error once within has passed. For waits off the
// test's goroutine, or whose caller reports the failure itself.
func Wait(within time.Duration, f func() error) error {
	deadline := time.Now().Add(within)
	for pause := FirstInterval; ; pause = next(pause) {
		err := f()
		if err == nil {
			return nil
		}
		if time.Now().After(deadline) {
			return err
		}
		time.Sleep(pause)
	}
}

func next(pause time.Duration) time.Duration { return min(pause*3/2, MaxInterval) }
