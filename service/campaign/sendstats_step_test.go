package campaign

import (
	"testing"
	"time"
)

// TestActivityStepFollowsTheSpan: the chart's period comes from how long
// the activity lasted, not from the send's age.
func TestActivityStepFollowsTheSpan(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		span, want time.Duration
	}{
		{0, time.Minute},
		{40 * time.Second, time.Minute},
		{47 * time.Minute, time.Minute},
		{2 * time.Hour, 5 * time.Minute},
		{10 * time.Hour, 15 * time.Minute},
		{3 * 24 * time.Hour, 3 * time.Hour},
		{90 * 24 * time.Hour, 24 * time.Hour},
	} {
		if got := activityStep(tc.span); got != tc.want {
			t.Errorf("span %v: step %v, want %v", tc.span, got, tc.want)
		}
	}
}
