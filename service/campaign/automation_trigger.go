package campaign

import (
	"context"
	"errors"
	"fmt"

	"gorm.io/gorm"
	"gorm.io/gorm/clause"

	"herald/models"
	"herald/service/core"
	"herald/service/internal/record"
)

// TriggerInput is the body of POST api/automations/trigger.
type TriggerInput struct {
	Automation    string // the automation's utr
	Email         string // a contact of the automation's contact type
	Data          map[string]string
	DataNotObject bool // data came as a plain value, not an object
}

// Messages of a refused trigger.
const (
	msgTriggerNotAPI   = "The automation does not start from the API."
	msgTriggerNotLive  = "The automation is not live."
	msgTriggerNotInTyp = "The email is not a contact of the automation's contact type."
)

// Trigger enrols one contact in an automation that starts from the API,
// with data filling the ((data.<key>)) placeholders of the automation's
// emails to that contact. It answers whether the contact was enrolled
// now: false when it already was (an address is enrolled once per
// automation; the unique (automation_id, email) index decides between
// concurrent calls, in one process or several), and then the first
// call's data stays. The first email goes after its waiting period, as
// for any enrolment. Errors: validation (automation, email, data; every
// problem at once), ErrNotFound (no such automation of the account),
// validation with a message (not an API automation, not live).
func (s *Automations) Trigger(ctx context.Context, accountID int64, in TriggerInput) (bool, error) {
	p := core.Problems{}
	p.Required("automation", in.Automation)
	email, ok := core.NormalizeEmail(in.Email)
	if p.Required("email", in.Email) && !ok {
		p.AddReason("email", core.ReasonEmail, core.MsgEmail("email"))
	}
	data, err := checkData(p, in.Data, in.DataNotObject)
	if err != nil {
		return false, fmt.Errorf("automations: trigger: %w", err)
	}
	if err := p.Err(); err != nil {
		return false, fmt.Errorf("automations: trigger: %w", err)
	}
	a, err := s.Get(ctx, accountID, in.Automation)
	if err != nil {
		return false, fmt.Errorf("automations: trigger: %w", err)
	}
	if a.TriggerKind != models.TriggerAPI {
		return false, &core.Error{Code: core.CodeValidation, Message: msgTriggerNotAPI}
	}
	if a.Status != models.AutomationLive {
		return false, &core.Error{Code: core.CodeValidation, Message: msgTriggerNotLive}
	}
	var ct models.Contact
	err = s.db.R.WithContext(ctx).Select("id", "email", "first_name", "last_name").
		Where("user_id = ? AND contact_type_id = ? AND email = ? AND deleted_at IS NULL", accountID, a.AutomationFor, email).
		Take(&ct).Error
	switch {
	case errors.Is(err, gorm.ErrRecordNotFound):
		return false, core.Invalid("email", msgTriggerNotInTyp)
	case err != nil:
		return false, fmt.Errorf("automations: trigger: contact %q of automation %d: %w", email, a.ID, err)
	}
	lines, err := record.StepLines(s.db.R.WithContext(ctx), a.ID)
	if err != nil {
		return false, fmt.Errorf("automations: trigger: %w", err)
	}
	main := lines[models.PathMain]
	if len(main) == 0 {
		return false, &core.Error{Code: core.CodeValidation, Message: msgNoSchedule}
	}
	now := s.db.Now()
	ts := models.NewTimestamp(now)
	row := models.AutomationContact{AutomationID: a.ID, UserID: accountID, ContactID: &ct.ID, Email: ct.Email, FirstName: ct.FirstName,
		LastName: ct.LastName, DueAt: now.Add(record.WaitOf(&main[0])).UnixMilli(), EnrolledAt: ts, UpdatedAt: ts, Data: &data}
	res := s.db.W.WithContext(ctx).Clauses(clause.OnConflict{DoNothing: true}).Create(&row)
	if res.Error != nil {
		return false, fmt.Errorf("automations: trigger: enrol %q in automation %d: %w", email, a.ID, res.Error)
	}
	if res.RowsAffected == 0 {
		return false, nil
	}
	s.engine.Wake()
	return true, nil
}
