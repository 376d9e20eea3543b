package campaign

import (
	"context"
	"encoding/json"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/google/uuid"
	"gorm.io/gorm"

	"herald/models"
	"herald/service/audience"
	"herald/service/core"
	"herald/service/deliverability"
	"herald/service/engine"
	"herald/service/identity"
	"herald/service/internal/record"
	"herald/world"
)

// SingleSends keeps one-off campaigns; the engine (Sending) sends them.
type SingleSends struct {
	db        *core.DB
	templates Templates
	now       func() time.Time
	engine    *engine.Signals // tells this process's engine a send may be due, or was deleted
	checklist *Checklist      // refuses a failing send when the account blocks on it
	audit     *identity.Audit
	groups    *audience.Groups // the unsubscribe groups a send may name
	countries bool             // an IP-to-country database names the countries of hits
}

// SingleSendInput is the body of create and update (api.md, Single sends).
type SingleSendInput struct {
	Utr                string // update only
	TemplateID         string
	TemplateJSON       string
	TemplateHTML       string
	SenderID           string
	UnsubscribeGroupID string
	SingleSendName     string
	Subject            string
	Preheader          string
	RecipientID        []string
	ExcludeRecipientID []string
	ScheduleType       string
	ScheduleDate       string
	ScheduleTime       string
	// Local is the console's local-time option (not in the API): nil
	// leaves it as it is on update (off on create).
	Local *LocalTimeInput
	// AB is the console's A/B subject test (not in the API): nil leaves it
	// as it is on update (none on create).
	AB *ABTestInput
	// PreheaderOptional lets the preheader be blank (the console's; the
	// API requires one, api.md): a mail without one shows the start of
	// its text after the subject.
	PreheaderOptional bool
	// Archive (decisions.md 10, 0/1) shows the send, once sent, in the
	// account's public archive; "" leaves it as it is on update (0 on
	// create).
	Archive string
}

// Messages of single send validation beyond a missing field.
const (
	msgSenderNotVerified = "The selected sender is not verified."
	msgSendLocked        = "A running or completed single send cannot be updated."
)

// maxSendName bounds names, subjects and preheaders.
const maxSendName = 255

// ParseTargets reads recipient items of the form contacts_<id> or
// segments_<id>. It reports false for any other form.
func ParseTargets(items []string) (models.Targets, bool) {
	out := models.Targets{}
	seen := map[models.Target]bool{}
	for _, it := range items {
		it = strings.TrimSpace(it)
		table, id, ok := strings.Cut(it, "_")
		if !ok || (table != "contacts" && table != "segments") {
			return nil, false
		}
		n, err := strconv.ParseInt(id, 10, 64)
		if err != nil || n <= 0 {
			return nil, false
		}
		t := models.Target{ID: strconv.FormatInt(n, 10), Table: models.TargetKind(table + "_")}
		if !seen[t] {
			seen[t] = true
			out = append(out, t)
		}
	}
	return out, true
}

// targetsExist reports whether every target is the account's live contact
// type or segment.
func targetsExist(ctx context.Context, q *gorm.DB, accountID int64, ts models.Targets) (bool, error) {
	for _, t := range ts {
		table := "contact_types"
		if t.Table == models.TargetSegments {
			table = "segments"
		}
		var n int64
		if err := q.WithContext(ctx).Table(table).Where("user_id = ? AND id = ? AND deleted_at IS NULL", accountID, t.ID).Count(&n).Error; err != nil {
			return false, fmt.Errorf("targets: find %s %s: %w", table, t.ID, err)
		}
		if n == 0 {
			return false, nil
		}
	}
	return true, nil
}

// checkMode says what a body is checked for.
type checkMode int

const (
	forCreate checkMode = iota
	forUpdate           // the utr is required too
	forTest             // a test message needs no audience or name
	forDraft            // a draft needs only its name: what is missing is filled in later
)

