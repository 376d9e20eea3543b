package audience

import (
	"context"
	"database/sql"
	"fmt"
	"strings"
	"time"

	"gorm.io/gorm"

	"herald/models"
	"herald/service/core"
	"herald/service/internal/record"
)

// ExplainReason is why a contact is in or out of a segment.
type ExplainReason string

// The reasons of an Explanation, in the order they are decided.
const (
	// ReasonConditions: of the segment's contact type, and its conditions
	// hold (in) or do not (out), joined by and/or as query_type says.
	ReasonConditions ExplainReason = "conditions"
	// ReasonByHand: the address was added to the segment by hand
	// (segment/email/store); it stays whatever the conditions say.
	ReasonByHand ExplainReason = "by_hand"
	// ReasonContactType: the contact is of another contact type than the
	// segment's, whatever its values.
	ReasonContactType ExplainReason = "contact_type"
	// ReasonNoContact: the address is no contact of the account and was
	// not added by hand.
	ReasonNoContact ExplainReason = "no_contact"
)

// ConditionResult is one condition of a segment judged for one contact.
type ConditionResult struct {
	Field    string // the field's name ("city", a custom field, "created_at")
	Type     string // text, number, datetime-local, created_at
	Operator string
	// Values are what the contact's value is compared with, in the form
	// the comparison uses (lower-cased text, a number, a date; a country
	// by its name); several for `in`, none for is_empty/is_not_empty.
	Values []string
	// Value is the contact's own stored value ("" when unset).
	Value string
	Met   bool
	// Ignored: the stored condition no longer compiles (its field's type
	// changed), so the segment leaves it out, as it does here.
	Ignored bool
}

// Explanation says why a contact (or an address) is in or out of a
// segment. Every condition is judged by the SQL that keeps the segment's
// recipients (sqlCondition over the one contact), never by a second
// implementation.
type Explanation struct {
	Segment *models.Segment
	// SegmentType and ContactType name the segment's and the contact's
	// contact types ("" when the contact is nil or its type is gone).
	SegmentType, ContactType string
	// Contact is nil when the address is no contact of the account.
	Contact *models.Contact
	Email   string
	Or      bool // the conditions are joined by OR (query_type "or"); else AND

	In     bool
	Reason ExplainReason

	SameType bool // the contact is of the segment's contact type
	// ConditionsMet is the segment's whole condition over the contact
	// (true for a segment without conditions).
	ConditionsMet bool
	ByHand        bool // a row added by hand holds the address
	// Stored is what the segment's recipient rows say now (what a send
	// reads); it equals In unless the contact changed while this ran.
	Stored     bool
	Conditions []ConditionResult
}

// Explain says why the contact is in or out of the segment: its contact
// type, each condition with the values compared, and rows added by hand.
// Errors: ErrNotFound (segment or contact).
func (s *Segments) Explain(ctx context.Context, accountID, segmentID, contactID int64) (*Explanation, error) {
	var out *Explanation
	err := s.db.R.WithContext(ctx).Transaction(func(tx *gorm.DB) error {
		seg, err := segment(ctx, tx, accountID, segmentID)
		if err != nil {
			return err
		}
		var c models.Contact
		if err := tx.Where("user_id = ? AND id = ? AND deleted_at IS NULL", accountID, contactID).Take(&c).Error; err != nil {
			return core.NotFound(err)
		}
		out, err = s.explain(ctx, tx, seg, &c, c.Email)
		return err
	})
	if err != nil {
		return nil, core.Wrapf(err, "segments: explain contact %d in segment %d", contactID, segmentID)
	}
	return out, nil
}

