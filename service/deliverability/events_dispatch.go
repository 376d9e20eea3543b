package deliverability

import (
	"context"
	"fmt"
	"log/slog"
	"strconv"
	"strings"
	"time"

	"github.com/google/uuid"
	"gorm.io/gorm"

	"herald/delivery"
	"herald/models"
	"herald/service/core"
)

// eventSQL writes the event queue's states into a statement: {pending}.
// States are written as literals, so that PostgreSQL can match the
// partial indexes on them.
var eventSQL = strings.NewReplacer("{pending}", models.EventPending.SQL()).Replace

// EventStore is the events queue as the dispatcher sees it
// (delivery.EventStore): claims by lease, the payloads built from the
// ledger, attempts recorded, and the failing-endpoint alerts.
type EventStore struct {
	db   *core.DB
	verp *delivery.VERP
	mail *Mail
	now  func() time.Time
	// FailingAfter is how long an endpoint fails before its account is
	// mailed (decisions.md 7: an hour).
	FailingAfter time.Duration
	// Keep is how long settled events and deliveries are kept (resend
	// works within it).
	Keep      time.Duration
	lastPrune time.Time
}

// NewEventDispatcher returns the dispatcher of this process over db,
// with its store, on the clock now.
func NewEventDispatcher(ctx context.Context, db *core.DB, bounces *Bounces, mail *Mail, hooks *EventWebhooks, now func() time.Time) (*delivery.Dispatcher, *EventStore, error) {
	verp, err := bounces.VERP(ctx)
	if err != nil {
		return nil, nil, err
	}
	st := &EventStore{db: db, verp: verp, mail: mail, now: now, FailingAfter: time.Hour, Keep: 7 * 24 * time.Hour}
	d := &delivery.Dispatcher{Store: st, Poster: hooks.poster, Worker: uuid.NewString(), Now: now, AfterTick: st.Housekeep}
	return d, st, nil
}

// DueWebhooks implements delivery.EventStore: enabled endpoints with
// pending events due at now.
func (st *EventStore) DueWebhooks(ctx context.Context, now time.Time, n int) ([]int64, error) {
	var ids []int64
	ms := now.UnixMilli()
	err := st.db.R.WithContext(ctx).Raw(eventSQL(`SELECT w.id FROM event_webhooks w WHERE w.enabled = 1 AND w.retry_at <= ? AND EXISTS (
		SELECT 1 FROM events e WHERE e.webhook_id = w.id AND e.state = {pending} AND e.id > w.cursor_id AND e.next_at <= ?) ORDER BY w.id LIMIT ?`), ms, ms, n).Scan(&ids).Error
	if err != nil {
		return ids, fmt.Errorf("event store: due webhooks: %w", err)
	}
	return ids, nil
}

type claimedEvent struct {
	ID            int64
	Kind          string
	Email         string
	URL           string `gorm:"column:url"`
	Reason        string
	Status        string
	GroupID       *int64
	Machine       *int
	SendMessageID *int64
	Attempts      int
	CreatedAt     models.Timestamp
	SendUtr       *string
	FromSender    *string
	SendGroup     *int64
	AutomationUtr *string
	SendIsMessage *int // 1: a single message's event, named by message_id alone
}

// Claim implements delivery.EventStore. The claim moves the rows' next_at
// one lease ahead with this worker's name: other processes skip them
// (SKIP LOCKED while the claim commits, next_at after), and a process
// that dies leaves them to come due again.
func (st *EventStore) Claim(ctx context.Context, webhookID int64, worker string, now time.Time, lease time.Duration, n int) (*delivery.EventBatch, error) {
	var w models.EventWebhook
	if err := st.db.R.WithContext(ctx).Where("id = ? AND enabled = 1 AND retry_at <= ?", webhookID, now.UnixMilli()).First(&w).Error; err != nil {
		return nil, ignoreMissing(err)
	}
	lock := st.db.SQL().SkipLocked()
	var ids []int64
	err := st.db.W.WithContext(ctx).Raw(eventSQL(`UPDATE events SET worker = ?, next_at = ? WHERE id IN (
		SELECT id FROM events WHERE webhook_id = ? AND state = {pending} AND id > ? AND next_at <= ? ORDER BY id LIMIT ?`)+lock+`) RETURNING id`,
		worker, now.Add(lease).UnixMilli(), webhookID, w.CursorID, now.UnixMilli(), n).Scan(&ids).Error
	if err != nil {
		return nil, fmt.Errorf("event store: claim events of webhook %d: %w", webhookID, err)
	}
	if len(ids) == 0 {
		return nil, nil
	}
	var rows []claimedEvent
	if err := st.db.W.WithContext(ctx).Raw(`SELECT e.id, e.kind, e.email, e.url, e.reason, e.status, e.group_id, e.machine, e.send_message_id, e.attempts, e.created_at,
		s.utr AS send_utr, s.message AS send_is_message, s.from_sender, s.unsubscribe_group_id AS send_group, a.utr AS automation_utr
		FROM events e LEFT JOIN single_sends s ON s.id = e.send_id LEFT JOIN automations a ON a.id = s.automation_id
		WHERE e.id IN ? ORDER BY e.id`, ids).Scan(&rows).Error; err != nil {
		return nil, fmt.Errorf("events: claim events of endpoint %d: %w", webhookID, err)
	}
	b := &delivery.EventBatch{WebhookID: w.ID, AccountID: w.UserID, URL: w.URL, Secret: w.Secret,
		IDs: make([]int64, 0, len(rows)), Events: make([]delivery.Event, 0, len(rows))}
	for _, r := range rows {
		b.IDs = append(b.IDs, r.ID)
		b.Events = append(b.Events, st.payload(&r))
		b.Attempts = max(b.Attempts, r.Attempts)
		if b.Oldest.IsZero() || r.CreatedAt.Before(b.Oldest) {
			b.Oldest = r.CreatedAt.Time
		}
	}
	return b, nil
}

