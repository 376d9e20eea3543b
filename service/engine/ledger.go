package engine

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"maps"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"gorm.io/gorm"

	"herald/delivery"
	"herald/models"
	"herald/service/core"
	"herald/service/internal/record"
)

// Ledger is the send ledger (table send_messages): it hands due messages
// to delivery.Engine (Claim), takes back what was not sent (Release),
// records what became of each with the send's counters (Record), and gives
// the claims of dead processes back to the queue (reclaim). It implements
// delivery.Store.
type Ledger struct {
	db     *core.DB
	live   *liveness
	sends  *runningSends
	events *record.Events
	rec    *record.Recorders // what a refusal leaves behind, as for reports
	key    []byte            // tracking and unsubscribe tokens
	verp   *delivery.VERP
	now    func() time.Time
	retry  RetryPolicy
	log    *slog.Logger
	paused func(ids []int64) // sends Record just paused: their notices are due
	warmup *warmups          // the warm-up plans' caps (warmup.go)

	// after is, per send, where this process's last claim ended in the
	// claim order (next_at, id): the next claim starts there. A claimed
	// row leaves a dead index entry behind (in PostgreSQL until a vacuum),
	// and a claim from the start of the order walked every one of them
	// (measured: 364 index entries read per message of a 100k send). Rows
	// that go back to the queue behind the place (a release, a pause, a
	// dead process's claims) are claimed when a claim from the place finds
	// too few: the place is then forgotten and the next claim starts from
	// the beginning.
	swept   atomic.Int64 // Unix ms of reclaim's last sweep
	afterMu sync.Mutex
	after   map[int64]claimPlace
}

// claimPlace is a place in the claim order.
type claimPlace struct{ nextAt, id int64 }

// RetryPolicy is when a deferred message is tried again (decisions.md
// section 1): First after the first failure, doubling, for at most Window.
type RetryPolicy struct {
	First  time.Duration // HERALD_RETRY_BACKOFF; default 1m
	Window time.Duration // HERALD_RETRY_WINDOW; default 24h
}

// The ledger's statements.
var (
	// reclaimDead: claims of processes with no heartbeat since a time go
	// back to the queue (this worker, the time).
	reclaimDead = record.LedgerSQL(`UPDATE send_messages SET state = {queued}, worker = NULL
		WHERE state = {claimed} AND worker IS NOT NULL AND worker <> ?
		AND worker NOT IN (SELECT id FROM send_workers WHERE heartbeat_at >= ?)`)
	// reclaimOf: the claims of these workers back to the queue (workers).
	reclaimOf = record.LedgerSQL("UPDATE send_messages SET state = {queued}, worker = NULL WHERE state = {claimed} AND worker IN ?")
	// claimDue (+ lock + claimReturning): claims a send's due messages in
	// the order of the index send_messages_claim (worker, send, now, n):
	// ordering by id alone sorted every queued row of the send on each
	// claim.
	claimDue = record.LedgerSQL(`UPDATE send_messages SET state = {claimed}, worker = ? WHERE id IN (
		SELECT id FROM send_messages WHERE send_id = ? AND state = {queued} AND next_at <= ? ORDER BY next_at, id LIMIT ?`)
	// claimDueAfter is claimDue from a place in that order on (worker,
	// send, now, next_at, id, n): see Ledger.after.
	claimDueAfter = record.LedgerSQL(`UPDATE send_messages SET state = {claimed}, worker = ? WHERE id IN (
		SELECT id FROM send_messages WHERE send_id = ? AND state = {queued} AND next_at <= ? AND (next_at, id) > (?, ?) ORDER BY next_at, id LIMIT ?`)
	claimReturning = `) RETURNING id, contact_id, email, first_name, last_name, attempts, next_at, variant`
	// releaseClaims: claims given back (ids, worker).
	releaseClaims = record.LedgerSQL("UPDATE send_messages SET state = {queued}, worker = NULL WHERE id IN ? AND state = {claimed} AND worker = ?")
	// giveBack: messages not sent (a stale claim, a paused send) back to
	// the queue (ids, worker).
	giveBack = record.LedgerSQL("UPDATE send_messages SET state = {queued}, worker = NULL WHERE id IN ? AND worker = ?")
	// retryLater: a deferred message queued again (attempts, next_at,
	// error, id, worker).
	retryLater = record.LedgerSQL("UPDATE send_messages SET state = {queued}, worker = NULL, attempts = ?, next_at = ?, error = ? WHERE id = ? AND worker = ?")
	// markRefused: a message that will not be sent (state, error, id,
	// worker).
	markRefused = "UPDATE send_messages SET state = ?, worker = NULL, error = ? WHERE id = ? AND worker = ?"
	// requeueResumed: a message blocked after its send resumed, claimed
	// before (error, id, worker, resumedClaim), back to the queue.
	requeueResumed = record.LedgerSQL("UPDATE send_messages SET state = {queued}, worker = NULL, next_at = 0, error = ? WHERE id = ? AND worker = ? AND next_at = ?")
)

