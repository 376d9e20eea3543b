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
	Share   string // per cent
	Metric  string // opens or clicks
	Wait    string // minutes
}

// The choices of the A/B option.
var (
	abShares  = []views.Option{{Value: "10", Label: "10 %"}, {Value: "20", Label: "20 %"}, {Value: "30", Label: "30 %"}, {Value: "40", Label: "40 %"}, {Value: "50", Label: "50 %"}}
	abMetrics = []views.Option{{Value: "opens", Label: "Unique opens"}, {Value: "clicks", Label: "Unique clicks"}}
	abWaits   = []views.Option{{Value: "30", Label: "30 minutes"}, {Value: "60", Label: "1 hour"}, {Value: "120", Label: "2 hours"},
		{Value: "240", Label: "4 hours"}, {Value: "480", Label: "8 hours"}, {Value: "720", Label: "12 hours"}, {Value: "1440", Label: "1 day"}, {Value: "2880", Label: "2 days"}}
)

// ABTest is a send's A/B test on its page.
type ABTest struct {
	Share    int
	Metric   string // opens or clicks
	Wait     time.Duration
	DecideAt time.Time // zero until the send starts
	Winner   int       // 0 until chosen
	Variants []ABVariant
	Rest     ABFigures // the rest of the audience
	Held     int64     // rest messages waiting for the winner
	Waiting  bool      // the test's wait is not over: the winner may be chosen now
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
