package campaign

import (
	"context"
	"fmt"
	"slices"
	"strconv"
	"strings"

	"github.com/google/uuid"
	"gorm.io/gorm"

	"herald/models"
	"herald/service/audience"
	"herald/service/core"
	"herald/service/deliverability"
	"herald/service/engine"
	"herald/service/identity"
	"herald/service/internal/record"
)

// Automations keeps automations and their emails (schedules). Their steps
// are sent by the sending engine (Sending.Tick enrols contacts and queues
// due steps into the send ledger).
type Automations struct {
	db        *core.DB
	templates Templates
	baseURL   string          // design_url and image
	engine    *engine.Signals // tells this process's engine of changed emails and due steps
	checklist *Checklist      // refuses a failing set-live when the account blocks on it
	audit     *identity.Audit
	groups    *audience.Groups // the unsubscribe groups an email may name
}

// AutomationInput is the body of automations/create.
type AutomationInput struct {
	Type               string
	AutomationFor      string
	AutomationName     string
	UnsubscribeGroupID string
	ExitCriteria       string // beyond the spec: 0, 1 or 2 (decisions.md section 6)
	Trigger            string // beyond the spec: "target" (default), "api" or "date"
	// A "date" trigger's date (beyond the spec): the custom field of type
	// datetime-local it reads, the days before (< 0) or after (> 0) that
	// date (-365..365, "" 0), and whether it comes back every year ("1",
	// "true", "on"; "", "0", "false" once).
	DateField      string
	DateOffsetDays string
	DateYearly     string
}

// ScheduleInput is the body of automations/schedule/create (and of the
// console's edit of one email).
type ScheduleInput struct {
	Utr           string // the automation's
	SenderID      string
	Subject       string
	WaitingPeriod string
	WaitingType   string
	TemplateID    string
	PreviewImg    string
	TemplateJSON  string
	TemplateHTML  string
	// Preheader is the console's (not in the API's body, api.md): nil
	// leaves it as it is on update ('' on create); "" is none.
	Preheader *string
	// Path is the line the email goes at the end of: "" the main line, or
	// "a"/"b", a path of the automation's branch (console only).
	Path string
}

// Messages of automation state changes.
const (
	MsgGroupRequired   = "An unsubscribe group is required to make an automation live."
	msgNoSchedule      = "An automation needs at least one email before it can go live."
	msgScheduleSender  = "Every email of the automation needs a verified sender before it can go live."
	msgNoTarget        = "An automation needs a contact type or segment to target before it can go live."
	msgOnlyLivePaused  = "Only a live automation can be paused."
	msgAPITarget       = "An automation started from the API targets a contact type, not a segment."
	msgDateTarget      = "An automation started from a date field targets a contact type, not a segment."
	msgDateField       = "The date field must be one of your custom fields."
	msgDateFieldType   = "The date field must be a custom field of type date (datetime-local)."
	msgDateOffset      = "The date offset must be a whole number of days from -365 to 365."
	defaultWelcomeName = "Welcome series"
	defaultCustomName  = "Custom automation"
)

// Waiting types of a schedule.
var WaitingTypes = []string{"instantly", "hours", "days"}

func (s *Automations) validate(ctx context.Context, accountID int64, in AutomationInput) (*models.Automation, error) {
	p := core.Problems{}
	a := &models.Automation{UserID: accountID, UnsubscribeGroupID: "0"}
	switch typ := strings.TrimSpace(in.Type); {
	case typ == "":
		p.AddReason("type", core.ReasonRequired, core.MsgRequired("type"))
	case typ == "welcome":
		a.AutomationType = 0
	case typ == "custom":
		a.AutomationType = 1
	default:
		p.InvalidChoice("type")
	}
	if v := strings.TrimSpace(in.AutomationFor); v != "" {
		ts, ok := ParseTargets([]string{v})
		if ok {
			var err error
			if ok, err = targetsExist(ctx, s.db.R, accountID, ts); err != nil {
				return nil, fmt.Errorf("automations: check: %w", err)
			}
		}
		if !ok || len(ts) != 1 {
			p.InvalidChoice("automation_for")
		} else {
			a.AutomationFor = ts[0].ItemID()
			a.AutomationForTable = ts[0].Table
		}
	}
	a.AutomationName = strings.TrimSpace(in.AutomationName)
	p.Text("automation_name", a.AutomationName, maxSendName)
	if a.AutomationName == "" {
		a.AutomationName = defaultCustomName
		if a.AutomationType == 0 {
			a.AutomationName = defaultWelcomeName
		}
	}
	if p.Required("unsubscribe_group_id", in.UnsubscribeGroupID) {
		v := strings.TrimSpace(in.UnsubscribeGroupID)
		if v != "0" {
			id, ok, err := accountGroup(ctx, s.groups, p, accountID, v)
			if err != nil {
				return nil, fmt.Errorf("automations: check: %w", err)
			}
			if ok {
				a.UnsubscribeGroupID = strconv.FormatInt(id, 10)
			}
		}
	}
	switch v := strings.TrimSpace(in.Trigger); v {
	case "", models.TriggerTarget:
		a.TriggerKind = models.TriggerTarget
	case models.TriggerAPI:
		a.TriggerKind = models.TriggerAPI
		if a.AutomationForTable == models.TargetSegments && !p.Has("automation_for") {
			p.Add("automation_for", msgAPITarget)
		}
	case models.TriggerDate:
		a.TriggerKind = models.TriggerDate
		if a.AutomationForTable == models.TargetSegments && !p.Has("automation_for") {
			p.Add("automation_for", msgDateTarget)
		}
		if err := s.checkDate(ctx, accountID, in, a, p); err != nil {
			return nil, err
		}
	default:
		p.InvalidChoice("trigger")
	}
	switch v := strings.TrimSpace(in.ExitCriteria); v {
	case "", "0":
	case "1", "2":
		a.ExitCriteria = int(v[0] - '0')
	default:
		p.InvalidChoice("exit_criteria")
	}
	return a, p.Err()
}