// check checks the body and fills a send from it (without id, utr, status
// or counters). Every problem of the body is reported at once: each
// missing required parameter (the utr too, on update) and each invalid one.
func (s *SingleSends) check(ctx context.Context, accountID int64, in SingleSendInput, mode checkMode) (*models.SingleSend, error) {
	p := core.Problems{}
	q := s.db.R
	if mode == forUpdate {
		p.Required("utr", in.Utr)
	}
	ss := &models.SingleSend{UserID: accountID, ScheduleDate: "0000-00-00", ScheduleTime: "00:00:00", UniqueOpenToken: "{}"}

	ss.TemplateID, ss.TemplateHTML, ss.TemplateJSON = s.templates.checkDesign(p, in.TemplateID, in.TemplateHTML, in.TemplateJSON)

	if p.Required("sender_id", in.SenderID) {
		if err := sendFrom(ctx, q, p, accountID, in.SenderID, ss); err != nil {
			return nil, fmt.Errorf("single sends: check: %w", err)
		}
	}
	if p.Required("unsubscribe_group_id", in.UnsubscribeGroupID) {
		id, ok, err := accountGroup(ctx, s.groups, p, accountID, in.UnsubscribeGroupID)
		if err != nil {
			return nil, fmt.Errorf("single sends: check: %w", err)
		}
		if ok {
			ss.UnsubscribeGroupID = id
		}
	}
	for _, f := range []struct {
		name string
		v    string
		dst  *string
	}{{"single_send_name", in.SingleSendName, &ss.SingleSendName}, {"subject", in.Subject, &ss.Subject}, {"preheader", in.Preheader, &ss.Preheader}} {
		v := strings.TrimSpace(f.v)
		if mode == forTest && f.name == "single_send_name" {
			continue
		}
		if f.name == "preheader" && in.PreheaderOptional && v == "" {
			*f.dst = ""
			continue
		}
		if p.Required(f.name, v) {
			p.MaxLen(f.name, v, maxSendName)
			if f.name == "subject" {
				// The subject becomes a header (decisions.md 8).
				p.SingleLine(f.name, f.v)
			} else {
				p.NoNUL(f.name, v)
			}
		}
		*f.dst = v
	}
	for _, f := range []struct {
		name     string
		items    []string
		required bool
		dst      *models.Targets
	}{{"recipient_id", in.RecipientID, true, &ss.RecipientID}, {"exclude_specific_recipient_id", in.ExcludeRecipientID, false, &ss.ExcludeSpecificRecipientID}} {
		items := nonBlank(f.items)
		if len(items) == 0 {
			if f.required && mode != forTest {
				p.AddReason(f.name, core.ReasonRequired, core.MsgRequired(f.name))
			}
			*f.dst = models.Targets{}
			continue
		}
		ts, ok := ParseTargets(items)
		if ok {
			var err error
			if ok, err = targetsExist(ctx, q, accountID, ts); err != nil {
				return nil, fmt.Errorf("single sends: check: %w", err)
			}
		}
		if !ok {
			p.InvalidChoice(f.name)
		}
		*f.dst = ts
	}
	if p.Required("schedule_type", in.ScheduleType) {
		ss.ScheduleType = p.Flag("schedule_type", in.ScheduleType)
	}
	if ss.ScheduleType == 1 && !p.Has("schedule_type") {
		at, err := s.scheduleAt(ctx, accountID, in.ScheduleDate, in.ScheduleTime, p)
		if err != nil {
			return nil, fmt.Errorf("single sends: check: %w", err)
		}
		if !at.IsZero() {
			ts := models.NewTimestamp(at)
			ss.SendAfter = &ts
			ss.ScheduleDate = strings.TrimSpace(in.ScheduleDate)
			ss.ScheduleTime = normalTime(in.ScheduleTime)
		}
	}
	if in.Local != nil {
		if err := s.checkLocal(ctx, accountID, *in.Local, ss, p); err != nil {
			return nil, fmt.Errorf("single sends: check: %w", err)
		}
	}
	if in.AB != nil {
		checkAB(*in.AB, ss, p)
	}
	if strings.TrimSpace(in.Archive) != "" {
		ss.Archive = p.Flag("archive", in.Archive)
	}
	if mode == forDraft {
		forgiveDraft(p)
	}
	if err := p.Err(); err != nil {
		return nil, err
	}
	return ss, nil
}

// scheduleAt reads a scheduled send's date and time in the account's time
// zone and returns the UTC instant; zero (with problems recorded) when
// missing, malformed or not in the future.
func (s *SingleSends) scheduleAt(ctx context.Context, accountID int64, date, clock string, p core.Problems) (time.Time, error) {
	date, clock = strings.TrimSpace(date), strings.TrimSpace(clock)
	okDate, okTime := p.Required("schedule_date", date), p.Required("schedule_time", clock)
	if !okDate || !okTime {
		return time.Time{}, nil
	}
	loc, err := s.location(ctx, accountID)
	if err != nil {
		return time.Time{}, fmt.Errorf("single sends: schedule: %w", err)
	}
	d, err := time.ParseInLocation("2006-01-02", date, loc)
	if err != nil {
		p.Add("schedule_date", "The schedule date does not match the format Y-m-d.")
	}
	t, terr := time.Parse("15:04:05", normalTime(clock))
	if terr != nil {
		p.Add("schedule_time", "The schedule time does not match the format H:i:s.")
	}
	if err != nil || terr != nil {
		return time.Time{}, nil
	}
	at := time.Date(d.Year(), d.Month(), d.Day(), t.Hour(), t.Minute(), t.Second(), 0, loc)
	if !at.After(s.now()) {
		p.Add("schedule_date", "The schedule date and time must be in the future.")
		return time.Time{}, nil
	}
	return at.UTC(), nil
}

