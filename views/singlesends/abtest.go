package singlesends

import (
	"fmt"
	"strconv"
	"time"

	"herald/views"
)

// ABForm is the compose page's "A/B test the subject" option.
type ABForm struct {
	On         bool
	Subjects   [4]string
	Preheaders [4]string
	// Designs are the variants' design choices: "" the send's design,
	// "design-<id>", "library-<id>", or "kept" (the design the variant
	// was saved with; Kept says which variants have one).
	Designs [4]string
	Kept    [4]bool
	// Kind is "" (subjects or designs) or "time" (send time: TimeAfter
	// minutes between the halves).
	Kind      string
	TimeAfter string
	Share     string // per cent
	Metric    string // opens or clicks
	Wait      string // minutes
}

// The choices of the A/B option.
var (
	abKinds = []views.Option{{Value: "", Label: views.T("ab.kind_content")}, {Value: "time", Label: views.T("ab.kind_time")}}
	abAfter = func() []views.Option {
		var out []views.Option
		for _, h := range []int{1, 2, 3, 4, 6, 8, 12, 24, 48, 72} {
			out = append(out, views.Option{Value: strconv.Itoa(h * 60), Label: views.N("ab.after_hours", h)})
		}
		return out
	}()
	abShares  = []views.Option{{Value: "10", Label: "10 %"}, {Value: "20", Label: "20 %"}, {Value: "30", Label: "30 %"}, {Value: "40", Label: "40 %"}, {Value: "50", Label: "50 %"}}
	abMetrics = []views.Option{{Value: "opens", Label: "Unique opens"}, {Value: "clicks", Label: "Unique clicks"}}
	abWaits   = []views.Option{{Value: "30", Label: "30 minutes"}, {Value: "60", Label: "1 hour"}, {Value: "120", Label: "2 hours"},
		{Value: "240", Label: "4 hours"}, {Value: "480", Label: "8 hours"}, {Value: "720", Label: "12 hours"}, {Value: "1440", Label: "1 day"}, {Value: "2880", Label: "2 days"}}
)

// ABTest is a send's A/B test on its page.
type ABTest struct {
	// TimeAfter is a send-time test's gap between its halves (0: none);
	// First and Second when its halves go (zero until the send starts).
	TimeAfter     time.Duration
	First, Second time.Time
	Share         int
	Metric        string // opens or clicks
	Wait          time.Duration
	DecideAt      time.Time // zero until the send starts
	Winner        int       // 0 until chosen
	Variants      []ABVariant
	Rest          ABFigures // the rest of the audience
	Held          int64     // rest messages waiting for the winner
	Waiting       bool      // the test's wait is not over: the winner may be chosen now
}

// ABVariant is one subject of a test with its test messages' figures.
type ABVariant struct {
	N                  int
	Subject, Preheader string
	OwnDesign          bool // the variant has a design of its own (a test of content)
	ABFigures
	Winner bool
}

// ABFigures are the figures of a group of a test's messages: the unique
// counts of all opens and clicks, and of people's.
type ABFigures struct {
	Recipients, Delivered, UniqueOpens, UniqueClicks int64
	HumanOpens, HumanClicks                          int64
}

// variantLetter names a variant: A, B, C, D.
func variantLetter(n int) string {
	if n < 1 || n > 26 {
		return strconv.Itoa(n)
	}
	return string(rune('A' + n - 1))
}

// metricWords names a test's metric.
func metricWords(m string) string {
	if m == "clicks" {
		return "unique clicks by people"
	}
	return "unique opens by people"
}

// waitWords says a wait in hours or minutes.
func waitWords(d time.Duration) string {
	switch {
	case d >= time.Hour && d%time.Hour == 0:
		h := int64(d / time.Hour)
		return views.N("duration.hours", h)
	default:
		m := int64(d / time.Minute)
		return views.N("duration.minutes", m)
	}
}

// abChoice is the selected value of a choice, or its default.
func abChoice(v, def string) string {
	if v == "" {
		return def
	}
	return v
}

// subjectLabel labels the subject of variant i (from 0): A and B are
// required, C and D optional.
func subjectLabel(i int) string {
	if i >= 2 {
		return fmt.Sprintf("Subject %s (optional)", variantLetter(i+1))
	}
	return fmt.Sprintf("Subject %s", variantLetter(i+1))
}

// firstOnly puts a list's errors beside its first control only.
func firstOnly(i int, errs []string) []string {
	if i == 0 {
		return errs
	}
	return nil
}

// ABKept is the design choice of a variant saved with a design of its own
// that matches none of the account's designs.
const ABKept = "kept"

// halfWhen says when a send-time test's half n goes, in loc.
func halfWhen(t *ABTest, n int, loc *time.Location) string {
	at := t.First
	if n == 2 {
		at = t.Second
	}
	if at.IsZero() && n == 1 {
		return views.T("ab.half_first", "Half", variantLetter(n))
	}
	if at.IsZero() {
		return views.T("ab.half_pending", "Half", variantLetter(n), "After", waitWords(time.Duration(n-1)*t.TimeAfter))
	}
	return views.T("ab.half_at", "Half", variantLetter(n), "Time", When(at, loc))
}
