package engine

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"sync"

	"gorm.io/gorm"

	"herald/models"
	"herald/service/core"
	"herald/service/deliverability"
)

// noticesRound mails the notices of the sends this process paused (the
// ledger queues them through Scheduler.paused). A notice that cannot be
// mailed is logged, not retried: the round never fails.
type noticesRound struct {
	db   *core.DB
	mail *deliverability.Mail
	log  *slog.Logger

	mu      sync.Mutex
	pending []int64 // sends paused by this process, whose notice is not mailed yet
}

func newNoticesRound(db *core.DB, mail *deliverability.Mail, log *slog.Logger) *noticesRound {
	return &noticesRound{db: db, mail: mail, log: log}
}

func (r *noticesRound) name() string { return "notices" }

// add queues the notices of sends this process paused.
func (r *noticesRound) add(ids []int64) {
	r.mu.Lock()
	r.pending = append(r.pending, ids...)
	r.mu.Unlock()
}

func (r *noticesRound) run(ctx context.Context) error {
	r.mu.Lock()
	ids := r.pending
	r.pending = nil
	r.mu.Unlock()
	for _, id := range ids {
		if err := r.pauseNotice(ctx, id); err != nil && ctx.Err() == nil {
			r.log.Warn("sending: pause notice", "send", id, "err", err)
		}
	}
	return nil
}

// pauseNotice mails the account's notification recipients that a send
// paused itself, with the relay's answer and what to do.
func (r *noticesRound) pauseNotice(ctx context.Context, sendID int64) error {
	var ss models.SingleSend
	if err := r.db.R.WithContext(ctx).Where("id = ?", sendID).First(&ss).Error; err != nil {
		if errors.Is(err, gorm.ErrRecordNotFound) {
			return nil // deleted meanwhile
		}
		return fmt.Errorf("pause notice: send %d: %w", sendID, err)
	}
	link := r.mail.BaseURL + "/single-sends/" + ss.Utr
	if ss.AutomationID != nil {
		var utr string
		if err := r.db.R.WithContext(ctx).Table("automations").Select("utr").Where("id = ?", *ss.AutomationID).Scan(&utr).Error; err != nil {
			return fmt.Errorf("pause notice: automation of send %d: %w", sendID, err)
		}
		link = r.mail.BaseURL + "/automations/" + utr
	}
	refusal := core.ReadRefusal(ss.PauseReason)
	subject := "Sending of “" + ss.SingleSendName + "” paused: the relay refused it (" + core.Truncate(refusal.Reply, 120) + ")"
	intro := "The relay refused " + countOf(ss.BlockStreak, "message", "messages") + " of “" + ss.SingleSendName +
		"” in a row, with none delivered in between, so Herald paused the send: nothing more goes out until you resume it. " +
		"No address was suppressed: the refusal is about the sender, the content or the relay's rules, not the recipients. " +
		"Fix what the relay objects to, then press Resume on its page in Herald (the link below): the refused messages go again."
	rows := [][2]string{
		{"Relay's answer", refusal.String()},
		{"Refused so far", fmt.Sprint(ss.Blocks)},
		{"Delivered", fmt.Sprint(ss.Delivered)},
		{"Recipients", fmt.Sprint(ss.Triggered)},
	}
	r.mail.Notify(ctx, ss.UserID, subject, intro, rows, link)
	return nil
}

func countOf(n int64, one, many string) string {
	if n == 1 {
		return "1 " + one
	}
	return fmt.Sprint(n) + " " + many
}