// normalTime turns H:i into H:i:s.
func normalTime(s string) string {
	s = strings.TrimSpace(s)
	if len(s) == 5 && s[2] == ':' {
		return s + ":00"
	}
	return s
}

// location is the account's time zone (UTC when unset or unknown).
func (s *SingleSends) location(ctx context.Context, accountID int64) (*time.Location, error) {
	loc, err := record.ReadAccountLocation(ctx, s.db.R, accountID)
	if err != nil {
		return nil, fmt.Errorf("single sends: %w", err)
	}
	return loc, nil
}

// checkDesign applies the design rules of single sends and automation
// emails: template_id required and of the library; template 1 needs
// template_html (or a template_json carrying one); another id with both
// empty copies the library design. Problems are recorded in p.
func (t Templates) checkDesign(p core.Problems, templateID, html, js string) (id int64, htmlOut, jsOut *string) {
	if p.Required("template_id", templateID) {
		var err error
		id, err = strconv.ParseInt(strings.TrimSpace(templateID), 10, 64)
		if err != nil {
			p.AddReason("template_id", core.ReasonInteger, core.MsgInteger("template_id"))
		} else if _, derr := t.Design(id); derr != nil {
			p.InvalidChoice("template_id")
		}
	}
	if len(html) > maxDesignBytes || len(js) > maxDesignBytes {
		p.AddReason("template_html", core.ReasonMax, "The design may not be greater than 5 MB.")
	}
	p.NoNUL("template_json", js)
	if strings.TrimSpace(html) == "" && strings.TrimSpace(js) != "" {
		html = htmlOfJSON(js)
		if html == "" {
			p.Add("template_json", "The template json must hold an html string to be sent.")
		}
	}
	if !p.Has("template_json") {
		p.NoNUL("template_html", html) // the JSON's html may decode to one
	}
	if strings.TrimSpace(html) == "" {
		if id == 1 && !p.Has("template_json") {
			p.AddReason("template_html", core.ReasonRequiredIf, "The template html field is required when template id is 1.")
		} else if d, err := t.Design(id); err == nil {
			html = d.HTMLCode
		}
	}
	if html != "" {
		htmlOut = &html
	}
	if js != "" {
		jsOut = &js
	}
	return id, htmlOut, jsOut
}

// htmlOfJSON takes the HTML out of a template_json document that carries
// one under "html" (the editor's export); "" otherwise.
func htmlOfJSON(doc string) string {
	var v struct {
		HTML string `json:"html"`
	}
	if json.Unmarshal([]byte(doc), &v) != nil {
		return ""
	}
	return v.HTML
}

// postalAddress is the sender's postal address on one line, for the
// ((sender_address)) placeholder (anti-spam laws ask for it in every mail).
// sendFrom fills ss's sender from the sender_id raw: one of the
// account's verified senders, else a problem on the field. err is a
// failure of the database only.
func sendFrom(ctx context.Context, q *gorm.DB, p core.Problems, accountID int64, raw string, ss *models.SingleSend) error {
	id, err := core.ParseID(raw)
	var snd *models.Sender
	if err == nil {
		snd, err = deliverability.Sender(ctx, q, accountID, id)
	}
	switch {
	case core.IsNotFound(err):
		p.InvalidChoice("sender_id")
	case err != nil:
		return err
	case snd.IsVerified != 1:
		p.AddReason("sender_id", core.ReasonNotVerified, msgSenderNotVerified)
	default:
		ss.SenderID = snd.ID
		ss.FromSender, ss.ReplyTo = snd.FromEmail, snd.ReplyToEmail
		name, addr := snd.FromName, postalAddress(snd)
		ss.SenderName, ss.SenderAddress = &name, &addr
	}
	return nil
}

func postalAddress(s *models.Sender) string {
	parts := []string{s.CompanyAddress, s.CompanyAddress2}
	var city, state, country string
	if c, ok := world.CityByID(s.CityID); ok {
		city = c.Name
	}
	if st, ok := world.StateByID(s.StateID); ok {
		state = st.Name
	}
	if c, ok := world.CountryByID(s.CountryID); ok {
		country = c.Name
	}
	if z := strings.TrimSpace(s.ZipCode); z != "" {
		city = strings.TrimSpace(z + " " + city)
	}
	parts = append(parts, city, state, country)
	var out []string
	for _, p := range parts {
		if p = strings.TrimSpace(p); p != "" {
			out = append(out, p)
		}
	}
	return strings.Join(out, ", ")
}

func nonBlank(items []string) []string {
	var out []string
	for _, it := range items {
		if strings.TrimSpace(it) != "" {
			out = append(out, it)
		}
	}
	return out
}