// reclaim gives the claims of processes whose heartbeat is older than
// alive (Unix ms) back to the queue. This process's own claims never go
// back: it is alive, even when a long write delayed its heartbeat.
//
// The sweep over every claim reads the worker index, where every message
// ever claimed left an entry (in PostgreSQL until a vacuum): measured,
// 104 index entries per message of a 100k send, with a sweep a second. So
// a tick looks at the heartbeats first (a small table) and gives back the
// claims of the processes gone silent by their worker ids; the sweep,
// which also finds claims of processes whose heartbeat row is gone, runs
// once a minute.
func (l *Ledger) reclaim(ctx context.Context, alive int64) error {
	now := time.Now().UnixMilli()
	if last := l.swept.Load(); now-last >= time.Minute.Milliseconds() && l.swept.CompareAndSwap(last, now) {
		if err := l.db.W.WithContext(ctx).Exec(reclaimDead, l.live.worker, alive).Error; err != nil {
			l.swept.Store(0)
			return fmt.Errorf("ledger: reclaim dead claims: %w", err)
		}
		return nil
	}
	var dead []string
	if err := l.db.W.WithContext(ctx).Raw("SELECT id FROM send_workers WHERE heartbeat_at < ? AND id <> ?", alive, l.live.worker).Scan(&dead).Error; err != nil {
		return fmt.Errorf("ledger: silent workers: %w", err)
	}
	if len(dead) == 0 {
		return nil
	}
	if err := l.db.W.WithContext(ctx).Exec(reclaimOf, dead).Error; err != nil {
		return fmt.Errorf("ledger: reclaim claims of silent workers: %w", err)
	}
	return nil
}

func (l *Ledger) Claim(ctx context.Context, max int) ([]*delivery.Job, error) {
	sends, start, err := l.sends.list(ctx)
	if err != nil {
		return nil, fmt.Errorf("ledger: claim: %w", err)
	}
	if len(sends) == 0 {
		return nil, nil
	}
	var jobs []*delivery.Job
	for k := 0; k < len(sends) && len(jobs) < max; k++ {
		id := sends[(start+k)%len(sends)]
		got, err := l.claimFrom(ctx, id, max-len(jobs))
		if err != nil {
			if len(jobs) > 0 {
				// The engine drops the jobs of a failed claim: these are
				// claimed already, so they go now and the error waits for
				// the next round.
				l.log.Error("sending: claim", "send", id, "err", err)
				return jobs, nil
			}
			return nil, fmt.Errorf("ledger: claim from send %d: %w", id, err)
		}
		jobs = append(jobs, got...)
	}
	return jobs, nil
}

type claimedRow struct {
	ID        int64
	ContactID *int64
	Email     string
	FirstName string
	LastName  string
	Attempts  int
	NextAt    int64
	Variant   int // an A/B test's variant (see compiledSend.parts)
	// Data is the automation trigger's data of the row's enrolment, read
	// only when the send's templates use it (see Ledger.loadData).
	Data map[string]string `gorm:"-"`
}

