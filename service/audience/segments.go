package audience

import (
	"context"
	"fmt"
	"strings"

	"gorm.io/gorm"

	"herald/models"
	"herald/service/core"
	"herald/service/identity"
	"herald/service/internal/record"
)

// Segments keeps segments and their recipients: the contacts of the
// segment's type that match its conditions, kept current as contacts
// change, plus addresses added by hand.
type Segments struct {
	db    *core.DB
	audit *identity.Audit
}

// SegmentInput is the body of segment/store and segment/update.
type SegmentInput struct {
	ContactTypeID  string
	SegmentName    string
	SelectField    []string
	SelectOperator []string
	Value          []string
	QueryType      string
}

// SegmentEmailInput is the body of segment/email/store.
type SegmentEmailInput struct {
	SegmentID string
	FirstName string
	LastName  string
	Email     string
}

// validate checks the input and compiles its conditions.
func (s *Segments) validate(ctx context.Context, q *gorm.DB, accountID int64, in SegmentInput) (*models.Segment, []Condition, error) {
	p := core.Problems{}
	name := strings.TrimSpace(in.SegmentName)
	hasType := p.Required("contact_type_id", in.ContactTypeID)
	if p.Required("segment_name", name) {
		// A name that may reach a header: a single line (decisions.md 8).
		p.MaxLen("segment_name", name, 255)
		p.SingleLine("segment_name", name)
	}
	qt := strings.ToLower(strings.TrimSpace(in.QueryType))
	if qt != "" && qt != "and" && qt != "or" {
		p.InvalidChoice("query_type")
	}
	customs, err := customFields(ctx, q, accountID)
	if err != nil {
		return nil, nil, fmt.Errorf("segments: custom fields of account %d: %w", accountID, err)
	}
	conds := compileConditions(in.SelectField, in.SelectOperator, in.Value, customs, p)
	if err := p.Err(); err != nil {
		return nil, nil, err
	}
	var typeID int64
	if hasType {
		if typeID, err = core.ParseID(in.ContactTypeID); err != nil {
			return nil, nil, err
		}
		if _, err := contactType(ctx, q, accountID, typeID); err != nil {
			return nil, nil, err
		}
	}
	seg := &models.Segment{UserID: accountID, ContactTypeID: typeID, SegmentName: name}
	// Every condition compiled (else validation failed), so conds[i] is
	// the i-th condition given.
	seg.SelectField, seg.SelectOperator, seg.Value = []string{}, []string{}, []string{}
	for i, c := range conds {
		v := ""
		if i < len(in.Value) {
			v = strings.TrimSpace(in.Value[i])
		}
		seg.SelectField = append(seg.SelectField, c.Field)
		seg.SelectOperator = append(seg.SelectOperator, c.Operator)
		seg.Value = append(seg.Value, v)
	}
	if qt != "" {
		seg.QueryType = &qt
	}
	return seg, conds, nil
}

// Create saves a segment and materialises its recipients.
// Errors: validation, ErrNotFound (contact type).
func (s *Segments) Create(ctx context.Context, accountID int64, in SegmentInput) (*models.Segment, error) {
	var seg *models.Segment
	err := s.db.W.WithContext(ctx).Transaction(func(tx *gorm.DB) error {
		var conds []Condition
		var err error
		seg, conds, err = s.validate(ctx, tx, accountID, in)
		if err != nil {
			return err
		}
		now := models.NewTimestamp(s.db.Now())
		seg.CreatedAt, seg.UpdatedAt = now, now
		if err := tx.Create(seg).Error; err != nil {
			return fmt.Errorf("segments: save a new segment: %w", err)
		}
		return s.materialise(tx, seg, conds)
	})
	if err != nil {
		return nil, core.Wrapf(err, "segments: create")
	}
	return seg, nil
}

