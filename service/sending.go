package service

import (
	"context"
	"errors"
	"log/slog"
	"net/mail"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/google/uuid"
	"gorm.io/gorm"

	"herald/delivery"
	"herald/models"
)

// SendingConfig tunes the sending engine (decisions.md section 1).
type SendingConfig struct {
	Conns   int           // HERALD_SMTP_MAX_CONNS
	Rate    float64       // HERALD_SEND_RATE, messages per second per account; 0 no limit
	Backoff time.Duration // HERALD_RETRY_BACKOFF, first retry delay (doubling); default 1m
	Window  time.Duration // HERALD_RETRY_WINDOW; default 24h
	Now     func() time.Time
	// Tick is how often the scheduler looks for due sends, keeps this
	// process's heartbeat and completes sends. Default 1 s.
	Tick time.Duration
	// DeadAfter is how long a process's heartbeat may be silent before its
	// claims go back to the queue. Default 3 s.
	DeadAfter time.Duration
}

// Sending is the engine's side in the service: it resolves audiences into
// the send ledger, hands due messages to delivery.Engine and records what
// became of them. Build it with Service.StartSending.
type Sending struct {
	db        *DB
	mail      *Mail
	cfg       SendingConfig
	worker    string
	key       []byte
	verp      *delivery.VERP // return paths, Message-IDs and mailto: unsubscribe addresses
	events    *Events        // the delivered, bounce and deferred events
	engine    *delivery.Engine
	now       func() time.Time
	log       *slog.Logger
	notify    *Notifications
	tickWake  chan struct{}
	resolving sync.Map // send id → struct{}: audiences this process is resolving

	purge     func(context.Context) (int64, error) // SingleSends.PurgeDeleted
	lastPurge atomic.Int64                         // Unix ms (injected clock): Tick purges once an hour

	beatMu    sync.Mutex
	lastBeat  time.Time // when the last successful heartbeat was written
	beatEpoch int64     // counts lapses: heartbeats further apart than lapseAfter

	mu       sync.Mutex
	running  []int64 // sends in status 2, refreshed by claim
	readAt   time.Time
	next     int // round robin over running
	compiled map[int64]*compiledSend
	notices  []int64 // sends paused by this process, whose notice is not mailed yet
}

// NewSending wires the engine over the transport UseTransport set. Call
// Run to start it.
func (s *Service) NewSending(ctx context.Context, cfg SendingConfig) (*Sending, error) {
	if s.Mail == nil {
		return nil, errors.New("service: NewSending before UseTransport")
	}
	if cfg.Now == nil {
		cfg.Now = time.Now
	}
	if cfg.Backoff <= 0 {
		cfg.Backoff = time.Minute
	}
	if cfg.Window <= 0 {
		cfg.Window = 24 * time.Hour
	}
	if cfg.Tick <= 0 {
		cfg.Tick = time.Second
	}
	if cfg.DeadAfter <= 0 {
		cfg.DeadAfter = 3 * time.Second
	}
	if cfg.Conns < 1 {
		cfg.Conns = delivery.DefaultMaxConns
	}
	key, err := s.Settings.TrackingKey(ctx)
	if err != nil {
		return nil, err
	}
	verp, err := s.Bounces.VERP(ctx)
	if err != nil {
		return nil, err
	}
	sg := &Sending{
		db: s.DB, mail: s.Mail, cfg: cfg, worker: uuid.NewString(), key: key, verp: verp, events: s.Events, now: cfg.Now,
		log: slog.Default(), notify: s.Notifications, tickWake: make(chan struct{}, 1), compiled: map[int64]*compiledSend{},
	}
	sg.engine = delivery.NewEngine(sg, s.Mail.transport, delivery.EngineConfig{Conns: cfg.Conns, Rate: cfg.Rate,
		JobContext: func(ctx context.Context, j *delivery.Job) context.Context { return WithAccount(ctx, j.Account) }})
	s.Sending = sg
	s.SingleSends.now = cfg.Now
	s.Tracking.now = cfg.Now
	s.SingleSends.wake = sg.Wake
	s.SingleSends.deleted = sg.cancel
	sg.purge = s.SingleSends.PurgeDeleted
	s.Automations.changed = sg.refresh
	s.Automations.wake = sg.Wake
	s.Imports.OnDone = sg.importDone
	return sg, nil
}

// TrackingKey is the key of tracking and unsubscribe tokens, shared by
// every process through the settings table.
func (s *Settings) TrackingKey(ctx context.Context) ([]byte, error) {
	v, err := s.Secret(ctx, "tracking_key", 32)
	return []byte(v), err
}

// Wake tells the scheduler and the engine that a send may be due now.
func (sg *Sending) Wake() {
	select {
	case sg.tickWake <- struct{}{}:
	default:
	}
	sg.engine.Wake()
}

// Run sends until ctx ends, then drains (see delivery.Engine.Run) and
// gives back this process's claims.
func (sg *Sending) Run(ctx context.Context) {
	// The heartbeat has its own loop: a long audience resolution must not
	// make other processes think this one died.
	if err := sg.heartbeat(ctx); err != nil {
		sg.log.Error("sending: heartbeat", "err", err)
	}
	var wg sync.WaitGroup
	wg.Add(2)
	go func() {
		defer wg.Done()
		t := time.NewTicker(sg.cfg.DeadAfter / 3)
		defer t.Stop()
		for {
			select {
			case <-ctx.Done():
				return
			case <-t.C:
				if err := sg.heartbeat(ctx); err != nil && ctx.Err() == nil {
					sg.log.Error("sending: heartbeat", "err", err)
				}
			}
		}
	}()
	go func() {
		defer wg.Done()
		t := time.NewTicker(sg.cfg.Tick)
		defer t.Stop()
		for {
			if err := sg.Tick(ctx); err != nil && ctx.Err() == nil {
				sg.log.Error("sending: tick", "err", err)
			}
			select {
			case <-ctx.Done():
				return
			case <-t.C:
			case <-sg.tickWake:
			}
		}
	}()
	sg.engine.Run(ctx)
	wg.Wait()
	bg, cancel := context.WithTimeout(context.WithoutCancel(ctx), 5*time.Second)
	defer cancel()
	_ = sg.db.W.WithContext(bg).Exec("DELETE FROM send_workers WHERE id = ?", sg.worker).Error
}

