package audience

// A contact's engagement (docs/FEATURES.md, "Engagement"): its level read
// from contacts.last_engaged_at, which the tracking keeps, against the
// current time, for the contact page and as a segment condition.

import (
	"context"
	"strconv"
	"strings"
	"time"

	"gorm.io/gorm"

	"herald/models"
	"herald/service/core"
	"herald/service/internal/record"
)

// EngagementField is the segment condition's field: equals, not_equals
// or in, with the levels (record.EngagementLevels) as values.
const EngagementField = "engagement"

// The levels, as the service's callers name them.
const (
	EngagementNew        = record.EngagementNew
	EngagementEngaged    = record.EngagementEngaged
	EngagementLapsing    = record.EngagementLapsing
	EngagementNotEngaged = record.EngagementNotEngaged
)

// EngagementLevels are the levels, from most to least engaged, then new.
var EngagementLevels = record.EngagementLevels

// normaliseLevel reads a level as a condition's value: its name, with a
// space or a hyphen for the underscore, in any case.
func normaliseLevel(v string) (string, bool) {
	v = strings.NewReplacer(" ", "_", "-", "_").Replace(strings.ToLower(strings.TrimSpace(v)))
	for _, l := range record.EngagementLevels {
		if l == v {
			return v, true
		}
	}
	return "", false
}

// atNow sets the time the conditions' engagement levels are judged at.
func atNow(conds []Condition, now time.Time) []Condition {
	for i := range conds {
		conds[i].Now = now
	}
	return conds
}

// engagementSQL is a contact's level at now as an expression over contacts
// aliased c, the same rule as record.EngagementLevel: two comparisons of
// the indexed last_engaged_at, and only for a contact without a person's
// activity in 90 days a look along the ledger's (email, id) index for a
// mail delivered before the last 30 days. The bounds are the service's
// own numbers and times, written into the SQL (no placeholders: Explain
// selects this expression beside the condition's arguments).
func engagementSQL(d core.Dialect, now time.Time) string {
	ms := func(t time.Time) string { return strconv.FormatInt(t.UnixMilli(), 10) }
	return "CASE WHEN c.last_engaged_at >= " + ms(now.Add(-record.EngagedWithin)) + " THEN '" + record.EngagementEngaged + "'" +
		" WHEN c.last_engaged_at >= " + ms(now.Add(-record.LapsingWithin)) + " THEN '" + record.EngagementLapsing + "'" +
		" WHEN EXISTS (SELECT 1 FROM send_messages m WHERE m.email = c.email AND m.user_id = c.user_id AND m.sent_at < '" +
		d.TimeValue(now.Add(-record.JudgedAfter)) + "') THEN '" + record.EngagementNotEngaged + "'" +
		" ELSE '" + record.EngagementNew + "' END"
}

// Engagement is a contact's engagement as the console shows it.
type Engagement struct {
	Level string
	// LastEngaged is a person's last open or click (zero: none recorded).
	LastEngaged time.Time
}

// Engagement returns the contact's engagement now. Errors: ErrNotFound.
func (s *Contacts) Engagement(ctx context.Context, accountID, contactID int64) (Engagement, error) {
	c, err := contact(ctx, s.db.R, accountID, contactID)
	if err != nil {
		return Engagement{}, err
	}
	return engagementOf(ctx, s.db.R, s.db.Now(), c)
}

func engagementOf(ctx context.Context, q *gorm.DB, now time.Time, c *models.Contact) (Engagement, error) {
	var e Engagement
	if c.LastEngagedAt > 0 {
		e.LastEngaged = time.UnixMilli(c.LastEngagedAt).UTC()
	}
	mailed := false
	if c.LastEngagedAt < now.Add(-record.LapsingWithin).UnixMilli() {
		var n int64
		if err := q.WithContext(ctx).Raw("SELECT COUNT(*) FROM (SELECT 1 FROM send_messages WHERE email = ? AND user_id = ? AND sent_at < ? LIMIT 1) AS x",
			c.Email, c.UserID, models.NewTimestamp(now.Add(-record.JudgedAfter))).Scan(&n).Error; err != nil {
			return e, core.Wrapf(err, "contacts: mails of contact %d", c.ID)
		}
		mailed = n > 0
	}
	e.Level = record.EngagementLevel(c.LastEngagedAt, mailed, now)
	return e, nil
}

// RefreshTimed materialises again the account's segments that test the
// engagement level: a level moves with the time alone, so a segment's
// stored recipients (kept current on every change of a contact) are
// brought up to date before a send reads them. A segment without such a
// condition costs nothing but the one query that lists the segments.
func (s *Segments) RefreshTimed(ctx context.Context, accountID int64) error {
	var segs []models.Segment
	if err := s.db.R.WithContext(ctx).Where("user_id = ? AND deleted_at IS NULL", accountID).Find(&segs).Error; err != nil {
		return core.Wrapf(err, "segments: segments of account %d", accountID)
	}
	for i := range segs {
		seg := &segs[i]
		if !hasString(seg.SelectField, EngagementField) {
			continue
		}
		err := s.db.W.WithContext(ctx).Transaction(func(tx *gorm.DB) error {
			customs, err := customFields(ctx, tx, accountID)
			if err != nil {
				return err
			}
			return s.materialise(tx, seg, conditionsOf(seg, customs))
		})
		if err != nil {
			return core.Wrapf(err, "segments: refresh segment %d", seg.ID)
		}
	}
	return nil
}

// Levels returns the engagement level now of each of the account's
// contacts in rows (a page of the contact list), by contact id: the same
// rule as Engagement, with one look along the ledger's (email, id) index
// for the whole page's contacts without a person's activity in 90 days.
func (s *Contacts) Levels(ctx context.Context, accountID int64, rows []models.ContactView) (map[int64]string, error) {
	now := s.db.Now()
	var quiet []string
	for i := range rows {
		if rows[i].LastEngagedAt < now.Add(-record.LapsingWithin).UnixMilli() {
			quiet = append(quiet, rows[i].Email)
		}
	}
	mailed := map[string]bool{}
	for _, part := range core.Chunks(quiet, core.BulkChunk) {
		var got []string
		if err := s.db.R.WithContext(ctx).Raw("SELECT DISTINCT email FROM send_messages WHERE email IN ? AND user_id = ? AND sent_at < ?",
			part, accountID, models.NewTimestamp(now.Add(-record.JudgedAfter))).Scan(&got).Error; err != nil {
			return nil, core.Wrapf(err, "contacts: mails of a page of account %d", accountID)
		}
		for _, e := range got {
			mailed[e] = true
		}
	}
	out := make(map[int64]string, len(rows))
	for i := range rows {
		out[rows[i].ID] = record.EngagementLevel(rows[i].LastEngagedAt, mailed[rows[i].Email], now)
	}
	return out, nil
}
