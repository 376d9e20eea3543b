package campaign

import (
	"context"
	"fmt"

	"github.com/google/uuid"
	"gorm.io/gorm"

	"herald/models"
	"herald/service/core"
	"herald/service/internal/record"
)

// Messages of the branch step.
const (
	msgBranchNeedsEmail = "Add an email before the branch: it waits for an open or click of one."
	msgBranchTwice      = "The automation already has a branch."
	msgBranchNotEmpty   = "Remove the emails of both paths before the branch."
	msgAfterBranch      = "Add emails after the branch to one of its paths."
	msgNoBranch         = "The automation has no branch: add one first."
	msgBranchKeepsEmail = "Remove the branch first: it needs an email before it."
)

// BranchInput is the console's form of a branch step: how long it waits
// for an open or click before a contact takes the other path.
type BranchInput struct {
	Utr           string // the automation's
	WaitingPeriod string // 1..3650
	WaitingType   string // hours or days
}

// AddBranch ends the automation's main line with a branch: a contact
// arriving there waits until it opens or clicks, as a person, an email of
// the automation (path a), or until the wait runs out (path b). The
// main line needs an email first, and an automation has one branch.
// Errors: ErrNotFound; validation (the wait's fields; the messages above).
func (s *Automations) AddBranch(ctx context.Context, accountID int64, in BranchInput) (*models.AutomationSchedule, error) {
	p := core.Problems{}
	r := &models.AutomationSchedule{UserID: accountID, Kind: models.StepBranch, Path: models.PathMain, TemplateID: 1}
	r.WaitingType, r.WaitingPeriod = checkWait(p, in.WaitingType, in.WaitingPeriod, []string{"hours", "days"}, 1)
	if err := p.Err(); err != nil {
		return nil, fmt.Errorf("automations: add a branch: %w", err)
	}
	a, err := s.Get(ctx, accountID, in.Utr)
	if err != nil {
		return nil, fmt.Errorf("automations: add a branch: %w", err)
	}
	now := models.NewTimestamp(s.db.Now())
	r.AutomationID, r.Utr, r.CreatedAt, r.UpdatedAt = a.ID, uuid.NewString(), now, now
	err = s.db.W.WithContext(ctx).Transaction(func(tx *gorm.DB) error {
		lines, err := record.StepLines(tx, a.ID)
		if err != nil {
			return err
		}
		main := lines[models.PathMain]
		switch {
		case len(main) == 0:
			return &core.Error{Code: core.CodeValidation, Message: msgBranchNeedsEmail}
		case record.IsBranch(&main[len(main)-1]):
			return &core.Error{Code: core.CodeValidation, Message: msgBranchTwice}
		}
		var last int
		if err := tx.Model(&models.AutomationSchedule{}).Select("COALESCE(MAX(position), -1)").Where("automation_id = ?", a.ID).Scan(&last).Error; err != nil {
			return fmt.Errorf("automations: last position in automation %d: %w", a.ID, err)
		}
		r.Position = last + 1
		if err := tx.Create(r).Error; err != nil {
			return fmt.Errorf("automations: add a branch to automation %d: %w", a.ID, err)
		}
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("automations: add a branch: %w", err)
	}
	return r, nil
}

// checkPath refuses an email added to a line that cannot take one: the
// main line once it ends with the branch, a path without a branch.
func checkPath(tx *gorm.DB, automationID int64, path string) error {
	switch path {
	case models.PathMain, models.PathA, models.PathB:
	default:
		return core.Invalid("path", "The selected path is invalid.")
	}
	lines, err := record.StepLines(tx, automationID)
	if err != nil {
		return err
	}
	main := lines[models.PathMain]
	branched := len(main) > 0 && record.IsBranch(&main[len(main)-1])
	switch {
	case path == models.PathMain && branched:
		return &core.Error{Code: core.CodeValidation, Message: msgAfterBranch}
	case path != models.PathMain && !branched:
		return &core.Error{Code: core.CodeValidation, Message: msgNoBranch}
	}
	return nil
}

// UpdateBranchWait changes how long the automation's branch waits, with
// the check of AddBranch. The contacts already waiting at the branch keep
// the time they reached it: each one's deadline becomes that time plus
// the new wait (due_at moves by the difference of the two waits; a
// deadline now past is taken at the next round). One statement moves
// them, on the condition that they still wait at the branch, as the
// engine's own moves are conditional: a contact the engine is moving at
// that moment takes its path once, by the wait it read. Errors:
// ErrNotFound (no automation, or no branch); validation (the wait's
// fields).
func (s *Automations) UpdateBranchWait(ctx context.Context, accountID int64, in BranchInput) (*models.AutomationSchedule, error) {
	p := core.Problems{}
	waitType, period := checkWait(p, in.WaitingType, in.WaitingPeriod, []string{"hours", "days"}, 1)
	if err := p.Err(); err != nil {
		return nil, fmt.Errorf("automations: change the branch's wait: %w", err)
	}
	a, err := s.Get(ctx, accountID, in.Utr)
	if err != nil {
		return nil, fmt.Errorf("automations: change the branch's wait: %w", err)
	}
	var br models.AutomationSchedule
	err = s.db.W.WithContext(ctx).Transaction(func(tx *gorm.DB) error {
		// The branch's row is locked: two edits at once shift the waiting
		// contacts one after the other, each from the wait the other left.
		if err := tx.Raw("SELECT * FROM automation_schedules WHERE automation_id = ? AND user_id = ? AND kind = ?"+s.db.SQL().ForUpdate(),
			a.ID, accountID, models.StepBranch).Scan(&br).Error; err != nil {
			return fmt.Errorf("automations: branch of automation %d: %w", a.ID, err)
		}
		if br.ID == 0 {
			return core.ErrNotFound
		}
		lines, err := record.StepLines(tx, a.ID)
		if err != nil {
			return err
		}
		at := len(lines[models.PathMain]) - 1 // the branch ends the main line
		old := record.WaitOf(&br)
		br.WaitingType, br.WaitingPeriod = waitType, period
		shift := (record.WaitOf(&br) - old).Milliseconds()
		br.UpdatedAt = models.NewTimestamp(s.db.Now())
		if err := tx.Model(&models.AutomationSchedule{}).Where("id = ?", br.ID).Updates(map[string]any{
			"waiting_type": br.WaitingType, "waiting_period": br.WaitingPeriod, "updated_at": br.UpdatedAt}).Error; err != nil {
			return fmt.Errorf("automations: branch %d: %w", br.ID, err)
		}
		if shift == 0 {
			return nil
		}
		return tx.Exec("UPDATE automation_contacts SET due_at = due_at + ?, updated_at = ? WHERE automation_id = ? AND state = ? AND path = ? AND step = ?",
			shift, tx.NowFunc(), a.ID, models.EnrolActive, models.PathMain, at).Error
	})
	if err != nil {
		return nil, fmt.Errorf("automations: change the branch's wait: %w", err)
	}
	return &br, nil
}