// checkDate validates a date trigger's field, offset and repetition into
// a (problems in p). Custom fields are the account's, shared by all its
// contact types.
func (s *Automations) checkDate(ctx context.Context, accountID int64, in AutomationInput, a *models.Automation, p core.Problems) error {
	if name := strings.TrimSpace(in.DateField); p.Required("date_field", name) {
		var fields []models.Field
		if core.FieldNameRE.MatchString(name) {
			if err := s.db.R.WithContext(ctx).Where("user_id = ? AND field_name = ?", accountID, name).Limit(1).Find(&fields).Error; err != nil {
				return fmt.Errorf("automations: check the date field: %w", err)
			}
		}
		switch {
		case len(fields) == 0:
			p.Add("date_field", msgDateField)
		case fields[0].FieldType != "datetime-local":
			p.Add("date_field", msgDateFieldType)
		default:
			a.DateField = name
		}
	}
	if v := strings.TrimSpace(in.DateOffsetDays); v != "" {
		n, err := strconv.Atoi(v)
		if err != nil || n < -365 || n > 365 {
			p.Add("date_offset_days", msgDateOffset)
		} else {
			a.DateOffsetDays = n
		}
	}
	switch strings.ToLower(strings.TrimSpace(in.DateYearly)) {
	case "", "0", "false", "off":
	case "1", "true", "on":
		a.DateYearly = 1
	default:
		p.InvalidChoice("date_yearly")
	}
	return nil
}

// Create saves a draft automation without emails, whatever its type
// (decisions.md 6): an automation holds exactly the emails its owner
// added, so no stock copy reaches real contacts unasked. Errors: validation.
func (s *Automations) Create(ctx context.Context, accountID int64, in AutomationInput) (*models.Automation, error) {
	a, err := s.validate(ctx, accountID, in)
	if err != nil {
		return nil, fmt.Errorf("automations: create: %w", err)
	}
	now := models.NewTimestamp(s.db.Now())
	a.Utr, a.CreatedAt, a.UpdatedAt = uuid.NewString(), now, now
	if err := s.db.W.WithContext(ctx).Create(a).Error; err != nil {
		return nil, fmt.Errorf("automations: save a new automation: %w", err)
	}
	return a, nil
}

// AddWelcomeSeries appends the three prefilled emails of a welcome series
// (welcomeSequence) to the account's automation, from its first verified
// sender (none when it has none yet: the automation cannot go live until
// each email has one). Only the console's explicit choice calls it; each
// email can then be edited or removed like any other. Errors: ErrNotFound.
func (s *Automations) AddWelcomeSeries(ctx context.Context, accountID int64, utr string) ([]models.AutomationSchedule, error) {
	a, err := s.Get(ctx, accountID, utr)
	if err != nil {
		return nil, fmt.Errorf("automations: add a welcome series: %w", err)
	}
	rows := make([]models.AutomationSchedule, 0, len(welcomeSequence))
	err = s.db.W.WithContext(ctx).Transaction(func(tx *gorm.DB) error {
		if err := checkPath(tx, a.ID, models.PathMain); err != nil {
			return err
		}
		var senderID int64
		if err := tx.Model(&models.Sender{}).Select("id").Where("user_id = ? AND is_verified = 1 AND deleted_at IS NULL", accountID).
			Order("id").Limit(1).Scan(&senderID).Error; err != nil {
			return fmt.Errorf("automations: the first verified sender of account %d: %w", accountID, err)
		}
		var last int
		if err := tx.Model(&models.AutomationSchedule{}).Select("COALESCE(MAX(position), -1)").Where("automation_id = ?", a.ID).Scan(&last).Error; err != nil {
			return fmt.Errorf("automations: last position in automation %d: %w", a.ID, err)
		}
		now := models.NewTimestamp(s.db.Now())
		for i, st := range welcomeSequence {
			d, err := s.templates.Design(st.template)
			if err != nil {
				return err
			}
			html := d.HTMLCode
			row := models.AutomationSchedule{UserID: accountID, AutomationID: a.ID, SenderID: senderID, Subject: st.subject,
				WaitingPeriod: st.period, WaitingType: st.unit, Utr: uuid.NewString(), TemplateID: st.template, PreviewImg: d.PreviewImage,
				TemplateHTML: &html, Position: last + 1 + i, CreatedAt: now, UpdatedAt: now}
			if err := tx.Create(&row).Error; err != nil {
				return fmt.Errorf("automations: add a welcome email to automation %d: %w", a.ID, err)
			}
			rows = append(rows, row)
		}
		return s.syncSteps(ctx, tx, a.ID)
	})
	if err != nil {
		return nil, fmt.Errorf("automations: add a welcome series: %w", err)
	}
	for i := range rows {
		s.addresses(a, &rows[i])
	}
	return rows, nil
}

