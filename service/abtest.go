package service

import (
	"context"
	"strconv"
	"strings"
	"time"

	"gorm.io/gorm"

	"herald/models"
)

// A/B subject tests. A single send may try two to four
// subjects (each with its own preheader, or the send's) on a share of its
// audience. The split is made in the pass that writes the ledger rows:
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

// heldBack is the next_at (Unix ms) of the rows an A/B test holds back
// until its winner is chosen: never due.
const heldBack = int64(1) << 62

// The bounds of a test.
const (
	abMinVariants = 2
	abMaxVariants = 4
	abMinShare    = 5  // per cent of the audience
	abMaxShare    = 50 // the rest is at least half
	abMaxWait     = 7 * 24 * 60
)

// The winner metrics.
const (
	ABOpens  = "opens"
	ABClicks = "clicks"
)

// ABTestInput is the console's "A/B test the subject" option of a single
// send (not in the API).
type ABTestInput struct {
	On         bool
	Subjects   []string // 2 to 4 non-empty; empty items are dropped with their preheaders
	Preheaders []string // by subject; "" takes the send's preheader
	Share      string   // per cent of the audience in the test: 5 to 50
	Metric     string   // "opens" or "clicks"
	Wait       string   // minutes before the winner is chosen: 1 to 10080
}

// Messages of the A/B option.
const (
	msgABSubjects = "An A/B test needs two to four subjects."
	msgABShare    = "The test share must be a whole number between 5 and 50."
	msgABMetric   = "The winner must be chosen by unique opens or unique clicks."
	msgABWait     = "The wait must be between 1 minute and 7 days."
	msgABLocal    = "An A/B test cannot go out at a local time."
)

// checkAB validates the A/B option into ss (problems in p).
func checkAB(in ABTestInput, ss *models.SingleSend, p Problems) {
	ss.ABSubjects, ss.ABPreheaders, ss.ABShare, ss.ABMetric, ss.ABWait = models.StringArray{}, models.StringArray{}, 0, "", 0
	if !in.On {
		return
	}
	var subjects, preheaders models.StringArray
	for i, s := range in.Subjects {
		s = strings.TrimSpace(s)
		if s == "" {
			continue
		}
		pre := ""
		if i < len(in.Preheaders) {
			pre = strings.TrimSpace(in.Preheaders[i])
		}
		subjects, preheaders = append(subjects, s), append(preheaders, pre)
	}
	if len(subjects) < abMinVariants || len(subjects) > abMaxVariants {
		p.Add("ab_subjects", msgABSubjects)
	}
	for i := range subjects {
		p.maxLen("ab_subjects", subjects[i], maxSendName)
		p.singleLine("ab_subjects", subjects[i])
		p.maxLen("ab_preheaders", preheaders[i], maxSendName)
	}
	share, err := strconv.Atoi(strings.TrimSpace(in.Share))
	if err != nil || share < abMinShare || share > abMaxShare {
		p.Add("ab_share", msgABShare)
	}
	metric := strings.TrimSpace(in.Metric)
	if metric != ABOpens && metric != ABClicks {
		p.Add("ab_metric", msgABMetric)
	}
	wait, err := strconv.Atoi(strings.TrimSpace(in.Wait))
	if err != nil || wait < 1 || wait > abMaxWait {
		p.Add("ab_wait", msgABWait)
	}
	if ss.LocalTime != "" {
		p.Add("ab_test", msgABLocal)
	}
	ss.ABSubjects, ss.ABPreheaders, ss.ABShare, ss.ABMetric, ss.ABWait = subjects, preheaders, share, metric, wait
}

// abSplit is how one send's audience is split into its test and the rest.
type abSplit struct {
	share, n int
	salt     int64
}

// abPrime is the modulus of the split's hash (the largest prime below 2^32).
const abPrime = 4294967291

// abPlanner is the planner (audience.go) of A/B tests: a test's audience
// is split into its test rows, due at once with their variant, and the
// rest, held back.
type abPlanner struct {
	db  *DB
	now func() time.Time // the winner is chosen the wait after the resolution starts
}