// Create saves a send and arms it as schedule_type says: an immediate send
// starts within seconds, a scheduled one at its time. It returns the utr.
// Errors: validation (the body; the pre-send checklist's failures, under
// "checklist", when the account blocks on them).
func (s *SingleSends) Create(ctx context.Context, accountID int64, in SingleSendInput) (*models.SingleSend, error) {
	ss, err := s.check(ctx, accountID, in, forCreate)
	if err != nil {
		return nil, fmt.Errorf("single sends: create: %w", err)
	}
	if err := s.checklist.enforceSend(ctx, accountID, ss); err != nil {
		return nil, fmt.Errorf("single sends: create: %w", err)
	}
	now := models.NewTimestamp(s.now())
	ss.Utr, ss.CreatedAt, ss.UpdatedAt, ss.Armed, ss.Links = uuid.NewString(), now, now, 1, models.StringArray{}
	ss.Status = models.SendInitiate
	if ss.ScheduleType == 1 {
		ss.Status = models.SendReady
	}
	if err := s.db.W.WithContext(ctx).Create(ss).Error; err != nil {
		return nil, fmt.Errorf("single sends: save a new send: %w", err)
	}
	s.poke()
	return ss, s.recordArmed(ctx, accountID, ss)
}

// recordArmed writes the audit line of a send saved to start or to wait
// for its time.
func (s *SingleSends) recordArmed(ctx context.Context, accountID int64, ss *models.SingleSend) error {
	action, detail := core.AuditSendStarted, ss.Utr
	if ss.ScheduleType == 1 {
		action, detail = core.AuditSendScheduled, ss.Utr+" for "+ss.ScheduleDate+" "+ss.ScheduleTime
	}
	if err := s.audit.Record(ctx, accountID, action, ss.SingleSendName, detail); err != nil {
		return fmt.Errorf("single sends: audit send %d: %w", ss.ID, err)
	}
	return nil
}

// Validate checks a send's body as Create would (the checklist included
// when the account makes it block) and saves nothing: the console asks
// "send now?" only of a form that would save. Errors: validation.
func (s *SingleSends) Validate(ctx context.Context, accountID int64, in SingleSendInput) error {
	ss, err := s.check(ctx, accountID, in, forCreate)
	if err != nil {
		return fmt.Errorf("single sends: validate: %w", err)
	}
	if err := s.checklist.enforceSend(ctx, accountID, ss); err != nil {
		return fmt.Errorf("single sends: validate: %w", err)
	}
	return nil
}

// Update replaces a send that has not started and arms it again. The body
// is checked first, the utr among its required parameters: a send that
// does not exist is not found only once the body is complete and valid.
// Errors: validation (also when it is running or completed, and the
// checklist's failures as on Create), ErrNotFound.
func (s *SingleSends) Update(ctx context.Context, accountID int64, in SingleSendInput) (*models.SingleSend, error) {
	ss, err := s.check(ctx, accountID, in, forUpdate)
	if err != nil {
		return nil, fmt.Errorf("single sends: update: %w", err)
	}
	cur, err := s.Get(ctx, accountID, in.Utr)
	if err != nil {
		return nil, fmt.Errorf("single sends: update: %w", err)
	}
	if cur.Status >= models.SendRunning {
		return nil, &core.Error{Code: core.CodeValidation, Message: msgSendLocked}
	}
	if cur.ResendOf != nil {
		return nil, &core.Error{Code: core.CodeValidation, Message: msgResendLocked}
	}
	if err := s.checklist.enforceSend(ctx, accountID, ss); err != nil {
		return nil, fmt.Errorf("single sends: update: %w", err)
	}
	status := models.SendInitiate
	if ss.ScheduleType == 1 {
		status = models.SendReady
	}
	if err := s.rewrite(ctx, accountID, cur.ID, ss, in, status, 1); err != nil {
		return nil, fmt.Errorf("single sends: update: %w", err)
	}
	s.poke()
	got, err := s.Get(ctx, accountID, cur.Utr)
	if err != nil {
		return nil, fmt.Errorf("single sends: update: %w", err)
	}
	return got, s.recordArmed(ctx, accountID, got)
}