// ExplainEmail is Explain for an address: the contact of that address in
// the segment's contact type, else in another type of the account, else
// no contact (then only a row added by hand can hold it).
// Errors: validation (email), ErrNotFound (segment).
func (s *Segments) ExplainEmail(ctx context.Context, accountID, segmentID int64, email string) (*Explanation, error) {
	addr, ok := core.NormalizeEmail(email)
	if !ok {
		p := core.Problems{}
		if p.Required("email", strings.TrimSpace(email)) {
			p.AddReason("email", core.ReasonEmail, core.MsgEmail("email"))
		}
		return nil, p.Err()
	}
	var out *Explanation
	err := s.db.R.WithContext(ctx).Transaction(func(tx *gorm.DB) error {
		seg, err := segment(ctx, tx, accountID, segmentID)
		if err != nil {
			return err
		}
		// Both lookups follow contacts_type_email (contact_type_id, email).
		var cs []models.Contact
		err = tx.Where("user_id = ? AND contact_type_id = ? AND email = ? AND deleted_at IS NULL", accountID, seg.ContactTypeID, addr).Limit(1).Find(&cs).Error
		if err == nil && len(cs) == 0 {
			err = tx.Where(`contact_type_id IN (SELECT id FROM contact_types WHERE user_id = ?) AND user_id = ? AND email = ? AND deleted_at IS NULL`,
				accountID, accountID, addr).Order("id").Limit(1).Find(&cs).Error
		}
		if err != nil {
			return fmt.Errorf("segments: contacts with an address in account %d: %w", accountID, err)
		}
		var c *models.Contact
		if len(cs) > 0 {
			c = &cs[0]
		}
		out, err = s.explain(ctx, tx, seg, c, addr)
		return err
	})
	if err != nil {
		return nil, core.Wrapf(err, "segments: explain an address in segment %d", segmentID)
	}
	return out, nil
}

// explain judges c (nil: no contact) against seg inside one read
// transaction, so that the verdict and the stored rows are one snapshot.
func (s *Segments) explain(ctx context.Context, tx *gorm.DB, seg *models.Segment, c *models.Contact, email string) (*Explanation, error) {
	x := &Explanation{Segment: seg, Contact: c, Email: email, Or: isOr(seg)}
	names, err := typeNames(ctx, tx, seg.UserID, seg.ContactTypeID)
	if err != nil {
		return nil, err
	}
	x.SegmentType = names[seg.ContactTypeID]

	// The stored rows: the contact's own (kept by the conditions) and one
	// added by hand for its address; each count follows an index.
	var stored struct{ Matched, Hand int64 }
	contactID := int64(0)
	if c != nil {
		contactID = c.ID
	}
	if err := tx.Raw(`SELECT
		(SELECT COUNT(*) FROM segment_emails WHERE segment_id = ? AND contact_id = ? AND user_id = ?) AS matched,
		(SELECT COUNT(*) FROM segment_emails WHERE segment_id = ? AND contact_id IS NULL AND email = ? AND user_id = ?) AS hand`,
		seg.ID, contactID, seg.UserID, seg.ID, email, seg.UserID).Scan(&stored).Error; err != nil {
		return nil, fmt.Errorf("segments: stored membership in segment %d: %w", seg.ID, err)
	}
	x.ByHand = stored.Hand > 0
	x.Stored = stored.Matched > 0 || x.ByHand

	if c == nil {
		x.In, x.Reason = x.ByHand, ReasonNoContact
		if x.ByHand {
			x.Reason = ReasonByHand
		}
		return x, nil
	}
	if c.ContactTypeID != seg.ContactTypeID {
		if names, err = typeNames(ctx, tx, seg.UserID, c.ContactTypeID); err != nil {
			return nil, err
		}
	}
	x.ContactType = names[c.ContactTypeID]
	x.SameType = c.ContactTypeID == seg.ContactTypeID

	if err := s.judge(ctx, tx, seg, c, x); err != nil {
		return nil, err
	}
	switch {
	case x.SameType && x.ConditionsMet:
		x.In, x.Reason = true, ReasonConditions
	case x.ByHand:
		x.In, x.Reason = true, ReasonByHand
	case !x.SameType:
		x.Reason = ReasonContactType
	default:
		x.Reason = ReasonConditions
	}
	return x, nil
}

