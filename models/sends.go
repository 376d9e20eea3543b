package models

import "strconv"

// TargetKind is what an audience item names: a contact type or a
// segment. It is the prefix of a recipient id ("contacts_3") and the
// stored table of a target or an automation.
type TargetKind string

// The kinds of audience.
const (
	TargetContacts TargetKind = "contacts_"
	TargetSegments TargetKind = "segments_"
)

// Of is the recipient id of the kind's item id ("contacts_3").
func (k TargetKind) Of(id int64) string { return string(k) + strconv.FormatInt(id, 10) }

// Target is one item of a single send's recipient_id or
// exclude_specific_recipient_id: Table is the kind, ID the contact type's
// or segment's id as text.
type Target struct {
	ID    string     `json:"id"`
	Table TargetKind `json:"table"`
}

// ItemID is the id of the contact type or segment the target names (0
// when it is not a number).
func (t Target) ItemID() int64 {
	id, _ := strconv.ParseInt(t.ID, 10, 64)
	return id
}

// RecipientID is the target as a recipient id ("segments_4").
func (t Target) RecipientID() string { return string(t.Table) + t.ID }

// SingleSend is a one-off campaign. The fields after UpdatedAt are the
// engine's and stay out of the API's answers.
type SingleSend struct {
	ID                         int64       `gorm:"primaryKey" json:"id"`
	UserID                     int64       `json:"user_id"`
	TemplateID                 int64       `json:"template_id"`
	RecipientID                Targets     `json:"recipient_id"`
	ExcludeSpecificRecipientID Targets     `json:"exclude_specific_recipient_id"`
	SenderID                   int64       `json:"sender_id"`
	UnsubscribeGroupID         int64       `json:"unsubscribe_group_id"`
	SingleSendName             string      `json:"single_send_name"`
	FromSender                 string      `json:"from_sender"`
	ReplyTo                    string      `json:"reply_to"`
	SenderName                 *string     `json:"sender_name"`
	SenderAddress              *string     `json:"sender_address"`
	Subject                    string      `json:"subject"`
	Preheader                  string      `json:"preheader"`
	ScheduleType               int         `json:"schedule_type"`
	ScheduleDate               string      `json:"schedule_date"`
	ScheduleTime               string      `json:"schedule_time"`
	Status                     SendStatus  `json:"status"`
	Utr                        string      `json:"utr"`
	TemplateJSON               *string     `json:"template_json"`
	TemplateHTML               *string     `json:"template_html"`
	Triggered                  int64       `json:"triggered"`
	Delivered                  int64       `json:"delivered"`
	UniqueOpens                int64       `json:"unique_opens"`
	TotalOpens                 int64       `json:"total_opens"`
	UniqueClicks               int64       `json:"unique_clicks"`
	TotalClicks                int64       `json:"total_clicks"`
	Bounces                    int64       `json:"bounces"`
	Unsubscribes               int64       `json:"unsubscribes"`
	Blocks                     int64       `json:"blocks"`       // beyond the spec (decisions.md 8): messages the relay refused by policy
	SoftBounces                int64       `json:"soft_bounces"` // beyond the spec (decisions.md 7): messages reported soft-bounced, once each
	SpamReports                int64       `json:"spam_reports"` // beyond the spec (decisions.md 7): messages reported as spam, once each
	UniqueOpenToken            JSONText    `json:"unique_open_token"`
	SentAt                     DateTime    `json:"sent_at"`
	CreatedAt                  Timestamp   `json:"created_at"`
	UpdatedAt                  Timestamp   `json:"updated_at"`
	Armed                      int         `json:"-"`
	SendAfter                  *Timestamp  `json:"-"`
	Resolved                   int         `json:"-"`
	Links                      StringArray `json:"-"`
	CompletedAt                *Timestamp  `json:"-"`
	AutomationID               *int64      `json:"-"` // set on the rows that carry an automation step
	DeletedAt                  *Timestamp  `json:"-"` // deleted: kept for the links of its mails, out of every list
	// When the hard-bounce and complaint rate alerts of the send were
	// mailed (decisions.md 7: once per send).
	BounceAlertedAt    *Timestamp `json:"-"`
	ComplaintAlertedAt *Timestamp `json:"-"`
	// Messages that could not be built (or sent at all), with the first
	// and the last reason: the send's own failures, never the recipients'.
	Failures     int64  `json:"-"`
	FirstFailure string `json:"-"`
	LastFailure  string `json:"-"`
	// LastBlock is the relay's last refusal counted in Blocks.
	LastBlock string `json:"-"`
	// BlockStreak counts the blocks since a delivery was last recorded
	// (StreakDelivered is Delivered when the last block was counted); the
	// pause rule reads it.
	BlockStreak     int64 `json:"-"`
	StreakDelivered int64 `json:"-"`
	// PausedAt is set while the send is paused after repeated blocks (its
	// status stays 2; the engine claims none of its messages), with the
	// relay's reply that paused it.
	PausedAt    *Timestamp `json:"-"`
	PauseReason string     `json:"-"`
	// The human counters: the opens and clicks of the counters
	// above that a person made, not a privacy proxy or a link scanner
	// (delivery.MachineRules). Console only: the API answers keep the
	// spec's fields.
	HumanUniqueOpens  int64 `json:"-"`
	HumanTotalOpens   int64 `json:"-"`
	HumanUniqueClicks int64 `json:"-"`
	HumanTotalClicks  int64 `json:"-"`
	// Local-time delivery (console only): LocalTime "15:04" sends
	// each recipient's message at that clock time in its zone, read from the
	// custom field LocalZoneField when set; LocalBase (Unix ms) is the
	// instant the waves count from, fixed at resolution.
	LocalTime      string `json:"-"`
	LocalZoneField string `json:"-"`
	LocalBase      int64  `json:"-"`
	// An A/B subject test (console only): ABSubjects (2 to 4,
	// with ABPreheaders, "" for the send's own) tried on ABShare per cent
	// of the audience; after ABWait minutes (at ABDecideAt, Unix ms, fixed
	// at resolution) the variant with the most human unique opens
	// ("opens") or clicks ("clicks", ABMetric) wins (ties: the raw counts,
	// then the first; ABWinner, 1-based; 0 not yet) and goes to the rest.
	ABSubjects   StringArray `json:"-" gorm:"column:ab_subjects"`
	ABPreheaders StringArray `json:"-" gorm:"column:ab_preheaders"`
	ABShare      int         `json:"-" gorm:"column:ab_share"`
	ABMetric     string      `json:"-" gorm:"column:ab_metric"`
	ABWait       int         `json:"-" gorm:"column:ab_wait"`
	ABDecideAt   int64       `json:"-" gorm:"column:ab_decide_at"`
	ABWinner     int         `json:"-" gorm:"column:ab_winner"`
	ABReleased   int         `json:"-" gorm:"column:ab_released"` // 1 once the rest is released to the winner
	// ABDesigns are the variants' own designs (HTML, by variant; "" or
	// missing: the send's design): a test of content, not only subjects.
	ABDesigns StringArray `json:"-" gorm:"column:ab_designs"`
	// ABTimeAfter (minutes; 0 none) makes the test one of send time: half
	// of the audience (variant 1) when the send starts, the other half
	// (variant 2) this long after; ABWait after that, the half with more
	// opens or clicks by people is marked the better (ABWinner).
	ABTimeAfter int `json:"-" gorm:"column:ab_time_after"`

	// Archive (beyond the spec, decisions.md 10): 1 shows the send, once
	// sent, in the account's public archive. In records it follows the
	// spec's fields.
	Archive int `json:"archive"`
	// Waiting (beyond the spec, decisions.md 11) is, for a running send
	// whose From domain follows a warm-up plan, how many of its queued
	// messages are beyond what is left of today's cap: they wait for a
	// later day. Not stored: read with the record.
	Waiting int64 `json:"waiting" gorm:"-"`

	// A single message (decisions.md 11, POST api/mail/send): Message 1
	// makes the row a send of one address, out of every list of sends;
	// MessageData is the JSON object of its ((key)) values; IdempotencyKey
	// is the caller's key, unique per account.
	Message        int     `json:"-"`
	MessageData    string  `json:"-"`
	IdempotencyKey *string `json:"-"`

	// ResendOf (console only) makes the send a resend of the completed
	// send it names: its audience is that send's recipients who were
	// delivered and did not open or click as a person, read when it
	// starts; nil for any other send.
	ResendOf *int64 `json:"-"`
}