// welcomeSequence is the console's prefilled welcome series: a welcome at
// once, a getting-started mail two days later, an offer five days after that.
var welcomeSequence = []struct {
	subject     string
	period      int
	unit        string
	template    int64
	description string
}{
	{"Welcome, ((first_name))!", 0, "instantly", 5, "welcome"},
	{"Getting the most out of your subscription", 2, "days", 3, "getting started"},
	{"A little something for you, ((first_name))", 5, "days", 4, "offer"},
}

func automationQ(q *gorm.DB, accountID int64, key string) *gorm.DB {
	key = strings.TrimSpace(key)
	q = q.Where("user_id = ? AND deleted_at IS NULL", accountID)
	if id, err := strconv.ParseInt(key, 10, 64); err == nil {
		return q.Where("id = ?", id)
	}
	return q.Where("utr = ?", key)
}

// Get returns one automation by utr (or id), with its totals. Errors: ErrNotFound.
func (s *Automations) Get(ctx context.Context, accountID int64, utr string) (*models.Automation, error) {
	if strings.TrimSpace(utr) == "" || !core.ValidText(utr) { // a console path may hold anything
		return nil, core.ErrNotFound
	}
	var a models.Automation
	if err := automationQ(s.db.R.WithContext(ctx), accountID, utr).First(&a).Error; err != nil {
		return nil, core.NotFoundOr(err, "automations: get")
	}
	if err := s.totals(ctx, &a); err != nil {
		return nil, fmt.Errorf("automations: get: %w", err)
	}
	return &a, nil
}

// totals sums the statistics of the automation's steps.
func (s *Automations) totals(ctx context.Context, a *models.Automation) error {
	var t struct {
		Triggered, Delivered, UniqueOpens, TotalOpens, Bounces, Unsubscribes, SoftBounces, SpamReports int64
	}
	err := s.db.R.WithContext(ctx).Model(&models.SingleSend{}).
		Select("COALESCE(SUM(triggered),0) AS triggered, COALESCE(SUM(delivered),0) AS delivered, COALESCE(SUM(unique_opens),0) AS unique_opens, "+
			"COALESCE(SUM(total_opens),0) AS total_opens, COALESCE(SUM(bounces),0) AS bounces, COALESCE(SUM(unsubscribes),0) AS unsubscribes, "+
			"COALESCE(SUM(soft_bounces),0) AS soft_bounces, COALESCE(SUM(spam_reports),0) AS spam_reports").
		Where("automation_id = ?", a.ID).Scan(&t).Error
	a.TotalTriggered, a.TotalDelivered, a.TotalUniqueOpens, a.TotalOpens, a.TotalBounces, a.TotalUnsubscribe =
		t.Triggered, t.Delivered, t.UniqueOpens, t.TotalOpens, t.Bounces, t.Unsubscribes
	a.TotalSoftBounces, a.TotalSpamReports = t.SoftBounces, t.SpamReports
	if err != nil {
		return fmt.Errorf("automations: totals of automation %d: %w", a.ID, err)
	}
	return nil
}

// Each calls fn for the account's automations with their totals and
// number of emails.
func (s *Automations) Each(ctx context.Context, accountID int64, f core.ListFilter, fn func(*models.AutomationCount) error) error {
	f = f.SortedBy(AutomationSorts)
	return each(ctx, "automations: list", f, func() *gorm.DB {
		q := core.WithStatus(s.db.R.Model(&models.Automation{}).Where("user_id = ? AND deleted_at IS NULL", accountID), f, automationStatuses)
		if f.Search != "" {
			q = q.Where(`LOWER(automation_name) LIKE ? ESCAPE '\'`, core.LikePattern(strings.ToLower(strings.TrimSpace(f.Search))))
		}
		return q
	}, func(m *models.AutomationCount) int64 { return m.ID }, func(a *models.AutomationCount) error {
		if err := s.totals(ctx, &a.Automation); err != nil {
			return err
		}
		if err := s.db.R.WithContext(ctx).Model(&models.AutomationSchedule{}).Where("automation_id = ?", a.ID).Count(&a.AutomationScheduleCount).Error; err != nil {
			return fmt.Errorf("automations: count the emails of automation %d: %w", a.ID, err)
		}
		return fn(a)
	})
}

// Count returns how many automations the account has.
func (s *Automations) Count(ctx context.Context, accountID int64) (int64, error) {
	var n int64
	if err := s.db.R.WithContext(ctx).Model(&models.Automation{}).Where("user_id = ? AND deleted_at IS NULL", accountID).Count(&n).Error; err != nil {
		return n, fmt.Errorf("automations: count: %w", err)
	}
	return n, nil
}

