package deliverability

import (
	"context"
	"crypto/rand"
	"fmt"
	"log/slog"
	"strconv"
	"strings"
	"time"

	"gorm.io/gorm"

	"herald/models"
	"herald/service/core"
	"herald/world"
)

// Senders keeps the account's from identities and their verification.
type Senders struct {
	db     *core.DB
	checks *DomainChecks // the SPF proposal of the DNS page
	notify SenderMailer
	now    func() time.Time // the service's clock (Config.Now)
}

// SenderMailer mails a sender's verification link; the delivery wiring
// implements it (nil: no mail is sent, the link is only recorded).
type SenderMailer interface {
	SendVerification(ctx context.Context, s *models.Sender) error
}

// SenderInput is the body of sender/save and sender/update.
type SenderInput struct {
	SenderID        string // update only
	FromName        string
	FromEmail       string
	ReplyToEmail    string
	CountryID       string
	StateID         string
	CityID          string
	ZipCode         string
	CompanyAddress  string
	CompanyAddress2 string
	Nickname        string
}

// validate checks the body (spec: Sender body and Limits) against the
// shipped world data, and returns the stored values.
func (in SenderInput) validate() (models.Sender, error) {
	p := core.Problems{}
	var s models.Sender
	s.FromName = strings.TrimSpace(in.FromName)
	if p.Required("from_name", s.FromName) {
		p.MaxLen("from_name", s.FromName, 255)
		p.SingleLine("from_name", s.FromName) // the From header (decisions.md 8)
	}
	for _, f := range []struct {
		name string
		v    string
		dst  *string
	}{{"from_email", in.FromEmail, &s.FromEmail}, {"reply_to_email", in.ReplyToEmail, &s.ReplyToEmail}} {
		e, ok := core.NormalizeEmail(f.v)
		if p.Required(f.name, f.v) && !ok {
			p.AddReason(f.name, core.ReasonEmail, core.MsgEmail(f.name))
		}
		*f.dst = e
	}
	if p.Required("country_id", in.CountryID) {
		id, err := strconv.ParseInt(strings.TrimSpace(in.CountryID), 10, 64)
		if _, ok := world.CountryByID(id); err != nil || !ok {
			p.InvalidChoice("country_id")
		}
		s.CountryID = id
	}
	if v := strings.TrimSpace(in.StateID); v != "" && v != "0" {
		id, err := strconv.ParseInt(v, 10, 64)
		st, ok := world.StateByID(id)
		if err != nil || !ok || (s.CountryID != 0 && st.CountryID != s.CountryID) {
			p.InvalidChoice("state_id")
		}
		s.StateID = id
	}
	if v := strings.TrimSpace(in.CityID); v != "" && v != "0" {
		id, err := strconv.ParseInt(v, 10, 64)
		c, ok := world.CityByID(id)
		if err != nil || !ok || (s.StateID != 0 && c.StateID != s.StateID) || (s.CountryID != 0 && c.CountryID != s.CountryID) {
			p.InvalidChoice("city_id")
		}
		s.CityID = id
	}
	s.ZipCode = strings.TrimSpace(in.ZipCode)
	p.Text("zip_code", s.ZipCode, 32)
	s.CompanyAddress = strings.TrimSpace(in.CompanyAddress)
	if p.Required("company_address", s.CompanyAddress) {
		p.Text("company_address", s.CompanyAddress, 255)
	}
	s.CompanyAddress2 = strings.TrimSpace(in.CompanyAddress2)
	p.Text("company_address2", s.CompanyAddress2, 255)
	s.Nickname = strings.TrimSpace(in.Nickname)
	if p.Required("nickname", s.Nickname) {
		p.MaxLen("nickname", s.Nickname, 255)
		p.SingleLine("nickname", s.Nickname)
	}
	return s, p.Err()
}

// senderUtr is the sender's short public id ("a different, shorter
// string" than the UUIDs of sends): 12 characters of a-z0-9.
func senderUtr() string {
	const alphabet = "abcdefghijklmnopqrstuvwxyz0123456789"
	b := make([]byte, 12)
	_, _ = rand.Read(b)
	for i := range b {
		b[i] = alphabet[int(b[i])%len(alphabet)]
	}
	return string(b)
}

// The limits of verification mails (decisions.md 8): save, an update of
// from_email and resend-mail count together.
const (
	VerifyMailsPerSender  = 3                  // per sender (or address of the account) …
	VerifySenderWindow    = 10 * time.Minute   // … in this long
	VerifyMailsPerAccount = 20                 // per account …
	VerifyAccountWindow   = time.Hour          // … in this long
	VerifyLinkLifetime    = 7 * 24 * time.Hour // a link verifies for this long after it is issued
)

