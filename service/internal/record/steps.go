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

// StepLines returns the automation's steps by path (models.PathMain,
// PathA, PathB), each line in position order: an enrolment's step is an
// index into the line of its path.
func StepLines(tx *gorm.DB, automationID int64) (map[string][]models.AutomationSchedule, error) {
	rows, err := OrderedSchedules(tx, automationID)
	if err != nil {
		return nil, err
	}
	return Lines(rows), nil
}

// Lines splits ordered steps by path.
func Lines(rows []models.AutomationSchedule) map[string][]models.AutomationSchedule {
	out := map[string][]models.AutomationSchedule{}
	for _, r := range rows {
		out[r.Path] = append(out[r.Path], r)
	}
	return out
}

// IsBranch tells a branch step from an email.
func IsBranch(r *models.AutomationSchedule) bool { return r.Kind == models.StepBranch }