// Schedules returns the automation's emails in order, with their editor
// and preview addresses. Errors: ErrNotFound.
func (s *Automations) Schedules(ctx context.Context, accountID int64, utr string) ([]models.AutomationSchedule, error) {
	a, err := s.Get(ctx, accountID, utr)
	if err != nil {
		return nil, fmt.Errorf("automations: emails: %w", err)
	}
	var rows []models.AutomationSchedule
	if err := s.db.R.WithContext(ctx).Where("automation_id = ?", a.ID).Order("position, id").Find(&rows).Error; err != nil {
		return nil, fmt.Errorf("automations: emails of automation %d: %w", a.ID, err)
	}
	for i := range rows {
		s.addresses(a, &rows[i])
	}
	return rows, nil
}

func (s *Automations) addresses(a *models.Automation, r *models.AutomationSchedule) {
	r.DesignURL = s.baseURL + "/automations/" + a.Utr + "/emails/" + r.Utr + "/design"
	img := r.PreviewImg
	if img == "" {
		img = "01-blank.png"
	}
	r.Image = s.baseURL + "/static/img/templates/" + img
}

// StepStats is one email of an automation with the statistics of its step.
type StepStats struct {
	Schedule models.AutomationSchedule
	Send     *models.SingleSend // nil until the automation first went live
}

// Steps returns the automation's emails with their statistics.
func (s *Automations) Steps(ctx context.Context, accountID int64, utr string) ([]StepStats, error) {
	rows, err := s.Schedules(ctx, accountID, utr)
	if err != nil {
		return nil, fmt.Errorf("automations: steps: %w", err)
	}
	out := make([]StepStats, len(rows))
	for i, r := range rows {
		out[i].Schedule = r
		if r.SendID != nil {
			var ss models.SingleSend
			if err := s.db.R.WithContext(ctx).Omit("template_html", "template_json").Where("id = ?", *r.SendID).First(&ss).Error; err == nil {
				out[i].Send = &ss
			}
		}
	}
	return out, nil
}

// checkSchedule checks the body of an email and fills one from it. Every
// problem is reported at once: each missing required parameter (the
// automation's utr too, when withUtr) and each invalid one.
func (s *Automations) checkSchedule(ctx context.Context, accountID int64, in ScheduleInput, withUtr bool) (*models.AutomationSchedule, *models.Sender, error) {
	p := core.Problems{}
	r := &models.AutomationSchedule{UserID: accountID}
	if withUtr {
		p.Required("utr", in.Utr)
	}
	var snd *models.Sender
	if p.Required("sender_id", in.SenderID) {
		id, err := core.ParseID(in.SenderID)
		if err == nil {
			snd, err = deliverability.Sender(ctx, s.db.R, accountID, id)
		}
		switch {
		case core.IsNotFound(err):
			p.InvalidChoice("sender_id")
		case err != nil:
			return nil, nil, fmt.Errorf("automations: check an email: %w", err)
		case snd.IsVerified != 1:
			p.AddReason("sender_id", core.ReasonNotVerified, msgSenderNotVerified)
		default:
			r.SenderID = snd.ID
		}
	}
	r.Subject = strings.TrimSpace(in.Subject)
	if p.Required("subject", r.Subject) {
		p.MaxLen("subject", r.Subject, maxSendName)
		p.SingleLine("subject", in.Subject) // a header (decisions.md 8)
	}
	if in.Preheader != nil {
		r.Preheader = strings.TrimSpace(*in.Preheader)
		p.MaxLen("preheader", r.Preheader, maxSendName)
		p.NoNUL("preheader", r.Preheader)
	}
	r.WaitingType, r.WaitingPeriod = checkWait(p, in.WaitingType, in.WaitingPeriod, WaitingTypes, 0)
	// An "instantly" email keeps the period it was given (api.md: "use 1
	// for an instant email"); waitOf reads no wait from it whatever it is.
	r.PreviewImg = strings.TrimSpace(in.PreviewImg)
	if p.Required("preview_img", r.PreviewImg) {
		p.Text("preview_img", r.PreviewImg, 255)
	}
	r.TemplateID, r.TemplateHTML, r.TemplateJSON = s.templates.checkDesign(p, in.TemplateID, in.TemplateHTML, in.TemplateJSON)
	return r, snd, p.Err()
}

// AddSchedule appends an email to the automation and returns it. The
// body is checked first, the automation's utr among its required
// parameters: an automation that does not exist is not found only once
// the body is complete and valid. Errors: validation, ErrNotFound.
func (s *Automations) AddSchedule(ctx context.Context, accountID int64, in ScheduleInput) (*models.AutomationSchedule, error) {
	r, _, err := s.checkSchedule(ctx, accountID, in, true)
	if err != nil {
		return nil, fmt.Errorf("automations: add an email: %w", err)
	}
	a, err := s.Get(ctx, accountID, in.Utr)
	if err != nil {
		return nil, fmt.Errorf("automations: add an email: %w", err)
	}
	now := models.NewTimestamp(s.db.Now())
	r.AutomationID, r.Utr, r.CreatedAt, r.UpdatedAt, r.Kind, r.Path = a.ID, uuid.NewString(), now, now, models.StepEmail, strings.TrimSpace(in.Path)
	err = s.db.W.WithContext(ctx).Transaction(func(tx *gorm.DB) error {
		if err := checkPath(tx, a.ID, r.Path); err != nil {
			return err
		}
		var last int
		if err := tx.Model(&models.AutomationSchedule{}).Select("COALESCE(MAX(position), -1)").Where("automation_id = ?", a.ID).Scan(&last).Error; err != nil {
			return fmt.Errorf("automations: last position in automation %d: %w", a.ID, err)
		}
		r.Position = last + 1
		if err := tx.Create(r).Error; err != nil {
			return fmt.Errorf("automations: add an email to automation %d: %w", a.ID, err)
		}
		return s.syncSteps(ctx, tx, a.ID)
	})
	if err != nil {
		return nil, fmt.Errorf("automations: add an email: %w", err)
	}
	s.addresses(a, r)
	return r, nil
}

