package deliverability

import (
	"context"
	"fmt"
	"strings"

	"gorm.io/gorm"

	"herald/models"
	"herald/service/core"
)

// Suppressions lists the addresses that bounced for good; later sends
// leave them out until a person lifts them.
type Suppressions struct{ db *core.DB }

// Each calls fn for the account's suppressed addresses.
func (s *Suppressions) Each(ctx context.Context, accountID int64, f core.ListFilter, fn func(*models.Suppression) error) error {
	return core.Each(ctx, f, "", func() *gorm.DB {
		q := s.db.R.Model(&models.Suppression{}).Where("user_id = ?", accountID)
		if f.Search != "" {
			q = q.Where(`email LIKE ? ESCAPE '\'`, core.LikePattern(strings.ToLower(strings.TrimSpace(f.Search))))
		}
		return q
	}, func(m *models.Suppression) int64 { return m.ID }, fn)
}

// Lift removes one suppressed address: later sends include it again.
// Errors: ErrNotFound.
func (s *Suppressions) Lift(ctx context.Context, accountID, id int64) error {
	return s.LiftAll(ctx, accountID, []int64{id})
}

// LiftAll lifts the addresses ids, all or none: ErrNotFound when one of
// them is not the account's.
func (s *Suppressions) LiftAll(ctx context.Context, accountID int64, ids []int64) error {
	return core.DeleteAll(ctx, s.db, accountID, &models.Suppression{}, ids, core.NoScope)
}

// Count returns how many addresses the account has suppressed.
func (s *Suppressions) Count(ctx context.Context, accountID int64) (int64, error) {
	var n int64
	if err := s.db.R.WithContext(ctx).Model(&models.Suppression{}).Where("user_id = ?", accountID).Count(&n).Error; err != nil {
		return n, fmt.Errorf("suppressions: count: %w", err)
	}
	return n, nil
}

// EachLifted calls fn for the account's suppressions the bounce rules'
// repair lifted (migration 00036); a search narrows them by address. Pages
// (f.PerPage) come newest lifted first, the id breaking a tie, read by the
// (user_id, lifted_at, id) index backwards; the whole list comes by id,
// the last made first.
func (s *Suppressions) EachLifted(ctx context.Context, accountID int64, f core.ListFilter, fn func(*models.LiftedSuppression) error) error {
	f.Sort, f.Desc, f.Newest = "", true, true
	f = f.SortedBy(map[string]string{"": "lifted_at"})
	return core.Each(ctx, f, "", func() *gorm.DB {
		q := s.db.R.Model(&models.LiftedSuppression{}).Where("user_id = ?", accountID)
		if f.Search != "" {
			q = q.Where(`email LIKE ? ESCAPE '\'`, core.LikePattern(strings.ToLower(strings.TrimSpace(f.Search))))
		}
		return q
	}, func(m *models.LiftedSuppression) int64 { return m.ID }, fn)
}

// LiftedCount returns how many of the account's suppressions the bounce
// rules' repair lifted.
func (s *Suppressions) LiftedCount(ctx context.Context, accountID int64) (int64, error) {
	var n int64
	if err := s.db.R.WithContext(ctx).Model(&models.LiftedSuppression{}).Where("user_id = ?", accountID).Count(&n).Error; err != nil {
		return n, fmt.Errorf("suppressions: count lifted: %w", err)
	}
	return n, nil
}
