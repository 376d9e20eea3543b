package delivery

import (
	"crypto/hmac"
	"crypto/sha256"
	"encoding/hex"
	"testing"
	"time"
)

func TestSignEvents(t *testing.T) {
	t.Parallel()
	body := []byte(`[{"event":"open","event_id":"1"}]`)
	at := time.Unix(1795660746, 0)
	m := hmac.New(sha256.New, []byte("s3cret"))
	m.Write([]byte("1795660746." + string(body)))
	want := "t=1795660746,v1=" + hex.EncodeToString(m.Sum(nil))
	if got := SignEvents("s3cret", at, body); got != want {
		t.Fatalf("got %s, want %s", got, want)
	}
	if SignEvents("other", at, body) == want {
		t.Fatal("the secret does not change the signature")
	}
}

func TestEventBackoffDoublesUpToTheCap(t *testing.T) {
	t.Parallel()
	d := &Dispatcher{Backoff: 5 * time.Second, MaxBackoff: time.Minute}
	var got []time.Duration
	for k := 1; k <= 6; k++ {
		got = append(got, d.backoff(k))
	}
	want := []time.Duration{5 * time.Second, 10 * time.Second, 20 * time.Second, 40 * time.Second, time.Minute, time.Minute}
	for i := range want {
		if got[i] != want[i] {
			t.Fatalf("backoff after %d failures: %v; want %v", i+1, got, want)
		}
	}
}
