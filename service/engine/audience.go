package engine

import (
	"context"
	"fmt"
	"log/slog"
	"strings"

	"gorm.io/gorm"

	"herald/models"
	"herald/service/core"
	"herald/service/internal/record"
)

// Audience resolves a send's targets, once, set-wise, into ledger rows:
// the union of its contact types and segments, less its exclusions,
// global unsubscribers, the group's recipients and suppressed addresses,
// one row per address.
type Audience struct {
	db      *core.DB
	events  *record.Events
	sends   *runningSends // compiles the send for its links
	dialect core.Dialect
	log     *slog.Logger
	planner planner // when each row is due, and with which variant
	// refresh brings the account's segments whose conditions depend on
	// the time (engagement) up to date before their recipients are
	// read; nil: none.
	refresh func(ctx context.Context, accountID int64) error
}

// A planner decides, as a send's audience is resolved, when its ledger
// rows are due (next_at and release_at) and with which variant. The
// Audience knows its planner only by this interface (an A/B test's split,
// a local-time send's waves: planners, in NewSending).
type planner interface {
	// forSend returns the plan of a send's audience, nil when the
	// planner has no part in the send. It may first fix, once, what the
	// plan counts from (a process taking over the resolution finds it
	// set and plans the same).
	forSend(ctx context.Context, ss *models.SingleSend) (sendPlan, error)
}

// sendPlan plans one send's audience chunk by chunk.
type sendPlan interface {
	// chunk plans the rows of the chunk (lo, hi] of q's source (hi 0: no
	// upper bound), before it is inserted.
	chunk(ctx context.Context, q chunkQuery, lo, hi int64) (rowPlan, error)
}

// rowPlan is how the rows of one chunk are written: SQL expressions of
// the source's row for next_at and release_at (release) and for the
// variant ("": 0), and inserted, when set, is given the contact ids of
// the rows the chunk inserted (nil for an address with no contact), in
// the chunk's transaction.
type rowPlan struct {
	release, variant string
	// due, when set, is next_at's expression apart from release_at's
	// (a send-time test's second half is due later without being a
	// released row).
	due      string
	inserted func(tx *gorm.DB, contacts []*int64) error
}

// planners is a planner made of several, asked in order: the send's plan
// is made of those that have a part in it; for each chunk, a later plan's
// expressions win over an earlier one's, and every inserted is called.
type planners []planner

func (ps planners) forSend(ctx context.Context, ss *models.SingleSend) (sendPlan, error) {
	var out sendPlans
	for _, p := range ps {
		sp, err := p.forSend(ctx, ss)
		if err != nil {
			return nil, err
		}
		if sp != nil {
			out = append(out, sp)
		}
	}
	if len(out) == 0 {
		return nil, nil
	}
	return out, nil
}

type sendPlans []sendPlan

func (sps sendPlans) chunk(ctx context.Context, q chunkQuery, lo, hi int64) (rowPlan, error) {
	var out rowPlan
	var after []func(tx *gorm.DB, contacts []*int64) error
	for _, sp := range sps {
		rp, err := sp.chunk(ctx, q, lo, hi)
		if err != nil {
			return rowPlan{}, err
		}
		if rp.release != "" {
			out.release = rp.release
		}
		if rp.variant != "" {
			out.variant = rp.variant
		}
		if rp.due != "" {
			out.due = rp.due
		}
		if rp.inserted != nil {
			after = append(after, rp.inserted)
		}
	}
	if len(after) > 0 {
		out.inserted = func(tx *gorm.DB, contacts []*int64) error {
			for _, f := range after {
				if err := f(tx, contacts); err != nil {
					return err
				}
			}
			return nil
		}
	}
	return out, nil
}

// resolveChunk is how many contacts one INSERT … SELECT of the audience
// takes: short writes let other writers in between on SQLite.
const resolveChunk = 5000

