package service

import (
	"context"
	"log/slog"
	"strings"
	"time"

	"gorm.io/gorm"

	"herald/models"
)

// Audience resolves a send's targets, once, set-wise, into ledger rows:
// the union of its contact types and segments, less its exclusions,
// global unsubscribers, the group's recipients and suppressed addresses,
// one row per address.
type Audience struct {
	db      *DB
	events  *Events
	sends   *runningSends // compiles the send for its links
	dialect dialect
	log     *slog.Logger
	now     func() time.Time // a local-time send's waves count from its start
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
		return notFound(err)
	}
	if ss.Resolved == 1 || ss.DeletedAt != nil {
		return nil
	}
	c, err := a.sends.compile(ctx, &ss)
	if err != nil {
		return err
	}
	a.dialect.freshStats(ctx, a.db, a.log, "contacts", "segment_emails")
	excl, err := exclusionsOf(ctx, a.db.R, &ss)
	if err != nil {
		return err
	}
	var local *localWaves
	if ss.LocalTime != "" {
		if local, err = a.localWaves(ctx, &ss); err != nil {
			return err
		}
	}
	var ab *abSplit
	if ss.ABShare > 0 && len(ss.ABSubjects) >= 2 {
		if ab, err = a.abSplit(ctx, &ss); err != nil {
			return err
		}
	}
	for _, t := range ss.RecipientID {
		for _, src := range sourcesOf(t.Table) {
			q := chunkQuery{src: src, sendID: ss.ID, account: ss.UserID, target: t.ItemID(), excl: excl, local: local, ab: ab}
			if err := a.insertChunks(ctx, q); err != nil {
				return err
			}
		}
	}
	var n int64
	if err := a.db.W.WithContext(ctx).Model(&models.SendMessage{}).Where("send_id = ?", ss.ID).Count(&n).Error; err != nil {
		return err
	}
	return a.db.W.WithContext(ctx).Model(&models.SingleSend{}).Where("id = ? AND resolved = 0", ss.ID).
		Updates(map[string]any{"resolved": 1, "triggered": n, "links": models.StringArray(c.links)}).Error
}

// localWaves prepares the zones of a local-time send, first fixing the
// instant its waves count from (once: a process taking over the
// resolution finds it set and computes the same waves).
func (a *Audience) localWaves(ctx context.Context, ss *models.SingleSend) (*localWaves, error) {
	if ss.LocalBase == 0 {
		if err := a.db.W.WithContext(ctx).Model(&models.SingleSend{}).Where("id = ? AND local_base = 0", ss.ID).
			Update("local_base", a.now().UnixMilli()).Error; err != nil {
			return nil, err
		}
		if err := a.db.W.WithContext(ctx).Model(&models.SingleSend{}).Where("id = ?", ss.ID).Pluck("local_base", &ss.LocalBase).Error; err != nil {
			return nil, err
		}
	}
	return newLocalWaves(ctx, a.db, a.dialect, ss)
}

