package deliverability

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"gorm.io/gorm"

	"herald/delivery"
	"herald/models"
	"herald/service/core"
	"herald/service/internal/record"
)

// Report is what every source of feedback hands over (delivery.Report);
// the console's and the API's edges build it under this name.
type Report = delivery.Report

// Feedback applies what relays, mailbox providers and recipients report
// after a message was accepted (decisions.md 7), whatever brought it: the
// inbound SMTP server, the bounce mailbox, provider webhooks. It
// implements delivery.Reports (and delivery.KeptMails, the bounce
// mailbox's mails it could not read).
//
//   - A hard bounce suppresses the address (with its status code,
//     diagnostic and source) and counts `bounces` on its send.
//   - A soft bounce counts `soft_bounces`; Config.SoftBounceLimit soft bounces of one
//     address within 30 days suppress it.
//   - A complaint makes the address a global unsubscriber and counts
//     `spam_reports` and `unsubscribes`.
//   - A mail to the List-Unsubscribe address unsubscribes it from its
//     send's group and counts `unsubscribes`.
//
// Each kind counts once per message, however often it is reported; a
// report tied to no message of herald's (no token, an unknown or forged
// one) changes nothing and is kept, server wide, as untied. Every change
// of one report is one transaction.
type Feedback struct {
	db      *core.DB
	bounces *Bounces
	events  *record.Events
	mail    *Mail // the rate alerts
	Rec     *record.Recorders
	now     func() time.Time
}

// Alert thresholds of one send (decisions.md 7): its hard-bounce rate and
// its complaint rate, of the messages it delivered.
const (
	bounceAlertRate    = 0.05
	complaintAlertRate = 0.001
)

func newFeedback(db *core.DB, bounces *Bounces, events *record.Events, mail *Mail, softLimit int, now func() time.Time) *Feedback {
	if softLimit <= 0 {
		softLimit = 3
	}
	f := &Feedback{db: db, bounces: bounces, events: events, mail: mail, now: now}
	f.Rec = &record.Recorders{Events: events, SoftLimit: softLimit}
	return f
}

// Handle applies reports one by one (delivery.Reports). A report tied to
// no message of herald's changes nothing and is kept as untied (see
// message); an error is the database's.
func (f *Feedback) Handle(ctx context.Context, reports []Report) error {
	v, err := f.bounces.VERP(ctx)
	if err != nil {
		return fmt.Errorf("feedback: handle reports: %w", err)
	}
	for _, r := range reports {
		m, why, err := f.message(ctx, v, r)
		if err != nil {
			return err
		}
		if m == nil {
			if err := f.keepUntied(ctx, r, why); err != nil {
				return err
			}
			continue
		}
		if err := f.apply(ctx, m, r); err != nil {
			return err
		}
	}
	return nil
}

// message finds the ledger row a report is about, or nil and why not
// (decisions.md 9). Only what verifies ties a report to a message: its
// token (a return path's, an unsubscribe address's, or one a provider's
// metadata carried back; a forged one names nothing, whatever else the
// report says), else the token in its Message-ID. A send's utr and an
// address tie nothing by themselves: anyone who got a copy of a send, or
// knows an address, could name them.
func (f *Feedback) message(ctx context.Context, v *delivery.VERP, r Report) (*models.SendMessage, string, error) {
	var id int64
	switch {
	case r.Token != "":
		ok := false
		if r.Kind == delivery.ReportUnsubscribe {
			id, ok = v.UnsubscribeToken(r.Token)
		} else {
			id, ok = v.BounceToken(r.Token)
		}
		if !ok {
			return nil, UntiedTokenForged, nil
		}
	case r.Kind == delivery.ReportUnsubscribe:
		// Only the List-Unsubscribe address's own token unsubscribes.
		return nil, UntiedNoToken, nil
	case strings.TrimSpace(r.MessageID) != "":
		ok := false
		if id, _, ok = v.ParseMessageID(r.MessageID); !ok {
			return nil, UntiedMessageID, nil
		}
	default:
		return nil, UntiedNoToken, nil
	}
	q := f.db.R.WithContext(ctx)
	var m models.SendMessage
	if err := q.Where("id = ?", id).First(&m).Error; err != nil {
		if errors.Is(err, gorm.ErrRecordNotFound) {
			return nil, UntiedNotFound, nil
		}
		return nil, "", fmt.Errorf("feedback: the message of a report: %w", err)
	}
	// The token names one message, and herald sends each message to one
	// recipient: whatever address the report gives besides (where a
	// forward ended, another recipient of the send that a recipient of
	// this message wrote in), the verdict is about this message alone.
	// Anyone may read their own token off their mail; it must not reach
	// anyone else's address.
	return &m, "", nil
}