func (sg *Sending) nowMS() int64 { return sg.now().UnixMilli() }

// Heartbeat tells other processes this one is alive. Run does it every
// third of DeadAfter; callers that drive Claim and Record themselves
// (benchmarks) call it: jobs built without a recent heartbeat are stale.
func (sg *Sending) Heartbeat(ctx context.Context) error { return sg.heartbeat(ctx) }

func (sg *Sending) heartbeat(ctx context.Context) error {
	at := time.Now()
	err := sg.db.W.WithContext(ctx).Exec(
		"INSERT INTO send_workers (id, heartbeat_at) VALUES (?, ?) ON CONFLICT (id) DO UPDATE SET heartbeat_at = excluded.heartbeat_at",
		sg.worker, at.UnixMilli()).Error
	if err == nil {
		sg.beatMu.Lock()
		if !sg.lastBeat.IsZero() && at.Sub(sg.lastBeat) > sg.lapseAfter() {
			sg.beatEpoch++
		}
		sg.lastBeat = at
		sg.beatMu.Unlock()
	}
	return err
}

// lapseAfter is the gap between heartbeats after which this process's
// claims are no longer trusted: two thirds of DeadAfter, when other
// processes take them over (heartbeats come every third of it).
func (sg *Sending) lapseAfter() time.Duration { return sg.cfg.DeadAfter * 2 / 3 }

// epoch is the heartbeat lapse count a claim is made under.
func (sg *Sending) epoch() int64 {
	sg.beatMu.Lock()
	defer sg.beatMu.Unlock()
	return sg.beatEpoch
}

// claimHeld reports whether a claim made under epoch is surely still this
// process's: no heartbeat lapse since, and none going on now (a process
// stopped with SIGSTOP resumes its workers before its next heartbeat).
// Another process reclaims only after DeadAfter of silence, so a claim
// that passes here was not taken over, and a queued job that fails it is
// given back instead of sent: after a stall this process sends again only
// what was already on the wire.
func (sg *Sending) claimHeld(epoch int64) bool {
	sg.beatMu.Lock()
	defer sg.beatMu.Unlock()
	return epoch == sg.beatEpoch && time.Since(sg.lastBeat) <= sg.lapseAfter()
}

// Tick does the scheduler's rounds once: claims of dead processes go back
// to the queue, due sends start (their audience is resolved into the
// ledger), and sends with nothing left are completed.
func (sg *Sending) Tick(ctx context.Context) error {
	w := sg.db.W.WithContext(ctx)
	// Heartbeats use the wall clock (processes agree on it), not the
	// injectable one, which only decides what is due.
	alive := time.Now().Add(-sg.cfg.DeadAfter).UnixMilli()
	// This process's own claims never go back: it is alive, even when a
	// long write delayed its heartbeat.
	if err := w.Exec(`UPDATE send_messages SET state = 0, worker = NULL WHERE state = 1 AND worker IS NOT NULL AND worker <> ?
		AND worker NOT IN (SELECT id FROM send_workers WHERE heartbeat_at >= ?)`, sg.worker, alive).Error; err != nil {
		return err
	}
	if err := w.Exec("DELETE FROM send_workers WHERE heartbeat_at < ?", alive-int64(time.Hour/time.Millisecond)).Error; err != nil {
		return err
	}

	var due []int64
	now := models.NewTimestamp(sg.now())
	if err := sg.db.R.WithContext(ctx).Model(&models.SingleSend{}).
		Where("armed = 1 AND (status = ? OR (status = ? AND send_after <= ?))", models.SendInitiate, models.SendReady, now).
		Order("id").Limit(100).Pluck("id", &due).Error; err != nil {
		return err
	}
	for _, id := range due {
		res := w.Model(&models.SingleSend{}).Where("id = ? AND armed = 1 AND status IN ?", id, []int{models.SendInitiate, models.SendReady}).
			Updates(map[string]any{"status": models.SendRunning, "updated_at": models.Now()})
		if res.Error != nil {
			return res.Error
		}
		if res.RowsAffected == 1 {
			sg.startResolve(ctx, id)
		}
	}
	// Sends whose resolution a dead process left half done.
	var stuck []int64
	if err := sg.db.R.WithContext(ctx).Model(&models.SingleSend{}).Where("status = ? AND resolved = 0", models.SendRunning).Pluck("id", &stuck).Error; err != nil {
		return err
	}
	for _, id := range stuck {
		sg.startResolve(ctx, id)
	}
	if err := sg.completeSends(ctx); err != nil {
		return err
	}
	if last := sg.lastPurge.Load(); sg.nowMS()-last > time.Hour.Milliseconds() && sg.lastPurge.CompareAndSwap(last, sg.nowMS()) {
		if n, err := sg.purge(ctx); err != nil {
			return err
		} else if n > 0 {
			sg.log.Info("sending: deleted sends purged with their ledgers", "sends", n)
		}
	}
	sg.mailNotices(ctx)
	return sg.tickAutomations(ctx)
}

// startResolve resolves a send's audience in the background (once per
// process at a time; resolution is idempotent, so a second process doing
// the same after a crash adds nothing twice).
func (sg *Sending) startResolve(ctx context.Context, id int64) {
	if _, busy := sg.resolving.LoadOrStore(id, struct{}{}); busy {
		return
	}
	go func() {
		defer sg.resolving.Delete(id)
		if err := sg.resolve(ctx, id); err != nil && ctx.Err() == nil {
			sg.log.Error("sending: resolve audience", "send", id, "err", err)
		}
		sg.engine.Wake()
	}()
}

