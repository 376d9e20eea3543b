package eventually

import (
	"errors"
	"fmt"
	"testing"
	"time"
)

func TestWaitReturnsOnceItHolds(t *testing.T) {
	t.Parallel()
	n := 0
	err := Wait(5*time.Second, func() error {
		if n++; n < 4 {
			return fmt.Errorf("check %d", n)
		}
		return nil
	})
	if err != nil || n != 4 {
		t.Fatalf("Wait: %v after %d checks, want nil after 4", err, n)
	}
}

func TestWaitGivesTheLastErrorAfterTheDeadline(t *testing.T) {
	t.Parallel()
	start, n := time.Now(), 0
	err := Wait(100*time.Millisecond, func() error { n++; return fmt.Errorf("check %d", n) })
	if err == nil || err.Error() != fmt.Sprintf("check %d", n) || n < 2 {
		t.Fatalf("Wait: %v after %d checks", err, n)
	}
	if d := time.Since(start); d < 100*time.Millisecond {
		t.Fatalf("gave up after %v, before the deadline", d)
	}
}

func TestTrueAndNoErrorPass(t *testing.T) {
	t.Parallel()
	at := time.Now().Add(50 * time.Millisecond)
	True(t, 5*time.Second, "the time comes", func() bool { return time.Now().After(at) })
	NoError(t, 5*time.Second, func() error {
		if time.Now().Before(at) {
			return errors.New("too early")
		}
		return nil
	})
}

func TestPauseGrowsToTheCap(t *testing.T) {
	t.Parallel()
	p := FirstInterval
	for range 20 {
		p = next(p)
	}
	if p != MaxInterval || next(FirstInterval) <= FirstInterval {
		t.Fatalf("pauses: %v after 20, %v after the first", p, next(FirstInterval))
	}
}
