package engine

import (
	"context"
	"fmt"
	"strconv"
	"time"

	"gorm.io/gorm"
	"gorm.io/gorm/clause"

	"herald/models"
	"herald/service/core"
	"herald/service/internal/record"
)

// automationsRound runs the live automations: contacts that entered an
// automation's target are enrolled, and due emails are queued into the
// send ledger (where the engine sends them like any single send).
type automationsRound struct {
	db     *core.DB
	events *record.Events
	now    func() time.Time
	sent   func() // wakes the engine: messages were queued
}

func newAutomationsRound(db *core.DB, events *record.Events, now func() time.Time, sent func()) *automationsRound {
	return &automationsRound{db: db, events: events, now: now, sent: sent}
}

func (ar *automationsRound) name() string { return "automations" }

// enrolBatch is how many new target rows one enrolment pass takes, and
// stepBatch how many due emails one pass queues, per automation.
const (
	enrolBatch = 5000
	stepBatch  = 2000
)

// run does one pass for every live automation: its new contacts are
// enrolled, then its due emails queued.
func (ar *automationsRound) run(ctx context.Context) error {
	var live []models.Automation
	if err := ar.db.R.WithContext(ctx).Where("status = ? AND deleted_at IS NULL", models.AutomationLive).Order("id").Find(&live).Error; err != nil {
		return fmt.Errorf("live automations: %w", err)
	}
	queued := false
	for i := range live {
		a := &live[i]
		for i := 0; a.TriggerKind == models.TriggerDate && i < dateBatchesPerRound; i++ {
			n, err := ar.enrolByDate(ctx, a)
			if err != nil {
				return err
			}
			if n < enrolBatch {
				break
			}
		}
		for a.TriggerKind == models.TriggerTarget || a.TriggerKind == "" { // an API trigger enrols its contacts itself
			n, err := ar.enrol(ctx, a)
			if err != nil {
				return err
			}
			if n < enrolBatch {
				break
			}
		}
		if err := ar.branchEarly(ctx, a); err != nil {
			return err
		}
		for {
			n, err := ar.queueSteps(ctx, a)
			if err != nil {
				return err
			}
			queued = queued || n > 0
			if n < stepBatch {
				break
			}
		}
	}
	if queued {
		ar.sent()
	}
	return nil
}