// Resolve writes the send's audience into the ledger and marks the send
// resolved with its number of recipients and its links. It is idempotent
// (ON CONFLICT DO NOTHING per address), so a process that takes over a
// half-done resolution adds nothing twice.
func (a *Audience) Resolve(ctx context.Context, id int64) error {
	var ss models.SingleSend
	if err := a.db.R.WithContext(ctx).Where("id = ?", id).First(&ss).Error; err != nil {
		return core.NotFound(err)
	}
	if ss.Resolved == 1 || ss.DeletedAt != nil {
		return nil
	}
	c, err := a.sends.compile(ctx, &ss)
	if err != nil {
		return fmt.Errorf("audience: compile send %d: %w", ss.ID, err)
	}
	if a.refresh != nil {
		if err := a.refresh(ctx, ss.UserID); err != nil {
			return fmt.Errorf("audience: refresh the segments of send %d: %w", ss.ID, err)
		}
	}
	a.dialect.FreshStats(ctx, a.db, a.log, "contacts", "segment_emails")
	excl, err := exclusionsOf(ctx, a.db.R, &ss)
	if err != nil {
		return fmt.Errorf("audience: exclusions of send %d: %w", ss.ID, err)
	}
	var plan sendPlan
	if a.planner != nil {
		if plan, err = a.planner.forSend(ctx, &ss); err != nil {
			return fmt.Errorf("audience: plan send %d: %w", ss.ID, err)
		}
	}
	for _, q := range queriesOf(&ss, excl) {
		if err := a.insertChunks(ctx, q, plan); err != nil {
			return fmt.Errorf("audience: resolve send %d: %w", ss.ID, err)
		}
	}
	var n int64
	if err := a.db.W.WithContext(ctx).Model(&models.SendMessage{}).Where("send_id = ?", ss.ID).Count(&n).Error; err != nil {
		return fmt.Errorf("audience: count recipients of send %d: %w", ss.ID, err)
	}
	if err := a.db.W.WithContext(ctx).Model(&models.SingleSend{}).Where("id = ? AND resolved = 0", ss.ID).
		Updates(map[string]any{"resolved": 1, "triggered": n, "links": models.StringArray(c.links)}).Error; err != nil {
		return fmt.Errorf("audience: mark send %d resolved: %w", ss.ID, err)
	}
	return nil
}

// insertChunks runs the INSERT … SELECT of one audience source in chunks
// of resolveChunk rows by the source's key, each row as the send's plan
// (nil: none) has it.
func (a *Audience) insertChunks(ctx context.Context, q chunkQuery, sp sendPlan) error {
	w := a.db.W.WithContext(ctx)
	var lo int64
	for {
		// A send deleted while its audience is resolved stops here.
		var live int64
		if err := a.db.R.WithContext(ctx).Model(&models.SingleSend{}).Where("id = ? AND deleted_at IS NULL", q.sendID).Count(&live).Error; err != nil {
			return fmt.Errorf("audience: check send %d: %w", q.sendID, err)
		}
		if live == 0 {
			return nil
		}
		var hi int64 // the chunk's upper bound: the resolveChunk-th key after lo; 0: the rest
		bound, args := q.bound(lo)
		if err := a.db.R.WithContext(ctx).Raw(bound, args...).Scan(&hi).Error; err != nil {
			return fmt.Errorf("audience: chunk bound of send %d: %w", q.sendID, err)
		}
		var plan rowPlan
		if sp != nil {
			var err error
			if plan, err = sp.chunk(ctx, q, lo, hi); err != nil {
				return fmt.Errorf("audience: plan chunk of send %d: %w", q.sendID, err)
			}
		}
		insert, args := q.insert(lo, hi, plan)
		if events := a.events.Wanted(q.account, record.EventProcessed); events || plan.inserted != nil {
			// The processed events and what the plan records of the
			// inserted rows (a local-time send's waves) with the
			// chunk: its rows are the send's rows past the largest id
			// before it. The largest id of the whole table (one step down
			// the primary key) rather than the send's: with send_id = ?
			// the maximum walked every row of the send already written,
			// once per chunk (1,000,000 recipients: quadratic).
			err := w.Transaction(func(tx *gorm.DB) error {
				var before int64
				if err := tx.Raw("SELECT COALESCE(MAX(id), 0) FROM send_messages").Scan(&before).Error; err != nil {
					return err
				}
				if plan.inserted == nil {
					if err := tx.Exec(insert, args...).Error; err != nil {
						return err
					}
				} else {
					// The contacts of the rows inserted, for the plan.
					var contacts []*int64
					if err := tx.Raw(insert+" RETURNING contact_id", args...).Scan(&contacts).Error; err != nil {
						return err
					}
					if err := plan.inserted(tx, contacts); err != nil {
						return err
					}
				}
				if !events {
					return nil
				}
				return a.events.RecordRows(tx, q.account, record.EventProcessed, "m.send_id = ? AND m.id > ?", a.db.Now(), q.sendID, before)
			})
			if err != nil {
				return fmt.Errorf("audience: insert chunk of send %d: %w", q.sendID, err)
			}
		} else if err := w.Exec(insert, args...).Error; err != nil {
			return fmt.Errorf("audience: insert chunk of send %d: %w", q.sendID, err)
		}
		if hi == 0 {
			return nil
		}
		lo = hi
	}
}

// audienceSource is one set of addresses a target names: rows of a table
// (from, filtered by where with the account and the target id as its two
// parameters), ordered and chunked by the unique column key, and the
// columns a ledger row takes from them.
type audienceSource struct {
	from, where, key                     string
	account, contact, email, first, last string
}

