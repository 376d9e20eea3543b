package campaign

import (
	"context"
	"fmt"
	"sort"
	"time"

	"herald/models"
)

// CalendarEntry is a single send on the calendar: scheduled (status 1) at
// its send time, or sent (running or completed) at its start.
type CalendarEntry struct {
	Utr    string
	Name   string
	Status models.SendStatus
	Armed  int
	At     time.Time // UTC
	Sent   bool
}

// Calendar lists the account's single sends scheduled or sent in
// [from, to), in time order: scheduled ones by send_after, sent ones by
// sent_at, each read over an index of (user_id, column). Drafts, whose
// schedule is only a wish, are not on it.
func (s *SingleSends) Calendar(ctx context.Context, accountID int64, from, to time.Time) ([]CalendarEntry, error) {
	var out []CalendarEntry
	var rows []models.SingleSend
	q := accountSends(s.db.R.WithContext(ctx).Model(&models.SingleSend{}), accountID).
		Select("id, utr, single_send_name, status, armed, send_after, sent_at")
	if err := q.Where("status = ? AND armed = 1 AND send_after >= ? AND send_after < ?", models.SendReady, models.NewTimestamp(from), models.NewTimestamp(to)).
		Order("send_after, id").Find(&rows).Error; err != nil {
		return nil, fmt.Errorf("calendar: scheduled sends of account %d: %w", accountID, err)
	}
	for _, r := range rows {
		if r.SendAfter != nil {
			out = append(out, CalendarEntry{Utr: r.Utr, Name: r.SingleSendName, Status: r.Status, Armed: r.Armed, At: r.SendAfter.Time.UTC()})
		}
	}
	rows = rows[:0]
	q = accountSends(s.db.R.WithContext(ctx).Model(&models.SingleSend{}), accountID).
		Select("id, utr, single_send_name, status, armed, send_after, sent_at")
	if err := q.Where("status >= ? AND sent_at >= ? AND sent_at < ?", models.SendRunning, models.DateTime{Time: from.UTC()}, models.DateTime{Time: to.UTC()}).
		Order("sent_at, id").Find(&rows).Error; err != nil {
		return nil, fmt.Errorf("calendar: sent sends of account %d: %w", accountID, err)
	}
	for _, r := range rows {
		out = append(out, CalendarEntry{Utr: r.Utr, Name: r.SingleSendName, Status: r.Status, Armed: r.Armed, At: r.SentAt.Time.UTC(), Sent: true})
	}
	sort.SliceStable(out, func(i, j int) bool { return out[i].At.Before(out[j].At) })
	return out, nil
}