// TableName names the table.
func (SingleSend) TableName() string { return "single_sends" }

// RowID is the row's id.
func (s *SingleSend) RowID() int64 { return s.ID }

// SendStatus is a single send's status (api.md, States).
type SendStatus int

// Single send statuses (api.md, States).
const (
	SendInitiate  SendStatus = 0
	SendReady     SendStatus = 1
	SendRunning   SendStatus = 2
	SendCompleted SendStatus = 3
)

// SendMessage is one row of the send ledger: one address of one send.
type SendMessage struct {
	ID             int64        `gorm:"primaryKey" json:"id"`
	SendID         int64        `json:"send_id"`
	UserID         int64        `json:"user_id"`
	ContactID      *int64       `json:"contact_id"`
	Email          string       `json:"email"`
	FirstName      string       `json:"first_name"`
	LastName       string       `json:"last_name"`
	State          MessageState `json:"state"`
	Attempts       int          `json:"attempts"`
	NextAt         int64        `json:"next_at"`
	ReleaseAt      int64        `json:"-"` // a local-time send's release time for the row's zone (Unix ms); 0 otherwise
	Variant        int          `json:"-"` // an A/B test's variant (1-based); 0 none, or held back until the winner is chosen
	Worker         *string      `json:"-"`
	Error          string       `json:"error"`
	SentAt         *Timestamp   `json:"sent_at"`
	OpenedAt       *Timestamp   `json:"opened_at"`
	ClickedAt      *Timestamp   `json:"clicked_at"`
	UnsubscribedAt *Timestamp   `json:"unsubscribed_at"`
	// When an open and a click were last counted in the send's totals
	// (Unix ms): each counts at most once a minute.
	OpenCountedAt  int64 `json:"-"`
	ClickCountedAt int64 `json:"-"`
	// When a report about the message was first counted, per kind
	// (decisions.md 7: a repeated report counts once).
	HardBouncedAt *Timestamp `json:"-"`
	SoftBouncedAt *Timestamp `json:"-"`
	ComplainedAt  *Timestamp `json:"-"`
	// A person's first open and click, and when a human open and click
	// last counted (Unix ms, 0 never); the last click of any kind and its
	// link; the statistics row of the last human click (taken back when a
	// second link follows within 2 s).
	HumanOpenedAt       int64  `json:"-"`
	HumanClickedAt      int64  `json:"-"`
	HumanOpenCountedAt  int64  `json:"-"`
	HumanClickCountedAt int64  `json:"-"`
	LastClickAt         int64  `json:"-"`
	LastClickLink       int    `json:"-"`
	HumanClickEvent     *int64 `json:"-"`
}