// rewrite replaces the stored send id with ss, in status and armed or not,
// only while it still waits: the engine may have started it since it was
// read (then the change is refused as msgSendLocked). The local-time and
// A/B options change only when the input names them.
func (s *SingleSends) rewrite(ctx context.Context, accountID, id int64, ss *models.SingleSend, in SingleSendInput, status models.SendStatus, armed int) error {
	cols := map[string]any{
		"template_id": ss.TemplateID, "template_json": ss.TemplateJSON, "template_html": ss.TemplateHTML,
		"recipient_id": ss.RecipientID, "exclude_specific_recipient_id": ss.ExcludeSpecificRecipientID,
		"sender_id": ss.SenderID, "unsubscribe_group_id": ss.UnsubscribeGroupID, "single_send_name": ss.SingleSendName,
		"from_sender": ss.FromSender, "reply_to": ss.ReplyTo, "sender_name": ss.SenderName, "sender_address": ss.SenderAddress,
		"subject": ss.Subject, "preheader": ss.Preheader, "schedule_type": ss.ScheduleType,
		"schedule_date": ss.ScheduleDate, "schedule_time": ss.ScheduleTime, "send_after": ss.SendAfter,
		"status": status, "armed": armed, "updated_at": s.now(),
	}
	if in.Local != nil {
		cols["local_time"], cols["local_zone_field"] = ss.LocalTime, ss.LocalZoneField
	}
	if strings.TrimSpace(in.Archive) != "" {
		cols["archive"] = ss.Archive
	}
	if in.AB != nil {
		cols["ab_subjects"], cols["ab_preheaders"], cols["ab_share"], cols["ab_metric"], cols["ab_wait"], cols["ab_designs"] =
			ss.ABSubjects, ss.ABPreheaders, ss.ABShare, ss.ABMetric, ss.ABWait, ss.ABDesigns
		cols["ab_time_after"] = ss.ABTimeAfter
	}
	res := s.db.W.WithContext(ctx).Model(&models.SingleSend{}).
		Where("user_id = ? AND id = ? AND status < ? AND resolved = 0", accountID, id, models.SendRunning).
		Updates(cols)
	if res.Error != nil {
		return fmt.Errorf("single sends: rewrite send %d: %w", id, res.Error)
	}
	if res.RowsAffected == 0 {
		return &core.Error{Code: core.CodeValidation, Message: msgSendLocked}
	}
	return nil
}

func (s *SingleSends) poke() { s.engine.Wake() }

// forgiveDraft drops the problems a draft may have: anything missing but
// its name, and a schedule not yet complete or already past (it is
// checked again when the draft is sent). Wrong values stay refused.
func forgiveDraft(p core.Problems) {
	for field, ps := range p {
		if field == "schedule_date" || field == "schedule_time" {
			delete(p, field)
			continue
		}
		if field == "single_send_name" {
			continue
		}
		kept := ps[:0]
		for _, pr := range ps {
			if pr.Reason != core.ReasonRequired && pr.Reason != core.ReasonRequiredIf {
				kept = append(kept, pr)
			}
		}
		if len(kept) == 0 {
			delete(p, field)
		} else {
			p[field] = kept
		}
	}
}

// SaveDraft saves a send as a draft (the console's, not the API's): in
// status 0 and never armed, so neither the scheduler nor the engine ever
// starts it, whatever its schedule_type. Only its name is required. With
// in.Utr it replaces a send that has not started, which becomes a draft
// again (a scheduled send is disarmed); without, it creates one.
// Errors: validation (also when the send has started), ErrNotFound.
func (s *SingleSends) SaveDraft(ctx context.Context, accountID int64, in SingleSendInput) (*models.SingleSend, error) {
	ss, err := s.check(ctx, accountID, in, forDraft)
	if err != nil {
		return nil, fmt.Errorf("single sends: save a draft: %w", err)
	}
	if ss.SendAfter == nil {
		ss.ScheduleDate, ss.ScheduleTime = "0000-00-00", "00:00:00"
	}
	if strings.TrimSpace(in.Utr) == "" {
		now := models.NewTimestamp(s.now())
		ss.Utr, ss.CreatedAt, ss.UpdatedAt, ss.Armed, ss.Links = uuid.NewString(), now, now, 0, models.StringArray{}
		ss.Status = models.SendInitiate
		if err := s.db.W.WithContext(ctx).Create(ss).Error; err != nil {
			return nil, fmt.Errorf("single sends: save a new draft: %w", err)
		}
		return ss, nil
	}
	cur, err := s.Get(ctx, accountID, in.Utr)
	if err != nil {
		return nil, fmt.Errorf("single sends: save a draft: %w", err)
	}
	if cur.Status >= models.SendRunning {
		return nil, &core.Error{Code: core.CodeValidation, Message: msgSendLocked}
	}
	if cur.ResendOf != nil {
		return nil, &core.Error{Code: core.CodeValidation, Message: msgResendLocked}
	}
	if err := s.rewrite(ctx, accountID, cur.ID, ss, in, models.SendInitiate, 0); err != nil {
		return nil, fmt.Errorf("single sends: save a draft: %w", err)
	}
	got, err := s.Get(ctx, accountID, cur.Utr)
	if err != nil {
		return nil, fmt.Errorf("single sends: save a draft: %w", err)
	}
	return got, nil
}