// The sources of the two kinds of target.
var (
	// contactsOfType: the contacts of a contact type.
	contactsOfType = audienceSource{
		from: "contacts c", where: "c.user_id = ? AND c.contact_type_id = ? AND c.deleted_at IS NULL AND " + confirmed, key: "c.id",
		account: "c.user_id", contact: "c.id", email: "c.email", first: "c.first_name", last: "c.last_name",
	}
	// contactsOfSegment: the contacts a segment holds.
	contactsOfSegment = audienceSource{
		from:  "segment_emails se JOIN contacts c ON c.id = se.contact_id",
		where: "se.user_id = ? AND se.segment_id = ? AND c.deleted_at IS NULL AND " + confirmed + " AND " + liveSegment, key: "se.id",
		account: "c.user_id", contact: "c.id", email: "c.email", first: "c.first_name", last: "c.last_name",
	}
	// addressesOfSegment: the addresses added to a segment by hand.
	addressesOfSegment = audienceSource{
		from: "segment_emails se", where: "se.user_id = ? AND se.segment_id = ? AND se.contact_id IS NULL AND " + liveSegment, key: "se.id",
		account: "se.user_id", contact: "NULL", email: "se.email", first: "se.first_name", last: "se.last_name",
	}
)

// confirmed: the contact c may be mailed; an unconfirmed one (a double
// opt-in sign-up that did not confirm yet) receives no send.
const confirmed = "c.status <> '" + models.ContactUnconfirmed + "'"

// liveSegment: the segment of the row se was not deleted.
const liveSegment = "EXISTS (SELECT 1 FROM segments g WHERE g.id = se.segment_id AND g.deleted_at IS NULL)"

// notOpened is a resend's audience: the rows of the send it follows (the
// target) that were delivered and that no person opened or clicked
// (NotOpenedByPerson), of addresses still a live contact (or added to a
// segment by hand, and not erased since).
var notOpened = audienceSource{
	from: "send_messages o", where: "o.user_id = ? AND o.send_id = ? AND " + NotOpenedByPerson +
		" AND (EXISTS (SELECT 1 FROM contacts c WHERE c.id = o.contact_id AND c.user_id = o.user_id AND c.deleted_at IS NULL)" +
		" OR (o.contact_id IS NULL AND o.email NOT LIKE 'erased:%'))", key: "o.id",
	account: "o.user_id", contact: "o.contact_id", email: "o.email", first: "o.first_name", last: "o.last_name",
}

// NotOpenedByPerson is the condition on a ledger row o of a message that
// was delivered and that no person opened or clicked (herald's one rule
// for people against machines: delivery.MachineRules fills
// human_opened_at and human_clicked_at, and a privacy proxy's fetch or a
// link scanner's clicks leave them 0), and that no report took back since:
// no unsubscribe from it, no bounce after delivery, no complaint.
var NotOpenedByPerson = "o.state = " + models.MessageDelivered.SQL() + " AND o.human_opened_at = 0 AND o.human_clicked_at = 0" +
	" AND o.unsubscribed_at IS NULL AND o.hard_bounced_at IS NULL AND o.soft_bounced_at IS NULL AND o.complained_at IS NULL"

// queriesOf returns the chunk queries of a send's audience: the sources
// of its targets, or, for a resend, the rows of the send it follows.
func queriesOf(ss *models.SingleSend, excl exclusions) []chunkQuery {
	if ss.ResendOf != nil {
		return []chunkQuery{{src: notOpened, sendID: ss.ID, account: ss.UserID, target: *ss.ResendOf, excl: excl}}
	}
	var out []chunkQuery
	for _, t := range ss.RecipientID {
		for _, src := range sourcesOf(t.Table) {
			out = append(out, chunkQuery{src: src, sendID: ss.ID, account: ss.UserID, target: t.ItemID(), excl: excl})
		}
	}
	return out
}

// sourcesOf returns the sources of a kind of target.
func sourcesOf(kind models.TargetKind) []audienceSource {
	if kind == models.TargetContacts {
		return []audienceSource{contactsOfType}
	}
	return []audienceSource{contactsOfSegment, addressesOfSegment}
}

// chunkQuery builds the statements of one source's resolution into one
// send's ledger.
type chunkQuery struct {
	src                     audienceSource
	sendID, account, target int64
	excl                    exclusions
}

// bound is the query of the chunk's upper key after lo.
func (q chunkQuery) bound(lo int64) (string, []any) {
	s := q.src
	return "SELECT " + s.key + " FROM " + s.from + " WHERE " + s.where + " AND " + s.key + " > ? ORDER BY " + s.key + " LIMIT 1 OFFSET ?",
		[]any{q.account, q.target, lo, resolveChunk - 1}
}

