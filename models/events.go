package models

import (
	"database/sql/driver"
	"fmt"
	"strconv"
	"strings"
)

// EventKinds is an endpoint's chosen kinds of event: stored as a comma
// list, written in JSON as an array.
type EventKinds []string

// Scan reads the comma list.
func (k *EventKinds) Scan(src any) error {
	var s string
	switch v := src.(type) {
	case string:
		s = v
	case []byte:
		s = string(v)
	case nil:
	default:
		return fmt.Errorf("models: EventKinds from %T", src)
	}
	*k = EventKinds{}
	for _, p := range strings.Split(s, ",") {
		if p = strings.TrimSpace(p); p != "" {
			*k = append(*k, p)
		}
	}
	return nil
}

// Value writes the comma list.
func (k EventKinds) Value() (driver.Value, error) { return strings.Join(k, ","), nil }

// GormDataType stores it as text.
func (EventKinds) GormDataType() string { return "string" }

// EventWebhook is an account's events endpoint (decisions.md 7). Secret
// signs every POST and is shown once, when the endpoint is saved.
type EventWebhook struct {
	ID               int64      `gorm:"primaryKey" json:"id"`
	UserID           int64      `json:"user_id"`
	URL              string     `gorm:"column:url" json:"url"`
	Events           EventKinds `json:"events"`
	Enabled          int        `json:"enabled"`
	Secret           string     `json:"-"`
	FailingSince     *Timestamp `json:"failing_since"`
	FailureAlertedAt *Timestamp `json:"-"`
	RetryAt          int64      `json:"-"`
	CursorID         int64      `json:"-"`
	CreatedAt        Timestamp  `json:"created_at"`
	UpdatedAt        Timestamp  `json:"updated_at"`
}

// TableName names the table.
func (EventWebhook) TableName() string { return "event_webhooks" }

// EventState is an event row's state in its webhook's queue.
type EventState int

// SQL is the state as it is written into a statement.
func (s EventState) SQL() string { return strconv.Itoa(int(s)) }

// States of an event row.
const (
	EventPending   EventState = 0
	EventDelivered EventState = 1
	EventFailed    EventState = 2
)

// Event is one event owed to one endpoint: the queue the dispatcher
// drains. Written in the transaction of the change it reports.
type Event struct {
	ID            int64      `gorm:"primaryKey" json:"id"`
	WebhookID     int64      `json:"webhook_id"`
	UserID        int64      `json:"user_id"`
	Kind          string     `json:"kind"`
	SendID        *int64     `json:"send_id"`
	SendMessageID *int64     `json:"send_message_id"`
	Email         string     `json:"email"`
	URL           string     `gorm:"column:url" json:"url"`
	Reason        string     `json:"reason"`
	Status        string     `json:"status"`
	GroupID       *int64     `json:"group_id"`
	State         int        `json:"state"`
	Attempts      int        `json:"attempts"`
	NextAt        int64      `json:"-"`
	Worker        *string    `json:"-"`
	CreatedAt     Timestamp  `json:"created_at"`
	DeliveredAt   *Timestamp `json:"delivered_at"`
}

// TableName names the table.
func (Event) TableName() string { return "events" }

// EventDelivery is one POST to an endpoint and how it went.
type EventDelivery struct {
	ID           int64     `gorm:"primaryKey" json:"id"`
	WebhookID    int64     `json:"webhook_id"`
	UserID       int64     `json:"user_id"`
	FirstEventID *int64    `json:"first_event_id"`
	LastEventID  *int64    `json:"last_event_id"`
	Events       int       `json:"events"`
	StatusCode   int       `json:"status_code"`
	Error        string    `json:"error"`
	LatencyMS    int64     `gorm:"column:latency_ms" json:"latency_ms"`
	CreatedAt    Timestamp `json:"created_at"`
}

// TableName names the table.
func (EventDelivery) TableName() string { return "event_deliveries" }

// RowID is the list key.
func (w *EventWebhook) RowID() int64 { return w.ID }