// accountSends narrows q to the account's single sends: not the rows that
// carry automation steps or single messages, not the deleted ones (kept
// for their links).
func accountSends(q *gorm.DB, accountID int64) *gorm.DB {
	return q.Where("user_id = ? AND automation_id IS NULL AND message = 0 AND deleted_at IS NULL", accountID)
}

// byUtr finds a send by utr (or by its integer id, which bulk delete takes too).
func byUtr(q *gorm.DB, accountID int64, key string) *gorm.DB {
	key = strings.TrimSpace(key)
	if id, err := strconv.ParseInt(key, 10, 64); err == nil {
		return accountSends(q, accountID).Where("id = ?", id)
	}
	return accountSends(q, accountID).Where("utr = ?", key)
}

// idsByKey resolves bulk-delete keys (utrs, or integer ids) among the rows
// scope selects (the account's sends or automations), bulkChunk keys a
// query; each row once. ErrNotFound when any key is blank or finds
// nothing (all or none).
func idsByKey(tx *gorm.DB, keys []string, scope func(q *gorm.DB) *gorm.DB) ([]int64, error) {
	if err := core.TooMany(len(keys)); err != nil {
		return nil, err
	}
	var utrs []string
	var byID []int64
	wanted := map[string]bool{}
	for _, k := range keys {
		k = strings.TrimSpace(k)
		if k == "" || !core.ValidText(k) { // no utr holds a NUL, which PostgreSQL refuses
			return nil, core.ErrNotFound
		}
		if wanted[k] {
			continue
		}
		wanted[k] = true
		if id, err := strconv.ParseInt(k, 10, 64); err == nil {
			byID = append(byID, id)
		} else {
			utrs = append(utrs, k)
		}
	}
	found := 0
	seen := map[int64]bool{}
	ids := make([]int64, 0, len(wanted))
	find := func(col string, part any) error {
		var got []int64
		if err := scope(tx).Where(col+" IN ?", part).Pluck("id", &got).Error; err != nil {
			return fmt.Errorf("single sends: ids by %s: %w", col, err)
		}
		found += len(got)
		for _, id := range got {
			if !seen[id] {
				seen[id] = true
				ids = append(ids, id)
			}
		}
		return nil
	}
	for _, part := range core.Chunks(utrs, core.BulkChunk) {
		if err := find("utr", part); err != nil {
			return nil, err
		}
	}
	for _, part := range core.Chunks(byID, core.BulkChunk) {
		if err := find("id", part); err != nil {
			return nil, err
		}
	}
	if found != len(wanted) {
		return nil, core.ErrNotFound
	}
	return ids, nil
}

// Get returns one send of the account by utr. Errors: ErrNotFound.
func (s *SingleSends) Get(ctx context.Context, accountID int64, utr string) (*models.SingleSend, error) {
	if strings.TrimSpace(utr) == "" || !core.ValidText(utr) { // a console path may hold anything
		return nil, core.ErrNotFound
	}
	var ss models.SingleSend
	if err := byUtr(s.db.R.WithContext(ctx), accountID, utr).First(&ss).Error; err != nil {
		return nil, core.NotFoundOr(err, "single sends: get")
	}
	if err := s.fillWaiting(ctx, &ss); err != nil {
		return nil, err
	}
	return &ss, nil
}

// Utrs returns the utrs of the account's single sends among ids (id →
// utr); deleted sends and automation steps are left out.
func (s *SingleSends) Utrs(ctx context.Context, accountID int64, ids []int64) (map[int64]string, error) {
	out := make(map[int64]string, len(ids))
	if len(ids) == 0 {
		return out, nil
	}
	var rows []struct {
		ID  int64
		Utr string
	}
	if err := accountSends(s.db.R.WithContext(ctx).Model(&models.SingleSend{}), accountID).Where("id IN ?", ids).Select("id", "utr").Scan(&rows).Error; err != nil {
		return nil, fmt.Errorf("single sends: utrs of %d sends: %w", len(ids), err)
	}
	for _, r := range rows {
		out[r.ID] = r.Utr
	}
	return out, nil
}

// Each calls fn for the account's sends, newest last, without their designs.
func (s *SingleSends) Each(ctx context.Context, accountID int64, f core.ListFilter, fn func(*models.SingleSend) error) error {
	f = f.SortedBy(SendSorts)
	return each(ctx, "single sends: list", f, func() *gorm.DB {
		q := core.WithStatus(accountSends(s.db.R.Model(&models.SingleSend{}), accountID), f, sendStatuses)
		if f.Search != "" {
			q = q.Where(`LOWER(single_send_name) LIKE ? ESCAPE '\'`, core.LikePattern(strings.ToLower(strings.TrimSpace(f.Search))))
		}
		return q
	}, func(m *models.SingleSend) int64 { return m.ID }, func(m *models.SingleSend) error {
		if err := s.fillWaiting(ctx, m); err != nil {
			return err
		}
		return fn(m)
	})
}

