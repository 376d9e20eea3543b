package record

// Event rows (the event webhooks' queue): the kinds, which accounts want
// them, and the writes every area makes.

import (
	"fmt"
	"strings"
	"sync"
	"time"

	"gorm.io/gorm"

	"herald/models"
	"herald/service/core"
)

// The events an endpoint may ask for (decisions.md 7).
const (
	EventProcessed        = "processed"
	EventDelivered        = "delivered"
	EventDeferred         = "deferred"
	EventBounce           = "bounce"
	EventOpen             = "open"
	EventClick            = "click"
	EventSpamReport       = "spam_report"
	EventUnsubscribe      = "unsubscribe"
	EventGroupUnsubscribe = "group_unsubscribe"
)

// EventNames are the kinds of event, in the contract's order: the nine
// of the mail, then the sign-ups' two.
var EventNames = []string{EventProcessed, EventDelivered, EventDeferred, EventBounce, EventOpen, EventClick,
	EventSpamReport, EventUnsubscribe, EventGroupUnsubscribe, EventSubscribe, EventConfirm}

// Events writes event rows in the transaction of the change they report,
// one per endpoint of the account that is enabled and wants the kind. A
// cached list of the accounts with an enabled endpoint (refreshed every
// eventsCacheTTL, and at once on this process's own changes) keeps a send
// without endpoints from paying more than a map lookup.
type Events struct {
	DB     *core.DB
	mu     sync.Mutex
	with   map[int64]map[string]bool // account → kinds its enabled endpoints want
	loaded time.Time
}

// eventsCacheTTL is how stale the list of accounts with endpoints may be:
// an endpoint saved on another process gets events at most this late.
const eventsCacheTTL = 2 * time.Second

func (e *Events) Changed() {
	e.mu.Lock()
	e.loaded = time.Time{}
	e.mu.Unlock()
}

// Wanted reports whether an enabled endpoint of the account wants kind
// (cached). On a read error it answers yes: the INSERT … SELECT decides
// then.
func (e *Events) Wanted(accountID int64, kind string) bool {
	if e == nil {
		return false
	}
	e.mu.Lock()
	defer e.mu.Unlock()
	if time.Since(e.loaded) > eventsCacheTTL {
		var rows []struct {
			UserID int64
			Events string
		}
		if err := e.DB.R.Model(&models.EventWebhook{}).Select("user_id", "events").Where("enabled = 1").Scan(&rows).Error; err != nil {
			return true
		}
		e.with = make(map[int64]map[string]bool, len(rows))
		for _, r := range rows {
			if e.with[r.UserID] == nil {
				e.with[r.UserID] = map[string]bool{}
			}
			for _, k := range strings.Split(r.Events, ",") {
				e.with[r.UserID][k] = true
			}
		}
		e.loaded = time.Now()
	}
	return e.with[accountID][kind]
}

// EventExtra is what some kinds carry beyond the message.
type EventExtra struct {
	URL, Reason, Status string
	GroupID             *int64
	Machine             *bool // open, click: taken for a machine's
}

// wants is the condition on event_webhooks w that it takes kind.
const wantsKind = "w.enabled = 1 AND (',' || w.events || ',') LIKE ?"

func KindPattern(kind string) string { return "%," + kind + ",%" }

// Record writes kind's event about message m for the account's endpoints
// that want it, inside tx.
func (e *Events) Record(tx *gorm.DB, m *models.SendMessage, kind string, x EventExtra, at time.Time) error {
	if !e.Wanted(m.UserID, kind) {
		return nil
	}
	var sendID, msgID *int64
	if m.SendID != 0 {
		sendID = &m.SendID
	}
	if m.ID != 0 {
		msgID = &m.ID
	}
	var machine *int
	if x.Machine != nil {
		v := 0
		if *x.Machine {
			v = 1
		}
		machine = &v
	}
	err := tx.Exec(`INSERT INTO events (webhook_id, user_id, kind, send_id, send_message_id, email, url, reason, status, group_id, machine, state, attempts, next_at, created_at)
		SELECT w.id, w.user_id, ?, ?, ?, ?, ?, ?, ?, ?, ?, 0, 0, 0, ? FROM event_webhooks w WHERE w.user_id = ? AND `+wantsKind,
		kind, sendID, msgID, m.Email, core.Truncate(x.URL, MaxWebhookURL), core.Truncate(x.Reason, 1000), core.Truncate(x.Status, 16), x.GroupID, machine,
		models.NewTimestamp(at), m.UserID, KindPattern(kind)).Error
	if err != nil {
		return fmt.Errorf("events: record %s: %w", kind, err)
	}
	return nil
}

// RecordClaimed writes kind's event for each of the ledger rows ids that
// worker still holds (the delivered ones of a group commit, before they
// are marked), inside tx.
func (e *Events) RecordClaimed(tx *gorm.DB, accountID int64, kind string, ids []int64, worker string, at time.Time) error {
	return e.RecordRows(tx, accountID, kind, "m.id IN ? AND m.worker = ?", at, ids, worker)
}

// RecordRows writes kind's event for each ledger row m matching where
// (with args), inside tx.
func (e *Events) RecordRows(tx *gorm.DB, accountID int64, kind, where string, at time.Time, args ...any) error {
	if !e.Wanted(accountID, kind) {
		return nil
	}
	if err := tx.Exec(EventsOfClaimed("send_messages m WHERE "+where), append([]any{kind, models.NewTimestamp(at), KindPattern(kind)}, args...)...).Error; err != nil {
		return fmt.Errorf("events: record %s of ledger rows: %w", kind, err)
	}
	return nil
}

// EventsOfClaimed is the INSERT … SELECT of one event per ledger row of
// from (aliased m, with its WHERE) and endpoint; its arguments: kind,
// created_at, the kind's pattern, then from's.
func EventsOfClaimed(from string) string {
	return `INSERT INTO events (webhook_id, user_id, kind, send_id, send_message_id, email, state, attempts, next_at, created_at)
		SELECT w.id, w.user_id, ?, m.send_id, m.id, m.email, 0, 0, 0, ? FROM event_webhooks w JOIN ` +
		strings.Replace(from, " WHERE ", " ON m.user_id = w.user_id WHERE "+wantsKind+" AND ", 1)
}

// MaxWebhookURL is the longest endpoint address.
const MaxWebhookURL = 2048

// Sign-up events (decisions.md 10): a new contact from a form, and the
// confirmation of a double-opt-in one.
const (
	EventSubscribe = "subscribe"
	EventConfirm   = "confirm"
)