// forSend prepares a test's split, first fixing when its winner is chosen
// (once: a process taking over the resolution finds it set). A send with
// no test has no plan.
func (p *abPlanner) forSend(ctx context.Context, ss *models.SingleSend) (sendPlan, error) {
	if ss.ABShare <= 0 || len(ss.ABSubjects) < 2 {
		return nil, nil
	}
	if ss.ABDecideAt == 0 {
		at := p.now().Add(time.Duration(ss.ABWait) * time.Minute).UnixMilli()
		if err := p.db.W.WithContext(ctx).Model(&models.SingleSend{}).Where("id = ? AND ab_decide_at = 0", ss.ID).
			Update("ab_decide_at", at).Error; err != nil {
			return nil, err
		}
	}
	return &abSplit{share: ss.ABShare, n: len(ss.ABSubjects), salt: ss.ID % abPrime * 7919 % abPrime}, nil
}

// chunk gives the chunk's rows their variant and release time from their
// source keys.
func (s *abSplit) chunk(_ context.Context, q chunkQuery, _, _ int64) (rowPlan, error) {
	variant, release := s.exprs(q.src.key)
	return rowPlan{release: release, variant: variant}, nil
}

// bucket is the SQL of a source key's bucket, 0 to 9999: a multiplicative
// hash modulo a prime, within the range of a 64-bit integer for any key.
func (s *abSplit) bucket(key string) string {
	p := strconv.Itoa(abPrime)
	return "(((" + key + " % " + p + ") * 40503 + " + strconv.FormatInt(s.salt, 10) + ") % " + p + " % 10000)"
}

// exprs are the SQL of a row's variant and release time from its source
// key: a test row has its variant and is due at once, another is held.
func (s *abSplit) exprs(key string) (variant, release string) {
	b := s.bucket(key)
	in := b + " < " + strconv.Itoa(s.share*100)
	variant = "CASE WHEN " + in + " THEN " + b + " % " + strconv.Itoa(s.n) + " + 1 ELSE 0 END"
	release = "CASE WHEN " + in + " THEN 0 ELSE " + strconv.FormatInt(heldBack, 10) + " END"
	return variant, release
}

// releaseChunk is how many held rows one statement releases: short
// writes let other writers in between on SQLite.
const releaseChunk = 5000

// decideTest chooses a test's winner where none is chosen yet (a
// conditional UPDATE: chosen once across processes) and releases the held
// rows with the winner's variant, in chunks; it returns the winner when
// this call chose it, 0 when another process (or an earlier call) did.
// A release cut short (a crash) is taken up by the next call: the rows
// still held are those left, and the winner is read from the send.
func decideTest(ctx context.Context, db *DB, id, now int64) (int, error) {
	var ss models.SingleSend
	if err := db.R.WithContext(ctx).Select("id", "user_id", "ab_subjects", "ab_metric", "ab_winner").Where("id = ?", id).Take(&ss).Error; err != nil {
		return 0, notFound(err)
	}
	won := 0
	if ss.ABWinner == 0 {
		counts, err := variantCounts(ctx, db.R, ss.UserID, id)
		if err != nil {
			return 0, err
		}
		winner := bestVariant(counts, len(ss.ABSubjects), ss.ABMetric)
		res := db.W.WithContext(ctx).Exec("UPDATE single_sends SET ab_winner = ?, updated_at = ? WHERE id = ? AND ab_winner = 0", winner, db.now(), id)
		if res.Error != nil {
			return 0, res.Error
		}
		if res.RowsAffected == 1 {
			won = winner
		}
		if err := db.W.WithContext(ctx).Model(&models.SingleSend{}).Where("id = ?", id).Pluck("ab_winner", &ss.ABWinner).Error; err != nil {
			return 0, err
		}
	}
	// The state and next_at are checked again on the rows themselves: a
	// row another process released (and the engine claimed) meanwhile is
	// left alone.
	release := ledgerSQL(`UPDATE send_messages SET variant = ?, next_at = ?, release_at = ?
		WHERE id IN (SELECT id FROM send_messages WHERE send_id = ? AND state = {queued} AND next_at = ? LIMIT ?)
		AND state = {queued} AND next_at = ?`)
	for {
		res := db.W.WithContext(ctx).Exec(release, ss.ABWinner, now, now, id, heldBack, releaseChunk, heldBack)
		if res.Error != nil {
			return 0, res.Error
		}
		if res.RowsAffected < releaseChunk {
			break
		}
	}
	return won, db.W.WithContext(ctx).Exec("UPDATE single_sends SET ab_released = 1 WHERE id = ?", id).Error
}

