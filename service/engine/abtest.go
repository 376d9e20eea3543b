package engine

// The engine's part of an A/B test: the audience's split into variants (a
// planner) and the decision that releases the held rows.

import (
	"context"
	"fmt"
	"strconv"
	"time"

	"herald/models"
	"herald/service/core"
	"herald/service/internal/record"
)

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
	db  *core.DB
	now func() time.Time // the winner is chosen the wait after the resolution starts
}

// forSend prepares a test's split, first fixing when its winner is chosen
// (once: a process taking over the resolution finds it set). A send with
// no test has no plan.
func (p *abPlanner) forSend(ctx context.Context, ss *models.SingleSend) (sendPlan, error) {
	if ss.ABShare <= 0 || len(ss.ABSubjects) < 2 {
		return nil, nil
	}
	if ss.ABTimeAfter > 0 {
		return p.timeTest(ctx, ss)
	}
	if ss.ABDecideAt == 0 {
		at := p.now().Add(time.Duration(ss.ABWait) * time.Minute).UnixMilli()
		if err := p.db.W.WithContext(ctx).Model(&models.SingleSend{}).Where("id = ? AND ab_decide_at = 0", ss.ID).
			Update("ab_decide_at", at).Error; err != nil {
			return nil, fmt.Errorf("abtest: set decide time of send %d: %w", ss.ID, err)
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
	release = "CASE WHEN " + in + " THEN 0 ELSE " + strconv.FormatInt(record.HeldBack, 10) + " END"
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
func decideTest(ctx context.Context, db *core.DB, id, now int64) (int, error) {
	var ss models.SingleSend
	if err := db.R.WithContext(ctx).Select("id", "user_id", "ab_subjects", "ab_metric", "ab_winner").Where("id = ?", id).Take(&ss).Error; err != nil {
		return 0, core.NotFound(err)
	}
	won := 0
	if ss.ABWinner == 0 {
		counts, err := record.VariantCounts(ctx, db.R, ss.UserID, id)
		if err != nil {
			return 0, fmt.Errorf("abtest: variant counts of send %d: %w", id, err)
		}
		winner := record.BestVariant(counts, len(ss.ABSubjects), ss.ABMetric)
		res := db.W.WithContext(ctx).Exec("UPDATE single_sends SET ab_winner = ?, updated_at = ? WHERE id = ? AND ab_winner = 0", winner, db.Now(), id)
		if res.Error != nil {
			return 0, fmt.Errorf("abtest: choose winner of send %d: %w", id, res.Error)
		}
		if res.RowsAffected == 1 {
			won = winner
		}
		if err := db.W.WithContext(ctx).Model(&models.SingleSend{}).Where("id = ?", id).Pluck("ab_winner", &ss.ABWinner).Error; err != nil {
			return 0, fmt.Errorf("abtest: winner of send %d: %w", id, err)
		}
	}
	// The state and next_at are checked again on the rows themselves: a
	// row another process released (and the engine claimed) meanwhile is
	// left alone.
	release := record.LedgerSQL(`UPDATE send_messages SET variant = ?, next_at = ?, release_at = ?
		WHERE id IN (SELECT id FROM send_messages WHERE send_id = ? AND state = {queued} AND next_at = ? LIMIT ?)
		AND state = {queued} AND next_at = ?`)
	for {
		res := db.W.WithContext(ctx).Exec(release, ss.ABWinner, now, now, id, record.HeldBack, releaseChunk, record.HeldBack)
		if res.Error != nil {
			return 0, fmt.Errorf("abtest: release held messages of send %d: %w", id, res.Error)
		}
		if res.RowsAffected < releaseChunk {
			break
		}
	}
	if err := db.W.WithContext(ctx).Exec("UPDATE single_sends SET ab_released = 1 WHERE id = ?", id).Error; err != nil {
		return won, fmt.Errorf("abtest: mark send %d released: %w", id, err)
	}
	return won, nil
}

// timeSplit is a send-time test's split: the whole audience in two
// halves by the same hash as a test's, the second due at second (Unix ms).
type timeSplit struct {
	abSplit
	second int64
}

// timeTest fixes, once, when a send-time test's halves are compared
// (ab_decide_at: the second half's time, ab_time_after after the
// resolution starts, plus the wait) and plans the halves from it: a
// process taking over the resolution reads the time the first fixed.
func (p *abPlanner) timeTest(ctx context.Context, ss *models.SingleSend) (sendPlan, error) {
	wait := time.Duration(ss.ABWait) * time.Minute
	at := p.now().Add(time.Duration(ss.ABTimeAfter) * time.Minute).Add(wait).UnixMilli()
	if err := p.db.W.WithContext(ctx).Model(&models.SingleSend{}).Where("id = ? AND ab_decide_at = 0", ss.ID).
		Update("ab_decide_at", at).Error; err != nil {
		return nil, fmt.Errorf("abtest: set decide time of send %d: %w", ss.ID, err)
	}
	if err := p.db.W.WithContext(ctx).Model(&models.SingleSend{}).Where("id = ?", ss.ID).Pluck("ab_decide_at", &at).Error; err != nil {
		return nil, fmt.Errorf("abtest: decide time of send %d: %w", ss.ID, err)
	}
	return &timeSplit{abSplit: abSplit{share: 100, n: 2, salt: ss.ID % abPrime * 7919 % abPrime}, second: at - wait.Milliseconds()}, nil
}

// chunk gives each row its half: variant 1 due at once, variant 2 due at
// the second time (next_at only: release_at stays 0, so that its figures
// are the test's, not a rest's).
func (s *timeSplit) chunk(_ context.Context, q chunkQuery, _, _ int64) (rowPlan, error) {
	b := s.bucket(q.src.key)
	return rowPlan{
		variant: b + " % 2 + 1",
		due:     "CASE WHEN " + b + " % 2 = 1 THEN " + strconv.FormatInt(s.second, 10) + " ELSE 0 END",
	}, nil
}
