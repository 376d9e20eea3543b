package campaign

import (
	"context"
	"fmt"
	"strings"

	"gorm.io/gorm"

	"herald/models"
	"herald/service/core"
	"herald/service/engine"
	"herald/service/internal/record"
)

// msgNotPaused refuses to resume a send that is not paused.
const msgNotPaused = "The single send is not paused."

// Resume lets a send that paused itself after repeated blocks go on: its
// blocked messages go back to the queue (and leave the blocks count) and
// the pause is lifted. It returns how many messages were queued again.
// Errors: ErrNotFound; validation (not paused).
func (s *SingleSends) Resume(ctx context.Context, accountID int64, utr string) (int64, error) {
	ss, err := s.Get(ctx, accountID, utr)
	if err != nil {
		return 0, fmt.Errorf("single sends: resume: %w", err)
	}
	n, err := resumeSend(ctx, s.db, ss)
	if err != nil {
		return n, fmt.Errorf("single sends: resume: %w", err)
	}
	s.poke()
	if err := s.audit.Record(ctx, accountID, core.AuditSendResumed, ss.SingleSendName, ss.Utr); err != nil {
		return n, fmt.Errorf("single sends: resume: audit: %w", err)
	}
	return n, nil
}

// ResumeEmail is Resume for the send that carries an automation's email
// (by the automation's utr and the email's). Errors: ErrNotFound;
// validation (not paused).
func (s *Automations) ResumeEmail(ctx context.Context, accountID int64, automationUtr, emailUtr string) (int64, error) {
	a, err := s.Get(ctx, accountID, automationUtr)
	if err != nil {
		return 0, fmt.Errorf("automations: resume an email: %w", err)
	}
	var row models.AutomationSchedule
	if err := s.db.R.WithContext(ctx).Where("automation_id = ? AND user_id = ? AND utr = ?", a.ID, accountID, strings.TrimSpace(emailUtr)).
		First(&row).Error; err != nil {
		return 0, core.NotFoundOr(err, "automations: resume an email")
	}
	if row.SendID == nil {
		return 0, &core.Error{Code: core.CodeValidation, Message: msgNotPaused}
	}
	var ss models.SingleSend
	if err := s.db.R.WithContext(ctx).Where("id = ? AND user_id = ?", *row.SendID, accountID).First(&ss).Error; err != nil {
		return 0, core.NotFoundOr(err, "automations: resume an email")
	}
	n, err := resumeSend(ctx, s.db, &ss)
	if err != nil {
		return n, fmt.Errorf("automations: resume an email: %w", err)
	}
	s.engine.Wake()
	return n, nil
}

func resumeSend(ctx context.Context, db *core.DB, ss *models.SingleSend) (int64, error) {
	var n int64
	now := models.NewTimestamp(db.Now())
	err := db.W.WithContext(ctx).Transaction(func(tx *gorm.DB) error {
		res := tx.Exec(`UPDATE single_sends SET paused_at = NULL, pause_reason = '', block_streak = 0, streak_delivered = delivered, updated_at = ?
			WHERE id = ? AND user_id = ? AND paused_at IS NOT NULL`, now, ss.ID, ss.UserID)
		if res.Error != nil {
			return res.Error
		}
		if res.RowsAffected == 0 {
			return &core.Error{Code: core.CodeValidation, Message: msgNotPaused}
		}
		// Messages still claimed were handed out before the resume: one on
		// the wire may yet be refused for the cause the resume says is
		// fixed, its block recorded after this commit. Marked so, such a
		// block goes back to the queue (Ledger.recordBlocks) instead of
		// staying blocked with nothing left to resume it. The send's row
		// is locked first, and rows a recorder holds are skipped, so this
		// never waits on a recorder that waits on the send (PostgreSQL);
		// such a recorder's blocks lock the send first, so they were
		// committed before this (and are requeued below) or see the mark.
		if err := tx.Exec(record.LedgerSQL(`UPDATE send_messages SET next_at = ? WHERE id IN (
			SELECT id FROM send_messages WHERE send_id = ? AND state = {claimed}`+db.SQL().SkipLocked()+`)`),
			engine.ResumedClaim, ss.ID).Error; err != nil {
			return err
		}
		res = tx.Exec("UPDATE send_messages SET state = ?, worker = NULL, next_at = 0 WHERE send_id = ? AND state = ?",
			models.MessageQueued, ss.ID, models.MessageBlocked)
		if res.Error != nil {
			return res.Error
		}
		n = res.RowsAffected
		return tx.Exec("UPDATE single_sends SET blocks = CASE WHEN blocks > ? THEN blocks - ? ELSE 0 END WHERE id = ?", n, n, ss.ID).Error
	})
	if err != nil {
		return n, fmt.Errorf("single sends: requeue the blocked messages of send %d: %w", ss.ID, err)
	}
	return n, nil
}
