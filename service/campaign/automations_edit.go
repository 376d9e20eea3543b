package campaign

import (
	"context"
	"fmt"

	"gorm.io/gorm"

	"herald/models"
	"herald/service/core"
)

// Messages of a change refused on a live automation.
const (
	msgLiveTarget  = "The contact type or segment of a live automation cannot change. Pause it first."
	msgLiveGroup   = "A live automation needs an unsubscribe group."
	msgLiveTrigger = "How a live automation starts cannot change. Pause it first."
)

// Update changes an automation's name, target, unsubscribe group and exit
// criteria (its type stays what it was created as). A live automation
// keeps its target, and keeps some group; its emails' sends take the new
// group and name at once. Errors: ErrNotFound; validation (the fields of
// Create, a live automation's target or group).
func (s *Automations) Update(ctx context.Context, accountID int64, utr string, in AutomationInput) (*models.Automation, error) {
	cur, err := s.Get(ctx, accountID, utr)
	if err != nil {
		return nil, fmt.Errorf("automations: update: %w", err)
	}
	in.Type = "custom"
	if cur.AutomationType == 0 {
		in.Type = "welcome"
	}
	a, err := s.validate(ctx, accountID, in)
	if err != nil {
		return nil, fmt.Errorf("automations: update: %w", err)
	}
	err = s.db.W.WithContext(ctx).Transaction(func(tx *gorm.DB) error {
		// The state is read again inside the transaction: it may have gone
		// live since Get.
		var now models.Automation
		if err := tx.Where("id = ? AND deleted_at IS NULL", cur.ID).First(&now).Error; err != nil {
			return core.NotFound(err)
		}
		if now.Status == models.AutomationLive {
			p := core.Problems{}
			if a.AutomationFor != now.AutomationFor || a.AutomationForTable != now.AutomationForTable {
				p.Add("automation_for", msgLiveTarget)
			}
			if a.TriggerKind != now.TriggerKind || a.DateField != now.DateField || a.DateOffsetDays != now.DateOffsetDays || a.DateYearly != now.DateYearly {
				p.Add("trigger", msgLiveTrigger)
			}
			if a.UnsubscribeGroupID == "0" {
				p.Add("unsubscribe_group_id", msgLiveGroup)
			}
			if err := p.Err(); err != nil {
				return err
			}
		}
		if err := tx.Model(&models.Automation{}).Where("id = ?", cur.ID).Updates(map[string]any{
			"automation_for": a.AutomationFor, "automation_for_table": a.AutomationForTable, "automation_name": a.AutomationName,
			"unsubscribe_group_id": a.UnsubscribeGroupID, "exit_criteria": a.ExitCriteria, "trigger_kind": a.TriggerKind,
			"date_field": a.DateField, "date_offset_days": a.DateOffsetDays, "date_yearly": a.DateYearly, "updated_at": s.db.Now(),
		}).Error; err != nil {
			return fmt.Errorf("automations: update automation %d: %w", cur.ID, err)
		}
		return s.syncSteps(ctx, tx, cur.ID)
	})
	if err != nil {
		return nil, fmt.Errorf("automations: update: %w", err)
	}
	a, err = s.Get(ctx, accountID, cur.Utr)
	if err != nil {
		return nil, fmt.Errorf("automations: update: %w", err)
	}
	return a, nil
}