// schedule finds one email of the account's automation. Errors: ErrNotFound.
func (s *Automations) schedule(ctx context.Context, accountID int64, automationUtr, scheduleUtr string) (*models.Automation, *models.AutomationSchedule, error) {
	a, err := s.Get(ctx, accountID, automationUtr)
	if err != nil {
		return nil, nil, fmt.Errorf("automations: get an email: %w", err)
	}
	var r models.AutomationSchedule
	if err := s.db.R.WithContext(ctx).Where("automation_id = ? AND utr = ?", a.ID, strings.TrimSpace(scheduleUtr)).First(&r).Error; err != nil {
		return nil, nil, core.NotFoundOr(err, "automations: get an email")
	}
	s.addresses(a, &r)
	return a, &r, nil
}

// Schedule returns one email of an automation. Errors: ErrNotFound.
func (s *Automations) Schedule(ctx context.Context, accountID int64, automationUtr, scheduleUtr string) (*models.AutomationSchedule, error) {
	_, r, err := s.schedule(ctx, accountID, automationUtr, scheduleUtr)
	return r, err
}

// UpdateSchedule changes one email; a live automation sends the new
// version from now on. Errors: ErrNotFound, validation.
func (s *Automations) UpdateSchedule(ctx context.Context, accountID int64, scheduleUtr string, in ScheduleInput) (*models.AutomationSchedule, error) {
	a, cur, err := s.schedule(ctx, accountID, in.Utr, scheduleUtr)
	if err != nil {
		return nil, fmt.Errorf("automations: update an email: %w", err)
	}
	r, _, err := s.checkSchedule(ctx, accountID, in, false)
	if err != nil {
		return nil, fmt.Errorf("automations: update an email: %w", err)
	}
	cols := map[string]any{
		"sender_id": r.SenderID, "subject": r.Subject, "waiting_period": r.WaitingPeriod, "waiting_type": r.WaitingType,
		"template_id": r.TemplateID, "preview_img": r.PreviewImg, "template_json": r.TemplateJSON, "template_html": r.TemplateHTML,
		"updated_at": s.db.Now(),
	}
	if in.Preheader != nil {
		cols["preheader"] = r.Preheader
	}
	err = s.db.W.WithContext(ctx).Transaction(func(tx *gorm.DB) error {
		if err := tx.Model(&models.AutomationSchedule{}).Where("id = ?", cur.ID).Updates(cols).Error; err != nil {
			return fmt.Errorf("automations: update email %d: %w", cur.ID, err)
		}
		return s.syncSteps(ctx, tx, a.ID)
	})
	if err != nil {
		return nil, fmt.Errorf("automations: update an email: %w", err)
	}
	r, err = s.Schedule(ctx, accountID, a.Utr, scheduleUtr)
	if err != nil {
		return nil, fmt.Errorf("automations: update an email: %w", err)
	}
	return r, nil
}

// DeleteSchedule removes one email. Contacts waiting for a later email
// move up by one. Errors: ErrNotFound.
func (s *Automations) DeleteSchedule(ctx context.Context, accountID int64, automationUtr, scheduleUtr string) error {
	a, r, err := s.schedule(ctx, accountID, automationUtr, scheduleUtr)
	if err != nil {
		return fmt.Errorf("automations: delete an email: %w", err)
	}
	err = s.db.W.WithContext(ctx).Transaction(func(tx *gorm.DB) error {
		lines, err := record.StepLines(tx, a.ID)
		if err != nil {
			return err
		}
		if record.IsBranch(r) && len(lines[models.PathA])+len(lines[models.PathB]) > 0 {
			return &core.Error{Code: core.CodeValidation, Message: msgBranchNotEmpty}
		}
		if main := lines[models.PathMain]; r.Path == models.PathMain && !record.IsBranch(r) && len(main) == 2 && record.IsBranch(&main[1]) {
			return &core.Error{Code: core.CodeValidation, Message: msgBranchKeepsEmail}
		}
		idx := -1
		for i, row := range lines[r.Path] {
			if row.ID == r.ID {
				idx = i
			}
		}
		if err := tx.Delete(&models.AutomationSchedule{}, r.ID).Error; err != nil {
			return fmt.Errorf("automations: delete email %d: %w", r.ID, err)
		}
		if r.SendID != nil {
			// Its queued messages stop; its statistics stay in the totals.
			if err := tx.Model(&models.SingleSend{}).Where("id = ?", *r.SendID).Update("status", models.SendCompleted).Error; err != nil {
				return fmt.Errorf("automations: complete send %d of a deleted email: %w", *r.SendID, err)
			}
			if err := tx.Where("send_id = ? AND state = ?", *r.SendID, models.MessageQueued).Delete(&models.SendMessage{}).Error; err != nil {
				return fmt.Errorf("automations: drop the queued messages of send %d: %w", *r.SendID, err)
			}
		}
		if err := tx.Exec("UPDATE automation_contacts SET step = step - 1 WHERE automation_id = ? AND path = ? AND step > ?", a.ID, r.Path, idx).Error; err != nil {
			return fmt.Errorf("automations: move the contacts of automation %d back a step: %w", a.ID, err)
		}
		return renumber(tx, a.ID)
	})
	if err != nil {
		return fmt.Errorf("automations: delete an email: %w", err)
	}
	return nil
}