// Update changes a segment's name, type or conditions and materialises its
// recipients again; hand-added recipients stay. A blank contact_type_id
// keeps the segment's. id 0 means the request named none: it is answered
// as the missing `segment_id` with the other missing parameters, before
// any lookup. Errors: validation, ErrNotFound.
func (s *Segments) Update(ctx context.Context, accountID, id int64, in SegmentInput) (*models.Segment, error) {
	p := core.Problems{}
	if id == 0 {
		p.AddReason("segment_id", core.ReasonRequired, core.MsgRequired("segment_id"))
	}
	p.Required("segment_name", strings.TrimSpace(in.SegmentName))
	if err := p.Err(); err != nil {
		return nil, err
	}
	var seg *models.Segment
	err := s.db.W.WithContext(ctx).Transaction(func(tx *gorm.DB) error {
		old, err := segment(ctx, tx, accountID, id)
		if err != nil {
			return err
		}
		if strings.TrimSpace(in.ContactTypeID) == "" {
			in.ContactTypeID = itoa(old.ContactTypeID)
		}
		var conds []Condition
		seg, conds, err = s.validate(ctx, tx, accountID, in)
		if err != nil {
			return err
		}
		seg.ID, seg.CreatedAt, seg.UpdatedAt = old.ID, old.CreatedAt, models.NewTimestamp(s.db.Now())
		if err := tx.Model(&models.Segment{}).Where("id = ?", id).Updates(map[string]any{
			"contact_type_id": seg.ContactTypeID, "segment_name": seg.SegmentName, "select_field": seg.SelectField,
			"select_operator": seg.SelectOperator, "value": seg.Value, "query_type": seg.QueryType, "updated_at": seg.UpdatedAt,
		}).Error; err != nil {
			return fmt.Errorf("segments: update segment %d: %w", id, err)
		}
		return s.materialise(tx, seg, conds)
	})
	if err != nil {
		return nil, core.Wrapf(err, "segments: update %d", id)
	}
	return seg, nil
}

// materialise replaces the contact recipients of seg with the contacts that
// match now, in one INSERT … SELECT.
func (s *Segments) materialise(tx *gorm.DB, seg *models.Segment, conds []Condition) error {
	if err := tx.Exec("DELETE FROM segment_emails WHERE segment_id = ? AND contact_id IS NOT NULL", seg.ID).Error; err != nil {
		return fmt.Errorf("segments: clear the contacts of segment %d: %w", seg.ID, err)
	}
	now := s.db.Now()
	where, args := sqlCondition(s.db.SQL(), atNow(conds, now), isOr(seg))
	q := `INSERT INTO segment_emails (user_id, segment_id, contact_id, first_name, last_name, email, created_at, updated_at)
		SELECT c.user_id, ?, c.id, '', '', '', ?, ? FROM contacts c
		WHERE c.user_id = ? AND c.contact_type_id = ? AND c.deleted_at IS NULL AND (` + where + `)`
	if err := tx.Exec(q, append([]any{seg.ID, now, now, seg.UserID, seg.ContactTypeID}, args...)...).Error; err != nil {
		return fmt.Errorf("segments: add the contacts of segment %d: %w", seg.ID, err)
	}
	return nil
}

func isOr(seg *models.Segment) bool { return seg.QueryType != nil && *seg.QueryType == "or" }

// conditionsOf compiles a stored segment's conditions leniently: a field
// that no longer exists reads as empty.
func conditionsOf(seg *models.Segment, customs []models.Field) []Condition {
	known := append([]models.Field{}, customs...)
	for _, f := range seg.SelectField {
		if f != "created_at" && f != "tags" && f != EngagementField && !IsReservedField(f) && !hasField(customs, f) {
			known = append(known, models.Field{FieldName: f, FieldType: "text"})
		}
	}
	return compileConditions(seg.SelectField, seg.SelectOperator, seg.Value, known, core.Problems{})
}

func hasField(fs []models.Field, name string) bool {
	for _, f := range fs {
		if f.FieldName == name {
			return true
		}
	}
	return false
}

// refreshContacts brings the recipients of every segment of the contacts'
// type up to date for those contacts only: rows of contacts that no longer
// match (or were deleted) go, newly matching ones come. It runs inside the
// caller's write transaction; ids hold at most a batch of contacts.
func (s *Segments) refreshContacts(ctx context.Context, tx *gorm.DB, accountID, typeID int64, ids []int64) error {
	if len(ids) == 0 {
		return nil
	}
	return s.refreshSet(ctx, tx, accountID, typeID, contactSet{test: "IN ?", arg: ids})
}

// contactSet is the contacts a refresh covers, as a test of an id column
// (the column, a space, then test) with its one argument: "IN ?" and the
// ids, or on PostgreSQL "= ANY(CAST(? AS BIGINT[]))" and an array literal
// (one parameter, however large the batch).
type contactSet struct {
	test string
	arg  any
}

func (cs contactSet) of(col string) string { return col + " " + cs.test }