// payload is the event object a receiver gets (decisions.md 7).
func (st *EventStore) payload(r *claimedEvent) delivery.Event {
	ev := delivery.Event{Event: r.Kind, EventID: strconv.FormatInt(r.ID, 10), Timestamp: r.CreatedAt.Unix(), Email: r.Email,
		URL: r.URL, Reason: r.Reason, Status: r.Status, GroupID: r.GroupID}
	if r.Machine != nil {
		machine := *r.Machine != 0
		ev.Machine = &machine
	}
	if r.AutomationUtr != nil {
		ev.AutomationUtr = *r.AutomationUtr
	} else if r.SendUtr != nil && (r.SendIsMessage == nil || *r.SendIsMessage == 0) {
		ev.SingleSendUtr = *r.SendUtr
	}
	if ev.GroupID == nil && r.SendGroup != nil && *r.SendGroup > 0 {
		ev.GroupID = r.SendGroup
	}
	if r.SendMessageID != nil && r.FromSender != nil && st.verp != nil {
		from := *r.FromSender
		domain := strings.ToLower(from[strings.LastIndexByte(from, '@')+1:])
		ev.MessageID = strings.Trim(st.verp.MessageID(*r.SendMessageID, domain), "<>")
	}
	return ev
}

// Finish implements delivery.EventStore: the attempt is kept among the
// endpoint's deliveries, and the rows this worker still holds are settled
// in the same transaction. A row another process reclaimed after this
// one's lease ran out is left to it (it will post it again: at least
// once).
func (st *EventStore) Finish(ctx context.Context, b *delivery.EventBatch, worker string, a delivery.EventAttempt, retryAt, giveUpBefore time.Time) error {
	at := models.NewTimestamp(a.At)
	first, last := b.IDs[0], b.IDs[len(b.IDs)-1]
	return st.db.W.WithContext(ctx).Transaction(func(tx *gorm.DB) error {
		d := models.EventDelivery{WebhookID: b.WebhookID, UserID: b.AccountID, FirstEventID: &first, LastEventID: &last, Events: len(b.IDs),
			StatusCode: a.StatusCode, Error: core.Truncate(a.Err, 500), LatencyMS: a.Latency.Milliseconds(), CreatedAt: at}
		if err := tx.Create(&d).Error; err != nil {
			return fmt.Errorf("events: record a delivery to endpoint %d: %w", b.WebhookID, err)
		}
		if a.OK() {
			if err := tx.Exec(eventSQL(`UPDATE events SET state = ?, worker = NULL, attempts = attempts + 1, delivered_at = ? WHERE id IN ? AND worker = ? AND state = {pending}`),
				models.EventDelivered, at, b.IDs, worker).Error; err != nil {
				return fmt.Errorf("events: mark delivered events of endpoint %d: %w", b.WebhookID, err)
			}
			// The cursor moves past the batch, unless a lower event is
			// pending and unclaimed (a batch another process gave back).
			// Events claimed by a process that dies are found again by
			// Housekeep's reset.
			if err := tx.Exec(eventSQL(`UPDATE event_webhooks SET cursor_id = ? WHERE id = ? AND cursor_id < ? AND NOT EXISTS (
				SELECT 1 FROM events e WHERE e.webhook_id = ? AND e.state = {pending} AND e.id > event_webhooks.cursor_id AND e.id < ? AND e.worker IS NULL)`),
				last, b.WebhookID, last, b.WebhookID, first).Error; err != nil {
				return fmt.Errorf("events: record the failure of endpoint %d: %w", b.WebhookID, err)
			}
			return tx.Exec("UPDATE event_webhooks SET failing_since = NULL, failure_alerted_at = NULL, retry_at = 0 WHERE id = ? AND (failing_since IS NOT NULL OR retry_at <> 0)", b.WebhookID).Error
		}
		// next_at goes back to 0: the endpoint's retry_at holds the backoff,
		// and the batch keeps its place before the later events.
		if err := tx.Exec(eventSQL(`UPDATE events SET state = CASE WHEN created_at < ? THEN ? ELSE {pending} END, worker = NULL, attempts = attempts + 1, next_at = 0
			WHERE id IN ? AND worker = ? AND state = {pending}`), models.NewTimestamp(giveUpBefore), models.EventFailed, b.IDs, worker).Error; err != nil {
			return fmt.Errorf("events: give up events of endpoint %d: %w", b.WebhookID, err)
		}
		// The endpoint's other events wait too: a failing endpoint is not
		// sent the rest of its queue meanwhile.
		return tx.Exec("UPDATE event_webhooks SET failing_since = COALESCE(failing_since, ?), retry_at = ?, cursor_id = CASE WHEN cursor_id < ? THEN cursor_id ELSE ? END WHERE id = ?",
			at, retryAt.UnixMilli(), first-1, first-1, b.WebhookID).Error
	})
}

