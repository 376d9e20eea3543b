package campaign

import (
	"context"
	"fmt"
	"slices"

	"herald/models"
	"herald/service/internal/record"
)

// Enrolment is where an automation's contacts stand: how many joined, are
// on their way, finished, or left early, and per email how many wait for
// it and when the first of them is due.
type Enrolment struct {
	Enrolled int64
	Active   int64 // on their way: an email still to come
	Finished int64 // got the last email
	Exited   int64 // left early (exit criteria)
	Waiting  []StepWaiting
}

// StepWaiting is how many enrolled contacts wait for one email (by its
// 0-based position) and when the first is due.
type StepWaiting struct {
	Path     string // the line of the step (models.PathMain, PathA, PathB)
	Step     int
	Contacts int64
	FirstDue int64 // Unix ms
}

// Enrolment counts the automation's enrolled contacts by state and, for
// those on their way, by the email they wait for. It reads the
// automation's own rows of automation_contacts (grouped, along its
// (automation_id, state, due_at) index). Errors: ErrNotFound.
func (s *Automations) Enrolment(ctx context.Context, accountID int64, utr string) (Enrolment, error) {
	var e Enrolment
	a, err := s.Get(ctx, accountID, utr)
	if err != nil {
		return e, fmt.Errorf("automations: enrolment: %w", err)
	}
	var rows []struct {
		State    int
		Path     string
		Step     int
		Contacts int64
		FirstDue int64
	}
	err = s.db.R.WithContext(ctx).Table("automation_contacts").
		Select("state, path, step, COUNT(*) AS contacts, MIN(due_at) AS first_due").
		Where("automation_id = ? AND user_id = ?", a.ID, accountID).
		Group("state, path, step").Order("state, path, step").Scan(&rows).Error
	if err != nil {
		return e, fmt.Errorf("automations: enrolment of automation %d: %w", a.ID, err)
	}
	for _, r := range rows {
		e.Enrolled += r.Contacts
		switch r.State {
		case models.EnrolActive:
			e.Active += r.Contacts
			e.Waiting = append(e.Waiting, StepWaiting{Path: r.Path, Step: r.Step, Contacts: r.Contacts, FirstDue: r.FirstDue})
		case models.EnrolDone:
			e.Finished += r.Contacts
		case models.EnrolExited:
			e.Exited += r.Contacts
		}
	}
	return e, nil
}

// StepContactsPageSize is how many contacts one page of a step's list
// holds.
const StepContactsPageSize = 50

// StepContact is one contact waiting at a step.
type StepContact struct {
	ContactID *int64
	Email     string
	FirstName string
	LastName  string
	DueAt     int64 // Unix ms: when the step is due for it (a branch: when its wait runs out)
}

// StepContacts returns one page (1-based) of the contacts waiting at one
// step of the automation (an email or the branch), in enrolment order,
// and whether a next page follows. It reads along the
// automation_contacts_step index (automation, state, path, step, id).
// Errors: ErrNotFound (no such automation or step of the account).
func (s *Automations) StepContacts(ctx context.Context, accountID int64, utr, stepUtr string, page int) ([]StepContact, bool, error) {
	a, r, err := s.schedule(ctx, accountID, utr, stepUtr)
	if err != nil {
		return nil, false, fmt.Errorf("automations: contacts of a step: %w", err)
	}
	lines, err := record.StepLines(s.db.R.WithContext(ctx), a.ID)
	if err != nil {
		return nil, false, fmt.Errorf("automations: contacts of a step: %w", err)
	}
	idx := slices.IndexFunc(lines[r.Path], func(x models.AutomationSchedule) bool { return x.ID == r.ID })
	if page < 1 {
		page = 1
	}
	var rows []StepContact
	err = s.db.R.WithContext(ctx).Table("automation_contacts").Select("contact_id, email, first_name, last_name, due_at").
		Where("automation_id = ? AND state = ? AND path = ? AND step = ? AND user_id = ?", a.ID, models.EnrolActive, r.Path, idx, accountID).
		Order("id").Offset((page - 1) * StepContactsPageSize).Limit(StepContactsPageSize + 1).Scan(&rows).Error
	if err != nil {
		return nil, false, fmt.Errorf("automations: contacts of step %d: %w", r.ID, err)
	}
	more := len(rows) > StepContactsPageSize
	if more {
		rows = rows[:StepContactsPageSize]
	}
	return rows, more, nil
}