// MoveSchedule moves one email up (-1) or down (+1) in the sequence.
// Errors: ErrNotFound.
func (s *Automations) MoveSchedule(ctx context.Context, accountID int64, automationUtr, scheduleUtr string, by int) error {
	a, r, err := s.schedule(ctx, accountID, automationUtr, scheduleUtr)
	if err != nil {
		return fmt.Errorf("automations: move an email: %w", err)
	}
	err = s.db.W.WithContext(ctx).Transaction(func(tx *gorm.DB) error {
		all, err := record.OrderedSchedules(tx, a.ID)
		if err != nil {
			return err
		}
		// Within the email's own line; the branch stays the last step of
		// the main line.
		rows := record.Lines(all)[r.Path]
		for i := range rows {
			if rows[i].ID != r.ID {
				continue
			}
			j := i + by
			if j < 0 || j >= len(rows) || record.IsBranch(&rows[i]) || record.IsBranch(&rows[j]) {
				return nil
			}
			rows[i].Position, rows[j].Position = rows[j].Position, rows[i].Position
			for _, k := range []int{i, j} {
				if err := tx.Model(&models.AutomationSchedule{}).Where("id = ?", rows[k].ID).Update("position", rows[k].Position).Error; err != nil {
					return fmt.Errorf("automations: reorder the emails of automation %d: %w", a.ID, err)
				}
			}
			break
		}
		return nil
	})
	if err != nil {
		return fmt.Errorf("automations: move an email: %w", err)
	}
	return nil
}

func renumber(tx *gorm.DB, automationID int64) error {
	rows, err := record.OrderedSchedules(tx, automationID)
	if err != nil {
		return err
	}
	for i := range rows {
		if rows[i].Position != i {
			if err := tx.Model(&models.AutomationSchedule{}).Where("id = ?", rows[i].ID).Update("position", i).Error; err != nil {
				return fmt.Errorf("automations: renumber the emails of automation %d: %w", automationID, err)
			}
		}
	}
	return nil
}

// syncSteps makes each email's ledger carrier (a single_sends row with
// automation_id) match the email and the automation: content, sender,
// group, and status 2 while live (the engine sends its queued messages),
// 1 while not.
func (s *Automations) syncSteps(ctx context.Context, tx *gorm.DB, automationID int64) error {
	var a models.Automation
	if err := tx.Where("id = ?", automationID).First(&a).Error; err != nil {
		return fmt.Errorf("automations: automation %d: %w", automationID, err)
	}
	rows, err := record.OrderedSchedules(tx, automationID)
	if err != nil {
		return err
	}
	group, _ := strconv.ParseInt(a.UnsubscribeGroupID, 10, 64)
	status := models.SendReady
	if a.Status == models.AutomationLive && a.DeletedAt == nil {
		status = models.SendRunning
	}
	var changed []int64
	n := 0 // the email's number in the automation, in the send's name
	for i := range rows {
		r := &rows[i]
		if record.IsBranch(r) {
			continue // no email: no send
		}
		n++
		var snd *models.Sender
		if r.SenderID != 0 {
			snd, _ = deliverability.Sender(ctx, tx, a.UserID, r.SenderID)
		}
		ss := models.SingleSend{UserID: a.UserID, TemplateID: r.TemplateID, TemplateHTML: r.TemplateHTML, TemplateJSON: r.TemplateJSON,
			SenderID: r.SenderID, UnsubscribeGroupID: group, SingleSendName: a.AutomationName + " · email " + strconv.Itoa(n),
			Subject: r.Subject, Preheader: r.Preheader, Status: status, Resolved: 1, Armed: 0, UniqueOpenToken: "{}", Links: models.StringArray{},
			RecipientID: models.Targets{}, ExcludeSpecificRecipientID: models.Targets{}, ScheduleDate: "0000-00-00", ScheduleTime: "00:00:00",
			AutomationID: &a.ID}
		if snd != nil {
			name, addr := snd.FromName, postalAddress(snd)
			ss.FromSender, ss.ReplyTo, ss.SenderName, ss.SenderAddress = snd.FromEmail, snd.ReplyToEmail, &name, &addr
		}
		now := models.NewTimestamp(s.db.Now())
		if r.SendID == nil {
			ss.Utr, ss.CreatedAt, ss.UpdatedAt = uuid.NewString(), now, now
			if err := tx.Create(&ss).Error; err != nil {
				return fmt.Errorf("automations: create the send of an email of automation %d: %w", automationID, err)
			}
			if err := tx.Model(&models.AutomationSchedule{}).Where("id = ?", r.ID).Update("send_id", ss.ID).Error; err != nil {
				return fmt.Errorf("automations: link email %d to its send: %w", r.ID, err)
			}
			continue
		}
		if err := tx.Model(&models.SingleSend{}).Where("id = ?", *r.SendID).Updates(map[string]any{
			"template_id": ss.TemplateID, "template_html": ss.TemplateHTML, "template_json": ss.TemplateJSON, "sender_id": ss.SenderID,
			"unsubscribe_group_id": group, "single_send_name": ss.SingleSendName, "subject": ss.Subject, "preheader": ss.Preheader, "status": status,
			"from_sender": ss.FromSender, "reply_to": ss.ReplyTo, "sender_name": ss.SenderName, "sender_address": ss.SenderAddress,
			"updated_at": now,
		}).Error; err != nil {
			return fmt.Errorf("automations: update send %d of email %d: %w", *r.SendID, r.ID, err)
		}
		changed = append(changed, *r.SendID)
	}
	if len(changed) > 0 {
		s.engine.Changed(changed)
	}
	return nil
}