// enrol takes the target's rows after the automation's cursor: each is a
// contact that entered the target (created in the contact type, or newly
// matching the segment) since the automation went live.
func (ar *automationsRound) enrol(ctx context.Context, a *models.Automation) (int, error) {
	type row struct {
		ID        int64
		ContactID *int64
		Email     string
		FirstName string
		LastName  string
	}
	var rows []row
	var err error
	r := ar.db.R.WithContext(ctx)
	if a.AutomationForTable == models.TargetSegments {
		err = r.Raw(`SELECT se.id, se.contact_id, COALESCE(c.email, se.email) AS email, COALESCE(c.first_name, se.first_name) AS first_name,
			COALESCE(c.last_name, se.last_name) AS last_name
			FROM segment_emails se LEFT JOIN contacts c ON c.id = se.contact_id AND c.deleted_at IS NULL
			WHERE se.segment_id = ? AND se.user_id = ? AND se.id > ? ORDER BY se.id LIMIT ?`, a.AutomationFor, a.UserID, a.EnrolCursor, enrolBatch).Scan(&rows).Error
	} else {
		err = r.Raw(`SELECT c.id, c.id AS contact_id, c.email, c.first_name, c.last_name FROM contacts c
			WHERE c.user_id = ? AND c.contact_type_id = ? AND c.deleted_at IS NULL AND c.id > ? ORDER BY c.id LIMIT ?`,
			a.UserID, a.AutomationFor, a.EnrolCursor, enrolBatch).Scan(&rows).Error
	}
	if err != nil {
		return 0, fmt.Errorf("automations: audience of automation %d: %w", a.ID, err)
	}
	if len(rows) == 0 {
		return 0, nil
	}
	lines, err := record.StepLines(ar.db.R.WithContext(ctx), a.ID)
	if err != nil {
		return 0, fmt.Errorf("automations: schedule of automation %d: %w", a.ID, err)
	}
	main := lines[models.PathMain]
	if len(main) == 0 {
		return 0, nil
	}
	now := ar.now()
	due := now.Add(record.WaitOf(&main[0])).UnixMilli()
	ts := models.NewTimestamp(now)
	last := rows[len(rows)-1].ID
	err = ar.db.W.WithContext(ctx).Transaction(func(tx *gorm.DB) error {
		// The cursor moves only from where this pass read it: two processes
		// never both enrol the same rows (and the unique address per
		// automation would stop a second enrolment anyway).
		res := tx.Model(&models.Automation{}).Where("id = ? AND enrol_cursor = ? AND status = ?", a.ID, a.EnrolCursor, models.AutomationLive).
			Update("enrol_cursor", last)
		if res.Error != nil || res.RowsAffected == 0 {
			return res.Error
		}
		batch := make([]models.AutomationContact, 0, len(rows))
		for _, r := range rows {
			if r.Email == "" {
				continue
			}
			batch = append(batch, models.AutomationContact{AutomationID: a.ID, UserID: a.UserID, ContactID: r.ContactID, Email: r.Email,
				FirstName: r.FirstName, LastName: r.LastName, DueAt: due, EnrolledAt: ts, UpdatedAt: ts})
		}
		if len(batch) == 0 {
			return nil
		}
		return tx.Clauses(clause.OnConflict{DoNothing: true}).CreateInBatches(batch, 500).Error
	})
	a.EnrolCursor = last
	if err != nil {
		return len(rows), fmt.Errorf("automations: enrol in automation %d: %w", a.ID, err)
	}
	return len(rows), nil
}

