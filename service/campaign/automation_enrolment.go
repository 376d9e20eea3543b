package campaign

import (
	"context"
	"fmt"

	"herald/models"
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