// SetLive makes a draft automation live: contacts entering its target from
// now on are enrolled, and contacts enrolled before a pause go on from
// where they were. Errors: ErrNotFound; validation (no group, no email, an
// email without a verified sender, no target; the pre-send checklist's
// failures, under "checklist", when the account blocks on them).
func (s *Automations) SetLive(ctx context.Context, accountID int64, utr string) error {
	a, err := s.Get(ctx, accountID, utr)
	if err != nil {
		return fmt.Errorf("automations: set live: %w", err)
	}
	if a.UnsubscribeGroupID == "" || a.UnsubscribeGroupID == "0" {
		return &core.Error{Code: core.CodeValidation, Message: MsgGroupRequired}
	}
	if a.AutomationFor == 0 {
		return &core.Error{Code: core.CodeValidation, Message: msgNoTarget}
	}
	if a.TriggerKind == models.TriggerDate {
		// Its field may have been deleted (or retyped) since it was chosen.
		p := core.Problems{}
		if err := s.checkDate(ctx, accountID, AutomationInput{DateField: a.DateField}, &models.Automation{}, p); err != nil {
			return fmt.Errorf("automations: set live: %w", err)
		}
		if ms := p["date_field"]; len(ms) > 0 {
			return &core.Error{Code: core.CodeValidation, Message: ms[0].Message}
		}
	}
	rows, err := record.OrderedSchedules(s.db.R.WithContext(ctx), a.ID)
	if err != nil {
		return fmt.Errorf("automations: set live: %w", err)
	}
	if len(rows) == 0 {
		return &core.Error{Code: core.CodeValidation, Message: msgNoSchedule}
	}
	for _, r := range rows {
		if record.IsBranch(&r) {
			continue
		}
		snd, err := deliverability.Sender(ctx, s.db.R, accountID, r.SenderID)
		if err != nil || snd.IsVerified != 1 {
			return &core.Error{Code: core.CodeValidation, Message: msgScheduleSender}
		}
	}
	if a.Status == models.AutomationLive {
		return nil
	}
	if err := s.checklist.enforceAutomation(ctx, a); err != nil {
		return fmt.Errorf("automations: set live: %w", err)
	}
	err = s.db.W.WithContext(ctx).Transaction(func(tx *gorm.DB) error {
		// Contacts already in the target are not enrolled, nor those that
		// entered while the automation was paused.
		cursor, err := targetCursor(tx, a)
		if err != nil {
			return err
		}
		now := s.db.Now()
		res := tx.Model(&models.Automation{}).Where("id = ? AND status = ?", a.ID, models.AutomationDraft).
			Updates(map[string]any{"status": models.AutomationLive, "live_at": now, "enrol_cursor": cursor, "updated_at": now})
		if res.Error != nil || res.RowsAffected == 0 {
			return res.Error
		}
		return s.syncSteps(ctx, tx, a.ID)
	})
	if err != nil {
		return fmt.Errorf("automations: set live: %w", err)
	}
	s.engine.Wake()
	if err := s.audit.Record(ctx, accountID, core.AuditAutomationLive, a.AutomationName, a.Utr); err != nil {
		return fmt.Errorf("automations: set live: audit: %w", err)
	}
	return nil
}

// targetCursor is the last id of the automation's target now.
func targetCursor(tx *gorm.DB, a *models.Automation) (int64, error) {
	var n int64
	var err error
	if a.AutomationForTable == models.TargetSegments {
		err = tx.Table("segment_emails").Select("COALESCE(MAX(id), 0)").Where("segment_id = ?", a.AutomationFor).Scan(&n).Error
	} else {
		err = tx.Table("contacts").Select("COALESCE(MAX(id), 0)").Where("user_id = ? AND contact_type_id = ?", a.UserID, a.AutomationFor).Scan(&n).Error
	}
	if err != nil {
		return n, fmt.Errorf("automations: target cursor of automation %d: %w", a.ID, err)
	}
	return n, nil
}

