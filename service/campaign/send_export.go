package campaign

import (
	"context"
	"encoding/csv"
	"fmt"
	"io"
	"strconv"

	"herald/models"
	"herald/service/core"
	"herald/service/internal/record"
)

// RecipientColumns are the columns of a send's per-recipient CSV.
var RecipientColumns = []string{"email", "first_name", "last_name", "outcome", "sent_at", "opened_at", "clicked_at", "unsubscribed_at", "bounced_at", "complained_at", "error"}

// WriteRecipientsCSV writes one row per recipient of the account's send
// ss: what became of its message (ContactMail.Outcome's words) and when.
// Rows are read by keyset batches of the send's ledger, so memory does
// not grow with the audience; cells pass SafeCell.
func (s *SingleSends) WriteRecipientsCSV(ctx context.Context, accountID int64, ss *models.SingleSend, w io.Writer) error {
	return s.WriteRecipientsCSVProgress(ctx, accountID, ss, w, nil)
}

// WriteRecipientsCSVProgress is WriteRecipientsCSV, calling progress (when not
// nil) with the rows of each batch once they are written to w (the
// background export, export_jobs.go).
func (s *SingleSends) WriteRecipientsCSVProgress(ctx context.Context, accountID int64, ss *models.SingleSend, w io.Writer, progress func(rows int) error) error {
	cw := csv.NewWriter(w)
	if err := cw.Write(RecipientColumns); err != nil {
		return err
	}
	stamp := func(t *models.Timestamp) string {
		if t == nil {
			return ""
		}
		return t.UTC().Format("2006-01-02 15:04:05")
	}
	var last int64
	var rows []models.SendMessage
	for {
		rows = rows[:0]
		err := s.db.R.WithContext(ctx).
			Select("id", "email", "first_name", "last_name", "state", "error", "sent_at", "opened_at", "clicked_at", "unsubscribed_at", "hard_bounced_at", "soft_bounced_at", "complained_at").
			Where("send_id = ? AND user_id = ? AND id > ?", ss.ID, accountID, last).Order("id").Limit(core.BatchSize).Find(&rows).Error
		if err != nil {
			return fmt.Errorf("exports: messages of send %d: %w", ss.ID, err)
		}
		for _, m := range rows {
			mail := record.ContactMail{State: m.State, SentAt: m.SentAt, OpenedAt: m.OpenedAt, ClickedAt: m.ClickedAt,
				UnsubscribedAt: m.UnsubscribedAt, HardBouncedAt: m.HardBouncedAt, SoftBouncedAt: m.SoftBouncedAt, ComplainedAt: m.ComplainedAt}
			bounced := m.HardBouncedAt
			if bounced == nil {
				bounced = m.SoftBouncedAt
			}
			rec := []string{m.Email, m.FirstName, m.LastName, mail.Outcome(), stamp(m.SentAt), stamp(m.OpenedAt), stamp(m.ClickedAt),
				stamp(m.UnsubscribedAt), stamp(bounced), stamp(m.ComplainedAt), m.Error}
			for i := range rec {
				rec[i] = core.SafeCell(rec[i])
			}
			if err := cw.Write(rec); err != nil {
				return err
			}
		}
		cw.Flush()
		if err := cw.Error(); err != nil {
			return err
		}
		if progress != nil {
			if err := progress(len(rows)); err != nil {
				return err
			}
		}
		if len(rows) < core.BatchSize {
			return nil
		}
		last = rows[len(rows)-1].ID
	}
}

// WriteStatisticsCSV writes a send's statistics as rows of metric, all,
// by people (the part taken for a person's where herald tells them
// apart), then one row per tracked link with its clicks.
func (s *SingleSends) WriteStatisticsCSV(ctx context.Context, ss *models.SingleSend, w io.Writer) error {
	_, links, err := s.Activity(ctx, ss)
	if err != nil {
		return fmt.Errorf("exports: statistics of send %d: %w", ss.ID, err)
	}
	cw := csv.NewWriter(w)
	n := func(v int64) string { return strconv.FormatInt(v, 10) }
	rows := [][]string{
		{"metric", "all", "by people"},
		{"recipients", n(ss.Triggered), ""},
		{"delivered", n(ss.Delivered), ""},
		{"unique opens", n(ss.UniqueOpens), n(ss.HumanUniqueOpens)},
		{"total opens", n(ss.TotalOpens), n(ss.HumanTotalOpens)},
		{"unique clicks", n(ss.UniqueClicks), n(ss.HumanUniqueClicks)},
		{"total clicks", n(ss.TotalClicks), n(ss.HumanTotalClicks)},
		{"bounces", n(ss.Bounces), ""},
		{"soft bounces", n(ss.SoftBounces), ""},
		{"refused by the relay", n(ss.Blocks), ""},
		{"spam complaints", n(ss.SpamReports), ""},
		{"unsubscribes", n(ss.Unsubscribes), ""},
	}
	for _, l := range links {
		rows = append(rows, []string{"clicks on " + core.SafeCell(l.URL), n(l.Clicks), n(l.Human)})
	}
	if err := cw.WriteAll(rows); err != nil {
		return err
	}
	return cw.Error()
}
