package campaign

import (
	"context"
	"fmt"
	"strconv"
	"strings"
	"time"

	"herald/models"
	"herald/service/core"
	"herald/service/internal/record"
)

// A/B tests. A single send may try two to four variants on a share of
// its audience: subjects (each with its own preheader, or the send's),
// and, for a test of content, designs (each variant's own, or the
// send's; a variant of content keeps the send's subject unless given
// one). The split is made in the pass that writes the ledger rows:
// each row's source key is hashed (with the send's id as salt) into one of
// 10,000 buckets; a row whose bucket falls in the test share is queued at
// once with its variant (bucket mod the number of variants, plus one), the
// others are written held back (next_at and release_at heldBack, variant
// 0), as the local-time waves hold theirs. The claim takes only rows whose
// next_at has come and the send completes only when none is queued, so
// the rest waits across restarts and processes with no state of their
// own.
//
// After the wait (ab_decide_at, fixed once when the audience is first
// resolved) the scheduler counts the test rows' unique opens or clicks by
// variant (ties: the first variant) and sets the winner where none is set
// yet (a conditional UPDATE: on PostgreSQL a second process waits for the
// first's row lock and then finds the winner set, so it is chosen once),
// then releases the held rows with the winner's variant in chunks of
// releaseChunk (ab_released once none is left; a release cut short by a
// crash goes on at the next tick, in any process). Compiling a send compiles every variant's subject and body:
// a row is built from its own variant (compiledSend.parts).

// The bounds of a test.
const (
	abMinVariants = 2
	abMaxVariants = 4
	abMinShare    = 5  // per cent of the audience
	abMaxShare    = 50 // the rest is at least half
	abMaxWait     = 7 * 24 * 60
)

// ABTestInput is the console's "A/B test the subject" option of a single
// send (not in the API).
type ABTestInput struct {
	On         bool
	Subjects   []string // 2 to 4 variants; a variant with neither subject nor design is dropped with its preheader
	Preheaders []string // by subject; "" takes the send's preheader
	// Designs are the variants' own designs (HTML, by subject; "" takes
	// the send's design). A variant with a design and no subject takes
	// the send's subject: a test of content.
	Designs []string
	// Kind "time" makes it a send-time test: Subjects, Preheaders and
	// Designs are not read; half of the audience gets the send when it
	// starts, the other half TimeAfter minutes later (60 to 4320); Wait
	// after that, the half with more unique opens or clicks by people
	// (Metric) is marked the better. Share is not read (the whole
	// audience is in the test). "" tests subjects or designs.
	Kind      string
	TimeAfter string
	Share     string // per cent of the audience in the test: 5 to 50
	Metric    string // "opens" or "clicks"
	Wait      string // minutes before the winner is chosen: 1 to 10080
}

// Messages of the A/B option.
const (
	msgABSubjects = "An A/B test needs two to four subjects."
	msgABShare    = "The test share must be a whole number between 5 and 50."
	msgABMetric   = "The winner must be chosen by unique opens or unique clicks."
	msgABWait     = "The wait must be between 1 minute and 7 days."
	msgABLocal    = "An A/B test cannot go out at a local time."
	msgABSame     = "Two variants of the A/B test are the same: give each its own subject, preheader or design."
	msgABKind     = "An A/B test compares subjects or designs, or send times."
	msgABAfter    = "The second half must go between 1 hour and 3 days after the first."
)

// ABTime is the Kind of a send-time test.
const ABTime = "time"

// Bounds of a send-time test's second half, in minutes after the first.
const (
	abMinAfter = 60
	abMaxAfter = 3 * 24 * 60
)

