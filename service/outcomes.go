package service

import (
	"context"
	"strings"

	"gorm.io/gorm"

	"herald/delivery"
	"herald/models"
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
		return 0, err
	}
	n, err := resumeSend(ctx, s.db, ss)
	if err != nil {
		return n, err
	}
	s.poke()
	return n, s.audit.Record(ctx, accountID, AuditSendResumed, ss.SingleSendName, ss.Utr)
}

// ResumeEmail is Resume for the send that carries an automation's email
// (by the automation's utr and the email's). Errors: ErrNotFound;
// validation (not paused).
func (s *Automations) ResumeEmail(ctx context.Context, accountID int64, automationUtr, emailUtr string) (int64, error) {
	a, err := s.Get(ctx, accountID, automationUtr)
	if err != nil {
		return 0, err
	}
	var row models.AutomationSchedule
	if err := s.db.R.WithContext(ctx).Where("automation_id = ? AND user_id = ? AND utr = ?", a.ID, accountID, strings.TrimSpace(emailUtr)).
		First(&row).Error; err != nil {
		return 0, notFound(err)
	}
	if row.SendID == nil {
		return 0, &Error{Code: CodeValidation, Message: msgNotPaused}
	}
	var ss models.SingleSend
	if err := s.db.R.WithContext(ctx).Where("id = ? AND user_id = ?", *row.SendID, accountID).First(&ss).Error; err != nil {
		return 0, notFound(err)
	}
	n, err := resumeSend(ctx, s.db, &ss)
	if err == nil {
		s.engine.wake()
	}
	return n, err
}

func resumeSend(ctx context.Context, db *DB, ss *models.SingleSend) (int64, error) {
	var n int64
	now := models.NewTimestamp(db.now())
	err := db.W.WithContext(ctx).Transaction(func(tx *gorm.DB) error {
		res := tx.Exec(`UPDATE single_sends SET paused_at = NULL, pause_reason = '', block_streak = 0, streak_delivered = delivered, updated_at = ?
			WHERE id = ? AND user_id = ? AND paused_at IS NOT NULL`, now, ss.ID, ss.UserID)
		if res.Error != nil {
			return res.Error
		}
		if res.RowsAffected == 0 {
			return &Error{Code: CodeValidation, Message: msgNotPaused}
		}
		res = tx.Exec("UPDATE send_messages SET state = ?, worker = NULL, next_at = 0 WHERE send_id = ? AND state = ?",
			models.MessageQueued, ss.ID, models.MessageBlocked)
		if res.Error != nil {
			return res.Error
		}
		n = res.RowsAffected
		return tx.Exec("UPDATE single_sends SET blocks = CASE WHEN blocks > ? THEN blocks - ? ELSE 0 END WHERE id = ?", n, n, ss.ID).Error
	})
	return n, err
}

// Refusal is a stored failure reason (a ledger row's error, a send's last
// block or failure) read for people.
type Refusal struct {
	Stage string // where in the exchange: "MAIL FROM", "RCPT TO", "DATA", …; "" when not the relay's answer
	Reply string // the relay's answer ("553 5.7.1 Sender address rejected: …"), or what went wrong
}

// ReadRefusal reads a reason herald stored: `delivery: permanent failure
// at <stage>: <reply>` becomes the stage in words and the reply; a build
// error is said plainly without its package prefix.
func ReadRefusal(reason string) Refusal {
	reason = strings.TrimSpace(reason)
	for _, kind := range []string{"delivery: permanent failure at ", "delivery: temporary failure at "} {
		rest, ok := strings.CutPrefix(reason, kind)
		if !ok {
			continue
		}
		stage, reply, ok := strings.Cut(rest, ": ")
		if !ok {
			break
		}
		words := map[string]string{
			delivery.StageMail: "MAIL FROM", delivery.StageRcpt: "RCPT TO", delivery.StageData: "DATA",
			delivery.StageConnect: "connecting", delivery.StageAuth: "login", delivery.StageEnvelope: "the envelope",
			delivery.StageStore: "the outbox",
		}[stage]
		if words == "" {
			break
		}
		return Refusal{Stage: words, Reply: flatLine(reply)}
	}
	return Refusal{Reply: flatLine(strings.TrimPrefix(reason, "delivery: "))}
}

// flatLine joins a multi-line reply into one line.
func flatLine(s string) string { return strings.Join(strings.Fields(s), " ") }

// String is the refusal in one line: "553 5.7.1 … (at MAIL FROM)". The
// stage is told after the answer: Postfix gives a sender's refusal at
// RCPT TO, so the answer says more than the stage.
func (r Refusal) String() string {
	if r.Stage == "" {
		return r.Reply
	}
	return r.Reply + " (at " + r.Stage + ")"
}

// Failure is a stored reason of a message that could not be built or
// sent (a send's first or last failure), said for people.
type Failure struct {
	Built bool   // it could not be built (else it could not be sent)
	Text  string // why, in plain words, with the detail
}

// ReadFailure reads a failure reason herald stored.
func ReadFailure(reason string) Failure {
	r := strings.TrimSpace(reason)
	if rest, ok := strings.CutPrefix(r, delivery.ErrInvalidMessage.Error()+": "); ok {
		return Failure{Built: true, Text: "the message is not valid mail (" + flatLine(rest) + ")"}
	}
	if rest, ok := strings.CutPrefix(r, delivery.ErrInvalidDKIM.Error()); ok {
		return Failure{Built: true, Text: "the DKIM key of the sender's domain cannot be used" + flatLine(rest)}
	}
	if strings.HasPrefix(r, "delivery: DKIM signing") {
		return Failure{Built: true, Text: "the message could not be signed with the sender domain's DKIM key (" + flatLine(strings.TrimPrefix(r, "delivery: ")) + ")"}
	}
	if !strings.HasPrefix(r, "delivery: permanent failure at ") && !strings.HasPrefix(r, "delivery: temporary failure at ") {
		return Failure{Built: true, Text: flatLine(strings.TrimPrefix(r, "delivery: "))}
	}
	return Failure{Text: ReadRefusal(r).String()}
}