func ignoreMissing(err error) error {
	if errors.Is(err, gorm.ErrRecordNotFound) {
		return nil
	}
	return err
}

// apply makes one report's changes about message m, in one transaction,
// then mails a rate alert if the send just crossed a threshold.
func (f *Feedback) apply(ctx context.Context, m *models.SendMessage, r Report) error {
	at := r.At
	if at.IsZero() || at.After(f.now()) {
		at = f.now()
	}
	ts := models.NewTimestamp(at.UTC())
	counted := false
	err := f.db.W.WithContext(ctx).Transaction(func(tx *gorm.DB) error {
		var err error
		switch r.Kind {
		case delivery.ReportHardBounce:
			counted, err = f.hardBounce(tx, m, r, ts)
		case delivery.ReportSoftBounce:
			counted, err = f.softBounce(tx, m, r, ts)
		case delivery.ReportComplaint:
			counted, err = f.complaint(ctx, tx, m, r, ts)
		case delivery.ReportUnsubscribe:
			counted, err = f.unsubscribe(ctx, tx, m, r, ts)
		case delivery.ReportBlock:
			counted, err = f.block(tx, m, r, ts)
		case delivery.ReportDeferral:
			counted, err = true, f.Rec.Deferral(tx, m, verdictOfReport(r, ts))
		}
		return err
	})
	if err != nil {
		return fmt.Errorf("feedback: record report: %w", err)
	}
	if !counted {
		return nil
	}
	switch r.Kind {
	case delivery.ReportHardBounce:
		f.alert(ctx, m.SendID, "bounce_alerted_at", "bounces", bounceAlertRate)
	case delivery.ReportComplaint:
		f.alert(ctx, m.SendID, "complaint_alerted_at", "spam_reports", complaintAlertRate)
	}
	return nil
}

// once marks the message's column of a kind of report at ts, when no
// report of that kind was counted for it yet; it reports whether this one
// counts.
func once(tx *gorm.DB, m *models.SendMessage, column string, ts models.Timestamp, extra string) (bool, error) {
	res := tx.Exec("UPDATE send_messages SET "+column+" = ? WHERE id = ? AND "+column+" IS NULL"+extra, ts, m.ID)
	return res.RowsAffected == 1, res.Error
}

func (f *Feedback) hardBounce(tx *gorm.DB, m *models.SendMessage, r Report, ts models.Timestamp) (bool, error) {
	// A message the relay refused during the send was counted then.
	counted, err := once(tx, m, "hard_bounced_at", ts, fmt.Sprintf(" AND state <> %d", models.MessageBounced))
	if err != nil || !counted {
		return false, err
	}
	if err := tx.Exec("UPDATE single_sends SET bounces = bounces + 1 WHERE id = ?", m.SendID).Error; err != nil {
		return false, fmt.Errorf("feedback: count a bounce of send %d: %w", m.SendID, err)
	}
	if err := f.Rec.HardBounce(tx, m, verdictOfReport(r, ts)); err != nil {
		return false, err
	}
	return true, record.AddDaily(tx, m.UserID, ts.Time, record.Daily{record.DailyBounces: 1})
}