// ErrVerificationMail is answered when the verification mail could not
// be handed to the transport (the relay is down): nothing was stored.
var ErrVerificationMail = &core.Error{Code: core.CodeUnavailable, Message: "The verification mail could not be sent. Try again later."}

// ErrLinkExpired is answered for a verification link older than
// VerifyLinkLifetime: a not-found error with its own text.
var ErrLinkExpired = &core.Error{Code: core.CodeNotFound, Message: "This verification link has expired."}

// tooManyMails is the refusal of a verification mail over a limit, with
// how long until one may go (whole seconds, said in minutes).
func tooManyMails(wait time.Duration) *core.Error {
	secs := int64((wait + time.Second - 1) / time.Second)
	mins := (secs + 59) / 60
	unit := "minutes"
	if mins == 1 {
		unit = "minute"
	}
	return &core.Error{Code: core.CodeRateLimited, RetryAfter: time.Duration(secs) * time.Second,
		Message: fmt.Sprintf("Too many verification mails. Try again in %d %s.", mins, unit)}
}

// mailRow is a verification mail already counted.
type mailRow struct {
	SenderID *int64
	Email    string
	SentAt   time.Time
}

// reserveMail records a verification mail about to go to email for the
// account (and sender id, 0 for a sender not yet stored), unless it would
// pass a limit: then a CodeRateLimited error with RetryAfter, and nothing
// recorded. A sender's count also holds the account's earlier mails to the
// same address, so deleting and adding a sender again does not reset it.
// The count and the record are one transaction under the account's lock
// (SQLite: the one writer), so concurrent requests, on any process
// sharing the database, count each other. It returns the record's id.
func (s *Senders) reserveMail(ctx context.Context, accountID, senderID int64, email string, now time.Time) (int64, error) {
	var id int64
	err := s.db.W.WithContext(ctx).Transaction(func(tx *gorm.DB) error {
		if err := s.db.SQL().LockAccount(tx, accountID); err != nil {
			return err
		}
		since := now.Add(-VerifyAccountWindow)
		// Older mails count no more: the table holds an hour per account.
		if err := tx.Exec("DELETE FROM verification_mails WHERE user_id = ? AND sent_at <= ?", accountID, since).Error; err != nil {
			return fmt.Errorf("senders: forget old verification mails of account %d: %w", accountID, err)
		}
		var rows []mailRow
		if err := tx.Raw("SELECT sender_id, email, sent_at FROM verification_mails WHERE user_id = ? AND sent_at > ? ORDER BY sent_at, id",
			accountID, since).Scan(&rows).Error; err != nil {
			return fmt.Errorf("senders: recent verification mails of account %d: %w", accountID, err)
		}
		var wait time.Duration
		if n := len(rows); n >= VerifyMailsPerAccount {
			wait = rows[n-VerifyMailsPerAccount].SentAt.Add(VerifyAccountWindow).Sub(now)
		}
		var mine []time.Time
		for _, r := range rows {
			same := r.Email == email || (senderID != 0 && r.SenderID != nil && *r.SenderID == senderID)
			if same && r.SentAt.After(now.Add(-VerifySenderWindow)) {
				mine = append(mine, r.SentAt)
			}
		}
		if n := len(mine); n >= VerifyMailsPerSender {
			wait = max(wait, mine[n-VerifyMailsPerSender].Add(VerifySenderWindow).Sub(now))
		}
		if wait > 0 {
			// A clock ahead on another process cannot make the wait longer
			// than a window.
			return tooManyMails(min(wait, VerifyAccountWindow))
		}
		var sid any
		if senderID != 0 {
			sid = senderID
		}
		return tx.Raw("INSERT INTO verification_mails (user_id, sender_id, email, sent_at) VALUES (?, ?, ?, ?) RETURNING id",
			accountID, sid, email, now).Scan(&id).Error
	})
	if err != nil {
		return id, fmt.Errorf("senders: reserve a verification mail: %w", err)
	}
	return id, nil
}

// handOver mails snd its link, counted by the record reserved. When the
// transport fails, the record is dropped (no mail went) and the answer is
// ErrVerificationMail; the cause is logged.
func (s *Senders) handOver(ctx context.Context, snd *models.Sender, reserved int64) error {
	if s.notify == nil {
		return nil
	}
	err := s.notify.SendVerification(ctx, snd)
	if err == nil {
		return nil
	}
	slog.WarnContext(ctx, "sender verification mail not handed over", "account", snd.UserID, "error", err)
	if derr := s.db.W.WithContext(context.WithoutCancel(ctx)).Exec("DELETE FROM verification_mails WHERE id = ?", reserved).Error; derr != nil {
		slog.ErrorContext(ctx, "sender verification: drop the count of a mail not sent", "error", derr)
	}
	return ErrVerificationMail
}