// checkAB validates the A/B option into ss (problems in p).
func checkAB(in ABTestInput, ss *models.SingleSend, p core.Problems) {
	ss.ABSubjects, ss.ABPreheaders, ss.ABShare, ss.ABMetric, ss.ABWait = models.StringArray{}, models.StringArray{}, 0, "", 0
	ss.ABDesigns, ss.ABTimeAfter = models.StringArray{}, 0
	if !in.On {
		return
	}
	switch strings.TrimSpace(in.Kind) {
	case "":
	case ABTime:
		checkTimeTest(in, ss, p)
		return
	default:
		p.Add("ab_kind", msgABKind)
		return
	}
	var subjects, preheaders, designs models.StringArray
	content := false // a test of content: some variant has its own design
	for i := range in.Subjects {
		content = content || (i < len(in.Designs) && strings.TrimSpace(in.Designs[i]) != "")
	}
	for i, s := range in.Subjects {
		s = strings.TrimSpace(s)
		design := ""
		if i < len(in.Designs) && strings.TrimSpace(in.Designs[i]) != "" {
			design = in.Designs[i]
		}
		// An empty variant is dropped, but for the first of a test of
		// content: variant A is then the send as it is.
		if s == "" && design == "" && (!content || i > 0) {
			continue
		}
		if s == "" {
			s = ss.Subject // a variant of content keeps the send's subject
		}
		pre := ""
		if i < len(in.Preheaders) {
			pre = strings.TrimSpace(in.Preheaders[i])
		}
		subjects, preheaders, designs = append(subjects, s), append(preheaders, pre), append(designs, design)
	}
	if len(subjects) < abMinVariants || len(subjects) > abMaxVariants {
		p.Add("ab_subjects", msgABSubjects)
	}
	seen := map[[3]string]bool{}
	for i := range subjects {
		p.MaxLen("ab_subjects", subjects[i], maxSendName)
		p.SingleLine("ab_subjects", subjects[i])
		p.MaxLen("ab_preheaders", preheaders[i], maxSendName)
		if len(designs[i]) > maxDesignBytes {
			p.AddReason("ab_designs", core.ReasonMax, "The design may not be greater than 5 MB.")
		}
		p.NoNUL("ab_designs", designs[i])
		if k := [3]string{subjects[i], preheaders[i], designs[i]}; content && seen[k] {
			p.Add("ab_subjects", msgABSame)
		} else {
			seen[k] = true
		}
	}
	if !content {
		designs = models.StringArray{} // a subject test, stored as before
	}
	share, err := strconv.Atoi(strings.TrimSpace(in.Share))
	if err != nil || share < abMinShare || share > abMaxShare {
		p.Add("ab_share", msgABShare)
	}
	metric, wait := checkABMetricWait(in, ss, p)
	ss.ABSubjects, ss.ABPreheaders, ss.ABShare, ss.ABMetric, ss.ABWait = subjects, preheaders, share, metric, wait
	ss.ABDesigns = designs
}

// checkABMetricWait validates what every A/B test has: the metric that
// decides, the wait before it does, and no local time beside it.
func checkABMetricWait(in ABTestInput, ss *models.SingleSend, p core.Problems) (string, int) {
	metric := strings.TrimSpace(in.Metric)
	if metric != record.ABOpens && metric != record.ABClicks {
		p.Add("ab_metric", msgABMetric)
	}
	wait, err := strconv.Atoi(strings.TrimSpace(in.Wait))
	if err != nil || wait < 1 || wait > abMaxWait {
		p.Add("ab_wait", msgABWait)
	}
	if ss.LocalTime != "" {
		p.Add("ab_test", msgABLocal)
	}
	return metric, wait
}

// checkTimeTest validates a send-time test into ss: two halves with the
// send's subject and design, the second TimeAfter minutes after the
// first, the whole audience in the test.
func checkTimeTest(in ABTestInput, ss *models.SingleSend, p core.Problems) {
	after, err := strconv.Atoi(strings.TrimSpace(in.TimeAfter))
	if err != nil || after < abMinAfter || after > abMaxAfter {
		p.Add("ab_time_after", msgABAfter)
	}
	metric, wait := checkABMetricWait(in, ss, p)
	ss.ABSubjects, ss.ABPreheaders = models.StringArray{ss.Subject, ss.Subject}, models.StringArray{"", ""}
	ss.ABShare, ss.ABMetric, ss.ABWait, ss.ABTimeAfter = 100, metric, wait, after
}

// Variant is one subject of an A/B test with the figures of its test
// messages.
type Variant struct {
	N         int // 1-based
	Subject   string
	Preheader string // "" : the send's
	Design    string // its own design (HTML); "": the send's
	record.VariantFigures
	Winner bool
}

