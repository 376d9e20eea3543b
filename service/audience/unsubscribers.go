package audience

import (
	"context"
	"fmt"
	"strings"

	"gorm.io/gorm"
	"gorm.io/gorm/clause"

	"herald/models"
	"herald/service/core"
)

// Unsubscribers keeps the account's global unsubscribers: addresses no
// mail of the account goes to.
type Unsubscribers struct{ db *core.DB }

func globalScope(q *gorm.DB) *gorm.DB { return q.Where("unsubscribe_groups_id IS NULL") }

// Each calls fn for every global unsubscriber of the account (narrowed by
// f.Search on the address), in id order, reading in batches.
func (s *Unsubscribers) Each(ctx context.Context, accountID int64, f core.ListFilter, fn func(*models.Unsubscriber) error) error {
	return core.Each(ctx, f, "", func() *gorm.DB {
		q := globalScope(s.db.R.Model(&models.Unsubscriber{}).Where("user_id = ?", accountID))
		if f.Search != "" {
			q = q.Where(`email_address LIKE ? ESCAPE '\'`, core.LikePattern(strings.ToLower(strings.TrimSpace(f.Search))))
		}
		return q
	}, func(u *models.Unsubscriber) int64 { return u.ID }, fn)
}

// Add suppresses every address of list (separated by commas). Addresses
// already there are left as they are. It returns how many were new.
// Errors: validation (missing or invalid address; then nothing is added).
func (s *Unsubscribers) Add(ctx context.Context, accountID int64, list string) (int, error) {
	emails, err := parseEmailList("email_address", list)
	if err != nil {
		return 0, err
	}
	return insertUnsubscribers(ctx, s.db.W, accountID, nil, emails)
}

// Delete removes one global unsubscriber. Errors: ErrNotFound.
func (s *Unsubscribers) Delete(ctx context.Context, accountID, id int64) error {
	if err := core.DeleteAll(ctx, s.db, accountID, &models.Unsubscriber{}, []int64{id}, globalScope); err != nil {
		return core.Wrapf(err, "unsubscribers: delete %d", id)
	}
	return nil
}

// BulkDelete removes all the listed global unsubscribers, or none.
// Errors: ErrNotFound when any id is not one of the account's.
func (s *Unsubscribers) BulkDelete(ctx context.Context, accountID int64, ids []int64) error {
	if err := core.DeleteAll(ctx, s.db, accountID, &models.Unsubscriber{}, ids, globalScope); err != nil {
		return core.Wrapf(err, "unsubscribers: delete %d", len(ids))
	}
	return nil
}

// parseEmailList validates a required list of addresses.
func parseEmailList(field, list string) ([]string, error) {
	p := core.Problems{}
	if !p.Required(field, list) {
		return nil, p.Err()
	}
	good, bad := core.SplitEmails(list)
	if len(bad) > 0 || len(good) == 0 {
		p.AddReason(field, core.ReasonEmail, core.MsgEmail(field))
		e := p.Err().(*core.Error)
		e.Items = map[string][]string{field: bad}
		return nil, e
	}
	return good, nil
}

// insertUnsubscribers adds the addresses to the global list (group nil) or
// a group, skipping those already there, in batches within one transaction.
func insertUnsubscribers(ctx context.Context, w *gorm.DB, accountID int64, group *int64, emails []string) (int, error) {
	now := models.NewTimestamp(w.NowFunc())
	added := 0
	err := w.WithContext(ctx).Transaction(func(tx *gorm.DB) error {
		if err := core.TouchLists(tx, accountID); err != nil {
			return err
		}
		const chunk = 500
		for start := 0; start < len(emails); start += chunk {
			part := emails[start:min(start+chunk, len(emails))]
			rows := make([]models.Unsubscriber, len(part))
			for i, e := range part {
				rows[i] = models.Unsubscriber{UserID: accountID, UnsubscribeGroupsID: group, EmailAddress: e, CreatedAt: now, UpdatedAt: now}
			}
			res := tx.Clauses(clause.OnConflict{DoNothing: true}).Create(&rows)
			if res.Error != nil {
				return res.Error
			}
			added += int(res.RowsAffected)
		}
		return nil
	})
	if err != nil {
		return 0, fmt.Errorf("unsubscribers: add %d addresses: %w", len(emails), err)
	}
	return added, nil
}