// issueLink gives snd a fresh verification token issued at now.
func issueLink(snd *models.Sender, now time.Time) {
	ts := models.NewTimestamp(now)
	snd.VerifyToken, snd.VerifyIssuedAt, snd.SendAt = core.RandomID(24), &ts, models.DateTime{Time: now}
}

// Create saves a sender (not verified) once its verification link is
// mailed: nothing is stored when the mail is refused by a limit or
// cannot be handed over. Errors: validation, CodeRateLimited (with
// RetryAfter), ErrVerificationMail.
func (s *Senders) Create(ctx context.Context, accountID int64, in SenderInput) (*models.Sender, error) {
	snd, err := in.validate()
	if err != nil {
		return nil, err
	}
	now := s.now()
	ts := models.NewTimestamp(now)
	snd.UserID, snd.Utr, snd.CreatedAt, snd.UpdatedAt = accountID, senderUtr(), ts, ts
	issueLink(&snd, now)
	reserved, err := s.reserveMail(ctx, accountID, 0, snd.FromEmail, now)
	if err != nil {
		return nil, err
	}
	if err := s.handOver(ctx, &snd, reserved); err != nil {
		return nil, err
	}
	// The mail went: store the sender even if the caller has gone.
	err = s.db.W.WithContext(context.WithoutCancel(ctx)).Transaction(func(tx *gorm.DB) error {
		if err := tx.Create(&snd).Error; err != nil {
			return fmt.Errorf("senders: save a new sender: %w", err)
		}
		if err := tx.Exec("UPDATE verification_mails SET sender_id = ? WHERE id = ?", snd.ID, reserved).Error; err != nil {
			return fmt.Errorf("senders: tie the verification mail to sender %d: %w", snd.ID, err)
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	return &snd, nil
}

func Sender(ctx context.Context, q *gorm.DB, accountID, id int64) (*models.Sender, error) {
	var snd models.Sender
	if err := q.WithContext(ctx).Where("user_id = ? AND id = ? AND deleted_at IS NULL", accountID, id).First(&snd).Error; err != nil {
		return nil, core.NotFound(err)
	}
	return &snd, nil
}

// Get returns one sender of the account. Errors: ErrNotFound.
func (s *Senders) Get(ctx context.Context, accountID, id int64) (*models.Sender, error) {
	return Sender(ctx, s.db.R, accountID, id)
}

// Update changes a sender. A changed from_email needs verifying again: it
// is marked not verified and mailed a new link, and the change is stored
// only once that mail is handed over (else the sender stays as it was).
// Errors: validation, ErrNotFound, CodeRateLimited (with RetryAfter),
// ErrVerificationMail.
func (s *Senders) Update(ctx context.Context, accountID int64, in SenderInput) (*models.Sender, error) {
	p := core.Problems{}
	p.Required("sender_id", in.SenderID)
	snd, verr := in.validate()
	if verr != nil {
		p.Merge(verr.(*core.Error))
	}
	if err := p.Err(); err != nil {
		return nil, err
	}
	id, err := core.ParseID(in.SenderID)
	if err != nil {
		return nil, err
	}
	old, err := Sender(ctx, s.db.W, accountID, id)
	if err != nil {
		return nil, err
	}
	changed := old.FromEmail != snd.FromEmail
	snd.ID, snd.UserID, snd.Utr, snd.VerifyToken, snd.VerifyIssuedAt, snd.IsVerified, snd.SendAt, snd.CreatedAt =
		old.ID, old.UserID, old.Utr, old.VerifyToken, old.VerifyIssuedAt, old.IsVerified, old.SendAt, old.CreatedAt
	now := s.now()
	if changed {
		reserved, err := s.reserveMail(ctx, accountID, id, snd.FromEmail, now)
		if err != nil {
			return nil, err
		}
		snd.IsVerified = 0
		issueLink(&snd, now)
		if err := s.handOver(ctx, &snd, reserved); err != nil {
			return nil, err
		}
		ctx = context.WithoutCancel(ctx) // the mail went: store its link
	}
	snd.UpdatedAt = models.NewTimestamp(now)
	if err := s.db.W.WithContext(ctx).Model(&models.Sender{}).Where("id = ?", id).Select("*").Omit("id", "user_id", "created_at", "deleted_at").Updates(&snd).Error; err != nil {
		return nil, fmt.Errorf("senders: update sender %d: %w", id, err)
	}
	return &snd, nil
}

// Delete soft-deletes a sender. Errors: ErrNotFound.
func (s *Senders) Delete(ctx context.Context, accountID, id int64) error {
	res := s.db.W.WithContext(ctx).Model(&models.Sender{}).Where("user_id = ? AND id = ? AND deleted_at IS NULL", accountID, id).Update("deleted_at", s.now())
	if res.Error != nil {
		return res.Error
	}
	if res.RowsAffected == 0 {
		return core.ErrNotFound
	}
	return nil
}

// Each calls fn for every sender of the account.
func (s *Senders) Each(ctx context.Context, accountID int64, f core.ListFilter, fn func(*models.Sender) error) error {
	f = f.SortedBy(SenderSorts)
	return core.Each(ctx, f, "", func() *gorm.DB {
		q := core.WithStatus(s.db.R.Model(&models.Sender{}).Where("user_id = ? AND deleted_at IS NULL", accountID), f, senderStatuses)
		if f.Search != "" {
			pat := core.LikePattern(strings.ToLower(strings.TrimSpace(f.Search)))
			q = q.Where(`(from_email LIKE ? ESCAPE '\' OR LOWER(from_name) LIKE ? ESCAPE '\' OR LOWER(nickname) LIKE ? ESCAPE '\')`, pat, pat, pat)
		}
		return q
	}, func(r *models.Sender) int64 { return r.ID }, fn)
}

// ResendVerification mails a fresh verification link (the earlier ones
// stop working). Errors: ErrNotFound, CodeRateLimited (with RetryAfter),
// ErrVerificationMail (the sender is kept as it was).
func (s *Senders) ResendVerification(ctx context.Context, accountID, id int64) error {
	snd, err := Sender(ctx, s.db.W, accountID, id)
	if err != nil {
		return err
	}
	now := s.now()
	reserved, err := s.reserveMail(ctx, accountID, id, snd.FromEmail, now)
	if err != nil {
		return err
	}
	issueLink(snd, now)
	if err := s.handOver(ctx, snd, reserved); err != nil {
		return err
	}
	return s.db.W.WithContext(context.WithoutCancel(ctx)).Model(&models.Sender{}).Where("id = ?", id).Updates(map[string]any{
		"verify_token": snd.VerifyToken, "verify_issued_at": snd.VerifyIssuedAt, "send_at": now, "updated_at": now,
	}).Error
}

// linkExpired reports whether snd's link was issued VerifyLinkLifetime
// or longer before now.
func linkExpired(snd *models.Sender, now time.Time) bool {
	issued := snd.CreatedAt.Time
	switch {
	case snd.VerifyIssuedAt != nil:
		issued = snd.VerifyIssuedAt.Time
	case !snd.SendAt.IsZero():
		issued = snd.SendAt.Time
	}
	return !now.Before(issued.Add(VerifyLinkLifetime))
}

// byToken finds the sender a verification link names, as Link describes.
func (s *Senders) byToken(ctx context.Context, q *gorm.DB, token string) (*models.Sender, error) {
	token = strings.TrimSpace(token)
	if len(token) < 16 {
		return nil, core.ErrNotFound
	}
	var snd models.Sender
	if err := q.WithContext(ctx).Where("verify_token = ? AND deleted_at IS NULL", token).First(&snd).Error; err != nil {
		return nil, core.NotFound(err)
	}
	if snd.IsVerified == 0 && linkExpired(&snd, s.now()) {
		return nil, ErrLinkExpired
	}
	return &snd, nil
}

// Link returns the sender a verification link names, changing nothing
// (the page that asks to confirm). A verified sender is returned whatever
// the link's age. Errors: ErrNotFound (unknown token, deleted sender, or
// a link replaced by a newer one), ErrLinkExpired.
func (s *Senders) Link(ctx context.Context, token string) (*models.Sender, error) {
	return s.byToken(ctx, s.db.R, token)
}

// Verify marks verified the sender whose link carries token, whoever
// opens it (the link is the proof), while the link is younger than
// VerifyLinkLifetime. Verifying twice is no error. Errors: ErrNotFound,
// ErrLinkExpired.
func (s *Senders) Verify(ctx context.Context, token string) (*models.Sender, error) {
	snd, err := s.byToken(ctx, s.db.W, token)
	if err != nil || snd.IsVerified == 1 {
		return snd, err
	}
	// The token is in the condition: a resend that replaced it meanwhile
	// wins, and this link names nothing any more.
	res := s.db.W.WithContext(ctx).Model(&models.Sender{}).Where("id = ? AND verify_token = ? AND deleted_at IS NULL", snd.ID, snd.VerifyToken).
		Updates(map[string]any{"is_verified": 1, "updated_at": s.now()})
	if res.Error != nil {
		return nil, res.Error
	}
	if res.RowsAffected == 0 {
		return nil, core.ErrNotFound
	}
	snd.IsVerified = 1
	return snd, nil
}