// insert is the statement that adds the chunk (lo, hi] (hi 0: no upper
// bound) to the ledger as queued rows, less the exclusions; the rows take
// their release times (next_at, release_at) and variant from the chunk's
// plan (none: due at once, no variant).
func (q chunkQuery) insert(lo, hi int64, plan rowPlan) (string, []any) {
	s := q.src
	var b strings.Builder
	args := []any{q.sendID}
	b.WriteString("INSERT INTO send_messages (send_id, user_id, contact_id, email, first_name, last_name, state, attempts, next_at, release_at, variant, error) ")
	b.WriteString("SELECT ?, " + s.account + ", " + s.contact + ", " + s.email + ", " + s.first + ", " + s.last + ", " + models.MessageQueued.SQL() + ", 0, ")
	release, variant, due := plan.release, plan.variant, plan.due
	if release == "" {
		release = "0"
	}
	if variant == "" {
		variant = "0"
	}
	if due == "" {
		due = release
	}
	b.WriteString(due + ", " + release + ", " + variant + ", ''")
	b.WriteString(" FROM " + s.from + " WHERE " + s.where + " AND " + s.key + " > ?")
	args = append(args, q.account, q.target, lo)
	if hi > 0 {
		b.WriteString(" AND " + s.key + " <= ?")
		args = append(args, hi)
	}
	args = q.excl.where(&b, s.email, args)
	b.WriteString(" ON CONFLICT (send_id, email) DO NOTHING")
	return b.String(), args
}

// emails is the query of the source's addresses less the exclusions (the
// console's live count of an audience).
func (q chunkQuery) emails() (string, []any) {
	s := q.src
	var b strings.Builder
	b.WriteString("SELECT " + s.email + " FROM " + s.from + " WHERE " + s.where)
	args := []any{q.account, q.target}
	args = q.excl.where(&b, s.email, args)
	return b.String(), args
}

// exclusion is one set of addresses a send leaves out: query(email) is a
// subquery that finds the address in the column email.
type exclusion struct {
	query func(email string) string
	args  []any
}

type exclusions []exclusion

// where writes the exclusions as conditions on the address column email
// and returns args with their parameters.
func (ex exclusions) where(b *strings.Builder, email string, args []any) []any {
	for _, e := range ex {
		b.WriteString(" AND NOT EXISTS (" + e.query(email) + ")")
		args = append(args, e.args...)
	}
	return args
}

// exclusionsOf returns what a send leaves out: its excluded targets,
// global unsubscribers, the group's recipients and suppressed addresses.
func exclusionsOf(ctx context.Context, r *gorm.DB, ss *models.SingleSend) (exclusions, error) {
	var out exclusions
	for _, t := range ss.ExcludeSpecificRecipientID {
		tid := t.ItemID()
		if t.Table == models.TargetContacts {
			out = append(out, exclusion{func(e string) string {
				return "SELECT 1 FROM contacts x WHERE x.contact_type_id = ? AND x.user_id = ? AND x.email = " + e + " AND x.deleted_at IS NULL"
			}, []any{tid, ss.UserID}})
			continue
		}
		var typeID int64
		if err := r.WithContext(ctx).Table("segments").Select("contact_type_id").Where("id = ? AND user_id = ?", tid, ss.UserID).Scan(&typeID).Error; err != nil {
			return nil, fmt.Errorf("audience: contact type of segment %d: %w", tid, err)
		}
		out = append(out, exclusion{func(e string) string {
			return "SELECT 1 FROM segment_emails x WHERE x.segment_id = ? AND x.user_id = ? AND x.contact_id IS NULL AND x.email = " + e
		}, []any{tid, ss.UserID}}, exclusion{func(e string) string {
			return "SELECT 1 FROM contacts y JOIN segment_emails x ON x.contact_id = y.id AND x.segment_id = ? WHERE y.contact_type_id = ? AND y.user_id = ? AND y.email = " + e + " AND y.deleted_at IS NULL"
		}, []any{tid, typeID, ss.UserID}})
	}
	return append(out,
		exclusion{func(e string) string {
			return "SELECT 1 FROM unsubscribers u WHERE u.user_id = ? AND u.unsubscribe_groups_id IS NULL AND u.email_address = " + e
		}, []any{ss.UserID}},
		exclusion{func(e string) string {
			return "SELECT 1 FROM unsubscribers u WHERE u.unsubscribe_groups_id = ? AND u.user_id = ? AND u.email_address = " + e
		}, []any{ss.UnsubscribeGroupID, ss.UserID}},
		exclusion{func(e string) string {
			return "SELECT 1 FROM suppressions s WHERE s.user_id = ? AND s.email = " + e
		}, []any{ss.UserID}},
	), nil
}
