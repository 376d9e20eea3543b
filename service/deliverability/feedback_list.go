package deliverability

import (
	"context"
	"fmt"
	"strings"
	"time"

	"gorm.io/gorm"

	"herald/models"
	"herald/service/core"
	"herald/service/internal/record"
)

// FeedbackFilter narrows the reports listed: a kind (Feedback… constant,
// "" all) and the list's paging and search (an address substring).
type FeedbackFilter struct {
	core.ListFilter
	Kind string
}

// Each calls fn for the account's handled reports, newest first.
func (f *Feedback) Each(ctx context.Context, accountID int64, ff FeedbackFilter, fn func(*models.Feedback) error) error {
	q := func() *gorm.DB {
		q := f.db.R.WithContext(ctx).Model(&models.Feedback{}).Where("user_id = ?", accountID)
		if ff.Kind != "" {
			q = q.Where("kind = ?", ff.Kind)
		}
		if s := strings.TrimSpace(ff.Search); s != "" {
			q = q.Where(`email LIKE ? ESCAPE '\'`, core.LikePattern(strings.ToLower(s)))
		}
		return q
	}
	if ff.PerPage > 0 {
		per, page := min(ff.PerPage, core.MaxPerPage), max(ff.Page, 1)
		var rows []models.Feedback
		if err := q().Order("id DESC").Limit(per).Offset((page - 1) * per).Find(&rows).Error; err != nil {
			return fmt.Errorf("feedback: page of reports of account %d: %w", accountID, err)
		}
		for i := range rows {
			if err := fn(&rows[i]); err != nil {
				return err
			}
		}
		return nil
	}
	last := int64(-1)
	for {
		var rows []models.Feedback
		qq := q()
		if last >= 0 {
			qq = qq.Where("id < ?", last)
		}
		if err := qq.Order("id DESC").Limit(core.BatchSize).Find(&rows).Error; err != nil {
			return fmt.Errorf("feedback: reports of account %d: %w", accountID, err)
		}
		for i := range rows {
			if err := fn(&rows[i]); err != nil {
				return err
			}
		}
		if len(rows) < core.BatchSize {
			return nil
		}
		last = rows[len(rows)-1].ID
	}
}

// FeedbackSummary is an account's reports of a period beside what it
// delivered then.
type FeedbackSummary struct {
	Since                                              time.Time
	Delivered                                          int64
	HardBounces, SoftBounces, Complaints, Unsubscribes int64
}

// Summary counts the account's reports since a time, and the messages its
// sends first sent since then delivered (the rates' base: the sends'
// counters, not a scan of the ledger).
func (f *Feedback) Summary(ctx context.Context, accountID int64, since time.Time) (FeedbackSummary, error) {
	s := FeedbackSummary{Since: since}
	var rows []struct {
		Kind string
		N    int64
	}
	if err := f.db.R.WithContext(ctx).Model(&models.Feedback{}).Select("kind, COUNT(*) AS n").
		Where("user_id = ? AND created_at >= ?", accountID, models.NewTimestamp(since)).Group("kind").Scan(&rows).Error; err != nil {
		return s, fmt.Errorf("feedback: summary of account %d: %w", accountID, err)
	}
	for _, r := range rows {
		switch r.Kind {
		case record.FeedbackHardBounce:
			s.HardBounces = r.N
		case record.FeedbackSoftBounce:
			s.SoftBounces = r.N
		case record.FeedbackComplaint:
			s.Complaints = r.N
		case record.FeedbackUnsubscribe:
			s.Unsubscribes = r.N
		}
	}
	err := f.db.R.WithContext(ctx).Model(&models.SingleSend{}).Select("COALESCE(SUM(delivered), 0)").
		Where("user_id = ? AND sent_at >= ?", accountID, models.DateTime{Time: since.UTC()}).Scan(&s.Delivered).Error
	if err != nil {
		return s, fmt.Errorf("feedback: delivered of account %d: %w", accountID, err)
	}
	return s, nil
}