// refreshSet is refreshContacts for a set of contacts: two set-wise
// statements per segment of the type, whatever the size of the set.
func (s *Segments) refreshSet(ctx context.Context, tx *gorm.DB, accountID, typeID int64, set contactSet) error {
	return s.refreshWhere(ctx, tx, accountID, typeID, set, nil)
}

// refreshTagged is refreshSet for a change of the contacts' tags: only
// the segments that test tags can change.
func (s *Segments) refreshTagged(ctx context.Context, tx *gorm.DB, accountID, typeID int64, set contactSet) error {
	return s.refreshWhere(ctx, tx, accountID, typeID, set, func(seg *models.Segment) bool { return hasString(seg.SelectField, "tags") })
}

// refreshWhere is refreshSet over the segments of the type that only
// keeps (all when nil).
func (s *Segments) refreshWhere(ctx context.Context, tx *gorm.DB, accountID, typeID int64, set contactSet, only func(*models.Segment) bool) error {
	var segs []models.Segment
	if err := tx.WithContext(ctx).Where("user_id = ? AND contact_type_id = ? AND deleted_at IS NULL", accountID, typeID).Find(&segs).Error; err != nil {
		return fmt.Errorf("segments: segments of contact type %d: %w", typeID, err)
	}
	if only != nil {
		kept := segs[:0]
		for i := range segs {
			if only(&segs[i]) {
				kept = append(kept, segs[i])
			}
		}
		segs = kept
	}
	if len(segs) == 0 {
		return nil
	}
	customs, err := customFields(ctx, tx, accountID)
	if err != nil {
		return err
	}
	now := s.db.Now()
	for i := range segs {
		seg := &segs[i]
		where, args := sqlCondition(s.db.SQL(), atNow(conditionsOf(seg, customs), now), isOr(seg))
		matching := `SELECT c.id FROM contacts c WHERE ` + set.of("c.id") + ` AND c.contact_type_id = ? AND c.deleted_at IS NULL AND (` + where + `)`
		del := `DELETE FROM segment_emails WHERE segment_id = ? AND ` + set.of("contact_id") + ` AND contact_id NOT IN (` + matching + `)`
		if err := tx.Exec(del, append([]any{seg.ID, set.arg, set.arg, typeID}, args...)...).Error; err != nil {
			return fmt.Errorf("segments: drop contacts leaving segment %d: %w", seg.ID, err)
		}
		ins := `INSERT INTO segment_emails (user_id, segment_id, contact_id, first_name, last_name, email, created_at, updated_at)
			SELECT c.user_id, ?, c.id, '', '', '', ?, ? FROM contacts c
			WHERE ` + set.of("c.id") + ` AND c.user_id = ? AND c.contact_type_id = ? AND c.deleted_at IS NULL AND (` + where + `)
			AND NOT EXISTS (SELECT 1 FROM segment_emails e WHERE e.segment_id = ? AND e.contact_id = c.id)`
		a := append([]any{seg.ID, now, now, set.arg, accountID, typeID}, args...)
		if err := tx.Exec(ins, append(a, seg.ID)...).Error; err != nil {
			return fmt.Errorf("segments: add contacts entering segment %d: %w", seg.ID, err)
		}
	}
	return nil
}

// rebuildUsing materialises again every segment of the account that tests
// the field (after the field was deleted).
func (s *Segments) rebuildUsing(ctx context.Context, tx *gorm.DB, accountID int64, field string) error {
	var segs []models.Segment
	if err := tx.WithContext(ctx).Where("user_id = ? AND deleted_at IS NULL", accountID).Find(&segs).Error; err != nil {
		return fmt.Errorf("segments: segments of account %d: %w", accountID, err)
	}
	customs, err := customFields(ctx, tx, accountID)
	if err != nil {
		return fmt.Errorf("segments: custom fields of account %d: %w", accountID, err)
	}
	for i := range segs {
		if hasString(segs[i].SelectField, field) {
			if err := s.materialise(tx, &segs[i], conditionsOf(&segs[i], customs)); err != nil {
				return err
			}
		}
	}
	return nil
}

func hasString(list []string, v string) bool {
	for _, s := range list {
		if s == v {
			return true
		}
	}
	return false
}