// judge runs the segment's condition and each of its conditions, as the
// SQL fragments that materialise and refreshSet run, over the one contact
// in one statement, with the stored value each one tests.
func (s *Segments) judge(ctx context.Context, tx *gorm.DB, seg *models.Segment, c *models.Contact, x *Explanation) error {
	customs, err := customFields(ctx, tx, seg.UserID)
	if err != nil {
		return fmt.Errorf("segments: custom fields of account %d: %w", seg.UserID, err)
	}
	d := s.db.SQL()
	// The whole condition exactly as the segment's statements build it.
	now := s.db.Now()
	where, args := sqlCondition(d, atNow(conditionsOf(seg, customs), now), isOr(seg))
	cols := []string{"CASE WHEN (" + where + ") THEN 1 ELSE 0 END"}
	type judged struct {
		at   int // index in x.Conditions
		cond Condition
	}
	var each []judged
	for i := range seg.SelectField {
		one := &models.Segment{SelectField: seg.SelectField[i : i+1]}
		if i < len(seg.SelectOperator) {
			one.SelectOperator = seg.SelectOperator[i : i+1]
		}
		if i < len(seg.Value) {
			one.Value = seg.Value[i : i+1]
		}
		r := ConditionResult{Field: seg.SelectField[i]}
		if len(one.SelectOperator) > 0 {
			r.Operator = one.SelectOperator[0]
		}
		compiled := conditionsOf(one, customs)
		if len(compiled) != 1 {
			r.Ignored = true
			x.Conditions = append(x.Conditions, r)
			continue
		}
		k := atNow(compiled, now)[0]
		r.Field, r.Type, r.Operator, r.Values = k.Field, k.Type, k.Operator, shownValues(k)
		frag, a := sqlOne(d, k)
		// A NULL test is not met, as WHERE reads it: no condition stands
		// under a NOT, so for the whole condition NULL and false agree.
		cols = append(cols, "CASE WHEN ("+frag+") THEN 1 ELSE 0 END", conditionColumn(d, k))
		args = append(args, a...)
		each = append(each, judged{len(x.Conditions), k})
		x.Conditions = append(x.Conditions, r)
	}
	// Placeholders in the select list come before the WHERE's two.
	rows, err := tx.Raw("SELECT "+strings.Join(cols, ", ")+" FROM contacts c WHERE c.id = ? AND c.user_id = ?",
		append(args, c.ID, seg.UserID)...).Rows()
	if err != nil {
		return fmt.Errorf("segments: judge contact %d in segment %d: %w", c.ID, seg.ID, err)
	}
	defer rows.Close()
	if !rows.Next() {
		if err := rows.Err(); err != nil {
			return fmt.Errorf("segments: judge contact %d in segment %d: %w", c.ID, seg.ID, err)
		}
		return core.ErrNotFound
	}
	var all int64
	met := make([]int64, len(each))
	vals := make([]sql.NullString, len(each))
	dest := []any{&all}
	for i := range each {
		dest = append(dest, &met[i], &vals[i])
	}
	if err := rows.Scan(dest...); err != nil {
		return fmt.Errorf("segments: judge contact %d in segment %d: %w", c.ID, seg.ID, err)
	}
	x.ConditionsMet = all == 1
	for i, j := range each {
		r := &x.Conditions[j.at]
		r.Met = met[i] == 1
		r.Value = shownValue(j.cond, vals[i])
	}
	if err := rows.Err(); err != nil {
		return fmt.Errorf("segments: judge contact %d in segment %d: %w", c.ID, seg.ID, err)
	}
	return nil
}

// shownValues are a condition's compared values as a person reads them:
// a country by its name, a creation time in UTC.
func shownValues(k Condition) []string {
	out := make([]string, len(k.Values))
	for i, v := range k.Values {
		out[i] = shownValue(k, sql.NullString{String: v, Valid: true})
	}
	return out
}