func (l *Ledger) claimFrom(ctx context.Context, sendID int64, n int) ([]*delivery.Job, error) {
	epoch := l.live.claimEpoch()
	var rows []claimedRow
	var err error
	plans, err := l.warmup.read(ctx)
	if err != nil {
		return nil, fmt.Errorf("ledger: claim from send %d: %w", sendID, err)
	}
	var plan *warmupPlan
	if len(plans) > 0 {
		// Some account follows a warm-up plan: the send's account and
		// From domain say whether this one does.
		c, err := l.sends.get(ctx, sendID)
		if err != nil {
			if core.IsNotFound(err) {
				return nil, nil // deleted meanwhile
			}
			return nil, fmt.Errorf("ledger: compile send %d: %w", sendID, err)
		}
		plan = plans[warmupKey{c.account, c.fromDomain}]
	}
	if plan != nil {
		rows, err = l.claimCapped(ctx, plan, sendID, n)
	} else {
		rows, err = l.claimRows(ctx, l.db.W, sendID, n)
	}
	if err != nil {
		if len(rows) > 0 {
			_ = l.Release(ctx, jobsOf(sendID, rows))
		}
		return nil, fmt.Errorf("ledger: claim from send %d: %w", sendID, err)
	}
	if len(rows) == 0 {
		return nil, nil
	}
	c, err := l.sends.get(ctx, sendID)
	if err != nil {
		_ = l.Release(ctx, jobsOf(sendID, rows))
		if core.IsNotFound(err) {
			return nil, nil // deleted meanwhile
		}
		return nil, fmt.Errorf("ledger: compile send %d: %w", sendID, err)
	}
	var contacts map[int64]*models.Contact
	if c.needsContact {
		if contacts, err = l.loadContacts(ctx, rows); err != nil {
			_ = l.Release(ctx, jobsOf(sendID, rows))
			return nil, err
		}
	}
	if c.needsData {
		if err := loadData(ctx, l.db, *c.send.AutomationID, rows); err != nil {
			_ = l.Release(ctx, jobsOf(sendID, rows))
			return nil, err
		}
	}
	jobs := make([]*delivery.Job, len(rows))
	fresh := func() bool { return l.live.fresh(epoch) }
	for i := range rows {
		r := rows[i]
		var ct *models.Contact
		if r.ContactID != nil {
			ct = contacts[*r.ContactID]
		}
		jobs[i] = l.job(c, sendID, epoch, r, ct, fresh)
	}
	return jobs, nil
}

// claimRows claims up to n due rows of a send through q (the writer, or a
// transaction), from this process's place in the claim order (see
// Ledger.after), and moves the place. On an error it returns the rows
// claimed before it.
func (l *Ledger) claimRows(ctx context.Context, q *gorm.DB, sendID int64, n int) ([]claimedRow, error) {
	lock := l.db.SQL().SkipLocked()
	// ORDER BY next_at, id follows the index send_messages_claim: ordering
	// by id alone sorted every queued row of the send on each claim.
	now := l.now().UnixMilli()
	l.afterMu.Lock()
	at, ok := l.after[sendID]
	l.afterMu.Unlock()
	var rows []claimedRow
	var err error
	if ok {
		err = q.WithContext(ctx).Raw(claimDueAfter+lock+claimReturning, l.live.worker, sendID, now, at.nextAt, at.id, n).Scan(&rows).Error
	}
	if err == nil && len(rows) < n {
		// From the beginning: what went back to the queue behind the place.
		var more []claimedRow
		err = q.WithContext(ctx).Raw(claimDue+lock+claimReturning, l.live.worker, sendID, now, n-len(rows)).Scan(&more).Error
		rows = append(rows, more...)
	}
	l.afterMu.Lock()
	if err != nil || len(rows) < n {
		delete(l.after, sendID)
	} else {
		last := claimPlace{rows[0].NextAt, rows[0].ID}
		for _, r := range rows[1:] {
			if r.NextAt > last.nextAt || r.NextAt == last.nextAt && r.ID > last.id {
				last = claimPlace{r.NextAt, r.ID}
			}
		}
		if l.after == nil {
			l.after = map[int64]claimPlace{}
		}
		l.after[sendID] = last
	}
	l.afterMu.Unlock()
	return rows, err
}

// forgetPlace makes the send's next claim start from the beginning of
// the claim order (a claim whose transaction rolled back moved it).
func (l *Ledger) forgetPlace(sendID int64) {
	l.afterMu.Lock()
	delete(l.after, sendID)
	l.afterMu.Unlock()
}