func segment(ctx context.Context, q *gorm.DB, accountID, id int64) (*models.Segment, error) {
	var seg models.Segment
	if err := q.WithContext(ctx).Where("user_id = ? AND id = ? AND deleted_at IS NULL", accountID, id).First(&seg).Error; err != nil {
		return nil, core.NotFoundOr(err, "segments: segment %d", id)
	}
	return &seg, nil
}

// Get returns one segment of the account. Errors: ErrNotFound.
func (s *Segments) Get(ctx context.Context, accountID, id int64) (*models.Segment, error) {
	return segment(ctx, s.db.R, accountID, id)
}

// RecipientCount counts a segment's recipients: matching contacts and
// addresses added by hand (index segment_emails_segment).
func (s *Segments) RecipientCount(ctx context.Context, accountID, id int64) (int64, error) {
	var n int64
	err := s.db.R.WithContext(ctx).Table("segment_emails").
		Where("segment_id = ? AND segment_id IN (SELECT id FROM segments WHERE id = ? AND user_id = ?)", id, id, accountID).
		Count(&n).Error
	if err != nil {
		return 0, fmt.Errorf("segments: count recipients of %d: %w", id, err)
	}
	return n, nil
}

// Each calls fn for every segment of the account with its recipient count.
func (s *Segments) Each(ctx context.Context, accountID int64, f core.ListFilter, fn func(*models.SegmentCount) error) error {
	f = f.SortedBy(SegmentSorts)
	return core.Each(ctx, f, "segments", func() *gorm.DB {
		q := s.db.R.Table("segments").
			Select("segments.*, (SELECT COUNT(*) FROM segment_emails e WHERE e.segment_id = segments.id) AS segment_emails_count").
			Where("segments.user_id = ? AND segments.deleted_at IS NULL", accountID)
		if f.Search != "" {
			q = q.Where(`LOWER(segment_name) LIKE ? ESCAPE '\'`, core.LikePattern(strings.ToLower(strings.TrimSpace(f.Search))))
		}
		return q
	}, func(r *models.SegmentCount) int64 { return r.ID }, fn)
}

// Count returns how many contacts of the type match the conditions, without
// saving anything (the console's live count). Errors: validation, ErrNotFound.
func (s *Segments) Count(ctx context.Context, accountID int64, in SegmentInput) (int64, error) {
	if strings.TrimSpace(in.SegmentName) == "" {
		in.SegmentName = "count"
	}
	seg, conds, err := s.validate(ctx, s.db.R, accountID, in)
	if err != nil {
		return 0, err
	}
	where, args := sqlCondition(s.db.SQL(), atNow(conds, s.db.Now()), isOr(seg))
	var n int64
	if err := s.db.R.WithContext(ctx).Raw(`SELECT COUNT(*) FROM contacts c WHERE c.user_id = ? AND c.contact_type_id = ? AND c.deleted_at IS NULL AND (`+where+`)`,
		append([]any{accountID, seg.ContactTypeID}, args...)...).Scan(&n).Error; err != nil {
		return 0, fmt.Errorf("segments: count the contacts of type %d that match: %w", seg.ContactTypeID, err)
	}
	return n, nil
}

// Delete soft-deletes a segment and drops its recipients. Errors: ErrNotFound.
func (s *Segments) Delete(ctx context.Context, accountID, id int64) error {
	var name string
	err := s.db.W.WithContext(ctx).Transaction(func(tx *gorm.DB) error {
		seg, err := segment(ctx, tx, accountID, id)
		if err != nil {
			return err
		}
		name = seg.SegmentName
		if err := tx.Model(&models.Segment{}).Where("id = ?", id).Update("deleted_at", s.db.Now()).Error; err != nil {
			return fmt.Errorf("segments: delete segment %d: %w", id, err)
		}
		return tx.Exec("DELETE FROM segment_emails WHERE segment_id = ?", id).Error
	})
	if err != nil {
		return core.Wrapf(err, "segments: delete %d", id)
	}
	return s.audit.Record(ctx, accountID, core.AuditSegmentDeleted, name, "")
}

