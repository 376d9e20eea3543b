package engine

import (
	"context"
	"fmt"

	"herald/models"
	"herald/service/core"
	"herald/service/deliverability"
	"herald/service/internal/record"
)

// completeRound moves running sends with nothing queued, claimed or
// awaiting a retry to completed, and mails the summary.
type completeRound struct {
	db    *core.DB
	sends *runningSends
	mail  *deliverability.Mail
}

func newCompleteRound(db *core.DB, sends *runningSends, mail *deliverability.Mail) *completeRound {
	return &completeRound{db: db, sends: sends, mail: mail}
}

func (r *completeRound) name() string { return "complete" }

func (r *completeRound) run(ctx context.Context) error {
	var ids []int64
	if err := r.db.R.WithContext(ctx).Model(&models.SingleSend{}).Where("status = ? AND resolved = 1 AND automation_id IS NULL AND paused_at IS NULL", models.SendRunning).Pluck("id", &ids).Error; err != nil {
		return fmt.Errorf("running sends: %w", err)
	}
	for _, id := range ids {
		now := models.NewTimestamp(r.db.Now())
		res := r.db.W.WithContext(ctx).Exec(completeSend, models.SendCompleted, now, now, id, models.SendRunning, id)
		if res.Error != nil {
			return fmt.Errorf("complete send %d: %w", id, res.Error)
		}
		if res.RowsAffected == 1 {
			r.sends.forget(id)
			r.sendSummary(ctx, id)
		}
	}
	return nil
}

// completeSend completes a running, resolved, unpaused send when none of
// its messages is queued or claimed: status, completed_at, updated_at,
// the send id, running, the send id again.
var completeSend = record.LedgerSQL(`UPDATE single_sends SET status = ?, completed_at = ?, updated_at = ?
	WHERE id = ? AND status = ? AND resolved = 1 AND paused_at IS NULL
	AND NOT EXISTS (SELECT 1 FROM send_messages m WHERE m.send_id = ? AND m.state IN ({queued}, {claimed}))`)

// sendSummary mails the account's notification recipients the statistics
// of a completed send.
func (r *completeRound) sendSummary(ctx context.Context, sendID int64) {
	var ss models.SingleSend
	if err := r.db.R.WithContext(ctx).Select("id", "user_id", "single_send_name", "triggered", "delivered", "bounces", "blocks", "failures", "last_block", "last_failure", "utr").
		Where("id = ?", sendID).First(&ss).Error; err != nil {
		return
	}
	rows := [][2]string{
		{"Recipients", fmt.Sprint(ss.Triggered)}, {"Delivered", fmt.Sprint(ss.Delivered)}, {"Bounces", fmt.Sprint(ss.Bounces)},
	}
	if ss.Blocks > 0 {
		rows = append(rows, [2]string{"Refused by the relay", fmt.Sprint(ss.Blocks) + " (" + core.ReadRefusal(ss.LastBlock).String() + ")"})
	}
	if ss.Failures > 0 {
		f := core.ReadFailure(ss.LastFailure)
		label := "Could not be sent"
		if f.Built {
			label = "Could not be built"
		}
		rows = append(rows, [2]string{label, fmt.Sprint(ss.Failures) + " (" + f.Text + ")"})
	}
	r.mail.Notify(ctx, ss.UserID, "Single send completed: "+ss.SingleSendName,
		"Your single send “"+ss.SingleSendName+"” has completed.", rows,
		r.mail.BaseURL+"/single-sends/"+ss.Utr)
}