// job is the delivery job of a claimed row of a compiled send, claimed
// in epoch: it builds the message only while this process still holds
// its claims (a stalled process that lost them builds nothing).
func (l *Ledger) job(c *compiledSend, sendID, epoch int64, r claimedRow, ct *models.Contact, fresh func() bool) *delivery.Job {
	return &delivery.Job{
		// The return path names the row (VERP): a DSN to it finds its message.
		ID: r.ID, SendID: sendID, Account: c.account, From: l.verp.ReturnPath(r.ID), To: r.Email, Attempts: r.Attempts,
		Build: func() ([]byte, error) {
			if !l.live.held(epoch) {
				return nil, delivery.ErrStale
			}
			return c.build(l.key, r, ct)
		},
		Fresh: fresh,
	}
}

func jobsOf(sendID int64, rows []claimedRow) []*delivery.Job {
	out := make([]*delivery.Job, len(rows))
	for i, r := range rows {
		out[i] = &delivery.Job{ID: r.ID, SendID: sendID}
	}
	return out
}

func (l *Ledger) loadContacts(ctx context.Context, rows []claimedRow) (map[int64]*models.Contact, error) {
	ids := make([]int64, 0, len(rows))
	for _, r := range rows {
		if r.ContactID != nil {
			ids = append(ids, *r.ContactID)
		}
	}
	out := make(map[int64]*models.Contact, len(ids))
	if len(ids) == 0 {
		return out, nil
	}
	var cs []models.Contact
	if err := record.ScanContacts(l.db.R.WithContext(ctx).Model(&models.Contact{}).Select(record.ContactColumns(l.db.SQL())).Where("id IN ?", ids), &cs); err != nil {
		return nil, fmt.Errorf("ledger: load contacts: %w", err)
	}
	for i := range cs {
		out[cs[i].ID] = &cs[i]
	}
	return out, nil
}

// loadData fills the rows' Data with the trigger data of their enrolments
// in the automation: one query along the unique (automation_id, email)
// index. A row whose enrolment has none keeps nil (its ((data.<key>))
// placeholders render empty).
func loadData(ctx context.Context, db *core.DB, automationID int64, rows []claimedRow) error {
	emails := make([]string, len(rows))
	for i := range rows {
		emails[i] = rows[i].Email
	}
	var got []struct {
		Email string
		Data  string
	}
	if err := db.R.WithContext(ctx).Table("automation_contacts").Select("email, data").
		Where("automation_id = ? AND email IN ? AND data IS NOT NULL", automationID, emails).Scan(&got).Error; err != nil {
		return fmt.Errorf("ledger: trigger data of automation %d: %w", automationID, err)
	}
	byEmail := make(map[string]map[string]string, len(got))
	for _, g := range got {
		m := map[string]string{}
		if err := json.Unmarshal([]byte(g.Data), &m); err != nil {
			return fmt.Errorf("ledger: trigger data of %q in automation %d: %w", g.Email, automationID, err)
		}
		byEmail[g.Email] = m
	}
	for i := range rows {
		rows[i].Data = byEmail[rows[i].Email]
	}
	return nil
}

// Release implements delivery.Store: claims given back to the queue.
func (l *Ledger) Release(ctx context.Context, jobs []*delivery.Job) error {
	if len(jobs) == 0 {
		return nil
	}
	ids := make([]int64, len(jobs))
	for i, j := range jobs {
		ids[i] = j.ID
	}
	if err := l.db.W.WithContext(ctx).Exec(releaseClaims, ids, l.live.worker).Error; err != nil {
		return fmt.Errorf("ledger: release claims: %w", err)
	}
	return nil
}

// deliveredDaily ends the one-statement group commit of deliveries of one
// send (PostgreSQL, after WITH done AS (…)): the send's counter, then, from
// its row, the account's day (sent_at, send, day). The day's upsert reads
// upd, so the send's row is locked before the day's (daily.go: lock
// order).
const deliveredDaily = `upd AS (UPDATE single_sends SET delivered = delivered + (SELECT count(*) FROM done), sent_at = COALESCE(sent_at, ?)
	WHERE id = ? AND EXISTS (SELECT 1 FROM done) RETURNING user_id)
	INSERT INTO account_daily (user_id, day, sent, delivered) SELECT upd.user_id, ?, n.n, n.n FROM upd, (SELECT count(*) AS n FROM done) n
	ON CONFLICT (user_id, day) DO UPDATE SET sent = account_daily.sent + excluded.sent, delivered = account_daily.delivered + excluded.delivered`

