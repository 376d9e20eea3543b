package audience

import (
	"context"
	"fmt"
	"sort"

	"herald/models"
	"herald/service/internal/record"
)

// eventOrder breaks ties between events of the same time.
var eventOrder = map[string]int{record.MailDelivered: 0, record.MailRefused: 0, record.MailBlocked: 0, record.MailFailed: 0, record.MailSkipped: 0, record.MailWaiting: 0,
	record.MailOpen: 1, record.MailClick: 2, record.MailSoftBounce: 3, record.MailBlockReport: 4, record.MailHardBounce: 5, record.MailComplaint: 6, record.MailUnsubscribe: 7}

// maxHistoryPage caps one page of a contact's history.
const maxHistoryPage = 100

// History returns up to n mails of the contact's address, newest first,
// older than the ledger row before (0: from the newest), each with its
// timeline (Events). It reads the ledger along its (email, id) index,
// scoped to the account, then the events of those mails in one query per
// source: their open and click rows (send_events by message, at most
// MaxMailEvents each) and their reports (feedback by account, address
// and message). Errors: ErrNotFound (not the account's contact).
func (s *Contacts) History(ctx context.Context, accountID, contactID, before int64, n int) ([]record.ContactMail, error) {
	c, err := contact(ctx, s.db.R, accountID, contactID)
	if err != nil {
		return nil, err
	}
	return s.mailsOf(ctx, accountID, c.Email, before, min(max(n, 1), maxHistoryPage))
}

// mailsOf returns up to n mails of the account's address email, newest
// first, older than the ledger row before (0: from the newest), each with
// its timeline: History for a contact, the privacy export for an address.
func (s *Contacts) mailsOf(ctx context.Context, accountID int64, email string, before int64, n int) ([]record.ContactMail, error) {
	q := s.db.R.WithContext(ctx).Table("send_messages AS m").
		Select(`m.id, m.send_id, s.utr AS send_utr, s.single_send_name AS send_name, s.subject, s.automation_id, a.utr AS automation_utr, a.automation_name,
			m.state, m.error, m.sent_at, m.opened_at, m.clicked_at, m.unsubscribed_at,
			m.hard_bounced_at, m.soft_bounced_at, m.complained_at, m.variant, s.ab_subjects, s.links`).
		Joins("JOIN single_sends AS s ON s.id = m.send_id").
		Joins("LEFT JOIN automations AS a ON a.id = s.automation_id").
		Where("m.email = ? AND m.user_id = ?", email, accountID)
	if before > 0 {
		q = q.Where("m.id < ?", before)
	}
	var out []record.ContactMail
	if err := q.Order("m.id DESC").Limit(n).Scan(&out).Error; err != nil {
		return nil, fmt.Errorf("contacts: mail history of account %d: %w", accountID, err)
	}
	for i := range out {
		if v := out[i].Variant; v >= 1 && v <= len(out[i].ABSubjects) {
			out[i].Subject = out[i].ABSubjects[v-1]
		}
	}
	if err := s.timelines(ctx, accountID, email, out); err != nil {
		return nil, err
	}
	return out, nil
}

// mailActivity is an open or click row of one mail, with its place among
// the mail's rows (rn, from 1 in time order) and their number.
type mailActivity struct {
	MessageID int64
	Kind      int
	Link      int
	At        models.Timestamp
	Human     int64
	Machine   *int64
	Rn, Total int
}