// queueSteps queues the due emails of the automation's enrolled contacts
// into the ledger of each email's carrier send and moves each contact to
// its next email (or done). A contact that unsubscribed, bounced or met
// the exit criteria leaves instead. The ledger's unique (send, address)
// keeps an email from going twice to one contact, whatever the number of
// processes doing this at once.
func (ar *automationsRound) queueSteps(ctx context.Context, a *models.Automation) (int, error) {
	now := ar.now()
	var due []models.AutomationContact
	if err := ar.db.R.WithContext(ctx).Where("automation_id = ? AND state = ? AND due_at <= ?", a.ID, models.EnrolActive, now.UnixMilli()).
		Order("due_at, id").Limit(stepBatch).Find(&due).Error; err != nil {
		return 0, fmt.Errorf("automations: due steps of automation %d: %w", a.ID, err)
	}
	if len(due) == 0 {
		return 0, nil
	}
	lines, err := record.StepLines(ar.db.R.WithContext(ctx), a.ID)
	if err != nil {
		return 0, fmt.Errorf("automations: schedule of automation %d: %w", a.ID, err)
	}
	sendIDs := stepSends(lines)
	held, err := ar.unconfirmed(ctx, due)
	if err != nil {
		return 0, fmt.Errorf("automations: unconfirmed contacts of automation %d: %w", a.ID, err)
	}
	err = ar.db.W.WithContext(ctx).Transaction(func(tx *gorm.DB) error {
		triggered := map[int64]int64{}
		leavers, err := ar.leaving(tx, a, due, sendIDs)
		if err != nil {
			return err
		}
		var engaged map[string]bool
		for i := range due {
			e := &due[i]
			line := lines[e.Path]
			if e.Step >= len(line) || !record.IsBranch(&line[e.Step]) && line[e.Step].SendID == nil {
				if err := advance(tx, e, models.EnrolDone, 0); err != nil {
					return err
				}
				continue
			}
			if leavers[e.Email] {
				if err := advance(tx, e, models.EnrolExited, 0); err != nil {
					return err
				}
				continue
			}
			if record.IsBranch(&line[e.Step]) {
				// The branch's wait ran out: path a if an open or click
				// came meanwhile (the early pass had not seen it yet),
				// else path b.
				if engaged == nil {
					if engaged, err = engagedOf(tx, sendIDs, due); err != nil {
						return fmt.Errorf("automations: engaged contacts of automation %d: %w", a.ID, err)
					}
				}
				path := models.PathB
				if engaged[e.Email] {
					path = models.PathA
				}
				if err := takePath(tx, e, lines[path], path, now); err != nil {
					return err
				}
				continue
			}
			sched := line
			if e.ContactID != nil && held[*e.ContactID] {
				// Not confirmed yet: the email waits (the contact is
				// deleted after 30 days unconfirmed, and then leaves).
				if err := tx.Exec("UPDATE automation_contacts SET due_at = ?, updated_at = ? WHERE id = ? AND path = ? AND step = ? AND state = ?",
					now.Add(unconfirmedHold).UnixMilli(), tx.NowFunc(), e.ID, e.Path, e.Step, models.EnrolActive).Error; err != nil {
					return err
				}
				continue
			}
			sendID := *sched[e.Step].SendID
			state, next := models.EnrolActive, int64(0)
			if e.Step+1 >= len(sched) {
				state = models.EnrolDone
			} else {
				next = now.Add(record.WaitOf(&sched[e.Step+1])).UnixMilli()
			}
			var queued int64
			if a.TriggerKind == models.TriggerDate {
				// The same address comes back each occurrence: the
				// enrolment's move decides, not the ledger's unique row.
				if queued, err = queueDateStep(tx, e, sendID, state, next); err != nil {
					return err
				}
			} else {
				res := tx.Exec(`INSERT INTO send_messages (send_id, user_id, contact_id, email, first_name, last_name, state, attempts, next_at, error)
				VALUES (?, ?, ?, ?, ?, ?, 0, 0, 0, '') ON CONFLICT (send_id, email) DO NOTHING`,
					sendID, e.UserID, e.ContactID, e.Email, e.FirstName, e.LastName)
				if res.Error != nil {
					return res.Error
				}
				queued = res.RowsAffected
				if err := advance(tx, e, state, next); err != nil {
					return err
				}
			}
			triggered[sendID] += queued
			if queued > 0 {
				if err := ar.events.RecordRows(tx, e.UserID, record.EventProcessed, "m.send_id = ? AND m.email = ?", ar.now(), sendID, e.Email); err != nil {
					return err
				}
			}
		}
		for id, n := range triggered {
			if n > 0 {
				if err := tx.Exec("UPDATE single_sends SET triggered = triggered + ? WHERE id = ?", n, id).Error; err != nil {
					return err
				}
			}
		}
		return nil
	})
	if err != nil {
		return len(due), fmt.Errorf("automations: queue steps of automation %d: %w", a.ID, err)
	}
	return len(due), nil
}

// unconfirmedHold is how long the due email of an unconfirmed contact
// waits before the round looks at it again: it goes out at most this
// long after the contact confirms.
const unconfirmedHold = 15 * time.Minute

// unconfirmed returns which contacts of the due enrolments are still
// unconfirmed (double opt-in): they receive no automation email.
func (ar *automationsRound) unconfirmed(ctx context.Context, due []models.AutomationContact) (map[int64]bool, error) {
	var ids []int64
	for _, e := range due {
		if e.ContactID != nil {
			ids = append(ids, *e.ContactID)
		}
	}
	if len(ids) == 0 {
		return nil, nil
	}
	var got []int64
	if err := ar.db.R.WithContext(ctx).Table("contacts").Where("id IN ? AND status = ?", ids, models.ContactUnconfirmed).Pluck("id", &got).Error; err != nil {
		return nil, err
	}
	out := make(map[int64]bool, len(got))
	for _, id := range got {
		out[id] = true
	}
	return out, nil
}

// advance moves an enrolment past its current email, if no other process
// did it first.
func advance(tx *gorm.DB, e *models.AutomationContact, state int, next int64) error {
	step := e.Step + 1
	if state == models.EnrolExited {
		step = e.Step
	}
	return tx.Exec("UPDATE automation_contacts SET step = ?, state = ?, due_at = ?, updated_at = ? WHERE id = ? AND path = ? AND step = ? AND state = ?",
		step, state, next, tx.NowFunc(), e.ID, e.Path, e.Step, models.EnrolActive).Error
}