// bestVariant is the variant of n whose test messages were opened (or
// clicked) by the most people: human unique opens or clicks
// (delivery.MachineRules; docs/MACHINE_ACTIVITY.md), so that a privacy
// proxy fetching every pixel or a scanner following every link does not
// choose the subject. A tie goes to the raw unique counts, then to the
// first variant.
func bestVariant(counts map[abKey]VariantFigures, n int, metric string) int {
	winner, best, bestRaw := 1, int64(-1), int64(-1)
	for v := 1; v <= n; v++ {
		f := counts[abKey{v, false}]
		human, raw := f.HumanOpens, f.UniqueOpens
		if metric == ABClicks {
			human, raw = f.HumanClicks, f.UniqueClicks
		}
		if human > best || human == best && raw > bestRaw {
			winner, best, bestRaw = v, human, raw
		}
	}
	return winner
}

// abKey is a group of a test's rows: a variant, in its test or in the rest.
type abKey struct {
	variant int
	rest    bool
}

// variantCounts counts a test's rows by variant, test rows and the rest
// apart (a rest row was released at the decision: release_at > 0).
func variantCounts(ctx context.Context, r *gorm.DB, accountID, sendID int64) (map[abKey]VariantFigures, error) {
	var rows []struct {
		Variant                                                                   int
		Rest                                                                      int
		Recipients, Delivered, UniqueOpens, UniqueClicks, HumanOpens, HumanClicks int64
	}
	if err := r.WithContext(ctx).Raw(ledgerSQL(`SELECT variant, CASE WHEN release_at > 0 THEN 1 ELSE 0 END AS rest, COUNT(*) AS recipients,
		SUM(CASE WHEN state = {delivered} THEN 1 ELSE 0 END) AS delivered, COUNT(opened_at) AS unique_opens, COUNT(clicked_at) AS unique_clicks,
		SUM(CASE WHEN human_opened_at > 0 THEN 1 ELSE 0 END) AS human_opens, SUM(CASE WHEN human_clicked_at > 0 THEN 1 ELSE 0 END) AS human_clicks
		FROM send_messages WHERE send_id = ? AND user_id = ? AND variant > 0 GROUP BY variant, CASE WHEN release_at > 0 THEN 1 ELSE 0 END`),
		sendID, accountID).Scan(&rows).Error; err != nil {
		return nil, err
	}
	out := make(map[abKey]VariantFigures, len(rows))
	for _, x := range rows {
		out[abKey{x.Variant, x.Rest == 1}] = VariantFigures{x.Recipients, x.Delivered, x.UniqueOpens, x.UniqueClicks, x.HumanOpens, x.HumanClicks}
	}
	return out, nil
}

// VariantFigures are the figures of a group of a test's messages: the
// spec's unique counts (raw) and those of people (human).
type VariantFigures struct {
	Recipients, Delivered, UniqueOpens, UniqueClicks int64
	HumanOpens, HumanClicks                          int64
}

// Variant is one subject of an A/B test with the figures of its test
// messages.
type Variant struct {
	N         int // 1-based
	Subject   string
	Preheader string // "" : the send's
	VariantFigures
	Winner bool
}

// ABTest is a send's A/B test as the statistics page shows it.
type ABTest struct {
	Share    int
	Metric   string
	Wait     time.Duration
	DecideAt time.Time // zero until the audience is resolved
	Winner   int       // 0 until chosen
	Variants []Variant
	Rest     VariantFigures // the rest of the audience (the winner's, once released)
	Held     int64          // rest messages still held back
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
	counts, err := variantCounts(ctx, s.db.R, accountID, ss.ID)
	if err != nil {
		return nil, err
	}
	for i, subj := range ss.ABSubjects {
		v := Variant{N: i + 1, Subject: subj, VariantFigures: counts[abKey{i + 1, false}], Winner: ss.ABWinner == i+1}
		if i < len(ss.ABPreheaders) {
			v.Preheader = ss.ABPreheaders[i]
		}
		t.Variants = append(t.Variants, v)
	}
	if ss.ABWinner > 0 {
		t.Rest = counts[abKey{ss.ABWinner, true}]
	} else if ss.Resolved == 1 {
		if err := s.db.R.WithContext(ctx).Model(&models.SendMessage{}).
			Where("send_id = ? AND user_id = ? AND state = ? AND next_at = ?", ss.ID, accountID, models.MessageQueued, heldBack).
			Count(&t.Held).Error; err != nil {
			return nil, err
		}
		t.Rest.Recipients = t.Held
	}
	return t, nil
}
