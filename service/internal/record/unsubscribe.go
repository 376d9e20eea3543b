package record

// The unsubscribe writes every path shares (a link, a mailto, a report, a
// provider).

import (
	"context"
	"fmt"

	"gorm.io/gorm"

	"herald/models"
	"herald/service/core"
)

// CountUnsubscribe counts the message's unsubscribe once on its send.
func CountUnsubscribe(tx *gorm.DB, m *models.SendMessage) error {
	now := tx.NowFunc()
	res := tx.Exec("UPDATE send_messages SET unsubscribed_at = ? WHERE id = ? AND unsubscribed_at IS NULL", now, m.ID)
	if res.Error != nil {
		return fmt.Errorf("tracking: mark message %d unsubscribed: %w", m.ID, res.Error)
	}
	if res.RowsAffected == 0 {
		return nil
	}
	if err := tx.Exec("UPDATE single_sends SET unsubscribes = unsubscribes + 1 WHERE id = ?", m.SendID).Error; err != nil {
		return fmt.Errorf("tracking: count an unsubscribe on send %d: %w", m.SendID, err)
	}
	return AddDaily(tx, m.UserID, now, Daily{dailyUnsubscribes: 1})
}

// AddUnsubscriber adds one address to a group (or the global list when
// group is nil) inside tx; already there is fine. A new one writes the
// unsubscribe (group_unsubscribe) event about m, when m is given.
func AddUnsubscriber(ctx context.Context, tx *gorm.DB, events *Events, m *models.SendMessage, accountID int64, group *int64, email string) error {
	if err := core.TouchLists(tx, accountID); err != nil {
		return fmt.Errorf("tracking: add unsubscriber: %w", err)
	}
	now := models.NewTimestamp(tx.NowFunc())
	row := models.Unsubscriber{UserID: accountID, UnsubscribeGroupsID: group, EmailAddress: email, CreatedAt: now, UpdatedAt: now}
	var n int64
	q := tx.Model(&models.Unsubscriber{}).Where("user_id = ? AND email_address = ?", accountID, email)
	if group == nil {
		q = q.Where("unsubscribe_groups_id IS NULL")
	} else {
		q = q.Where("unsubscribe_groups_id = ?", *group)
	}
	if err := q.Count(&n).Error; err != nil {
		return fmt.Errorf("tracking: add unsubscriber: %w", err)
	}
	if n > 0 {
		return nil
	}
	if err := tx.WithContext(ctx).Create(&row).Error; err != nil {
		return fmt.Errorf("tracking: add unsubscriber: %w", err)
	}
	if m == nil {
		return nil
	}
	if group == nil {
		return events.Record(tx, m, EventUnsubscribe, EventExtra{}, now.Time)
	}
	return events.Record(tx, m, EventGroupUnsubscribe, EventExtra{GroupID: group}, now.Time)
}