// takePath moves an enrolment waiting at the branch onto path (its line
// of steps: line), due after the wait of the path's first step, or done
// when the path has no step; only if no other process moved it first.
func takePath(tx *gorm.DB, e *models.AutomationContact, line []models.AutomationSchedule, path string, now time.Time) error {
	state, next := models.EnrolActive, int64(0)
	if len(line) == 0 {
		state = models.EnrolDone
	} else {
		next = now.Add(record.WaitOf(&line[0])).UnixMilli()
	}
	return tx.Exec("UPDATE automation_contacts SET path = ?, step = 0, state = ?, due_at = ?, updated_at = ? WHERE id = ? AND path = ? AND step = ? AND state = ?",
		path, state, next, tx.NowFunc(), e.ID, e.Path, e.Step, models.EnrolActive).Error
}

// stepSends is the carrier sends of the automation's emails, every path.
func stepSends(lines map[string][]models.AutomationSchedule) []int64 {
	var ids []int64
	for _, line := range lines {
		for _, r := range line {
			if r.SendID != nil {
				ids = append(ids, *r.SendID)
			}
		}
	}
	return ids
}

// engagedOf returns which addresses of the enrolments opened or clicked an
// email of the automation as a person (human_opened_at, human_clicked_at:
// a scanner's or a mail proxy's fetch is not counted). One query along
// the ledger's unique (send_id, email) index.
func engagedOf(tx *gorm.DB, sendIDs []int64, es []models.AutomationContact) (map[string]bool, error) {
	out := map[string]bool{}
	if len(sendIDs) == 0 || len(es) == 0 {
		return out, nil
	}
	emails := make([]string, len(es))
	for i := range es {
		emails[i] = es[i].Email
	}
	var got []string
	if err := tx.Raw("SELECT DISTINCT email FROM send_messages WHERE send_id IN ? AND email IN ? AND (human_opened_at > 0 OR human_clicked_at > 0)",
		sendIDs, emails).Scan(&got).Error; err != nil {
		return nil, err
	}
	for _, e := range got {
		out[e] = true
	}
	return out, nil
}

// branchEarly moves the contacts waiting at the automation's branch that
// opened or clicked meanwhile onto path a, before the branch's wait runs
// out. Each call reads the next stepBatch waiting contacts (by id, along
// automation_contacts_step) after the automation's branch_cursor, checks
// them in one query, and moves the cursor past them (back to the first
// after the last). The cursor is in the database: the processes sharing
// it take turns along the waiting contacts, and a restarted process goes
// on where the others are, so a contact waiting at the branch is looked
// at once every (waiting / stepBatch) rounds of all the processes
// together, however often one restarts.
func (ar *automationsRound) branchEarly(ctx context.Context, a *models.Automation) error {
	lines, err := record.StepLines(ar.db.R.WithContext(ctx), a.ID)
	if err != nil {
		return fmt.Errorf("automations: schedule of automation %d: %w", a.ID, err)
	}
	main := lines[models.PathMain]
	if len(main) == 0 || !record.IsBranch(&main[len(main)-1]) {
		return nil
	}
	at := len(main) - 1
	now := ar.now()
	var waiting []models.AutomationContact
	if err := ar.db.R.WithContext(ctx).Where("automation_id = ? AND state = ? AND path = ? AND step = ? AND id > ?",
		a.ID, models.EnrolActive, models.PathMain, at, a.BranchCursor).
		Order("id").Limit(stepBatch).Find(&waiting).Error; err != nil {
		return fmt.Errorf("automations: contacts at the branch of automation %d: %w", a.ID, err)
	}
	next := int64(0)
	if len(waiting) == stepBatch {
		next = waiting[len(waiting)-1].ID
	}
	if next != a.BranchCursor {
		// From where this call read it only: a process that read the
		// same cursor at the same time moves it once for both.
		if err := ar.db.W.WithContext(ctx).Model(&models.Automation{}).Where("id = ? AND branch_cursor = ?", a.ID, a.BranchCursor).
			Update("branch_cursor", next).Error; err != nil {
			return fmt.Errorf("automations: branch cursor of automation %d: %w", a.ID, err)
		}
	}
	if len(waiting) == 0 {
		return nil
	}
	engaged, err := engagedOf(ar.db.R.WithContext(ctx), stepSends(lines), waiting)
	if err != nil {
		return fmt.Errorf("automations: engaged contacts of automation %d: %w", a.ID, err)
	}
	if len(engaged) == 0 {
		return nil
	}
	err = ar.db.W.WithContext(ctx).Transaction(func(tx *gorm.DB) error {
		for i := range waiting {
			if e := &waiting[i]; engaged[e.Email] {
				if err := takePath(tx, e, lines[models.PathA], models.PathA, now); err != nil {
					return err
				}
			}
		}
		return nil
	})
	if err != nil {
		return fmt.Errorf("automations: take path a in automation %d: %w", a.ID, err)
	}
	return nil
}