// Duplicate copies a send as "Copy of <name>" in status 0; the copy sends
// nothing until it is updated. Errors: ErrNotFound.
func (s *SingleSends) Duplicate(ctx context.Context, accountID int64, utr string) (*models.SingleSend, error) {
	cur, err := s.Get(ctx, accountID, utr)
	if err != nil {
		return nil, fmt.Errorf("single sends: duplicate: %w", err)
	}
	cp := unsent(cur, models.NewTimestamp(s.now()))
	cp.Status = models.SendInitiate
	cp.SingleSendName = core.Truncate("Copy of "+cur.SingleSendName, maxSendName)
	if err := s.db.W.WithContext(ctx).Create(&cp).Error; err != nil {
		return nil, fmt.Errorf("single sends: save the copy of send %d: %w", cur.ID, err)
	}
	return &cp, nil
}

// unsent is cur as a new send that has not run (made at now): its
// settings, design and audience, a new utr, and none of its figures,
// failures, pause, alerts, local-time waves, A/B decision or resend link
// (a copy of a resend goes to its targets, as any send).
func unsent(cur *models.SingleSend, now models.Timestamp) models.SingleSend {
	cp := *cur
	cp.ID, cp.Utr, cp.Armed, cp.Resolved = 0, uuid.NewString(), 0, 0
	cp.Triggered, cp.Delivered, cp.UniqueOpens, cp.TotalOpens, cp.UniqueClicks, cp.TotalClicks, cp.Bounces, cp.Unsubscribes = 0, 0, 0, 0, 0, 0, 0, 0
	cp.SoftBounces, cp.SpamReports, cp.BounceAlertedAt, cp.ComplaintAlertedAt = 0, 0, nil, nil
	cp.UniqueOpenToken, cp.SentAt, cp.CompletedAt, cp.Links = "{}", models.DateTime{}, nil, models.StringArray{}
	cp.Blocks, cp.Failures, cp.FirstFailure, cp.LastFailure, cp.LastBlock = 0, 0, "", "", ""
	cp.BlockStreak, cp.StreakDelivered, cp.PausedAt, cp.PauseReason = 0, 0, nil, ""
	cp.HumanUniqueOpens, cp.HumanTotalOpens, cp.HumanUniqueClicks, cp.HumanTotalClicks = 0, 0, 0, 0
	cp.LocalBase = 0
	cp.ABDecideAt, cp.ABWinner, cp.ABReleased = 0, 0, 0
	cp.ResendOf = nil
	cp.CreatedAt, cp.UpdatedAt = now, now
	return cp
}

// Delete removes a send; a running send stops (its queued messages go, so
// no worker claims another of them). Errors: ErrNotFound.
func (s *SingleSends) Delete(ctx context.Context, accountID int64, utr string) error {
	return s.BulkDelete(ctx, accountID, []string{utr})
}

// BulkDelete removes sends by utr (or id), all or none: they leave every
// list and lookup, and what is not yet sent never will be (status 3 takes
// them out of the engine's queries, no summary is mailed). The rows of
// the messages already sent stay, with the send's row, so that the
// unsubscribe and preference links of those mails keep working
// (decisions.md 8) until PurgeDeleted. Errors: ErrNotFound.
func (s *SingleSends) BulkDelete(ctx context.Context, accountID int64, utrs []string) error {
	if len(utrs) == 0 {
		return core.ErrNotFound
	}
	var ids []int64
	err := s.db.W.WithContext(ctx).Transaction(func(tx *gorm.DB) error {
		var err error
		if ids, err = idsByKey(tx, utrs, func(q *gorm.DB) *gorm.DB {
			return accountSends(q.Model(&models.SingleSend{}), accountID)
		}); err != nil {
			return err
		}
		now := models.NewTimestamp(s.now())
		for _, part := range core.Chunks(ids, core.BulkChunk) {
			// Queued messages go; a claimed one is its worker's: sent and
			// recorded if already on the wire, else dropped by Record (its
			// build answers ErrSkip). The two never lock the same rows, so
			// a delete during a send cannot deadlock the recorder
			// (PostgreSQL). The statistics' events go too.
			if err := tx.Where("send_id IN ? AND state = ?", part, models.MessageQueued).Delete(&models.SendMessage{}).Error; err != nil {
				return fmt.Errorf("single sends: drop the queued messages of deleted sends: %w", err)
			}
			if err := tx.Exec("DELETE FROM send_events WHERE send_id IN ?", part).Error; err != nil {
				return fmt.Errorf("single sends: drop the events of deleted sends: %w", err)
			}
			if err := tx.Exec("DELETE FROM send_hit_classes WHERE send_id IN ?", part).Error; err != nil {
				return fmt.Errorf("single sends: drop the report counts of deleted sends: %w", err)
			}
			if err := tx.Exec("DELETE FROM send_hit_hours WHERE send_id IN ?", part).Error; err != nil {
				return fmt.Errorf("single sends: drop the report hours of deleted sends: %w", err)
			}
			if err := tx.Model(&models.SingleSend{}).Where("user_id = ? AND id IN ?", accountID, part).
				Updates(map[string]any{"deleted_at": now, "armed": 0, "status": models.SendCompleted, "updated_at": now}).Error; err != nil {
				return fmt.Errorf("single sends: mark sends deleted: %w", err)
			}
		}
		return nil
	})
	if err != nil {
		return fmt.Errorf("single sends: delete: %w", err)
	}
	s.engine.Deleted(ids)
	return nil
}

