package record

// The order of an automation's steps and each step's wait, shared by the
// campaign and the engine.

import (
	"fmt"
	"time"

	"gorm.io/gorm"

	"herald/models"
)

func OrderedSchedules(tx *gorm.DB, automationID int64) ([]models.AutomationSchedule, error) {
	var rows []models.AutomationSchedule
	if err := tx.Where("automation_id = ?", automationID).Order("position, id").Find(&rows).Error; err != nil {
		return nil, fmt.Errorf("automations: emails of automation %d: %w", automationID, err)
	}
	return rows, nil
}

// WaitOf is how long an email waits after the previous one.
func WaitOf(r *models.AutomationSchedule) time.Duration {
	switch r.WaitingType {
	case "hours":
		return time.Duration(r.WaitingPeriod) * time.Hour
	case "days":
		return time.Duration(r.WaitingPeriod) * 24 * time.Hour
	}
	return 0
}

// StepWait is exported for the console's timeline (how long after the
// previous email).
func StepWait(r *models.AutomationSchedule) time.Duration { return WaitOf(r) }