// Housekeep runs after each dispatch pass: the failing-endpoint mails,
// and once a minute the pruning of settled events and old deliveries.
func (st *EventStore) Housekeep(ctx context.Context) {
	st.AlertFailing(ctx)
	now := st.now()
	if now.Sub(st.lastPrune) < time.Minute {
		return
	}
	st.lastPrune = now
	before := models.NewTimestamp(now.Add(-st.Keep))
	w := st.db.W.WithContext(ctx)
	for _, q := range []struct {
		sql  string
		args []any
	}{
		{"DELETE FROM events WHERE state <> {pending} AND created_at < ?", []any{before}},
		{"DELETE FROM event_deliveries WHERE created_at < ?", []any{before}},
		// The cursors go back to each endpoint's lowest pending event: the
		// claims of a process that died, resent events (a minute at most).
		{`UPDATE event_webhooks SET cursor_id = COALESCE((SELECT MIN(e.id) - 1 FROM events e WHERE e.webhook_id = event_webhooks.id AND e.state = {pending}), cursor_id)
			WHERE cursor_id > 0`, nil},
		// A disabled endpoint's events are never attempted: given up after 24 hours.
		{"UPDATE events SET state = ? WHERE state = {pending} AND created_at < ? AND webhook_id IN (SELECT id FROM event_webhooks WHERE enabled = 0)",
			[]any{models.EventFailed, models.NewTimestamp(now.Add(-delivery.EventGiveUp))}},
	} {
		if err := w.Exec(eventSQL(q.sql), q.args...).Error; err != nil {
			slog.Warn("events: prune", "err", err)
		}
	}
}

// AlertFailing mails the notification recipients of each account whose
// endpoint has failed for FailingAfter: once per failing period (a
// success ends the period), one process mailing it (a conditional
// update marks it first).
func (st *EventStore) AlertFailing(ctx context.Context) {
	now := st.now()
	var rows []struct {
		ID           int64
		UserID       int64
		URL          string `gorm:"column:url"`
		FailingSince models.Timestamp
	}
	err := st.db.W.WithContext(ctx).Raw(`UPDATE event_webhooks SET failure_alerted_at = ?
		WHERE failure_alerted_at IS NULL AND failing_since IS NOT NULL AND failing_since <= ? RETURNING id, user_id, url, failing_since`,
		models.NewTimestamp(now), models.NewTimestamp(now.Add(-st.FailingAfter))).Scan(&rows).Error
	if err != nil {
		slog.Warn("events: failing endpoints", "err", err)
		return
	}
	for _, r := range rows {
		var last models.EventDelivery
		_ = st.db.R.WithContext(ctx).Where("webhook_id = ?", r.ID).Order("id DESC").Limit(1).Find(&last).Error
		why := last.Error
		if why == "" && last.StatusCode != 0 {
			why = fmt.Sprintf("HTTP %d", last.StatusCode)
		}
		rowsOut := [][2]string{{"Endpoint", r.URL}, {"Failing since", r.FailingSince.UTC().Format("2006-01-02 15:04 MST")}, {"Last answer", why}}
		st.mail.Notify(ctx, r.UserID, "Event webhook failing: "+core.Truncate(r.URL, 80),
			"Herald has not been able to deliver events to this endpoint for more than an hour. Events are kept and retried for 24 hours "+
				"after they happen, then given up: check that the endpoint is up and answers 2xx.", rowsOut, st.mail.BaseURL+"/event-webhooks")
	}
}
