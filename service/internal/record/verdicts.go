package record

import (
	"errors"
	"fmt"
	"strconv"
	"strings"
	"time"

	"gorm.io/gorm"

	"herald/delivery"
	"herald/models"
	"herald/service/core"
)

// SourceSMTP is the source of a verdict the relay gave during the send
// (its reply at RCPT, MAIL or DATA), as suppressions and feedback rows
// keep it beside the report sources (delivery.Source…).
const SourceSMTP = "smtp"

// Verdict is one failure's verdict about one message, whatever found it:
// the relay's reply during the send or a report after it
// (delivery.Judge read both).
type Verdict struct {
	Kind       delivery.ReportKind // hard or soft bounce, block, deferral
	Source     string              // SourceSMTP or a delivery.Source… constant
	Reason     string              // delivery.Reason… (Sisimai's vocabulary)
	Status     string              // the enhanced status code, "" when none
	Diagnostic string              // the receiving server's words
	At         models.Timestamp
}

// VerdictOfError is the verdict on a relay's refusal during the send
// (what Transport.Send returned), of the kind the ledger decided.
func VerdictOfError(kind delivery.ReportKind, err error, ts models.Timestamp) Verdict {
	v := Verdict{Kind: kind, Source: SourceSMTP, At: ts}
	if j, ok := delivery.JudgeError(err); ok {
		v.Reason, v.Status = j.Reason, j.Status
	}
	if se := sendErrorOf(err); se != nil {
		v.Diagnostic = strings.TrimSpace(fmt.Sprintf("%d %s", se.Code, se.Message))
		if se.Code == 0 {
			v.Diagnostic = se.Message
		}
		if v.Status == "" && se.Code != 0 {
			v.Status = strconv.Itoa(se.Code) // no enhanced code: the reply code
		}
	}
	if v.Reason == "" && kind == delivery.ReportSoftBounce {
		v.Reason = delivery.ReasonExpired
	}
	return v
}

// Recorders write what a verdict leaves behind, the same for the ledger
// (refusals during the send) and for feedback (reports after it): the
// suppression of a gone mailbox, the feedback row the console lists and
// the soft-bounce limit counts, and the events. The counters of the send
// are the caller's: the ledger counts a group commit at once, feedback
// counts each report once per message.
type Recorders struct {
	Events    *Events
	SoftLimit int // HERALD_SOFT_BOUNCE_LIMIT (Config.SoftBounceLimit)
}

// HardBounce: the mailbox or the domain is gone. The address is
// suppressed (its first reason kept), the row logged, a bounce event.
func (rc *Recorders) HardBounce(tx *gorm.DB, m *models.SendMessage, v Verdict) error {
	if err := suppress(tx, m, suppressionText(v), v); err != nil {
		return fmt.Errorf("verdicts: hard bounce: %w", err)
	}
	if err := LogVerdict(tx, m, FeedbackHardBounce, v); err != nil {
		return fmt.Errorf("verdicts: hard bounce: %w", err)
	}
	return rc.Events.Record(tx, m, EventBounce, v.eventExtra(), v.At.Time)
}

// SoftBounce: this message failed for good, the address stays. The row
// counts towards the soft-bounce limit, which suppresses the address
// once reached; the event is a bounce (the message will not arrive).
func (rc *Recorders) SoftBounce(tx *gorm.DB, m *models.SendMessage, v Verdict) error {
	if err := LogVerdict(tx, m, FeedbackSoftBounce, v); err != nil {
		return fmt.Errorf("verdicts: soft bounce: %w", err)
	}
	if err := rc.Events.Record(tx, m, EventBounce, v.eventExtra(), v.At.Time); err != nil {
		return fmt.Errorf("verdicts: soft bounce: %w", err)
	}
	// The limit: this one and the others of the address in the window
	// (one per message, each counted once).
	var n int64
	since := models.NewTimestamp(v.At.Add(-softWindow))
	if err := tx.Model(&models.Feedback{}).Where("user_id = ? AND email = ? AND kind = ? AND created_at >= ?",
		m.UserID, m.Email, FeedbackSoftBounce, since).Count(&n).Error; err != nil {
		return fmt.Errorf("verdicts: count the soft bounces of an address: %w", err)
	}
	if limit := rc.SoftLimit; n >= int64(limit) {
		text := fmt.Sprintf("%d soft bounces within 30 days; the last: %s", n, suppressionText(v))
		if err := suppress(tx, m, text, v); err != nil {
			return fmt.Errorf("verdicts: soft bounce limit: %w", err)
		}
	}
	return nil
}