// resolveChunk is how many contacts one INSERT … SELECT of the audience
// takes: short writes let other writers in between on SQLite.
const resolveChunk = 5000

// resolve writes the send's audience into the ledger: the union of its
// targets less exclusions, global unsubscribers, the group's recipients
// and suppressed addresses, one row per address.
func (sg *Sending) resolve(ctx context.Context, id int64) error {
	var ss models.SingleSend
	if err := sg.db.R.WithContext(ctx).Where("id = ?", id).First(&ss).Error; err != nil {
		return notFound(err)
	}
	if ss.Resolved == 1 || ss.DeletedAt != nil {
		return nil
	}
	c, err := sg.compile(ctx, &ss)
	if err != nil {
		return err
	}
	sg.freshStats(ctx, "contacts", "segment_emails")
	exclude, excludeArgs, err := exclusionSQL(ctx, sg.db.R, &ss)
	if err != nil {
		return err
	}
	cols := "(send_id, user_id, contact_id, email, first_name, last_name, state, attempts, next_at, error)"
	for _, t := range ss.RecipientID {
		tid, _ := strconv.ParseInt(t.ID, 10, 64)
		type source struct{ from, where, idCol string }
		var sources []source
		if t.Table == models.TargetContacts {
			sources = []source{{"contacts c", "c.user_id = ? AND c.contact_type_id = ? AND c.deleted_at IS NULL", "c.id"}}
		} else {
			sources = []source{
				{"segment_emails se JOIN contacts c ON c.id = se.contact_id", "se.user_id = ? AND se.segment_id = ? AND c.deleted_at IS NULL AND EXISTS (SELECT 1 FROM segments g WHERE g.id = se.segment_id AND g.deleted_at IS NULL)", "se.id"},
			}
		}
		for _, src := range sources {
			if err := sg.insertChunks(ctx, ss.ID, ss.UserID, tid, cols,
				"SELECT ?, c.user_id, c.id, c.email, c.first_name, c.last_name, 0, 0, 0, '' FROM "+src.from+" WHERE "+src.where,
				src.idCol, "c.email", exclude, excludeArgs); err != nil {
				return err
			}
		}
		if t.Table == models.TargetSegments {
			// Addresses added to the segment by hand.
			if err := sg.insertChunks(ctx, ss.ID, ss.UserID, tid, cols,
				"SELECT ?, se.user_id, NULL, se.email, se.first_name, se.last_name, 0, 0, 0, '' FROM segment_emails se WHERE se.user_id = ? AND se.segment_id = ? AND se.contact_id IS NULL AND EXISTS (SELECT 1 FROM segments g WHERE g.id = se.segment_id AND g.deleted_at IS NULL)",
				"se.id", "se.email", exclude, excludeArgs); err != nil {
				return err
			}
		}
	}
	var n int64
	if err := sg.db.W.WithContext(ctx).Model(&models.SendMessage{}).Where("send_id = ?", ss.ID).Count(&n).Error; err != nil {
		return err
	}
	return sg.db.W.WithContext(ctx).Model(&models.SingleSend{}).Where("id = ? AND resolved = 0", ss.ID).
		Updates(map[string]any{"resolved": 1, "triggered": n, "links": models.StringArray(c.links)}).Error
}

// freshStats analyzes those of tables whose PostgreSQL statistics lag far
// behind their rows. Right after a large import autovacuum has not
// analyzed yet, and the planner, taking the contacts table for nearly
// empty, read every contact of the type for each chunk of the resolution
// (measured at 100,000 contacts: 14 ms per 5,000-row chunk instead of
// 1.7 ms, and growing with the square of the audience). A failure only
// costs speed: it is logged.
func (sg *Sending) freshStats(ctx context.Context, tables ...string) {
	if sg.db.Dialect != "postgres" {
		return
	}
	for _, t := range tables {
		var stale bool
		err := sg.db.W.WithContext(ctx).Raw(`SELECT COALESCE((SELECT n_mod_since_analyze > 1000 + n_live_tup / 10
			FROM pg_stat_user_tables WHERE relid = ?::regclass), false)`, t).Scan(&stale).Error
		if err == nil && stale {
			err = sg.db.W.WithContext(ctx).Exec("ANALYZE " + t).Error
		}
		if err != nil && ctx.Err() == nil {
			sg.log.Warn("sending: analyze before resolving an audience", "table", t, "err", err)
		}
	}
}

// insertChunks runs INSERT … SELECT of one audience source in chunks of
// resolveChunk rows by idCol. The SELECT's first three placeholders are
// the send id, the account and the target id; emailCol is what exclusions
// compare.
func (sg *Sending) insertChunks(ctx context.Context, sendID, accountID, targetID int64, cols, sel, idCol, emailCol, exclude string, excludeArgs []any) error {
	excl := strings.ReplaceAll(exclude, "$E", emailCol)
	w := sg.db.W.WithContext(ctx)
	from := sel[strings.Index(sel, " FROM "):]
	var lo int64
	for {
		// A send deleted while its audience is resolved stops here.
		var live int64
		if err := sg.db.R.WithContext(ctx).Model(&models.SingleSend{}).Where("id = ? AND deleted_at IS NULL", sendID).Count(&live).Error; err != nil || live == 0 {
			return err
		}
		// The chunk's upper bound: the resolveChunk-th id after lo.
		var hi int64
		bound := "SELECT " + idCol + from + " AND " + idCol + " > ? ORDER BY " + idCol + " LIMIT 1 OFFSET ?"
		if err := sg.db.R.WithContext(ctx).Raw(bound, accountID, targetID, lo, resolveChunk-1).Scan(&hi).Error; err != nil {
			return err
		}
		q := "INSERT INTO send_messages " + cols + " " + sel + " AND " + idCol + " > ?"
		args := []any{sendID, accountID, targetID, lo}
		if hi > 0 {
			q += " AND " + idCol + " <= ?"
			args = append(args, hi)
		}
		q += excl + " ON CONFLICT (send_id, email) DO NOTHING"
		if sg.events.wanted(accountID, EventProcessed) {
			// The processed events with the chunk: its rows are the send's
			// rows past the largest id before it.
			err := w.Transaction(func(tx *gorm.DB) error {
				var before int64
				if err := tx.Raw("SELECT COALESCE(MAX(id), 0) FROM send_messages WHERE send_id = ?", sendID).Scan(&before).Error; err != nil {
					return err
				}
				if err := tx.Exec(q, append(args, excludeArgs...)...).Error; err != nil {
					return err
				}
				return sg.events.recordRows(tx, accountID, EventProcessed, "m.send_id = ? AND m.id > ?", models.Now(), sendID, before)
			})
			if err != nil {
				return err
			}
		} else if err := w.Exec(q, append(args, excludeArgs...)...).Error; err != nil {
			return err
		}
		if hi == 0 {
			return nil
		}
		lo = hi
	}
}

