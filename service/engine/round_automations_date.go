package engine

import (
	"context"
	"fmt"
	"strings"
	"time"

	"gorm.io/gorm"
	"gorm.io/gorm/clause"

	"herald/models"
	"herald/service/core"
	"herald/service/internal/record"
)

// Date automations (trigger_kind 'date'). Once a day, in the account's
// time zone, the contacts of the automation's contact type whose date
// field, moved by the offset, falls on that day are enrolled. The day's
// scan reads the contact type by id in batches of enrolBatch along
// contacts_user_type and matches the dates in Go: no batch holds more
// than enrolBatch contacts, however big the type. Where the scan stands
// is kept on the automation (date_day, the local day as YYYYMMDD, and
// date_cursor, the last contact id read that day) and moved by
// conditional updates in the transaction that enrols the batch: two
// processes never enrol from the same batch, and a restart goes on where
// the last pass stopped. Contacts added later that day are read by later
// rounds (their ids follow the cursor); a date changed to today after the
// scan passed its contact is not. Days while the automation is not live
// are not caught up.
//
// A yearly automation comes back on each anniversary of the date from the
// date's own year on (a 29 February on 28 February in other years); a
// one-off on the date itself. Each occurrence has a key (the year of a
// yearly one, YYYYMMDD of a one-off): an address already enrolled for an
// earlier occurrence and no longer on its way (done or exited) starts
// again from the first email; one still on its way is left alone.

// dateBatchesPerRound bounds one round's share of a day's scan per
// automation, so that a large contact type does not hold up the other
// automations' emails: the next round goes on from the cursor.
const dateBatchesPerRound = 20

// dayKey is a calendar day as YYYYMMDD.
func dayKey(t time.Time) int64 {
	y, m, d := t.Date()
	return int64(y)*10000 + int64(m)*100 + int64(d)
}

// dateOccurrence answers whether a date field's value v makes the
// automation's occurrence fall on the local day today (its date, time of
// day ignored), and that occurrence's key. v is a datetime-local value
// (YYYY-MM-DDTHH:MM[:SS]) or a date (YYYY-MM-DD); anything else never
// matches. offset is in days (negative: before the date).
func dateOccurrence(v string, today time.Time, offset int, yearly bool) (int64, bool) {
	v = strings.TrimSpace(v)
	if len(v) < 10 {
		return 0, false
	}
	if len(v) > 10 && v[10] != 'T' && v[10] != ' ' {
		return 0, false
	}
	date, err := time.Parse("2006-01-02", v[:10])
	if err != nil {
		return 0, false
	}
	y, m, d := today.Date()
	// The date whose occurrence is today: offset days before today (an
	// offset of -7, a week before the date, looks a week ahead).
	at := time.Date(y, m, d-offset, 0, 0, 0, 0, time.UTC)
	if !yearly {
		return dayKey(at), dayKey(date) == dayKey(at)
	}
	if at.Year() < date.Year() {
		return 0, false
	}
	am, ad := date.Month(), date.Day()
	if am == time.February && ad == 29 && !leap(at.Year()) {
		ad = 28
	}
	return int64(at.Year()), at.Month() == am && at.Day() == ad
}

func leap(y int) bool { return y%4 == 0 && (y%100 != 0 || y%400 == 0) }

