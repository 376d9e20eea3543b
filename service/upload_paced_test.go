package service_test

import (
	"bytes"
	"io"
	"testing"
	"time"

	"herald/service"
)

// An upload's read deadline moves with the bytes read: UploadGrace plus
// the bytes at UploadMinRate, forward only, at most once a second.
func TestPacedReaderMovesTheDeadline(t *testing.T) {
	t.Parallel()
	var set []time.Time
	start := time.Now()
	body := bytes.Repeat([]byte("x"), 10*service.UploadMinRate) // ten seconds' worth at the pace
	r := service.PacedReader(bytes.NewReader(body), func(d time.Time) error { set = append(set, d); return nil })
	buf := make([]byte, service.UploadMinRate/4)
	n, err := io.CopyBuffer(io.Discard, struct{ io.Reader }{r}, buf)
	if err != nil || n != int64(len(body)) {
		t.Fatalf("read %d, %v", n, err)
	}
	if len(set) < 9 || len(set) > 11 {
		t.Fatalf("%d deadlines set, want one per second of pace (about 10)", len(set))
	}
	last := set[len(set)-1]
	want := start.Add(service.UploadGrace + 10*time.Second)
	if d := last.Sub(want); d < -time.Second || d > time.Second {
		t.Fatalf("last deadline %v after start, want about %v", last.Sub(start), want.Sub(start))
	}
	for i := 1; i < len(set); i++ {
		if !set[i].After(set[i-1]) {
			t.Fatalf("deadline %d moved back: %v then %v", i, set[i-1], set[i])
		}
	}
	// Nothing read, nothing moved.
	set = nil
	r = service.PacedReader(bytes.NewReader(nil), func(d time.Time) error { set = append(set, d); return nil })
	if _, err := r.Read(buf); err != io.EOF || len(set) != 0 {
		t.Fatalf("empty body: %v, %d deadlines", err, len(set))
	}
}
