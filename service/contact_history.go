package service

import (
	"context"

	"herald/models"
)

// ContactMail is one mail of a contact's history: a ledger row of one of
// the account's sends or automation emails to its address, with what
// became of it.
type ContactMail struct {
	ID             int64 // the ledger row's id (the cursor of the next page)
	SendID         int64
	SendUtr        string
	SendName       string
	Subject        string
	AutomationID   *int64
	AutomationUtr  *string // the automation an email step belongs to
	AutomationName *string
	State          models.MessageState
	Error          string
	SentAt         *models.Timestamp
	OpenedAt       *models.Timestamp
	ClickedAt      *models.Timestamp
	UnsubscribedAt *models.Timestamp
	HardBouncedAt  *models.Timestamp
	SoftBouncedAt  *models.Timestamp
	ComplainedAt   *models.Timestamp
	// An A/B test's variant of the row and the send's subjects: Subject
	// is the variant's (issue 15).
	Variant    int
	ABSubjects models.StringArray
}

// Outcome names what became of the mail, the furthest it went: a
// complaint or an unsubscribe outranks a click, a click an open, an open
// the delivery.
func (m ContactMail) Outcome() string {
	switch {
	case m.ComplainedAt != nil:
		return "complained"
	case m.UnsubscribedAt != nil:
		return "unsubscribed"
	case m.HardBouncedAt != nil || m.State == models.MessageBounced:
		return "bounced"
	case m.ClickedAt != nil:
		return "clicked"
	case m.OpenedAt != nil:
		return "opened"
	case m.SoftBouncedAt != nil:
		return "soft bounce"
	}
	switch m.State {
	case models.MessageDelivered:
		return "delivered"
	case models.MessageSkipped:
		return "left out"
	case models.MessageBlocked:
		return "refused"
	case models.MessageFailed:
		return "failed"
	}
	return "waiting"
}

// maxHistoryPage caps one page of a contact's history.
const maxHistoryPage = 100

// History returns up to n mails of the contact's address, newest first,
// older than the ledger row before (0: from the newest). It reads the
// ledger along its (email, id) index, scoped to the account. Errors:
// ErrNotFound (not the account's contact).
func (s *Contacts) History(ctx context.Context, accountID, contactID, before int64, n int) ([]ContactMail, error) {
	c, err := contact(ctx, s.db.R, accountID, contactID)
	if err != nil {
		return nil, err
	}
	n = min(max(n, 1), maxHistoryPage)
	q := s.db.R.WithContext(ctx).Table("send_messages AS m").
		Select(`m.id, m.send_id, s.utr AS send_utr, s.single_send_name AS send_name, s.subject, s.automation_id, a.utr AS automation_utr, a.automation_name,
			m.state, m.error, m.sent_at, m.opened_at, m.clicked_at, m.unsubscribed_at,
			m.hard_bounced_at, m.soft_bounced_at, m.complained_at, m.variant, s.ab_subjects`).
		Joins("JOIN single_sends AS s ON s.id = m.send_id").
		Joins("LEFT JOIN automations AS a ON a.id = s.automation_id").
		Where("m.email = ? AND m.user_id = ?", c.Email, accountID)
	if before > 0 {
		q = q.Where("m.id < ?", before)
	}
	var out []ContactMail
	if err := q.Order("m.id DESC").Limit(n).Scan(&out).Error; err != nil {
		return nil, err
	}
	for i := range out {
		if v := out[i].Variant; v >= 1 && v <= len(out[i].ABSubjects) {
			out[i].Subject = out[i].ABSubjects[v-1]
		}
	}
	return out, nil
}