// exclusions returns the SQL (with $E for the address column) that leaves
// out the send's excluded targets, global unsubscribers, the group's
// recipients and suppressed addresses.
func exclusionSQL(ctx context.Context, r *gorm.DB, ss *models.SingleSend) (string, []any, error) {
	var b strings.Builder
	var args []any
	for _, t := range ss.ExcludeSpecificRecipientID {
		tid, _ := strconv.ParseInt(t.ID, 10, 64)
		if t.Table == models.TargetContacts {
			b.WriteString(" AND NOT EXISTS (SELECT 1 FROM contacts x WHERE x.contact_type_id = ? AND x.user_id = ? AND x.email = $E AND x.deleted_at IS NULL)")
			args = append(args, tid, ss.UserID)
			continue
		}
		var typeID int64
		if err := r.WithContext(ctx).Table("segments").Select("contact_type_id").Where("id = ? AND user_id = ?", tid, ss.UserID).Scan(&typeID).Error; err != nil {
			return "", nil, err
		}
		b.WriteString(" AND NOT EXISTS (SELECT 1 FROM segment_emails x WHERE x.segment_id = ? AND x.user_id = ? AND x.contact_id IS NULL AND x.email = $E)")
		b.WriteString(" AND NOT EXISTS (SELECT 1 FROM contacts y JOIN segment_emails x ON x.contact_id = y.id AND x.segment_id = ? WHERE y.contact_type_id = ? AND y.user_id = ? AND y.email = $E AND y.deleted_at IS NULL)")
		args = append(args, tid, ss.UserID, tid, typeID, ss.UserID)
	}
	b.WriteString(" AND NOT EXISTS (SELECT 1 FROM unsubscribers u WHERE u.user_id = ? AND u.unsubscribe_groups_id IS NULL AND u.email_address = $E)")
	b.WriteString(" AND NOT EXISTS (SELECT 1 FROM unsubscribers u WHERE u.unsubscribe_groups_id = ? AND u.user_id = ? AND u.email_address = $E)")
	b.WriteString(" AND NOT EXISTS (SELECT 1 FROM suppressions s WHERE s.user_id = ? AND s.email = $E)")
	args = append(args, ss.UserID, ss.UnsubscribeGroupID, ss.UserID, ss.UserID)
	return b.String(), args, nil
}

// completeSends moves running sends with nothing queued, claimed or
// awaiting a retry to completed, and mails the summary.
func (sg *Sending) completeSends(ctx context.Context) error {
	var ids []int64
	if err := sg.db.R.WithContext(ctx).Model(&models.SingleSend{}).Where("status = ? AND resolved = 1 AND automation_id IS NULL AND paused_at IS NULL", models.SendRunning).Pluck("id", &ids).Error; err != nil {
		return err
	}
	for _, id := range ids {
		now := models.NewTimestamp(models.Now())
		res := sg.db.W.WithContext(ctx).Exec(`UPDATE single_sends SET status = ?, completed_at = ?, updated_at = ?
			WHERE id = ? AND status = ? AND resolved = 1 AND paused_at IS NULL AND NOT EXISTS (SELECT 1 FROM send_messages m WHERE m.send_id = ? AND m.state IN (0, 1))`,
			models.SendCompleted, now, now, id, models.SendRunning, id)
		if res.Error != nil {
			return res.Error
		}
		if res.RowsAffected == 1 {
			sg.forget(id)
			sg.sendSummary(ctx, id)
		}
	}
	return nil
}

// Claim implements delivery.Store: due messages of running sends, taken
// round robin across sends so that one large send does not hold back the
// others.
func (sg *Sending) Claim(ctx context.Context, max int) ([]*delivery.Job, error) {
	sends, err := sg.runningSends(ctx)
	if err != nil || len(sends) == 0 {
		return nil, err
	}
	var jobs []*delivery.Job
	sg.mu.Lock()
	start := sg.next
	sg.next++
	sg.mu.Unlock()
	for k := 0; k < len(sends) && len(jobs) < max; k++ {
		id := sends[(start+k)%len(sends)]
		got, err := sg.claimFrom(ctx, id, max-len(jobs))
		if err != nil {
			if len(jobs) > 0 {
				// The engine drops the jobs of a failed claim: these are
				// claimed already, so they go now and the error waits for
				// the next round.
				sg.log.Error("sending: claim", "send", id, "err", err)
				return jobs, nil
			}
			return nil, err
		}
		jobs = append(jobs, got...)
	}
	return jobs, nil
}

