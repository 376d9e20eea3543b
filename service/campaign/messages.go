package campaign

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/google/uuid"
	"gorm.io/gorm"
	"gorm.io/gorm/clause"

	"herald/delivery"
	"herald/models"
	"herald/service/core"
	"herald/service/deliverability"
	"herald/service/engine"
	"herald/service/internal/record"
)

// Messages sends single messages (decisions.md 11, POST api/mail/send):
// one address, at once, ahead of campaign traffic. A message is a send of
// one: a single_sends row marked message (out of every list of sends) and
// its one ledger row in the messages' lane, which every process's engine
// claims before campaign rows. So it is tracked, signed, given its VERP
// return path and judged by the one verdict rule like every other mail.
type Messages struct {
	db      *core.DB
	now     func() time.Time
	engine  *engine.Signals
	events  *record.Events
	bounces *deliverability.Bounces // the VERP: a message's id is its Message-ID
	designs *Designs
}

// MessageInput is a single message as the API takes it.
type MessageInput struct {
	SenderID     string
	To           string
	Subject      string
	TemplateID   string // one of the account's designs
	TemplateHTML string
	// Data fills the ((key)) placeholders of the subject and the body.
	Data map[string]string
	// DataNotObject: data came as a plain value, not an object.
	DataNotObject  bool
	IdempotencyKey string
}

// MessageSent is what a send answers: the message's id, which is its
// Message-ID (without brackets) and the message_id of its events.
type MessageSent struct {
	ID string
}

// Limits of a single message (decisions.md 8 and the single sends').
const (
	maxIdempotencyKey = 255
	maxDataKeys       = 100
	maxDataBytes      = 64 << 10
	// idempotencyWindow is how long a key answers its first message.
	idempotencyWindow = 24 * time.Hour
)

// MsgSuppressed refuses a message to an address that hard-bounced or
// complained (decisions.md 11).
const MsgSuppressed = "The address is suppressed."

var errSuppressed = &core.Error{Code: core.CodeConflict, Message: MsgSuppressed}

// check validates the body and fills the message's send.
func (s *Messages) check(ctx context.Context, accountID int64, in MessageInput) (*models.SingleSend, string, error) {
	p := core.Problems{}
	// The starred parameters first: a body missing one of them is answered
	// with exactly those (api.md, VAL), as every endpoint's empty body is;
	// the choice of template is asked for once they are there.
	starred := true
	for _, f := range [][2]string{{"sender_id", in.SenderID}, {"to", in.To}, {"subject", in.Subject}} {
		if strings.TrimSpace(f[1]) == "" {
			p.Required(f[0], f[1])
			starred = false
		}
	}
	ss := &models.SingleSend{UserID: accountID, ScheduleDate: "0000-00-00", ScheduleTime: "00:00:00", UniqueOpenToken: "{}",
		TemplateID: 1, Message: 1, RecipientID: models.Targets{}, ExcludeSpecificRecipientID: models.Targets{}, Links: models.StringArray{}}
	if strings.TrimSpace(in.SenderID) != "" {
		if err := sendFrom(ctx, s.db.R, p, accountID, in.SenderID, ss); err != nil {
			return nil, "", fmt.Errorf("messages: check: %w", err)
		}
	}
	to := ""
	if strings.TrimSpace(in.To) != "" {
		var ok bool
		if to, ok = core.NormalizeEmail(in.To); !ok {
			p.AddReason("to", core.ReasonEmail, core.MsgEmail("to"))
		}
	}
	subject := strings.TrimSpace(in.Subject)
	if subject != "" {
		p.MaxLen("subject", subject, maxSendName)
		p.SingleLine("subject", in.Subject) // it becomes a header (decisions.md 8)
	}
	ss.Subject = subject

	html := in.TemplateHTML
	switch {
	case strings.TrimSpace(in.TemplateID) != "":
		id, err := core.ParseID(in.TemplateID)
		var d *models.Design
		if err == nil {
			d, err = s.designs.Get(ctx, accountID, id)
		}
		switch {
		case core.IsNotFound(err):
			p.InvalidChoice("template_id")
		case err != nil:
			return nil, "", fmt.Errorf("messages: check: %w", err)
		default:
			if strings.TrimSpace(html) == "" {
				html = d.TemplateHTML
			}
		}
	case strings.TrimSpace(html) == "" && starred:
		p.AddReason("template_html", core.ReasonRequiredIf, "The template html field is required when template id is not present.")
	}
	if len(html) > maxDesignBytes {
		p.AddReason("template_html", core.ReasonMax, "The design may not be greater than 5 MB.")
	}
	p.NoNUL("template_html", html)
	if html != "" {
		ss.TemplateHTML = &html
	}

	raw, err := checkData(p, in.Data, in.DataNotObject)
	if err != nil {
		return nil, "", fmt.Errorf("messages: check: %w", err)
	}
	ss.MessageData = string(raw)

	if key := strings.TrimSpace(in.IdempotencyKey); key != "" {
		p.MaxLen("idempotency_key", key, maxIdempotencyKey)
		p.NoNUL("idempotency_key", key)
		ss.IdempotencyKey = &key
	}
	if err := p.Err(); err != nil {
		return nil, "", err
	}
	ss.SingleSendName = "Message to " + to
	return ss, to, nil
}