func (f *Feedback) softBounce(tx *gorm.DB, m *models.SendMessage, r Report, ts models.Timestamp) (bool, error) {
	counted, err := once(tx, m, "soft_bounced_at", ts, "")
	if err != nil || !counted {
		return false, err
	}
	if err := tx.Exec("UPDATE single_sends SET soft_bounces = soft_bounces + 1 WHERE id = ?", m.SendID).Error; err != nil {
		return false, fmt.Errorf("feedback: count a soft bounce of send %d: %w", m.SendID, err)
	}
	return true, f.Rec.SoftBounce(tx, m, verdictOfReport(r, ts))
}

func (f *Feedback) complaint(ctx context.Context, tx *gorm.DB, m *models.SendMessage, r Report, ts models.Timestamp) (bool, error) {
	counted, err := once(tx, m, "complained_at", ts, "")
	if err != nil || !counted {
		return false, err
	}
	if err := tx.Exec("UPDATE single_sends SET spam_reports = spam_reports + 1 WHERE id = ?", m.SendID).Error; err != nil {
		return false, err
	}
	if err := f.events.Record(tx, m, record.EventSpamReport, record.EventExtra{}, ts.Time); err != nil {
		return false, err
	}
	// A complaint means "no more mail from you": the global list.
	if err := record.AddUnsubscriber(ctx, tx, f.events, m, m.UserID, nil, m.Email); err != nil {
		return false, err
	}
	if err := record.CountUnsubscribe(tx, m); err != nil {
		return false, err
	}
	if err := record.LogVerdict(tx, m, record.FeedbackComplaint, verdictOfReport(r, ts)); err != nil {
		return false, err
	}
	return true, record.AddDaily(tx, m.UserID, ts.Time, record.Daily{record.DailyComplaints: 1})
}

func (f *Feedback) unsubscribe(ctx context.Context, tx *gorm.DB, m *models.SendMessage, r Report, ts models.Timestamp) (bool, error) {
	// As the one-click POST does: the send's group.
	var group int64
	if err := tx.Model(&models.SingleSend{}).Select("unsubscribe_group_id").Where("id = ?", m.SendID).Scan(&group).Error; err != nil {
		return false, err
	}
	if err := record.AddUnsubscriber(ctx, tx, f.events, m, m.UserID, &group, m.Email); err != nil {
		return false, err
	}
	var before int64
	if err := tx.Model(&models.SendMessage{}).Where("id = ? AND unsubscribed_at IS NULL", m.ID).Count(&before).Error; err != nil {
		return false, err
	}
	if err := record.CountUnsubscribe(tx, m); err != nil {
		return false, err
	}
	if before == 0 {
		return false, nil // unsubscribed through this message already
	}
	return true, record.LogVerdict(tx, m, record.FeedbackUnsubscribe, verdictOfReport(r, ts))
}

// block counts a policy refusal reported after the relay accepted the
// message (5.7.x: the sender or the content): `blocks` and the send's last
// block, once per message; never a suppression (decisions.md 8).
func (f *Feedback) block(tx *gorm.DB, m *models.SendMessage, r Report, ts models.Timestamp) (bool, error) {
	var n int64
	if err := tx.Model(&models.Feedback{}).Where("user_id = ? AND email = ? AND kind = ? AND message_id = ?",
		m.UserID, m.Email, record.FeedbackBlock, m.ID).Count(&n).Error; err != nil || n > 0 {
		return false, err
	}
	reply := strings.TrimSpace(core.FlatLine(r.Diagnostic))
	if reply == "" {
		reply = r.Status
	}
	if err := tx.Exec("UPDATE single_sends SET blocks = blocks + 1, last_block = ? WHERE id = ?", core.Truncate(reply, 1000), m.SendID).Error; err != nil {
		return false, fmt.Errorf("feedback: count a block of send %d: %w", m.SendID, err)
	}
	return true, f.Rec.Block(tx, m, verdictOfReport(r, ts))
}

// verdictOfReport is report r's verdict at ts.
func verdictOfReport(r Report, ts models.Timestamp) record.Verdict {
	return record.Verdict{Kind: r.Kind, Source: r.Source, Reason: r.Reason, Status: r.Status, Diagnostic: r.Diagnostic, At: ts}
}