// markDelivered is the statement that records the claimed rows ids as
// delivered at now, and its arguments: with the relay that took each when
// relayOf knows it (several relays), in one CASE. The relay is written by
// the statement that marks the row, not by one of its own: a second
// update of every row cost PostgreSQL about as much CPU as the mark
// itself.
func markDelivered(now models.Timestamp, relayOf map[int64]string, ids []int64, worker string) (string, []any) {
	args := []any{now}
	byRelay := map[string][]int64{}
	for _, id := range ids {
		if r := relayOf[id]; r != "" {
			byRelay[r] = append(byRelay[r], id)
		}
	}
	relays := ""
	if len(byRelay) > 0 {
		var b strings.Builder
		b.WriteString(", relay = CASE")
		for _, r := range slices.Sorted(maps.Keys(byRelay)) {
			b.WriteString(" WHEN id IN ? THEN ?")
			args = append(args, byRelay[r], r)
		}
		b.WriteString(" ELSE relay END")
		relays = b.String()
	}
	return markDeliveredSet + relays + " WHERE id IN ? AND worker = ?", append(args, ids, worker)
}

var markDeliveredSet = record.LedgerSQL("UPDATE send_messages SET state = {delivered}, worker = NULL, sent_at = ?")

// Record implements delivery.Store: every outcome in one transaction, the
// group commit, through the database's relaxed pool (core.DB.Relaxed: on
// PostgreSQL its commit does not wait for the disk). What that may lose is
// bounded and never a message: a crash of herald loses nothing (the server
// holds the commit); a crash of the PostgreSQL server itself loses at most
// the outcomes of its last WAL writer delays, whose messages are then sent
// again, as any in flight at a crash are. The process sees the server's
// restart at its next heartbeat and gives its claims back
// (liveness.beat), so none stays claimed by a live process with its
// outcome lost. A message's slot stays taken until its outcome's commit
// returns, as before: the in-flight bound of a crash of herald holds.
//
// Every outcome in one transaction, the
// ledger rows and the send's counters together, so the counters are
// exact (only rows this process still holds count). worker is set only
// while a row is claimed (state 1), so "worker = ?" alone says so; adding
// "state = 1" let PostgreSQL pick the partial worker index, which grows
// with dead entries under a heavy send.
//
// What an outcome becomes is delivery.ClassifyError's verdict: delivered;
// retried with backoff; a bounce (the recipient's mailbox refused it: the
// only outcome that suppresses the address); a block (the relay refused
// the sender, the content or by policy: kept, and counted in blocks); a
// failure (it could not be built: counted on the send). Blocks feed the
// pause rule (pauseAfterBlocks). Deliveries alone take the same one or
// two statements as ever: the block and failure work is on their own
// paths.
func (l *Ledger) Record(ctx context.Context, outs []delivery.Outcome) error {
	delivered := map[int64][]int64{}
	bounced := map[int64][]refusal{}
	blocked := map[int64][]refusal{}
	failed := map[int64][]refusal{}
	type retry struct {
		id      int64
		attempt int
		reason  string
		msg     models.SendMessage // for its deferred event
		err     error
	}
	accounts := map[int64]int64{} // send → account
	var retries []retry
	var back, skipped []int64
	for _, o := range outs {
		j := o.Job
		accounts[j.SendID] = j.Account
		switch {
		case errors.Is(o.Err, delivery.ErrSkip):
			// Its send was deleted: the unsent message goes.
			skipped = append(skipped, j.ID)
		case errors.Is(o.Err, delivery.ErrStale), errors.Is(o.Err, delivery.ErrHeld):
			back = append(back, j.ID)
		case o.Err == nil:
			delivered[j.SendID] = append(delivered[j.SendID], j.ID)
		default:
			v := o.Verdict(false)
			if v == delivery.VerdictRetry && !l.retryable(j.Attempts+1) {
				v = o.Verdict(true)
			}
			r := refusal{j.ID, j.To, errText(o.Err), o.Err, delivery.ReportHardBounce}
			switch v {
			case delivery.VerdictRetry:
				retries = append(retries, retry{j.ID, j.Attempts + 1, r.reason,
					models.SendMessage{ID: j.ID, SendID: j.SendID, UserID: j.Account, Email: j.To}, o.Err})
			case delivery.VerdictBounce:
				bounced[j.SendID] = append(bounced[j.SendID], r)
			case delivery.VerdictSoftBounce:
				r.kind = delivery.ReportSoftBounce
				bounced[j.SendID] = append(bounced[j.SendID], r)
			case delivery.VerdictBlock:
				blocked[j.SendID] = append(blocked[j.SendID], r)
			default:
				failed[j.SendID] = append(failed[j.SendID], r)
			}
		}
	}
	now := models.NewTimestamp(l.now())
	if len(skipped) > 0 {
		if err := l.db.W.WithContext(ctx).Exec("DELETE FROM send_messages WHERE id IN ? AND worker = ?", skipped, l.live.worker).Error; err != nil {
			return fmt.Errorf("ledger: drop skipped messages: %w", err)
		}
	}
	if len(back) > 0 {
		// Not sent (a stale claim, a paused send): back to the queue,
		// unless another process holds them.
		if err := l.db.W.WithContext(ctx).Exec(giveBack, back, l.live.worker).Error; err != nil {
			return fmt.Errorf("ledger: give back claimed messages: %w", err)
		}
	}
	var relayOf map[int64]string // the relay that took each delivered message, when the transport says
	for _, o := range outs {
		if o.Err == nil && o.Relay != "" {
			if relayOf == nil {
				relayOf = map[int64]string{}
			}
			relayOf[o.Job.ID] = o.Relay
		}
	}
	if l.db.SQL().DataModifyingCTE() && len(delivered) == 1 && len(bounced) == 0 && len(retries) == 0 && len(blocked) == 0 && len(failed) == 0 {
		// The usual group commit, deliveries of one send, as one statement:
		// one round trip where the transaction below takes four.
		for sendID, ids := range delivered {
			var err error
			mark, args := markDelivered(now, relayOf, ids, l.live.worker)
			if !l.events.Wanted(accounts[sendID], record.EventDelivered) {
				err = l.db.Relaxed.WithContext(ctx).Exec(`WITH done AS (`+mark+` RETURNING 1),
					`+deliveredDaily, append(args, now, sendID, record.DayOf(now.Time))...).Error
			} else {
				// With the account's delivered events, still one statement.
				err = l.db.Relaxed.WithContext(ctx).Exec(`WITH done AS (`+mark+` RETURNING id, send_id, user_id, email),
					ev AS (`+record.EventsOfClaimed("done m WHERE TRUE")+`),
					`+deliveredDaily, append(args, record.EventDelivered, now, record.KindPattern(record.EventDelivered), now, sendID, record.DayOf(now.Time))...).Error
			}
			if err != nil {
				return fmt.Errorf("ledger: record deliveries of send %d: %w", sendID, err)
			}
			return nil
		}
	}
	var paused []int64
	err := l.db.Relaxed.WithContext(ctx).Transaction(func(tx *gorm.DB) error {
		paused = paused[:0]
		days := map[int64]record.Daily{} // account → its day's figures, written last
		add := func(sendID int64, col string, n int64) {
			a := accounts[sendID]
			if days[a] == nil {
				days[a] = record.Daily{}
			}
			days[a][col] += n
		}
		// Sends in id order, the same in every process, so that two
		// processes' group commits do not wait on each other's rows.
		for _, sendID := range sortedKeys(delivered) {
			// The events first: the rows this worker holds are those it marks.
			if err := l.events.RecordClaimed(tx, accounts[sendID], record.EventDelivered, delivered[sendID], l.live.worker, now.Time); err != nil {
				return err
			}
			mark, args := markDelivered(now, relayOf, delivered[sendID], l.live.worker)
			res := tx.Exec(mark, args...)
			if res.Error != nil {
				return res.Error
			}
			if res.RowsAffected > 0 {
				if err := tx.Exec("UPDATE single_sends SET delivered = delivered + ?, sent_at = COALESCE(sent_at, ?) WHERE id = ?",
					res.RowsAffected, now, sendID).Error; err != nil {
					return fmt.Errorf("ledger: count outcomes on send %d: %w", sendID, err)
				}
				add(sendID, record.DailySent, res.RowsAffected)
				add(sendID, record.DailyDelivered, res.RowsAffected)
			}
		}
		for _, sendID := range sortedKeys(bounced) {
			var accountID int64
			if err := tx.Model(&models.SingleSend{}).Select("user_id").Where("id = ?", sendID).Scan(&accountID).Error; err != nil {
				return fmt.Errorf("ledger: account of send %d: %w", sendID, err)
			}
			var n int64
			for _, b := range bounced[sendID] {
				res := tx.Exec(markRefused, models.MessageBounced, b.reason, b.id, l.live.worker)
				if res.Error != nil {
					return res.Error
				}
				if res.RowsAffected == 0 || accountID == 0 {
					continue
				}
				n++
				// The same traces as a report's verdict: a hard bounce
				// suppresses, a soft one counts towards the limit.
				m := models.SendMessage{ID: b.id, SendID: sendID, UserID: accountID, Email: b.email}
				v := record.VerdictOfError(b.kind, b.err, now)
				rec := l.rec.HardBounce
				if b.kind == delivery.ReportSoftBounce {
					rec = l.rec.SoftBounce
				}
				if err := rec(tx, &m, v); err != nil {
					return err
				}
			}
			if n > 0 {
				if err := tx.Exec("UPDATE single_sends SET bounces = bounces + ? WHERE id = ?", n, sendID).Error; err != nil {
					return fmt.Errorf("ledger: count bounces on send %d: %w", sendID, err)
				}
				add(sendID, record.DailySent, n)
				add(sendID, record.DailyBounces, n)
			}
		}
		for _, sendID := range sortedKeys(blocked) {
			stop, n, err := l.recordBlocks(tx, sendID, blocked[sendID], now)
			if err != nil {
				return err
			}
			for _, b := range blocked[sendID] {
				m := models.SendMessage{ID: b.id, SendID: sendID, UserID: accounts[sendID], Email: b.email}
				if err := l.rec.Block(tx, &m, record.VerdictOfError(delivery.ReportBlock, b.err, now)); err != nil {
					return err
				}
			}
			add(sendID, record.DailySent, n)
			if stop {
				paused = append(paused, sendID)
			}
		}
		for _, sendID := range sortedKeys(failed) {
			fs := failed[sendID]
			var n int64
			first, last := "", ""
			for _, f := range fs {
				res := tx.Exec(markRefused, models.MessageFailed, f.reason, f.id, l.live.worker)
				if res.Error != nil {
					return res.Error
				}
				if res.RowsAffected > 0 {
					n++
					if first == "" {
						first = f.reason
					}
					last = f.reason
				}
			}
			if n > 0 {
				if err := tx.Exec(`UPDATE single_sends SET failures = failures + ?, last_failure = ?,
					first_failure = CASE WHEN first_failure = '' THEN ? ELSE first_failure END WHERE id = ?`, n, last, first, sendID).Error; err != nil {
					return fmt.Errorf("ledger: count failures on send %d: %w", sendID, err)
				}
			}
		}
		for _, r := range retries {
			next := l.now().UnixMilli() + l.backoff(r.attempt).Milliseconds()
			res := tx.Exec(retryLater,
				r.attempt, next, r.reason, r.id, l.live.worker)
			if res.Error != nil {
				return res.Error
			}
			if res.RowsAffected > 0 {
				if err := l.rec.Deferral(tx, &r.msg, record.VerdictOfError(delivery.ReportDeferral, r.err, now)); err != nil {
					return err
				}
			}
		}
		// The accounts' days last, in account order (daily.go: lock order).
		for _, a := range sortedKeys(days) {
			if err := record.AddDaily(tx, a, now.Time, days[a]); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		return fmt.Errorf("ledger: record: %w", err)
	}
	if len(paused) > 0 {
		l.pausedNow(paused)
	}
	return nil
}

// refusal is a message that was not delivered, with why: the ledger's
// error text, and the error itself for the verdict's traces.
type refusal struct {
	id     int64
	email  string
	reason string
	err    error
	kind   delivery.ReportKind // of a bounce: hard or soft
}

// pauseAfterBlocks is the pause rule: a send pauses itself when this many
// of its messages in a row were blocked with no delivery recorded between
// them (counted in the database, so across group commits and processes),
// or, in a send of fewer messages, when every one of them was blocked so.
const pauseAfterBlocks = 10

// recordBlocks marks a send's blocked messages, counts them and the
// streak of blocks, and pauses the send by the rule. It reports whether
// this call paused it (once per pause: the pause is set only where none
// is).
func (l *Ledger) recordBlocks(tx *gorm.DB, sendID int64, bs []refusal, now models.Timestamp) (bool, int64, error) {
	// The send's row first: a resume of the send (resumeSend, which locks
	// it first too) either committed before these rows are marked, and
	// then they carry its mark, or waits for this commit and then queues
	// these blocks again.
	if err := tx.Exec("UPDATE single_sends SET block_streak = block_streak WHERE id = ?", sendID).Error; err != nil {
		return false, 0, fmt.Errorf("ledger: lock send %d: %w", sendID, err)
	}
	var n int64
	last := ""
	for _, b := range bs {
		res := tx.Exec(markRefused+" AND next_at <> ?", models.MessageBlocked, b.reason, b.id, l.live.worker, ResumedClaim)
		if res.Error != nil {
			return false, 0, fmt.Errorf("ledger: mark message %d blocked: %w", b.id, res.Error)
		}
		if res.RowsAffected > 0 {
			n++
			last = b.reason
			continue
		}
		// Claimed before the send was resumed: refused for the cause the
		// resume says is fixed, it goes again, not counted as a block.
		if err := tx.Exec(requeueResumed, b.reason, b.id, l.live.worker, ResumedClaim).Error; err != nil {
			return false, 0, fmt.Errorf("ledger: requeue resumed message %d: %w", b.id, err)
		}
	}
	if n == 0 {
		return false, 0, nil
	}
	// A delivery recorded since the last block (delivered moved) ends the
	// streak. SET reads the row as it was, in both dialects.
	if err := tx.Exec(`UPDATE single_sends SET blocks = blocks + ?, last_block = ?,
		block_streak = CASE WHEN delivered = streak_delivered THEN block_streak + ? ELSE ? END,
		streak_delivered = delivered WHERE id = ?`, n, last, n, n, sendID).Error; err != nil {
		return false, 0, fmt.Errorf("ledger: count blocks on send %d: %w", sendID, err)
	}
	res := tx.Exec(`UPDATE single_sends SET paused_at = ?, pause_reason = last_block, updated_at = ?
		WHERE id = ? AND status = ? AND paused_at IS NULL AND message = 0
		AND block_streak >= CASE WHEN triggered BETWEEN 1 AND ? THEN triggered ELSE ? END`,
		now, now, sendID, models.SendRunning, pauseAfterBlocks-1, pauseAfterBlocks)
	if res.Error != nil {
		return false, 0, fmt.Errorf("ledger: pause send %d: %w", sendID, res.Error)
	}
	return res.RowsAffected == 1, n, nil
}

// pausedNow stops this process's sending of sends it just paused (their
// claimed messages go back to the queue) and has the scheduler mail the
// notice.
func (l *Ledger) pausedNow(ids []int64) {
	l.sends.hold(ids)
	l.paused(ids)
}

func sortedKeys[V any](m map[int64]V) []int64 {
	keys := make([]int64, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	return keys
}

// backoff is the wait before retry number attempt (1, 2, …): Backoff,
// doubling.
func (l *Ledger) backoff(attempt int) time.Duration {
	d := l.retry.First
	for i := 1; i < attempt && d < l.retry.Window; i++ {
		d *= 2
	}
	return d
}

// retryable reports whether a message that failed for the attempt-th time
// is still within the retry window: the waits so far plus the next one.
func (l *Ledger) retryable(attempt int) bool {
	var total time.Duration
	for i := 1; i <= attempt; i++ {
		total += l.backoff(i)
		if total > l.retry.Window {
			return false
		}
	}
	return true
}

func errText(err error) string {
	s := err.Error()
	if len(s) > 500 {
		s = s[:500]
	}
	return s
}

// ResumedClaim is the next_at resumeSend gives the messages of a send
// that are claimed when it resumes. A claimed row's next_at is not read
// until the row goes back to the queue, where this value is due at once.
const ResumedClaim = int64(-1)