// linksKept is how long a deleted send's row and its sent messages stay
// for the links of its mails: "at least a year" (decisions.md 8).
const linksKept = 400 * 24 * time.Hour

// PurgeDeleted removes, with their ledgers, the sends deleted longer ago
// than the links of their mails are kept. It returns how many went.
func (s *SingleSends) PurgeDeleted(ctx context.Context) (int64, error) {
	res := s.db.W.WithContext(ctx).Where("deleted_at IS NOT NULL AND deleted_at < ?", models.NewTimestamp(s.now().Add(-linksKept))).
		Delete(&models.SingleSend{})
	if res.Error != nil {
		return res.RowsAffected, fmt.Errorf("single sends: purge deleted: %w", res.Error)
	}
	return res.RowsAffected, nil
}

// AudienceCount counts the distinct addresses a send with these targets
// would go to now: targets less exclusions, global unsubscribers, the
// group's recipients and suppressed addresses (the console's live count).
// Targets that are malformed or not the account's are ignored.
func (s *SingleSends) AudienceCount(ctx context.Context, accountID int64, to, exclude []string, groupID int64) (int64, error) {
	ts, ok := ParseTargets(nonBlank(to))
	if !ok || len(ts) == 0 {
		return 0, nil
	}
	ex, ok := ParseTargets(nonBlank(exclude))
	if !ok {
		ex = nil
	}
	n, err := engine.CountAudience(ctx, s.db, &models.SingleSend{UserID: accountID, RecipientID: ts, ExcludeSpecificRecipientID: ex, UnsubscribeGroupID: groupID})
	if err != nil {
		return n, fmt.Errorf("single sends: count the audience: %w", err)
	}
	return n, nil
}

// SendTest mails one test message of the send described by in to the
// address to, with sample values for the contact's fields; the audience,
// name and schedule need not be set yet. Its tracking and unsubscribe
// links lead nowhere (it has no ledger row). Errors: validation.
func (s *SingleSends) SendTest(ctx context.Context, accountID int64, in SingleSendInput, to string, m *deliverability.Mail) error {
	addr, ok := core.NormalizeEmail(to)
	if !ok {
		return core.InvalidBecause("test_email", core.ReasonEmail, core.MsgEmail("test_email"))
	}
	in.ScheduleType = "0"
	ss, err := s.check(ctx, accountID, in, forTest)
	if err != nil {
		return fmt.Errorf("single sends: send a test: %w", err)
	}
	sample := s.templates.SampleValues()
	ct := &models.Contact{FirstName: sample["first_name"], LastName: sample["last_name"], Email: addr, Country: sample["country"],
		State: sample["state"], City: sample["city"], AddressLine1: sample["address_line1"], PostalCode: sample["postal_code"]}
	raw, err := engine.BuildTestMail(ctx, s.db, m.BaseURL, ss, ct)
	if err != nil {
		return fmt.Errorf("single sends: send a test: %w", err)
	}
	return m.Transport.Send(core.WithAccount(ctx, accountID), m.Envelope(), []string{addr}, raw)
}

// accountGroup reads the unsubscribe_group_id of a form: one of the
// account's groups (ok), or a problem on the field when it is malformed
// or not the account's. err is a failure of the database only.
func accountGroup(ctx context.Context, groups *audience.Groups, p core.Problems, accountID int64, raw string) (id int64, ok bool, err error) {
	id, err = core.ParseID(raw)
	if err == nil {
		_, err = groups.Get(ctx, accountID, id)
	}
	switch {
	case core.IsNotFound(err):
		p.InvalidChoice("unsubscribe_group_id")
		return 0, false, nil
	case err != nil:
		return 0, false, fmt.Errorf("unsubscribe groups: get %d: %w", id, err)
	}
	return id, true, nil
}
