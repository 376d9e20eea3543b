package deliverability

import (
	"context"
	"fmt"
	"strings"

	"gorm.io/gorm"
	"gorm.io/gorm/clause"

	"herald/models"
	"herald/service/core"
)

// Notifications keeps the addresses that receive the account's
// notifications (a send completed, an import ended).
type Notifications struct{ db *core.DB }

// NotificationInput is the body of a notification recipient save.
type NotificationInput struct {
	EmailAddress string
	EmailOwner   string
}

// Each calls fn for every notification recipient of the account.
func (n *Notifications) Each(ctx context.Context, accountID int64, f core.ListFilter, fn func(*models.NotificationRecipient) error) error {
	return core.Each(ctx, f, "", func() *gorm.DB {
		q := n.db.R.Model(&models.NotificationRecipient{}).Where("user_id = ?", accountID)
		if f.Search != "" {
			pat := core.LikePattern(strings.ToLower(strings.TrimSpace(f.Search)))
			q = q.Where(`(email_address LIKE ? ESCAPE '\' OR LOWER(email_owner) LIKE ? ESCAPE '\')`, pat, pat)
		}
		return q
	}, func(r *models.NotificationRecipient) int64 { return r.ID }, fn)
}

// Save adds a recipient; saving an address already there updates its
// owner's name instead of adding it twice. Errors: validation.
func (n *Notifications) Save(ctx context.Context, accountID int64, in NotificationInput) (*models.NotificationRecipient, error) {
	p := core.Problems{}
	email, ok := core.NormalizeEmail(in.EmailAddress)
	if p.Required("email_address", in.EmailAddress) && !ok {
		p.AddReason("email_address", core.ReasonEmail, core.MsgEmail("email_address"))
	}
	owner := strings.TrimSpace(in.EmailOwner)
	if owner == "" {
		// The spec documents this one text without the usual period.
		p.AddReason("email_owner", core.ReasonRequired, "The name field is required")
	} else {
		p.MaxLen("email_owner", owner, 255)
		p.SingleLine("email_owner", owner) // the To name of the notification mails
	}
	if err := p.Err(); err != nil {
		return nil, err
	}
	now := models.NewTimestamp(n.db.Now())
	r := &models.NotificationRecipient{UserID: accountID, EmailAddress: email, EmailOwner: owner, CreatedAt: now, UpdatedAt: now}
	err := n.db.W.WithContext(ctx).Transaction(func(tx *gorm.DB) error {
		if err := core.TouchLists(tx, accountID); err != nil {
			return err
		}
		if err := tx.Clauses(clause.OnConflict{
			Columns:   []clause.Column{{Name: "user_id"}, {Name: "email_address"}},
			DoUpdates: clause.AssignmentColumns([]string{"email_owner", "updated_at"}),
		}).Create(r).Error; err != nil {
			return fmt.Errorf("notifications: save a recipient of account %d: %w", accountID, err)
		}
		return tx.Where("user_id = ? AND email_address = ?", accountID, email).First(r).Error
	})
	if err != nil {
		return nil, fmt.Errorf("notifications: save: %w", err)
	}
	return r, nil
}

// Delete removes one recipient. Errors: ErrNotFound.
func (n *Notifications) Delete(ctx context.Context, accountID, id int64) error {
	return core.DeleteAll(ctx, n.db, accountID, &models.NotificationRecipient{}, []int64{id}, core.NoScope)
}

// BulkDelete removes all the listed recipients, or none. Errors: ErrNotFound.
func (n *Notifications) BulkDelete(ctx context.Context, accountID int64, ids []int64) error {
	return core.DeleteAll(ctx, n.db, accountID, &models.NotificationRecipient{}, ids, core.NoScope)
}