// ABTest is a send's A/B test as the statistics page shows it.
type ABTest struct {
	// TimeAfter is a send-time test's gap between its halves (0: a test
	// of subjects or designs); Second is when its second half goes (zero
	// until the send starts).
	TimeAfter time.Duration
	Second    time.Time
	Share     int
	Metric    string
	Wait      time.Duration
	DecideAt  time.Time // zero until the audience is resolved
	Winner    int       // 0 until chosen
	Variants  []Variant
	Rest      record.VariantFigures // the rest of the audience (the winner's, once released)
	Held      int64                 // rest messages still held back
}

// ABTest returns a send's A/B test with its figures, nil when the send has
// none. It reads the send's test rows by the index send_messages_variant:
// a console-only cost.
func (s *SingleSends) ABTest(ctx context.Context, accountID int64, ss *models.SingleSend) (*ABTest, error) {
	if ss.ABShare == 0 || len(ss.ABSubjects) == 0 {
		return nil, nil
	}
	t := &ABTest{Share: ss.ABShare, Metric: ss.ABMetric, Wait: time.Duration(ss.ABWait) * time.Minute, Winner: ss.ABWinner}
	if ss.ABDecideAt > 0 {
		t.DecideAt = time.UnixMilli(ss.ABDecideAt).UTC()
	}
	if ss.ABTimeAfter > 0 {
		t.TimeAfter = time.Duration(ss.ABTimeAfter) * time.Minute
		if !t.DecideAt.IsZero() {
			t.Second = t.DecideAt.Add(-t.Wait)
		}
	}
	counts, err := record.VariantCounts(ctx, s.db.R, accountID, ss.ID)
	if err != nil {
		return nil, fmt.Errorf("single sends: a/b test of send %d: %w", ss.ID, err)
	}
	for i, subj := range ss.ABSubjects {
		v := Variant{N: i + 1, Subject: subj, VariantFigures: counts[record.ABKey{Variant: i + 1}], Winner: ss.ABWinner == i+1}
		if i < len(ss.ABPreheaders) {
			v.Preheader = ss.ABPreheaders[i]
		}
		if i < len(ss.ABDesigns) {
			v.Design = ss.ABDesigns[i]
		}
		t.Variants = append(t.Variants, v)
	}
	if ss.ABWinner > 0 {
		t.Rest = counts[record.ABKey{Variant: ss.ABWinner, Rest: true}]
	} else if ss.Resolved == 1 {
		if err := s.db.R.WithContext(ctx).Model(&models.SendMessage{}).
			Where("send_id = ? AND user_id = ? AND state = ? AND next_at = ?", ss.ID, accountID, models.MessageQueued, record.HeldBack).
			Count(&t.Held).Error; err != nil {
			return nil, fmt.Errorf("single sends: held messages of send %d: %w", ss.ID, err)
		}
		t.Rest.Recipients = t.Held
	}
	return t, nil
}

// msgNoTestWaiting refuses DecideABNow on a send whose A/B test is not
// waiting for its winner.
const msgNoTestWaiting = "This send's A/B test is not waiting for its winner."

// DecideABNow ends the wait of a send's A/B test: the scheduler's next
// round chooses the winner from the figures so far and releases the rest
// of the audience to it. Errors: ErrNotFound; validation (no test
// waiting: none, already decided, or not started).
func (s *SingleSends) DecideABNow(ctx context.Context, accountID int64, utr string) error {
	ss, err := s.Get(ctx, accountID, utr)
	if err != nil {
		return fmt.Errorf("single sends: decide the A/B test now: %w", err)
	}
	now := s.now()
	res := s.db.W.WithContext(ctx).Model(&models.SingleSend{}).
		Where("id = ? AND user_id = ? AND ab_share > 0 AND ab_released = 0 AND ab_winner = 0 AND ab_decide_at > ?", ss.ID, accountID, now.UnixMilli()).
		Updates(map[string]any{"ab_decide_at": now.UnixMilli(), "updated_at": models.NewTimestamp(now)})
	if res.Error != nil {
		return fmt.Errorf("single sends: decide the A/B test of %d now: %w", ss.ID, res.Error)
	}
	if res.RowsAffected == 0 {
		return &core.Error{Code: core.CodeValidation, Message: msgNoTestWaiting}
	}
	s.poke()
	return nil
}
