package engine

import (
	"context"
	"fmt"

	"herald/delivery"
	"herald/models"
	"herald/service/core"
	"herald/service/internal/record"
)

// The lane of single messages (decisions.md 11): ledger rows marked lane =
// 1, each the one row of its own send (a single_sends row marked message).
// delivery.Engine claims them with a claimer of its own (ClaimLane), woken
// when a message is queued, and its workers take them before campaign
// jobs: a message waits neither for the round robin over running sends nor
// behind a claimed batch. The rows are ordinary ledger rows for the rest:
// outcomes are recorded by Record, a dead process's claims go back by
// reclaim, retries wait in next_at.

// claimLane claims due lane rows (worker, now, n) in the order of the
// partial index send_messages_lane, which holds only queued lane rows.
var claimLane = record.LedgerSQL(`UPDATE send_messages SET state = {claimed}, worker = ? WHERE id IN (
	SELECT id FROM send_messages WHERE lane = 1 AND state = {queued} AND next_at <= ? ORDER BY next_at, id LIMIT ?`)

const claimLaneReturning = `) RETURNING id, send_id, contact_id, email, first_name, last_name, attempts, next_at, variant`

// laneRow is a claimed lane row: a claimedRow with its send.
type laneRow struct {
	ID        int64
	SendID    int64
	ContactID *int64
	Email     string
	FirstName string
	LastName  string
	Attempts  int
	NextAt    int64
	Variant   int
}

// ClaimLane implements delivery.LaneStore: up to max due single messages,
// each built from its own send.
func (l *Ledger) ClaimLane(ctx context.Context, max int) ([]*delivery.Job, error) {
	epoch := l.live.claimEpoch()
	var rows []laneRow
	err := l.db.W.WithContext(ctx).Raw(claimLane+l.db.SQL().SkipLocked()+claimLaneReturning, l.live.worker, l.now().UnixMilli(), max).Scan(&rows).Error
	if err != nil {
		return nil, fmt.Errorf("ledger: claim lane: %w", err)
	}
	jobs := make([]*delivery.Job, 0, len(rows))
	fresh := func() bool { return l.live.fresh(epoch) }
	for i := range rows {
		lr := rows[i]
		r := claimedRow{ID: lr.ID, ContactID: lr.ContactID, Email: lr.Email, FirstName: lr.FirstName, LastName: lr.LastName,
			Attempts: lr.Attempts, NextAt: lr.NextAt, Variant: lr.Variant}
		sendID := lr.SendID
		c, err := l.compileMessage(ctx, sendID)
		if err != nil {
			// Given back: another claim tries again. The ones compiled
			// before go now.
			_ = l.Release(ctx, jobsOf(sendID, []claimedRow{r}))
			if !core.IsNotFound(err) {
				l.log.Error("sending: compile a single message", "send", sendID, "err", err)
			}
			continue
		}
		l.countLane(ctx, c)
		jobs = append(jobs, l.job(c, sendID, epoch, r, nil, fresh))
	}
	return jobs, nil
}

// compileMessage compiles a single message's send. It is not kept: a
// message is claimed once (again only after a retry or a crash), and
// keeping every one would grow with the traffic.
func (l *Ledger) compileMessage(ctx context.Context, sendID int64) (*compiledSend, error) {
	var ss models.SingleSend
	if err := l.db.R.WithContext(ctx).Where("id = ? AND message = 1", sendID).First(&ss).Error; err != nil {
		return nil, core.NotFound(err)
	}
	return l.sends.compile(ctx, &ss)
}