// Block: the receiver refused the sender, its IP or the content. Logged
// for the console; never a suppression (decisions.md 8).
func (rc *Recorders) Block(tx *gorm.DB, m *models.SendMessage, v Verdict) error {
	return LogVerdict(tx, m, FeedbackBlock, v)
}

// Deferral: the relay is still trying. A deferred event; a report's
// deferral is logged too (the relay's own tries during the send are not:
// the ledger keeps its last error).
func (rc *Recorders) Deferral(tx *gorm.DB, m *models.SendMessage, v Verdict) error {
	if v.Source != SourceSMTP {
		if err := LogVerdict(tx, m, FeedbackDeferral, v); err != nil {
			return fmt.Errorf("verdicts: deferral: %w", err)
		}
	}
	return rc.Events.Record(tx, m, EventDeferred, v.eventExtra(), v.At.Time)
}

// eventExtra is what a bounce or deferred event tells of the verdict:
// the server's words (or the reason, when it said none) and the status.
func (v Verdict) eventExtra() EventExtra {
	reason := core.FlatLine(v.Diagnostic)
	if reason == "" {
		reason = v.Reason
	}
	if reason == "" {
		reason = v.Kind.String()
	}
	return EventExtra{Reason: reason, Status: v.Status}
}

// suppressionText is the reason a suppression keeps: the verdict's
// reason, the status and the server's words, and where it came from
// ("userunknown: 550 5.1.1 User unknown (dsn)").
func suppressionText(v Verdict) string {
	words := strings.TrimSpace(core.FlatLine(v.Diagnostic))
	if v.Status != "" && !strings.Contains(words, v.Status) {
		words = strings.TrimSpace(v.Status + " " + words)
	}
	text := v.Reason
	switch {
	case text == "":
		text = words
	case words != "":
		text += ": " + words
	}
	if text == "" {
		text = v.Kind.String()
	}
	return text + " (" + v.Source + ")"
}

// suppress puts the message's address on its account's suppression list
// (once: an address already there keeps its first reason).
func suppress(tx *gorm.DB, m *models.SendMessage, text string, v Verdict) error {
	err := tx.Exec(`INSERT INTO suppressions (user_id, email, reason, send_id, status_code, diagnostic, source, reason_code, created_at)
		VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?) ON CONFLICT (user_id, email) DO NOTHING`,
		m.UserID, m.Email, core.Truncate(text, 500), m.SendID, core.Truncate(v.Status, 16), core.Truncate(v.Diagnostic, 1000), v.Source,
		core.Truncate(v.Reason, 32), v.At).Error
	if err != nil {
		return fmt.Errorf("verdicts: suppress an address of send %d: %w", m.SendID, err)
	}
	return nil
}

// LogVerdict keeps the verdict for the console's bounces and complaints
// page (and the soft-bounce limit).
func LogVerdict(tx *gorm.DB, m *models.SendMessage, kind string, v Verdict) error {
	sendID, msgID := m.SendID, m.ID
	err := tx.Create(&models.Feedback{UserID: m.UserID, SendID: &sendID, MessageID: &msgID, Email: m.Email, Kind: kind,
		StatusCode: core.Truncate(v.Status, 16), Diagnostic: core.Truncate(v.Diagnostic, 1000), Source: v.Source,
		ReasonCode: core.Truncate(v.Reason, 32), CreatedAt: v.At}).Error
	if err != nil {
		return fmt.Errorf("verdicts: log a %s of send %d: %w", kind, m.SendID, err)
	}
	return nil
}

// sendErrorOf is the relay's answer an error carries, or nil.
func sendErrorOf(err error) *delivery.SendError {
	var se *delivery.SendError
	if errors.As(err, &se) {
		return se
	}
	return nil
}

// softWindow is how far back soft bounces of an address count towards the
// limit.
const softWindow = 30 * 24 * time.Hour