// Send validates a single message, refuses a suppressed address and
// queues the message in the lane, then wakes this process's engine: it
// leaves at once, ahead of campaign traffic. A repeated idempotency key
// within 24 hours answers the first message's id and sends nothing more
// (a unique index per account decides, so concurrent calls and processes
// agree). Errors: validation; conflict (MsgSuppressed, answered 422).
func (s *Messages) Send(ctx context.Context, accountID int64, in MessageInput) (*MessageSent, error) {
	ss, to, err := s.check(ctx, accountID, in)
	if err != nil {
		return nil, fmt.Errorf("messages: send: %w", err)
	}
	verp, err := s.bounces.VERP(ctx)
	if err != nil {
		return nil, fmt.Errorf("messages: send: %w", err)
	}
	if ss.IdempotencyKey != nil {
		// Answered before the suppression check: a repeated call answers
		// what the first one did.
		if id, ok, err := s.byKey(ctx, s.db.R.WithContext(ctx), verp, accountID, *ss.IdempotencyKey); err != nil || ok {
			return id, err
		}
	}
	suppressed, err := s.suppressed(ctx, accountID, to)
	if err != nil {
		return nil, fmt.Errorf("messages: send: %w", err)
	}
	if suppressed {
		return nil, errSuppressed
	}
	now := models.NewTimestamp(s.now())
	ss.Utr, ss.CreatedAt, ss.UpdatedAt = uuid.NewString(), now, now
	// Resolved and completed from the start: no scheduler round takes the
	// send; its one ledger row is the lane's.
	ss.Status, ss.Resolved, ss.Triggered = models.SendCompleted, 1, 1
	var out *MessageSent
	err = s.db.W.WithContext(ctx).Transaction(func(tx *gorm.DB) error {
		out = nil
		if ss.IdempotencyKey != nil {
			// A key older than the window is free again.
			if err := tx.Exec("UPDATE single_sends SET idempotency_key = NULL WHERE user_id = ? AND idempotency_key = ? AND created_at < ?",
				accountID, *ss.IdempotencyKey, models.NewTimestamp(now.Time.Add(-idempotencyWindow))).Error; err != nil {
				return fmt.Errorf("messages: free an old idempotency key: %w", err)
			}
		}
		ss.ID = 0
		res := tx.Clauses(clause.OnConflict{DoNothing: true}).Create(ss)
		if res.Error != nil {
			return fmt.Errorf("messages: save a message: %w", res.Error)
		}
		if res.RowsAffected == 0 {
			// Another call with the key won (on PostgreSQL this waited for
			// its commit): its message is the answer.
			id, ok, err := s.byKey(ctx, tx, verp, accountID, *ss.IdempotencyKey)
			if err != nil {
				return err
			}
			if !ok {
				return fmt.Errorf("messages: idempotency key %q: no message after a conflict", *ss.IdempotencyKey)
			}
			out = id
			return nil
		}
		var rowID int64
		if err := tx.Raw(`INSERT INTO send_messages (send_id, user_id, email, state, attempts, next_at, error, lane)
			VALUES (?, ?, ?, 0, 0, 0, '', 1) RETURNING id`, ss.ID, accountID, to).Scan(&rowID).Error; err != nil {
			return fmt.Errorf("messages: queue a message: %w", err)
		}
		m := models.SendMessage{ID: rowID, SendID: ss.ID, UserID: accountID, Email: to}
		if err := s.events.Record(tx, &m, record.EventProcessed, record.EventExtra{}, now.Time); err != nil {
			return err
		}
		out = &MessageSent{ID: messageID(verp, rowID, ss.FromSender)}
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("messages: send: %w", err)
	}
	s.engine.WakeLane()
	return out, nil
}

// byKey finds the message of an idempotency key within its window.
func (s *Messages) byKey(ctx context.Context, q *gorm.DB, verp *delivery.VERP, accountID int64, key string) (*MessageSent, bool, error) {
	var row struct {
		ID         int64
		FromSender string
	}
	err := q.Raw(`SELECT m.id, s.from_sender FROM single_sends s JOIN send_messages m ON m.send_id = s.id
		WHERE s.user_id = ? AND s.idempotency_key = ? AND s.created_at >= ? ORDER BY m.id LIMIT 1`,
		accountID, key, models.NewTimestamp(s.now().Add(-idempotencyWindow))).Scan(&row).Error
	if err != nil {
		return nil, false, fmt.Errorf("messages: find idempotency key: %w", err)
	}
	if row.ID == 0 {
		return nil, false, nil
	}
	return &MessageSent{ID: messageID(verp, row.ID, row.FromSender)}, true, nil
}

// suppressed reports whether the address hard-bounced (it is on the
// suppression list) or complained and is still a global unsubscriber.
// Other unsubscribes do not stop a single message: it is not marketing.
func (s *Messages) suppressed(ctx context.Context, accountID int64, email string) (bool, error) {
	var n int64
	err := s.db.R.WithContext(ctx).Raw(`SELECT
		(SELECT COUNT(*) FROM suppressions WHERE user_id = ? AND email = ?) +
		(SELECT COUNT(*) FROM feedback f WHERE f.user_id = ? AND f.email = ? AND f.kind = ?
			AND EXISTS (SELECT 1 FROM unsubscribers u WHERE u.user_id = ? AND u.email_address = ? AND u.unsubscribe_groups_id IS NULL))`,
		accountID, email, accountID, email, record.FeedbackComplaint, accountID, email).Scan(&n).Error
	if err != nil {
		return false, fmt.Errorf("messages: suppressed address: %w", err)
	}
	return n > 0, nil
}

// messageID is the id of ledger row id's message: its Message-ID without
// the brackets, on the sender's domain.
func messageID(verp *delivery.VERP, id int64, from string) string {
	domain := strings.ToLower(from[strings.LastIndexByte(from, '@')+1:])
	return strings.Trim(verp.MessageID(id, domain), "<>")
}

// MessageRow is one single message as the console lists it, with its
// outcome.
type MessageRow struct {
	ID        string
	To        string
	Subject   string
	CreatedAt time.Time
	SentAt    *time.Time
	Outcome   MessageOutcome
	Error     string // the relay's refusal or the failure, when there is one
	Opened    bool
	Clicked   bool
}

// MessageOutcome is what became of a single message.
type MessageOutcome string

// The outcomes of a single message.
const (
	OutcomeQueued     MessageOutcome = "queued"
	OutcomeSending    MessageOutcome = "sending"
	OutcomeRetrying   MessageOutcome = "retrying"
	OutcomeDelivered  MessageOutcome = "delivered"
	OutcomeBounced    MessageOutcome = "bounced"
	OutcomeBlocked    MessageOutcome = "blocked"
	OutcomeFailed     MessageOutcome = "failed"
	OutcomeComplained MessageOutcome = "complained"
)

// maxRecentMessages is how many messages the console lists.
const maxRecentMessages = 100

// Recent lists the account's latest single messages, newest first (at most
// 100), with their outcome.
func (s *Messages) Recent(ctx context.Context, accountID int64) ([]MessageRow, error) {
	var rows []struct {
		ID            int64
		FromSender    string
		Subject       string
		Email         string
		State         models.MessageState
		Attempts      int
		Error         string
		CreatedAt     models.Timestamp
		SentAt        *models.Timestamp
		OpenedAt      *models.Timestamp
		ClickedAt     *models.Timestamp
		HardBouncedAt *models.Timestamp
		ComplainedAt  *models.Timestamp
	}
	err := s.db.R.WithContext(ctx).Raw(`SELECT m.id, s.from_sender, s.subject, m.email, m.state, m.attempts, m.error, s.created_at,
		m.sent_at, m.opened_at, m.clicked_at, m.hard_bounced_at, m.complained_at
		FROM single_sends s JOIN send_messages m ON m.send_id = s.id
		WHERE s.user_id = ? AND s.message = 1 ORDER BY s.id DESC LIMIT ?`, accountID, maxRecentMessages).Scan(&rows).Error
	if err != nil {
		return nil, fmt.Errorf("messages: recent: %w", err)
	}
	verp, err := s.bounces.VERP(ctx)
	if err != nil {
		return nil, fmt.Errorf("messages: recent: %w", err)
	}
	out := make([]MessageRow, len(rows))
	for i, r := range rows {
		m := MessageRow{ID: messageID(verp, r.ID, r.FromSender), To: r.Email, Subject: r.Subject, CreatedAt: r.CreatedAt.Time,
			Opened: r.OpenedAt != nil, Clicked: r.ClickedAt != nil}
		if r.SentAt != nil {
			t := r.SentAt.Time
			m.SentAt = &t
		}
		switch r.State {
		case models.MessageQueued:
			m.Outcome = OutcomeQueued
			if r.Attempts > 0 {
				m.Outcome, m.Error = OutcomeRetrying, r.Error
			}
		case models.MessageClaimed:
			m.Outcome = OutcomeSending
		case models.MessageDelivered:
			m.Outcome = OutcomeDelivered
		case models.MessageBounced:
			m.Outcome, m.Error = OutcomeBounced, r.Error
		case models.MessageBlocked:
			m.Outcome, m.Error = OutcomeBlocked, r.Error
		default:
			m.Outcome, m.Error = OutcomeFailed, r.Error
		}
		// A report after the relay's 250 says more than the ledger's state.
		switch {
		case r.ComplainedAt != nil:
			m.Outcome = OutcomeComplained
		case r.HardBouncedAt != nil:
			m.Outcome = OutcomeBounced
		}
		if !utf8.ValidString(m.Error) {
			m.Error = strings.ToValidUTF8(m.Error, "?")
		}
		out[i] = m
	}
	return out, nil
}

// checkData checks the data of a single message or an automation trigger
// (an object of strings: at most maxDataKeys keys and maxDataBytes, no
// NUL) into p, and returns it as a JSON object with blank keys left out.
func checkData(p core.Problems, in map[string]string, notObject bool) (string, error) {
	if notObject {
		p.Add("data", "The data must be an object.")
	}
	if len(in) > maxDataKeys && !p.Has("data") {
		p.AddReason("data", core.ReasonMax, fmt.Sprintf("The data may not have more than %d items.", maxDataKeys))
	}
	data := map[string]string{}
	size := 0
	for k, v := range in {
		size += len(k) + len(v)
		if k = strings.TrimSpace(k); k != "" {
			data[k] = v
		}
		if strings.ContainsRune(k+v, 0) && !p.Has("data") {
			p.AddReason("data", core.ReasonNUL, "The data must not contain NUL characters.")
		}
	}
	if size > maxDataBytes && !p.Has("data") {
		p.AddReason("data", core.ReasonMax, "The data may not be greater than 64 kilobytes.")
	}
	raw, err := json.Marshal(data)
	if err != nil {
		return "", fmt.Errorf("encode data: %w", err)
	}
	return string(raw), nil
}