func (sg *Sending) runningSends(ctx context.Context) ([]int64, error) {
	sg.mu.Lock()
	if time.Since(sg.readAt) < 500*time.Millisecond && len(sg.running) > 0 {
		r := sg.running
		sg.mu.Unlock()
		return r, nil
	}
	sg.mu.Unlock()
	var rows []struct {
		ID     int64
		Paused int
	}
	if err := sg.db.R.WithContext(ctx).Model(&models.SingleSend{}).Select("id, CASE WHEN paused_at IS NULL THEN 0 ELSE 1 END AS paused").
		Where("status = ?", models.SendRunning).Order("id").Scan(&rows).Error; err != nil {
		return nil, err
	}
	ids := make([]int64, 0, len(rows))
	paused := map[int64]bool{}
	for _, r := range rows {
		if r.Paused == 1 {
			paused[r.ID] = true
		} else {
			ids = append(ids, r.ID)
		}
	}
	sg.mu.Lock()
	sg.running, sg.readAt = ids, time.Now()
	// A send no longer running (deleted, here or by another process) stops:
	// its claimed messages are skipped. A paused one (here or by another
	// process) gives its claimed messages back to the queue.
	running := make(map[int64]bool, len(ids))
	for _, id := range ids {
		running[id] = true
	}
	for id, c := range sg.compiled {
		switch {
		case paused[id]:
			c.held.Store(true)
			delete(sg.compiled, id)
		case !running[id]:
			c.cancelled.Store(true)
			delete(sg.compiled, id)
		}
	}
	sg.mu.Unlock()
	return ids, nil
}

type claimedRow struct {
	ID        int64
	ContactID *int64
	Email     string
	FirstName string
	LastName  string
	Attempts  int
}

func (sg *Sending) claimFrom(ctx context.Context, sendID int64, n int) ([]*delivery.Job, error) {
	lock := ""
	if sg.db.Dialect == "postgres" {
		lock = " FOR UPDATE SKIP LOCKED"
	}
	// ORDER BY next_at, id follows the index send_messages_claim: ordering
	// by id alone sorted every queued row of the send on each claim.
	epoch := sg.epoch()
	var rows []claimedRow
	err := sg.db.W.WithContext(ctx).Raw(`UPDATE send_messages SET state = 1, worker = ? WHERE id IN (
		SELECT id FROM send_messages WHERE send_id = ? AND state = 0 AND next_at <= ? ORDER BY next_at, id LIMIT ?`+lock+`)
		RETURNING id, contact_id, email, first_name, last_name, attempts`, sg.worker, sendID, sg.nowMS(), n).Scan(&rows).Error
	if err != nil || len(rows) == 0 {
		return nil, err
	}
	c, err := sg.compiledFor(ctx, sendID)
	if err != nil {
		_ = sg.Release(ctx, jobsOf(sendID, rows))
		if IsNotFound(err) {
			return nil, nil // deleted meanwhile
		}
		return nil, err
	}
	var contacts map[int64]*models.Contact
	if c.needsContact {
		if contacts, err = sg.loadContacts(ctx, rows); err != nil {
			_ = sg.Release(ctx, jobsOf(sendID, rows))
			return nil, err
		}
	}
	jobs := make([]*delivery.Job, len(rows))
	for i := range rows {
		r := rows[i]
		var ct *models.Contact
		if r.ContactID != nil {
			ct = contacts[*r.ContactID]
		}
		jobs[i] = &delivery.Job{
			// The return path names the row (VERP): a DSN to it finds its message.
			ID: r.ID, SendID: sendID, Account: c.account, From: sg.verp.ReturnPath(r.ID), To: r.Email, Attempts: r.Attempts,
			Build: func() ([]byte, error) {
				if !sg.claimHeld(epoch) {
					return nil, delivery.ErrStale
				}
				return c.build(sg.key, r, ct)
			},
		}
	}
	return jobs, nil
}

func jobsOf(sendID int64, rows []claimedRow) []*delivery.Job {
	out := make([]*delivery.Job, len(rows))
	for i, r := range rows {
		out[i] = &delivery.Job{ID: r.ID, SendID: sendID}
	}
	return out
}

func (sg *Sending) loadContacts(ctx context.Context, rows []claimedRow) (map[int64]*models.Contact, error) {
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
	if err := scanContacts(sg.db.R.WithContext(ctx).Model(&models.Contact{}).Select(contactColumns(sg.db.Dialect)).Where("id IN ?", ids), &cs); err != nil {
		return nil, err
	}
	for i := range cs {
		out[cs[i].ID] = &cs[i]
	}
	return out, nil
}

// Release implements delivery.Store: claims given back to the queue.
func (sg *Sending) Release(ctx context.Context, jobs []*delivery.Job) error {
	if len(jobs) == 0 {
		return nil
	}
	ids := make([]int64, len(jobs))
	for i, j := range jobs {
		ids[i] = j.ID
	}
	return sg.db.W.WithContext(ctx).Exec("UPDATE send_messages SET state = 0, worker = NULL WHERE id IN ? AND state = 1 AND worker = ?", ids, sg.worker).Error
}

// markDelivered records this worker's claimed rows ids as delivered at a
// time: sent_at, ids, worker.
const markDelivered = "UPDATE send_messages SET state = 2, worker = NULL, sent_at = ? WHERE id IN ? AND worker = ?"