// EachEmail calls fn for every recipient of the account's segment, with
// the contact's current values. Errors: ErrNotFound (segment).
func (s *Segments) EachEmail(ctx context.Context, accountID, segmentID int64, f core.ListFilter, fn func(*models.SegmentRecipient) error) error {
	if _, err := s.Get(ctx, accountID, segmentID); err != nil {
		return err
	}
	return core.Each(ctx, f, "e", func() *gorm.DB {
		q := s.db.R.Table("segment_emails e").
			Select(`e.id, e.user_id, e.segment_id, e.contact_id,
				COALESCE(c.first_name, e.first_name) AS first_name, COALESCE(c.last_name, e.last_name) AS last_name,
				COALESCE(c.email, e.email) AS email, c.country, c.state, c.city, c.address_line1, e.created_at, e.updated_at`).
			Joins("LEFT JOIN contacts c ON c.id = e.contact_id").
			Where("e.segment_id = ? AND e.user_id = ?", segmentID, accountID)
		if f.Search != "" {
			pat := core.LikePattern(strings.ToLower(strings.TrimSpace(f.Search)))
			q = q.Where(`(LOWER(COALESCE(c.email, e.email)) LIKE ? ESCAPE '\' OR LOWER(COALESCE(c.first_name, e.first_name) || ' ' || COALESCE(c.last_name, e.last_name)) LIKE ? ESCAPE '\')`, pat, pat)
		}
		return q
	}, func(r *models.SegmentRecipient) int64 { return r.ID }, func(r *models.SegmentRecipient) error {
		r.Fullname = fullname(r.FirstName, r.LastName)
		if r.Country != nil {
			name := record.CountryName(*r.Country)
			r.Country = &name
		}
		return fn(r)
	})
}

// AddEmail adds an address to a segment by hand; it stays whatever the
// conditions say. Errors: validation, ErrNotFound (segment).
func (s *Segments) AddEmail(ctx context.Context, accountID int64, in SegmentEmailInput) (*models.SegmentEmail, error) {
	p := core.Problems{}
	p.Required("segment_id", in.SegmentID)
	first, last := strings.TrimSpace(in.FirstName), strings.TrimSpace(in.LastName)
	if p.Required("first_name", first) {
		p.MaxLen("first_name", first, 255)
		p.SingleLine("first_name", first)
	}
	if p.Required("last_name", last) {
		p.MaxLen("last_name", last, 255)
		p.SingleLine("last_name", last)
	}
	email, ok := core.NormalizeEmail(in.Email)
	if p.Required("email", in.Email) && !ok {
		p.AddReason("email", core.ReasonEmail, core.MsgEmail("email"))
	}
	if err := p.Err(); err != nil {
		return nil, err
	}
	sid, err := core.ParseID(in.SegmentID)
	if err != nil {
		return nil, err
	}
	now := models.NewTimestamp(s.db.Now())
	row := &models.SegmentEmail{UserID: accountID, SegmentID: sid, FirstName: first, LastName: last, Email: email, CreatedAt: now, UpdatedAt: now}
	err = s.db.W.WithContext(ctx).Transaction(func(tx *gorm.DB) error {
		if _, err := segment(ctx, tx, accountID, sid); err != nil {
			return err
		}
		var n int64
		if err := tx.Model(&models.SegmentEmail{}).Where("segment_id = ? AND contact_id IS NULL AND email = ?", sid, email).Count(&n).Error; err != nil {
			return fmt.Errorf("segments: is an address in segment %d: %w", sid, err)
		}
		if n > 0 {
			return core.Invalid("email", "The email has already been taken.")
		}
		return tx.Create(row).Error
	})
	if err != nil {
		return nil, core.Wrapf(err, "segments: add an address to segment %d", sid)
	}
	return row, nil
}

// DeleteEmail removes one recipient of a segment. A matching contact that
// is removed comes back when it changes and still matches.
// Errors: ErrNotFound.
func (s *Segments) DeleteEmail(ctx context.Context, accountID, id int64) error {
	if err := core.DeleteAll(ctx, s.db, accountID, &models.SegmentEmail{}, []int64{id}, core.NoScope); err != nil {
		return core.Wrapf(err, "segments: delete recipient %d", id)
	}
	return nil
}

// DeleteEmailOf removes one recipient of one segment (the console acts on
// one segment's page). Errors: ErrNotFound when it is not that segment's.
func (s *Segments) DeleteEmailOf(ctx context.Context, accountID, segmentID, id int64) error {
	err := core.DeleteAll(ctx, s.db, accountID, &models.SegmentEmail{}, []int64{id}, func(q *gorm.DB) *gorm.DB {
		return q.Where("segment_id = ?", segmentID)
	})
	if err != nil {
		return core.Wrapf(err, "segments: delete recipient %d of segment %d", id, segmentID)
	}
	return nil
}