// enrolByDate reads the next batch of the day's scan of a date automation
// and enrols the contacts whose occurrence is today. It answers how many
// contacts it read (enrolBatch: more may follow).
func (ar *automationsRound) enrolByDate(ctx context.Context, a *models.Automation) (int, error) {
	if a.AutomationForTable == models.TargetSegments || a.AutomationFor == 0 || !core.FieldNameRE.MatchString(a.DateField) {
		return 0, nil
	}
	loc, err := record.ReadAccountLocation(ctx, ar.db.R, a.UserID)
	if err != nil {
		return 0, fmt.Errorf("automations: %w", err)
	}
	now := ar.now()
	local := now.In(loc)
	today := dayKey(local)
	if a.DateDay != today {
		if a.DateDay > today {
			return 0, nil // the clock went back: that day was scanned already
		}
		// A new day: its scan starts from the first contact, if no other
		// process started it first.
		res := ar.db.W.WithContext(ctx).Model(&models.Automation{}).Where("id = ? AND date_day = ? AND status = ?", a.ID, a.DateDay, models.AutomationLive).
			Updates(map[string]any{"date_day": today, "date_cursor": 0})
		if res.Error != nil {
			return 0, fmt.Errorf("automations: start the day of automation %d: %w", a.ID, res.Error)
		}
		var cur struct{ DateDay, DateCursor int64 }
		if err := ar.db.W.WithContext(ctx).Model(&models.Automation{}).Select("date_day, date_cursor").Where("id = ?", a.ID).Scan(&cur).Error; err != nil {
			return 0, fmt.Errorf("automations: day of automation %d: %w", a.ID, err)
		}
		a.DateDay, a.DateCursor = cur.DateDay, cur.DateCursor
		if a.DateDay != today {
			return 0, nil
		}
	}
	type row struct {
		ID        int64
		Email     string
		FirstName string
		LastName  string
		Value     *string
	}
	var rows []row
	if err := ar.db.R.WithContext(ctx).Raw(`SELECT c.id, c.email, c.first_name, c.last_name, `+ar.db.SQL().CustomField("c.custom_fields", a.DateField)+` AS value
		FROM contacts c WHERE c.user_id = ? AND c.contact_type_id = ? AND c.deleted_at IS NULL AND c.id > ? ORDER BY c.id LIMIT ?`,
		a.UserID, a.AutomationFor, a.DateCursor, enrolBatch).Scan(&rows).Error; err != nil {
		return 0, fmt.Errorf("automations: contacts of date automation %d: %w", a.ID, err)
	}
	if len(rows) == 0 {
		return 0, nil
	}
	var occurrence int64
	batch := make([]models.AutomationContact, 0, 64)
	emails := make([]string, 0, 64)
	var due int64
	ts := models.NewTimestamp(now)
	for _, r := range rows {
		if r.Value == nil || r.Email == "" {
			continue
		}
		occ, ok := dateOccurrence(*r.Value, local, a.DateOffsetDays, a.DateYearly == 1)
		if !ok {
			continue
		}
		if len(batch) == 0 {
			lines, err := record.StepLines(ar.db.R.WithContext(ctx), a.ID)
			if err != nil {
				return 0, fmt.Errorf("automations: schedule of automation %d: %w", a.ID, err)
			}
			main := lines[models.PathMain]
			if len(main) == 0 {
				return 0, nil
			}
			due = now.Add(record.WaitOf(&main[0])).UnixMilli()
		}
		occurrence = occ // the same for every contact of the day
		id := r.ID
		batch = append(batch, models.AutomationContact{AutomationID: a.ID, UserID: a.UserID, ContactID: &id, Email: r.Email,
			FirstName: r.FirstName, LastName: r.LastName, DueAt: due, EnrolledAt: ts, UpdatedAt: ts, Occurrence: occ})
		emails = append(emails, r.Email)
	}
	last := rows[len(rows)-1].ID
	err = ar.db.W.WithContext(ctx).Transaction(func(tx *gorm.DB) error {
		res := tx.Model(&models.Automation{}).Where("id = ? AND date_day = ? AND date_cursor = ? AND status = ?", a.ID, today, a.DateCursor, models.AutomationLive).
			Update("date_cursor", last)
		if res.Error != nil || res.RowsAffected == 0 {
			return res.Error
		}
		if len(batch) == 0 {
			return nil
		}
		if err := tx.Clauses(clause.OnConflict{DoNothing: true}).CreateInBatches(batch, 500).Error; err != nil {
			return err
		}
		// An address enrolled for an earlier occurrence starts again, once
		// it is no longer on its way (the rows just inserted have this
		// occurrence already).
		for _, part := range core.Chunks(emails, 500) {
			if err := tx.Exec(`UPDATE automation_contacts SET state = ?, step = 0, path = ?, due_at = ?, occurrence = ?, data = NULL,
				enrolled_at = ?, updated_at = ? WHERE automation_id = ? AND email IN ? AND state <> ? AND occurrence <> ?`,
				models.EnrolActive, models.PathMain, due, occurrence, ts, ts, a.ID, part, models.EnrolActive, occurrence).Error; err != nil {
				return err
			}
		}
		return nil
	})
	a.DateCursor = last
	if err != nil {
		return len(rows), fmt.Errorf("automations: enrol in date automation %d: %w", a.ID, err)
	}
	return len(rows), nil
}

// queueDateStep queues one email of a date automation's enrolment: the
// enrolment moves on first, by its conditional update, and only the
// process whose update took it writes the ledger row, in the same
// transaction. The ledger row of an earlier occurrence (the carrier send
// keeps one row per address) is made a fresh queued message when it is
// final (sent, bounced, skipped, blocked, failed); a row still queued or
// being sent is left as it is. It answers how many ledger rows it queued
// (0 or 1).
func queueDateStep(tx *gorm.DB, e *models.AutomationContact, sendID int64, state int, next int64) (int64, error) {
	res := tx.Exec("UPDATE automation_contacts SET step = ?, state = ?, due_at = ?, updated_at = ? WHERE id = ? AND path = ? AND step = ? AND state = ?",
		e.Step+1, state, next, tx.NowFunc(), e.ID, e.Path, e.Step, models.EnrolActive)
	if res.Error != nil || res.RowsAffected == 0 {
		return 0, res.Error
	}
	res = tx.Exec(`INSERT INTO send_messages (send_id, user_id, contact_id, email, first_name, last_name, state, attempts, next_at, error)
		VALUES (?, ?, ?, ?, ?, ?, 0, 0, 0, '') ON CONFLICT (send_id, email) DO UPDATE SET
		contact_id = excluded.contact_id, first_name = excluded.first_name, last_name = excluded.last_name,
		state = 0, attempts = 0, next_at = 0, release_at = 0, variant = 0, worker = NULL, error = '', relay = NULL,
		sent_at = NULL, opened_at = NULL, clicked_at = NULL, unsubscribed_at = NULL, open_counted_at = 0, click_counted_at = 0,
		hard_bounced_at = NULL, soft_bounced_at = NULL, complained_at = NULL, human_opened_at = 0, human_clicked_at = 0,
		human_open_counted_at = 0, human_click_counted_at = 0, last_click_at = 0, last_click_link = -1, human_click_event = NULL
		WHERE send_messages.state IN (?, ?, ?, ?, ?)`,
		sendID, e.UserID, e.ContactID, e.Email, e.FirstName, e.LastName,
		models.MessageDelivered, models.MessageBounced, models.MessageSkipped, models.MessageBlocked, models.MessageFailed)
	return res.RowsAffected, res.Error
}
