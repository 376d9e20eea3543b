package deliverability

import (
	"bytes"
	"context"
	"fmt"
	"mime"
	"net/mail"
	"strings"

	"gorm.io/gorm"

	"herald/models"
	"herald/service/core"
)

// Outbox stores the messages of the built-in outbox transport and lists
// them for the console. Each message belongs to the account named in the
// context of its send (WithAccount); 0 when none was.
type Outbox struct{ db *core.DB }

// NewOutbox is the outbox over db (the transport of the outbox keeps its
// mail there).
func NewOutbox(db *core.DB) *Outbox { return &Outbox{db: db} }

// SaveOutbox stores one message (it implements delivery.OutboxStore).
func (o *Outbox) SaveOutbox(ctx context.Context, from string, to []string, msg []byte) error {
	subject := ""
	if m, err := mail.ReadMessage(bytes.NewReader(msg)); err == nil {
		subject = m.Header.Get("Subject")
		if dec, err := new(mime.WordDecoder).DecodeHeader(subject); err == nil {
			subject = dec
		}
	}
	row := &models.OutboxMessage{
		UserID: core.AccountFrom(ctx), MailFrom: from, RcptTo: strings.Join(to, ", "), Subject: subject,
		Message: msg, CreatedAt: models.NewTimestamp(o.db.Now()),
	}
	if err := o.db.W.WithContext(context.WithoutCancel(ctx)).Create(row).Error; err != nil {
		return fmt.Errorf("outbox: keep a message: %w", err)
	}
	return nil
}

// Each calls fn for the account's outbox messages, newest first, without
// their bodies.
func (o *Outbox) Each(ctx context.Context, accountID int64, f core.ListFilter, fn func(*models.OutboxMessage) error) error {
	f.Newest = true // the mail just sent is the one looked for
	return core.Each(ctx, f, "", func() *gorm.DB {
		q := o.db.R.Model(&models.OutboxMessage{}).Select("id", "user_id", "mail_from", "rcpt_to", "subject", "created_at").Where("user_id = ?", accountID)
		if f.Search != "" {
			pat := core.LikePattern(strings.ToLower(strings.TrimSpace(f.Search)))
			q = q.Where(`(LOWER(rcpt_to) LIKE ? ESCAPE '\' OR LOWER(subject) LIKE ? ESCAPE '\')`, pat, pat)
		}
		return q
	}, func(m *models.OutboxMessage) int64 { return m.ID }, fn)
}

// Get returns one outbox message of the account with its body. Errors: ErrNotFound.
func (o *Outbox) Get(ctx context.Context, accountID, id int64) (*models.OutboxMessage, error) {
	var m models.OutboxMessage
	if err := o.db.R.WithContext(ctx).Where("user_id = ? AND id = ?", accountID, id).First(&m).Error; err != nil {
		return nil, core.NotFound(err)
	}
	return &m, nil
}

// Count returns how many messages the account's outbox holds.
func (o *Outbox) Count(ctx context.Context, accountID int64) (int64, error) {
	var n int64
	if err := o.db.R.WithContext(ctx).Model(&models.OutboxMessage{}).Where("user_id = ?", accountID).Count(&n).Error; err != nil {
		return n, fmt.Errorf("outbox: count: %w", err)
	}
	return n, nil
}