func shownValue(k Condition, v sql.NullString) string {
	if !v.Valid {
		return ""
	}
	switch {
	case k.Type == "created_at":
		for _, l := range []string{time.RFC3339Nano, core.SQLiteTimeLayout, "2006-01-02 15:04:05.999999999", "2006-01-02T15:04:05.999999999"} {
			if t, err := time.Parse(l, v.String); err == nil {
				return t.UTC().Format("2006-01-02 15:04:05 UTC")
			}
		}
	case k.Field == "country" && !k.Custom:
		return record.CountryName(v.String)
	}
	return v.String
}

// typeNames names the contact type id of the account (deleted ones too:
// a contact may still point at one).
func typeNames(ctx context.Context, q *gorm.DB, accountID, id int64) (map[int64]string, error) {
	var ts []models.ContactType
	if err := q.WithContext(ctx).Select("id", "name").Where("user_id = ? AND id = ?", accountID, id).Find(&ts).Error; err != nil {
		return nil, fmt.Errorf("segments: contact type %d: %w", id, err)
	}
	out := map[int64]string{}
	for _, t := range ts {
		out[t.ID] = t.Name
	}
	return out, nil
}

// ContactSegment is one segment on a contact's page: whether the contact
// is among its recipients now, and whether by a row added by hand.
type ContactSegment struct {
	Segment models.Segment
	In      bool
	ByHand  bool
}

// OfContact lists the segments of the contact's type and every segment
// that holds its address by hand, by name, with the contact's membership
// as stored. Errors: ErrNotFound (contact).
func (s *Segments) OfContact(ctx context.Context, accountID, contactID int64) ([]ContactSegment, error) {
	var out []ContactSegment
	err := s.db.R.WithContext(ctx).Transaction(func(tx *gorm.DB) error {
		var c models.Contact
		if err := tx.Where("user_id = ? AND id = ? AND deleted_at IS NULL", accountID, contactID).Take(&c).Error; err != nil {
			return core.NotFound(err)
		}
		var in []int64
		if err := tx.Raw("SELECT segment_id FROM segment_emails WHERE contact_id = ? AND user_id = ?", c.ID, accountID).Scan(&in).Error; err != nil {
			return fmt.Errorf("segments: segments of contact %d: %w", c.ID, err)
		}
		// Rows added by hand for the address, one index probe per segment
		// of the account (segment_emails_email).
		var hand []int64
		if err := tx.Raw(`SELECT segment_id FROM segment_emails WHERE segment_id IN (SELECT id FROM segments WHERE user_id = ? AND deleted_at IS NULL)
			AND contact_id IS NULL AND email = ? AND user_id = ?`, accountID, c.Email, accountID).Scan(&hand).Error; err != nil {
			return fmt.Errorf("segments: segments of the address of contact %d: %w", c.ID, err)
		}
		// The segments of the contact's type (segments_type), and those of
		// other types that hold the address by hand.
		var segs []models.Segment
		q := tx.Where("user_id = ? AND deleted_at IS NULL", accountID)
		if len(hand) > 0 {
			q = q.Where("(contact_type_id = ? OR id IN ?)", c.ContactTypeID, hand)
		} else {
			q = q.Where("contact_type_id = ?", c.ContactTypeID)
		}
		if err := q.Order("segment_name, id").Find(&segs).Error; err != nil {
			return fmt.Errorf("segments: segments of contact %d: %w", c.ID, err)
		}
		isIn, byHand := map[int64]bool{}, map[int64]bool{}
		for _, id := range in {
			isIn[id] = true
		}
		for _, id := range hand {
			byHand[id] = true
		}
		for _, seg := range segs {
			out = append(out, ContactSegment{Segment: seg, In: isIn[seg.ID] || byHand[seg.ID], ByHand: byHand[seg.ID]})
		}
		return nil
	})
	if err != nil {
		return nil, core.Wrapf(err, "segments: membership of contact %d", contactID)
	}
	return out, nil
}