// insertChunks runs the INSERT … SELECT of one audience source in chunks
// of resolveChunk rows by the source's key.
func (a *Audience) insertChunks(ctx context.Context, q chunkQuery) error {
	w := a.db.W.WithContext(ctx)
	var lo int64
	for {
		// A send deleted while its audience is resolved stops here.
		var live int64
		if err := a.db.R.WithContext(ctx).Model(&models.SingleSend{}).Where("id = ? AND deleted_at IS NULL", q.sendID).Count(&live).Error; err != nil || live == 0 {
			return err
		}
		var hi int64 // the chunk's upper bound: the resolveChunk-th key after lo; 0: the rest
		bound, args := q.bound(lo)
		if err := a.db.R.WithContext(ctx).Raw(bound, args...).Scan(&hi).Error; err != nil {
			return err
		}
		var plan *chunkPlan
		if q.local != nil {
			var err error
			if plan, err = q.local.plan(ctx, a.db.R, q, lo, hi); err != nil {
				return err
			}
		}
		insert, args := q.insert(lo, hi, plan)
		if events := a.events.wanted(q.account, EventProcessed); events || q.local != nil {
			// The processed events and the zones' release times with the
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
				if q.local == nil {
					if err := tx.Exec(insert, args...).Error; err != nil {
						return err
					}
				} else {
					// The contacts of the rows inserted, for the waves' counts.
					var contacts []*int64
					if err := tx.Raw(insert+" RETURNING contact_id", args...).Scan(&contacts).Error; err != nil {
						return err
					}
					if err := q.local.count(tx, contacts, plan); err != nil {
						return err
					}
				}
				if !events {
					return nil
				}
				return a.events.recordRows(tx, q.account, EventProcessed, "m.send_id = ? AND m.id > ?", models.Now(), q.sendID, before)
			})
			if err != nil {
				return err
			}
		} else if err := w.Exec(insert, args...).Error; err != nil {
			return err
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
		from: "contacts c", where: "c.user_id = ? AND c.contact_type_id = ? AND c.deleted_at IS NULL", key: "c.id",
		account: "c.user_id", contact: "c.id", email: "c.email", first: "c.first_name", last: "c.last_name",
	}
	// contactsOfSegment: the contacts a segment holds.
	contactsOfSegment = audienceSource{
		from:  "segment_emails se JOIN contacts c ON c.id = se.contact_id",
		where: "se.user_id = ? AND se.segment_id = ? AND c.deleted_at IS NULL AND " + liveSegment, key: "se.id",
		account: "c.user_id", contact: "c.id", email: "c.email", first: "c.first_name", last: "c.last_name",
	}
	// addressesOfSegment: the addresses added to a segment by hand.
	addressesOfSegment = audienceSource{
		from: "segment_emails se", where: "se.user_id = ? AND se.segment_id = ? AND se.contact_id IS NULL AND " + liveSegment, key: "se.id",
		account: "se.user_id", contact: "NULL", email: "se.email", first: "se.first_name", last: "se.last_name",
	}
)

// liveSegment: the segment of the row se was not deleted.
const liveSegment = "EXISTS (SELECT 1 FROM segments g WHERE g.id = se.segment_id AND g.deleted_at IS NULL)"

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
	local                   *localWaves // a local-time send's zones; nil otherwise
	ab                      *abSplit    // an A/B test's split; nil otherwise
}

// bound is the query of the chunk's upper key after lo.
func (q chunkQuery) bound(lo int64) (string, []any) {
	s := q.src
	return "SELECT " + s.key + " FROM " + s.from + " WHERE " + s.where + " AND " + s.key + " > ? ORDER BY " + s.key + " LIMIT 1 OFFSET ?",
		[]any{q.account, q.target, lo, resolveChunk - 1}
}

// insert is the statement that adds the chunk (lo, hi] (hi 0: no upper
// bound) to the ledger as queued rows, less the exclusions; a local-time
// send's rows take their release times (next_at, release_at) from the
// chunk's plan.
func (q chunkQuery) insert(lo, hi int64, plan *chunkPlan) (string, []any) {
	s := q.src
	var b strings.Builder
	args := []any{q.sendID}
	b.WriteString("INSERT INTO send_messages (send_id, user_id, contact_id, email, first_name, last_name, state, attempts, next_at, release_at, variant, error) ")
	b.WriteString("SELECT ?, " + s.account + ", " + s.contact + ", " + s.email + ", " + s.first + ", " + s.last + ", " + models.MessageQueued.SQL() + ", 0, ")
	switch {
	case q.ab != nil:
		variant, release := q.ab.exprs(s.key)
		b.WriteString(release + ", " + release + ", " + variant + ", ''")
	case plan == nil:
		b.WriteString("0, 0, 0, ''")
	default:
		b.WriteString(plan.release + ", " + plan.release + ", 0, ''")
	}
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
			return nil, err
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