// timelines fills the Events of mails (one page of the contact's, all of
// the account and its address email).
func (s *Contacts) timelines(ctx context.Context, accountID int64, email string, mails []record.ContactMail) error {
	if len(mails) == 0 {
		return nil
	}
	ids := make([]int64, len(mails))
	for i, m := range mails {
		ids[i] = m.ID
	}
	// Opens and clicks: the first MaxMailEvents rows of each mail in time
	// order, through send_events_message; the ids are the account's (read
	// above), so the rows are too.
	var acts []mailActivity
	if err := s.db.R.WithContext(ctx).Raw(`SELECT message_id, kind, link, at, human, machine, rn, total FROM (
			SELECT message_id, kind, link, at, human, machine,
				ROW_NUMBER() OVER (PARTITION BY message_id ORDER BY at, id) AS rn,
				COUNT(*) OVER (PARTITION BY message_id) AS total
			FROM send_events WHERE message_id IN ?) e
		WHERE rn <= ? ORDER BY message_id, rn`, ids, record.MaxMailEvents).Scan(&acts).Error; err != nil {
		return fmt.Errorf("contacts: mail events of account %d: %w", accountID, err)
	}
	var reports []models.Feedback
	if err := s.db.R.WithContext(ctx).Where("user_id = ? AND email = ? AND message_id IN ?", accountID, email, ids).
		Find(&reports).Error; err != nil {
		return fmt.Errorf("contacts: reports of account %d: %w", accountID, err)
	}
	byMail := make(map[int64]*record.ContactMail, len(mails))
	for i := range mails {
		byMail[mails[i].ID] = &mails[i]
	}
	first := map[int64]models.Timestamp{} // each mail's first open or click row
	for _, a := range acts {
		m := byMail[a.MessageID]
		if m == nil {
			continue
		}
		if a.Rn == 1 {
			first[a.MessageID] = a.At
			m.MoreEvents = max(a.Total-record.MaxMailEvents, 0)
		}
		at := a.At
		e := record.MailEvent{Kind: record.MailOpen, At: &at, Machine: a.Human == 0}
		if a.Machine != nil {
			e.Machine = *a.Machine != 0
		}
		if a.Kind == 2 {
			e.Kind = record.MailClick
			if a.Link >= 0 && a.Link < len(m.Links) {
				e.URL = m.Links[a.Link]
			}
		}
		m.Events = append(m.Events, e)
	}
	reported := map[int64]map[string]bool{}
	for _, r := range reports {
		if r.MessageID == nil || byMail[*r.MessageID] == nil {
			continue
		}
		m := byMail[*r.MessageID]
		if reported[m.ID] == nil {
			reported[m.ID] = map[string]bool{}
		}
		reported[m.ID][r.Kind] = true
		at := r.CreatedAt
		e := record.MailEvent{At: &at, Status: r.StatusCode, Diagnostic: r.Diagnostic, Source: r.Source}
		switch r.Kind {
		case record.FeedbackHardBounce:
			e.Kind = record.MailHardBounce
		case record.FeedbackSoftBounce:
			e.Kind = record.MailSoftBounce
		case record.FeedbackComplaint:
			e.Kind = record.MailComplaint
		case record.FeedbackBlock:
			e.Kind = record.MailBlockReport
		default:
			continue // an unsubscribe by mail: the ledger's unsubscribe below says it
		}
		m.Events = append(m.Events, e)
	}
	for i := range mails {
		m := &mails[i]
		rep := reported[m.ID]
		m.Events = append(m.Events, ledgerEvents(m, first, rep)...)
		sort.SliceStable(m.Events, func(a, b int) bool {
			ea, eb := m.Events[a], m.Events[b]
			if (ea.At == nil) != (eb.At == nil) {
				return ea.At == nil
			}
			if ea.At != nil && !ea.At.Equal(eb.At.Time) {
				return ea.At.Before(eb.At.Time)
			}
			return eventOrder[ea.Kind] < eventOrder[eb.Kind]
		})
	}
	return nil
}

// ledgerEvents are the events of mail m that its ledger row tells: its
// delivery (or what stopped it), its unsubscribe, the first open and
// click recorded before open and click rows named their message (a row's
// first open is earlier than its first named row, or it has none), and
// reports the feedback log lacks (rep: the kinds it has).
func ledgerEvents(m *record.ContactMail, first map[int64]models.Timestamp, rep map[string]bool) []record.MailEvent {
	var out []record.MailEvent
	switch m.State {
	case models.MessageDelivered:
		out = append(out, record.MailEvent{Kind: record.MailDelivered, At: m.SentAt})
	case models.MessageBounced:
		out = append(out, record.MailEvent{Kind: record.MailRefused, At: m.SentAt, Diagnostic: m.Error})
	case models.MessageBlocked:
		out = append(out, record.MailEvent{Kind: record.MailBlocked, At: m.SentAt, Diagnostic: m.Error})
	case models.MessageFailed:
		out = append(out, record.MailEvent{Kind: record.MailFailed, At: m.SentAt, Diagnostic: m.Error})
	case models.MessageSkipped:
		out = append(out, record.MailEvent{Kind: record.MailSkipped, Diagnostic: m.Error})
	default:
		out = append(out, record.MailEvent{Kind: record.MailWaiting})
	}
	f, named := first[m.ID]
	for _, x := range []struct {
		kind string
		at   *models.Timestamp
	}{{record.MailOpen, m.OpenedAt}, {record.MailClick, m.ClickedAt}} {
		if x.at != nil && (!named || x.at.Before(f.Time)) {
			out = append(out, record.MailEvent{Kind: x.kind, At: x.at, Ledger: true})
		}
	}
	for _, x := range []struct {
		kind, feedback string
		at             *models.Timestamp
	}{{record.MailSoftBounce, record.FeedbackSoftBounce, m.SoftBouncedAt}, {record.MailHardBounce, record.FeedbackHardBounce, m.HardBouncedAt}, {record.MailComplaint, record.FeedbackComplaint, m.ComplainedAt}} {
		if x.at != nil && !rep[x.feedback] {
			out = append(out, record.MailEvent{Kind: x.kind, At: x.at})
		}
	}
	if m.UnsubscribedAt != nil {
		via := "link"
		switch {
		case m.ComplainedAt != nil && !m.UnsubscribedAt.Before(m.ComplainedAt.Time):
			via = "complaint" // a complaint puts the address on the global list
		case rep[record.FeedbackUnsubscribe]:
			via = "mail"
		}
		out = append(out, record.MailEvent{Kind: record.MailUnsubscribe, At: m.UnsubscribedAt, Via: via})
	}
	return out
}