// leaving returns the addresses of the batch that leave the automation
// before their next email: unsubscribed (globally or from the
// automation's group), suppressed after a bounce, or, by exit_criteria, out
// of the target (1 and 2) or having opened or clicked one of its emails
// (2). A few set queries per batch, not per contact.
func (ar *automationsRound) leaving(tx *gorm.DB, a *models.Automation, due []models.AutomationContact, sendIDs []int64) (map[string]bool, error) {
	emails := make([]string, len(due))
	for i := range due {
		emails[i] = due[i].Email
	}
	out := map[string]bool{}
	add := func(q string, args ...any) error {
		var got []string
		if err := tx.Raw(q, args...).Scan(&got).Error; err != nil {
			return err
		}
		for _, e := range got {
			out[e] = true
		}
		return nil
	}
	group, _ := strconv.ParseInt(a.UnsubscribeGroupID, 10, 64)
	if err := add(`SELECT email_address FROM unsubscribers WHERE user_id = ? AND email_address IN ?
		AND (unsubscribe_groups_id IS NULL OR unsubscribe_groups_id = ?)`, a.UserID, emails, group); err != nil {
		return nil, fmt.Errorf("automations: unsubscribers of automation %d: %w", a.ID, err)
	}
	if err := add("SELECT email FROM suppressions WHERE user_id = ? AND email IN ?", a.UserID, emails); err != nil {
		return nil, fmt.Errorf("automations: suppressions of automation %d: %w", a.ID, err)
	}
	if a.ExitCriteria >= 1 {
		var in []string
		var err error
		if a.AutomationForTable == models.TargetSegments {
			err = tx.Raw(`SELECT COALESCE(c.email, se.email) FROM segment_emails se LEFT JOIN contacts c ON c.id = se.contact_id AND c.deleted_at IS NULL
				WHERE se.segment_id = ? AND (se.email IN ? OR c.email IN ?)`, a.AutomationFor, emails, emails).Scan(&in).Error
		} else {
			err = tx.Raw("SELECT email FROM contacts WHERE contact_type_id = ? AND email IN ? AND deleted_at IS NULL", a.AutomationFor, emails).Scan(&in).Error
		}
		if err != nil {
			return nil, fmt.Errorf("automations: audience of automation %d: %w", a.ID, err)
		}
		present := make(map[string]bool, len(in))
		for _, e := range in {
			present[e] = true
		}
		for _, e := range emails {
			if !present[e] {
				out[e] = true
			}
		}
	}
	if a.ExitCriteria == 2 && len(sendIDs) > 0 {
		if err := add("SELECT email FROM send_messages WHERE send_id IN ? AND email IN ? AND (opened_at IS NOT NULL OR clicked_at IS NOT NULL)",
			sendIDs, emails); err != nil {
			return nil, fmt.Errorf("automations: engaged contacts of automation %d: %w", a.ID, err)
		}
	}
	return out, nil
}