// TableName names the table.
func (SendMessage) TableName() string { return "send_messages" }

// RowID is the row's id.
func (m *SendMessage) RowID() int64 { return m.ID }

// MessageState is a ledger row's state.
type MessageState int

// SQL is the state as it is written into a statement.
func (s MessageState) SQL() string { return strconv.Itoa(int(s)) }

// Ledger states of a SendMessage.
const (
	MessageQueued    MessageState = 0
	MessageClaimed   MessageState = 1
	MessageDelivered MessageState = 2
	MessageBounced   MessageState = 3
	MessageSkipped   MessageState = 4
	// MessageBlocked: the relay refused it by policy (the sender, the
	// content, a 5.7.x code). The address is not suppressed; resuming a
	// paused send queues these again.
	MessageBlocked MessageState = 5
	// MessageFailed: it could not be built (or herald could not put it on
	// the wire): a failure of the send, never of the recipient.
	MessageFailed MessageState = 6
)

// Suppression is an address that bounced for good; later sends of the
// account leave it out until it is lifted.
type Suppression struct {
	ID         int64     `gorm:"primaryKey" json:"id"`
	UserID     int64     `json:"user_id"`
	Email      string    `json:"email"`
	Reason     string    `json:"reason"`
	SendID     *int64    `json:"send_id"`
	StatusCode string    `json:"status_code"` // enhanced status code of the report, "5.1.1"
	Diagnostic string    `json:"diagnostic"`  // the remote server's words
	Source     string    `json:"source"`      // smtp (refused during the send), dsn, arf, text, ses, sendgrid, postmark, mailgun, soft (the soft-bounce limit)
	ReasonCode string    `json:"reason_code"` // the verdict's reason (userunknown, hostunknown, …; mailboxfull … for the soft-bounce limit); "" before it was kept
	CreatedAt  Timestamp `json:"created_at"`
}