// Pause stops a live automation's sends and enrolments; each enrolled
// contact keeps its place. Errors: ErrNotFound; validation (not live).
func (s *Automations) Pause(ctx context.Context, accountID int64, utr string) error {
	a, err := s.Get(ctx, accountID, utr)
	if err != nil {
		return fmt.Errorf("automations: pause: %w", err)
	}
	if a.Status != models.AutomationLive {
		return &core.Error{Code: core.CodeValidation, Message: msgOnlyLivePaused}
	}
	err = s.db.W.WithContext(ctx).Transaction(func(tx *gorm.DB) error {
		if err := tx.Model(&models.Automation{}).Where("id = ?", a.ID).Updates(map[string]any{"status": models.AutomationDraft, "updated_at": s.db.Now()}).Error; err != nil {
			return fmt.Errorf("automations: pause automation %d: %w", a.ID, err)
		}
		return s.syncSteps(ctx, tx, a.ID)
	})
	if err != nil {
		return fmt.Errorf("automations: pause: %w", err)
	}
	if err := s.audit.Record(ctx, accountID, core.AuditAutomationPaused, a.AutomationName, a.Utr); err != nil {
		return fmt.Errorf("automations: pause: audit: %w", err)
	}
	return nil
}

// Duplicate copies an automation and its emails as a draft.
// Errors: ErrNotFound.
func (s *Automations) Duplicate(ctx context.Context, accountID int64, utr string) (*models.Automation, error) {
	a, err := s.Get(ctx, accountID, utr)
	if err != nil {
		return nil, fmt.Errorf("automations: duplicate: %w", err)
	}
	now := models.NewTimestamp(s.db.Now())
	cp := models.Automation{UserID: accountID, AutomationFor: a.AutomationFor, AutomationForTable: a.AutomationForTable,
		AutomationName: core.Truncate("Copy of "+a.AutomationName, maxSendName), ExitCriteria: a.ExitCriteria, UnsubscribeGroupID: a.UnsubscribeGroupID,
		AutomationType: a.AutomationType, Utr: uuid.NewString(), CreatedAt: now, UpdatedAt: now, TriggerKind: a.TriggerKind,
		DateField: a.DateField, DateOffsetDays: a.DateOffsetDays, DateYearly: a.DateYearly}
	err = s.db.W.WithContext(ctx).Transaction(func(tx *gorm.DB) error {
		if err := tx.Create(&cp).Error; err != nil {
			return fmt.Errorf("automations: create the copy of automation %d: %w", a.ID, err)
		}
		rows, err := record.OrderedSchedules(tx, a.ID)
		if err != nil {
			return err
		}
		for _, r := range rows {
			r.ID, r.AutomationID, r.Utr, r.SendID, r.CreatedAt, r.UpdatedAt = 0, cp.ID, uuid.NewString(), nil, now, now
			if err := tx.Create(&r).Error; err != nil {
				return fmt.Errorf("automations: copy an email of automation %d: %w", a.ID, err)
			}
		}
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("automations: duplicate: %w", err)
	}
	return &cp, nil
}

// Delete removes automations by utr (or id), all or none; their sends
// stop. Errors: ErrNotFound.
func (s *Automations) Delete(ctx context.Context, accountID int64, utrs []string) error {
	if len(utrs) == 0 {
		return core.ErrNotFound
	}
	var stopped []int64
	err := s.db.W.WithContext(ctx).Transaction(func(tx *gorm.DB) error {
		ids, err := idsByKey(tx, utrs, func(q *gorm.DB) *gorm.DB {
			return q.Model(&models.Automation{}).Where("user_id = ? AND deleted_at IS NULL", accountID)
		})
		if err != nil {
			return err
		}
		now := s.db.Now()
		for _, part := range core.Chunks(ids, core.BulkChunk) {
			if err := tx.Model(&models.Automation{}).Where("id IN ?", part).Updates(map[string]any{"deleted_at": now, "status": models.AutomationDraft, "updated_at": now}).Error; err != nil {
				return fmt.Errorf("automations: mark automations deleted: %w", err)
			}
			var sends []int64
			if err := tx.Model(&models.SingleSend{}).Where("automation_id IN ?", part).Pluck("id", &sends).Error; err != nil {
				return fmt.Errorf("automations: sends of deleted automations: %w", err)
			}
			stopped = append(stopped, sends...)
			if err := tx.Model(&models.SingleSend{}).Where("automation_id IN ?", part).Update("status", models.SendReady).Error; err != nil {
				return fmt.Errorf("automations: stop the sends of deleted automations: %w", err)
			}
		}
		return nil
	})
	if err != nil {
		return fmt.Errorf("automations: delete: %w", err)
	}
	s.engine.Changed(stopped)
	return nil
}

// checkWait validates a step's wait: its type, one of types, and its
// period, a whole number from least to 3650. It answers both trimmed and
// parsed (the period 0 when it is not a number).
func checkWait(p core.Problems, waitingType, waitingPeriod string, types []string, least int) (string, int) {
	t := strings.TrimSpace(waitingType)
	if p.Required("waiting_type", t) && !slices.Contains(types, t) {
		p.InvalidChoice("waiting_type")
	}
	n := 0
	if p.Required("waiting_period", waitingPeriod) {
		var err error
		n, err = strconv.Atoi(strings.TrimSpace(waitingPeriod))
		switch {
		case err != nil:
			p.AddReason("waiting_period", core.ReasonInteger, core.MsgInteger("waiting_period"))
		case n < least:
			p.AddReason("waiting_period", core.ReasonMin, "The waiting period must be at least "+strconv.Itoa(least)+".")
		case n > 3650:
			p.AddReason("waiting_period", core.ReasonMax, "The waiting period may not be greater than 3650.")
		}
	}
	return t, n
}