// Record implements delivery.Store: every outcome in one transaction, the
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
func (sg *Sending) Record(ctx context.Context, outs []delivery.Outcome) error {
	delivered := map[int64][]int64{}
	bounced := map[int64][]refusal{}
	blocked := map[int64][]refusal{}
	failed := map[int64][]refusal{}
	type retry struct {
		id      int64
		attempt int
		reason  string
		msg     models.SendMessage // for its deferred event
		status  string
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
			if v == delivery.VerdictRetry && !sg.retryable(j.Attempts+1) {
				v = o.Verdict(true)
			}
			r := refusal{j.ID, j.To, errText(o.Err), statusOf(o.Err)}
			switch v {
			case delivery.VerdictRetry:
				retries = append(retries, retry{j.ID, j.Attempts + 1, r.reason,
					models.SendMessage{ID: j.ID, SendID: j.SendID, UserID: j.Account, Email: j.To}, r.status})
			case delivery.VerdictBounce:
				bounced[j.SendID] = append(bounced[j.SendID], r)
			case delivery.VerdictBlock:
				blocked[j.SendID] = append(blocked[j.SendID], r)
			default:
				failed[j.SendID] = append(failed[j.SendID], r)
			}
		}
	}
	now := models.NewTimestamp(models.Now())
	if len(skipped) > 0 {
		if err := sg.db.W.WithContext(ctx).Exec("DELETE FROM send_messages WHERE id IN ? AND worker = ?", skipped, sg.worker).Error; err != nil {
			return err
		}
	}
	if len(back) > 0 {
		// Not sent (a stale claim, a paused send): back to the queue,
		// unless another process holds them.
		if err := sg.db.W.WithContext(ctx).Exec("UPDATE send_messages SET state = 0, worker = NULL WHERE id IN ? AND worker = ?", back, sg.worker).Error; err != nil {
			return err
		}
	}
	if sg.db.Dialect == "postgres" && len(delivered) == 1 && len(bounced) == 0 && len(retries) == 0 && len(blocked) == 0 && len(failed) == 0 {
		// The usual group commit, deliveries of one send, as one statement:
		// one round trip where the transaction below takes four.
		for sendID, ids := range delivered {
			if !sg.events.wanted(accounts[sendID], EventDelivered) {
				return sg.db.W.WithContext(ctx).Exec(`WITH done AS (`+markDelivered+` RETURNING 1)
					UPDATE single_sends SET delivered = delivered + (SELECT count(*) FROM done), sent_at = COALESCE(sent_at, ?)
					WHERE id = ? AND EXISTS (SELECT 1 FROM done)`, now, ids, sg.worker, now, sendID).Error
			}
			// With the account's delivered events, still one statement.
			return sg.db.W.WithContext(ctx).Exec(`WITH done AS (`+markDelivered+` RETURNING id, send_id, user_id, email),
				ev AS (`+eventsOfClaimed("done m WHERE TRUE")+`)
				UPDATE single_sends SET delivered = delivered + (SELECT count(*) FROM done), sent_at = COALESCE(sent_at, ?)
				WHERE id = ? AND EXISTS (SELECT 1 FROM done)`, now, ids, sg.worker, EventDelivered, now, kindPattern(EventDelivered), now, sendID).Error
		}
	}
	var paused []int64
	err := sg.db.W.WithContext(ctx).Transaction(func(tx *gorm.DB) error {
		paused = paused[:0]
		// Sends in id order, the same in every process, so that two
		// processes' group commits do not wait on each other's rows.
		for _, sendID := range sortedKeys(delivered) {
			// The events first: the rows this worker holds are those it marks.
			if err := sg.events.recordClaimed(tx, accounts[sendID], EventDelivered, delivered[sendID], sg.worker, now.Time); err != nil {
				return err
			}
			res := tx.Exec(markDelivered, now, delivered[sendID], sg.worker)
			if res.Error != nil {
				return res.Error
			}
			if res.RowsAffected > 0 {
				if err := tx.Exec("UPDATE single_sends SET delivered = delivered + ?, sent_at = COALESCE(sent_at, ?) WHERE id = ?",
					res.RowsAffected, now, sendID).Error; err != nil {
					return err
				}
			}
		}
		for _, sendID := range sortedKeys(bounced) {
			var accountID int64
			if err := tx.Model(&models.SingleSend{}).Select("user_id").Where("id = ?", sendID).Scan(&accountID).Error; err != nil {
				return err
			}
			var n int64
			for _, b := range bounced[sendID] {
				res := tx.Exec("UPDATE send_messages SET state = ?, worker = NULL, error = ? WHERE id = ? AND worker = ?", models.MessageBounced, b.reason, b.id, sg.worker)
				if res.Error != nil {
					return res.Error
				}
				if res.RowsAffected == 0 || accountID == 0 {
					continue
				}
				n++
				sid := sendID
				if err := tx.Exec(`INSERT INTO suppressions (user_id, email, reason, send_id, created_at) VALUES (?, ?, ?, ?, ?)
					ON CONFLICT (user_id, email) DO NOTHING`, accountID, b.email, b.reason, sid, now).Error; err != nil {
					return err
				}
				m := models.SendMessage{ID: b.id, SendID: sendID, UserID: accountID, Email: b.email}
				if err := sg.events.record(tx, &m, EventBounce, eventExtra{Reason: b.reason, Status: b.status}, now.Time); err != nil {
					return err
				}
			}
			if n > 0 {
				if err := tx.Exec("UPDATE single_sends SET bounces = bounces + ? WHERE id = ?", n, sendID).Error; err != nil {
					return err
				}
			}
		}
		for _, sendID := range sortedKeys(blocked) {
			stop, err := sg.recordBlocks(tx, sendID, blocked[sendID], now)
			if err != nil {
				return err
			}
			if stop {
				paused = append(paused, sendID)
			}
		}
		for _, sendID := range sortedKeys(failed) {
			fs := failed[sendID]
			var n int64
			first, last := "", ""
			for _, f := range fs {
				res := tx.Exec("UPDATE send_messages SET state = ?, worker = NULL, error = ? WHERE id = ? AND worker = ?", models.MessageFailed, f.reason, f.id, sg.worker)
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
					return err
				}
			}
		}
		for _, r := range retries {
			next := sg.nowMS() + sg.backoff(r.attempt).Milliseconds()
			res := tx.Exec("UPDATE send_messages SET state = 0, worker = NULL, attempts = ?, next_at = ?, error = ? WHERE id = ? AND worker = ?",
				r.attempt, next, r.reason, r.id, sg.worker)
			if res.Error != nil {
				return res.Error
			}
			if res.RowsAffected > 0 {
				if err := sg.events.record(tx, &r.msg, EventDeferred, eventExtra{Reason: r.reason, Status: r.status}, now.Time); err != nil {
					return err
				}
			}
		}
		return nil
	})
	if err == nil && len(paused) > 0 {
		sg.pausedNow(paused)
	}
	return err
}