// LiftedSuppression is a suppression the repair of the bounce rules
// lifted (migration 00036): herald once suppressed addresses for failures
// that did not say the mailbox was gone, and the one verdict rule, reading
// each again, would not have. It keeps what the suppression said and how
// it reads now.
type LiftedSuppression struct {
	ID           int64     `gorm:"primaryKey" json:"id"`
	UserID       int64     `json:"user_id"`
	Email        string    `json:"email"`
	Reason       string    `json:"reason"` // the suppression's reason, as it was stored
	SendID       *int64    `json:"send_id"`
	StatusCode   string    `json:"status_code"`
	Diagnostic   string    `json:"diagnostic"`
	Source       string    `json:"source"`
	ReasonCode   string    `json:"reason_code"`   // the verdict's reason now (rejected, blocked, onhold, …)
	Kind         string    `json:"kind"`          // the verdict's kind now: soft_bounce, block or deferral
	SuppressedAt Timestamp `json:"suppressed_at"` // when the suppression was made
	LiftedAt     Timestamp `json:"lifted_at"`
}

// TableName names the table.
func (LiftedSuppression) TableName() string { return "lifted_suppressions" }

// RowID is the row's id.
func (l *LiftedSuppression) RowID() int64 { return l.ID }

// Feedback is one report handled for an account: a hard or soft bounce, a
// complaint, or a mailto: unsubscribe, with what it said and where it came
// from (the console's bounces and complaints page).
type Feedback struct {
	ID         int64     `gorm:"primaryKey" json:"id"`
	UserID     int64     `json:"user_id"`
	SendID     *int64    `json:"send_id"`
	MessageID  *int64    `json:"message_id"` // the ledger row
	Email      string    `json:"email"`
	Kind       string    `json:"kind"` // hard_bounce, soft_bounce, block, deferral, complaint, unsubscribe
	StatusCode string    `json:"status_code"`
	Diagnostic string    `json:"diagnostic"`
	Source     string    `json:"source"`
	ReasonCode string    `json:"reason_code"` // the verdict's reason (userunknown, blocked, feedback, …)
	CreatedAt  Timestamp `json:"created_at"`
}

// TableName names the table.
func (Feedback) TableName() string { return "feedback" }

// RowID is the row's id.
func (f *Feedback) RowID() int64 { return f.ID }

// TableName names the table.
func (Suppression) TableName() string { return "suppressions" }

// RowID is the row's id.
func (s *Suppression) RowID() int64 { return s.ID }