// refusal is a message that was not delivered, with why (the ledger's
// error text).
type refusal struct {
	id     int64
	email  string
	reason string
	status string // the enhanced (or reply) code, for the events
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
func (sg *Sending) recordBlocks(tx *gorm.DB, sendID int64, bs []refusal, now models.Timestamp) (bool, error) {
	var n int64
	last := ""
	for _, b := range bs {
		res := tx.Exec("UPDATE send_messages SET state = ?, worker = NULL, error = ? WHERE id = ? AND worker = ?", models.MessageBlocked, b.reason, b.id, sg.worker)
		if res.Error != nil {
			return false, res.Error
		}
		if res.RowsAffected > 0 {
			n++
			last = b.reason
		}
	}
	if n == 0 {
		return false, nil
	}
	// A delivery recorded since the last block (delivered moved) ends the
	// streak. SET reads the row as it was, in both dialects.
	if err := tx.Exec(`UPDATE single_sends SET blocks = blocks + ?, last_block = ?,
		block_streak = CASE WHEN delivered = streak_delivered THEN block_streak + ? ELSE ? END,
		streak_delivered = delivered WHERE id = ?`, n, last, n, n, sendID).Error; err != nil {
		return false, err
	}
	res := tx.Exec(`UPDATE single_sends SET paused_at = ?, pause_reason = last_block, updated_at = ?
		WHERE id = ? AND status = ? AND paused_at IS NULL
		AND block_streak >= CASE WHEN triggered BETWEEN 1 AND ? THEN triggered ELSE ? END`,
		now, now, sendID, models.SendRunning, pauseAfterBlocks-1, pauseAfterBlocks)
	return res.RowsAffected == 1, res.Error
}

// pausedNow stops this process's sending of sends it just paused (their
// claimed messages go back to the queue) and has the scheduler mail the
// notice.
func (sg *Sending) pausedNow(ids []int64) {
	sg.stopCompiled(ids, func(c *compiledSend) { c.held.Store(true) })
	sg.mu.Lock()
	sg.notices = append(sg.notices, ids...)
	sg.mu.Unlock()
	select {
	case sg.tickWake <- struct{}{}:
	default:
	}
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
func (sg *Sending) backoff(attempt int) time.Duration {
	d := sg.cfg.Backoff
	for i := 1; i < attempt && d < sg.cfg.Window; i++ {
		d *= 2
	}
	return d
}

// retryable reports whether a message that failed for the attempt-th time
// is still within the retry window: the waits so far plus the next one.
func (sg *Sending) retryable(attempt int) bool {
	var total time.Duration
	for i := 1; i <= attempt; i++ {
		total += sg.backoff(i)
		if total > sg.cfg.Window {
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

// compiledFor returns the send's compiled message parts, made once per
// process and send.
func (sg *Sending) compiledFor(ctx context.Context, sendID int64) (*compiledSend, error) {
	sg.mu.Lock()
	c := sg.compiled[sendID]
	sg.mu.Unlock()
	if c != nil {
		return c, nil
	}
	var ss models.SingleSend
	if err := sg.db.R.WithContext(ctx).Where("id = ?", sendID).First(&ss).Error; err != nil {
		return nil, notFound(err)
	}
	c, err := sg.compile(ctx, &ss)
	if err != nil {
		return nil, err
	}
	sg.mu.Lock()
	sg.compiled[sendID] = c
	sg.mu.Unlock()
	return c, nil
}

func (sg *Sending) forget(sendID int64) {
	sg.mu.Lock()
	delete(sg.compiled, sendID)
	sg.mu.Unlock()
}

// refresh makes this process compile the sends again (an automation's
// email changed) and read which sends run.
func (sg *Sending) refresh(ids []int64) {
	sg.mu.Lock()
	for _, id := range ids {
		delete(sg.compiled, id)
	}
	sg.readAt = time.Time{}
	sg.mu.Unlock()
}

// cancel stops deleted sends at once in this process.
func (sg *Sending) cancel(ids []int64) {
	sg.stopCompiled(ids, func(c *compiledSend) { c.cancelled.Store(true) })
}

// stopCompiled marks this process's compiled sends of ids (cancelled:
// deleted; held: paused), so that their claimed jobs build nothing, forgets
// them, and has the running sends read again.
func (sg *Sending) stopCompiled(ids []int64, mark func(*compiledSend)) {
	sg.mu.Lock()
	defer sg.mu.Unlock()
	for _, id := range ids {
		if c := sg.compiled[id]; c != nil {
			mark(c)
			delete(sg.compiled, id)
		}
	}
	sg.readAt = time.Time{}
}

// compiledSend is a send's message, parsed once: every per-recipient part
// is a placeholder, filled by build.
type compiledSend struct {
	cancelled    atomic.Bool // deleted: its messages are skipped
	held         atomic.Bool // paused: its claimed messages go back to the queue
	dkimErr      error       // the sender domain's DKIM key cannot sign: every message fails with it
	send         *models.SingleSend
	account      int64
	from         mail.Address
	replyTo      string
	subject      *delivery.Template
	html         *delivery.Template
	text         *delivery.Template
	links        []string
	dkim         *delivery.DKIMKey
	senderName   string
	senderAddr   string
	needsContact bool
	baseURL      string
	fromDomain   string // the sender's domain: the Message-IDs' right side
	// verp names the row in the Message-ID and the List-Unsubscribe mailto:
	// address; nil (a preview, view in browser) leaves both out.
	verp *delivery.VERP
}

// tokenName is the placeholder the tracking token takes while a message is
// compiled; it cannot clash with a field name (those start with a letter).
const tokenName = "__tk"

// compile makes a send's compiled message: links rewritten through the
// click redirect, the open pixel, the preheader, the text part derived
// once from the design.
func (sg *Sending) compile(ctx context.Context, ss *models.SingleSend) (*compiledSend, error) {
	c, err := compileSend(ctx, sg.db, sg.mail.baseURL, ss)
	if c != nil {
		c.verp = sg.verp
	}
	return c, err
}

func compileSend(ctx context.Context, db *DB, base string, ss *models.SingleSend) (*compiledSend, error) {
	html := ""
	if ss.TemplateHTML != nil {
		html = *ss.TemplateHTML
	}
	text := delivery.HTMLToText(html)
	tracked, links := delivery.TrackLinks(html, func(i int, _ string) string {
		return base + "/t/c/((" + tokenName + "))/" + strconv.Itoa(i)
	})
	tracked = delivery.InsertPreheader(tracked, ss.Preheader)
	tracked = delivery.AddPixel(tracked, base+"/t/o/(("+tokenName+")).gif")
	c := &compiledSend{
		send: ss, account: ss.UserID, from: mail.Address{Address: ss.FromSender}, replyTo: ss.ReplyTo,
		subject: delivery.Compile(ss.Subject), html: delivery.Compile(tracked), text: delivery.Compile(text),
		links: links, baseURL: base, fromDomain: strings.ToLower(ss.FromSender[strings.LastIndexByte(ss.FromSender, '@')+1:]),
	}
	if ss.SenderName != nil {
		c.from.Name, c.senderName = *ss.SenderName, *ss.SenderName
	}
	if ss.SenderAddress != nil {
		c.senderAddr = *ss.SenderAddress
	}
	for _, t := range []*delivery.Template{c.subject, c.html, c.text} {
		for _, n := range t.Names() {
			switch n {
			case "first_name", "last_name", "email", tokenName, "sender_name", "sender_address", "unsubscribe_preferences", "view_in_browser":
			default:
				c.needsContact = true
			}
		}
	}
	// Signed when the account has a key for the sender's domain (made on
	// the sender's DNS page); never made here, as the DNS record would be
	// missing and the signature fail.
	domain := strings.ToLower(ss.FromSender[strings.LastIndexByte(ss.FromSender, '@')+1:])
	var row models.SenderDomain
	err := db.R.WithContext(ctx).Where("user_id = ? AND domain = ?", ss.UserID, domain).First(&row).Error
	switch {
	case err == nil:
		// A key that cannot be read fails each message with its reason
		// (a failure of the send, shown on it), rather than the whole send
		// failing to start, unseen, on every claim.
		c.dkim, c.dkimErr = delivery.ParseDKIMKey(row.Domain, row.Selector, row.PrivateKey)
	case !errors.Is(err, gorm.ErrRecordNotFound):
		return nil, err
	}
	return c, nil
}

// build renders and writes one recipient's message.
func (c *compiledSend) build(key []byte, r claimedRow, ct *models.Contact) ([]byte, error) {
	if c.cancelled.Load() {
		return nil, delivery.ErrSkip
	}
	if c.held.Load() {
		return nil, delivery.ErrHeld
	}
	if c.dkimErr != nil {
		return nil, c.dkimErr
	}
	msg, err := c.message(key, r, ct)
	if err != nil {
		return nil, err
	}
	raw, err := delivery.Build(msg)
	if err != nil {
		return nil, err
	}
	if c.dkim != nil {
		return delivery.SignMessage(raw, c.dkim)
	}
	return raw, nil
}

// message renders one recipient's message.
func (c *compiledSend) message(key []byte, r claimedRow, ct *models.Contact) (*delivery.Message, error) {
	tok := delivery.SignToken(key, r.ID)
	var custom map[string]string
	lookup := func(name string) string {
		switch name {
		case tokenName:
			return tok
		case "email":
			return r.Email
		case "first_name":
			if ct != nil {
				return ct.FirstName
			}
			return r.FirstName
		case "last_name":
			if ct != nil {
				return ct.LastName
			}
			return r.LastName
		case "sender_name":
			return c.senderName
		case "sender_address":
			return c.senderAddr
		case "unsubscribe_preferences":
			return c.baseURL + "/u/" + tok
		case "view_in_browser":
			return c.baseURL + "/m/" + tok
		}
		if ct == nil {
			return ""
		}
		if v, ok := contactField(ct, name); ok {
			return v
		}
		if custom == nil {
			custom = parseCustom(string(ct.CustomFields))
		}
		return custom[name]
	}
	name := strings.TrimSpace(lookup("first_name") + " " + lookup("last_name"))
	m := &delivery.Message{
		From: c.from, ReplyTo: c.replyTo, To: mail.Address{Name: name, Address: r.Email},
		Subject: c.subject.Render(lookup), HTML: c.html.Render(delivery.HTMLEscaped(lookup)), Text: c.text.Render(lookup),
		ListUnsubscribeURL: c.baseURL + "/u/" + tok, OneClick: true,
		Headers: []delivery.Header{{Name: "Precedence", Value: "bulk"}, {Name: "X-Herald-Send", Value: c.send.Utr}},
	}
	if c.verp != nil {
		// The Message-ID carries the row's token too: a feedback report or a
		// provider that quotes it finds the message when the return path
		// was rewritten on the way.
		m.MessageID = c.verp.MessageID(r.ID, c.fromDomain)
		m.ListUnsubscribeMailto = c.verp.Unsubscribe(r.ID)
	}
	return m, nil
}

// contactField is a reserved field's value for a placeholder.
func contactField(c *models.Contact, name string) (string, bool) {
	switch name {
	case "alt_email":
		if c.AltEmail != nil {
			return *c.AltEmail, true
		}
		return "", true
	case "country":
		return countryName(c.Country), true
	case "state":
		return c.State, true
	case "city":
		return c.City, true
	case "address_line1":
		return c.AddressLine1, true
	case "address_line2":
		return c.AddressLine2, true
	case "state_province_region":
		return c.StateProvinceRegion, true
	case "postal_code":
		return c.PostalCode, true
	}
	return "", false
}
