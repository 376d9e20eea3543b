package service

import (
	"context"
	"crypto/rand"
	"strconv"
	"strings"

	"gorm.io/gorm"

	"herald/models"
	"herald/world"
)

// Senders keeps the account's from identities and their verification.
type Senders struct {
	db     *DB
	notify SenderMailer
}

// SenderMailer mails a sender's verification link; the delivery wiring
// implements it (nil: no mail is sent, the link is only recorded).
type SenderMailer interface {
	SendVerification(ctx context.Context, s *models.Sender) error
}

// SetMailer sets what mails verification links.
func (s *Senders) SetMailer(m SenderMailer) { s.notify = m }

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
	p := Problems{}
	var s models.Sender
	s.FromName = strings.TrimSpace(in.FromName)
	if p.required("from_name", s.FromName) {
		p.maxLen("from_name", s.FromName, 255)
	}
	for _, f := range []struct {
		name string
		v    string
		dst  *string
	}{{"from_email", in.FromEmail, &s.FromEmail}, {"reply_to_email", in.ReplyToEmail, &s.ReplyToEmail}} {
		e, ok := NormalizeEmail(f.v)
		if p.required(f.name, f.v) && !ok {
			p.Add(f.name, msgEmail(f.name))
		}
		*f.dst = e
	}
	if p.required("country_id", in.CountryID) {
		id, err := strconv.ParseInt(strings.TrimSpace(in.CountryID), 10, 64)
		if _, ok := world.CountryByID(id); err != nil || !ok {
			p.Add("country_id", "The selected country id is invalid.")
		}
		s.CountryID = id
	}
	if v := strings.TrimSpace(in.StateID); v != "" && v != "0" {
		id, err := strconv.ParseInt(v, 10, 64)
		st, ok := world.StateByID(id)
		if err != nil || !ok || (s.CountryID != 0 && st.CountryID != s.CountryID) {
			p.Add("state_id", "The selected state id is invalid.")
		}
		s.StateID = id
	}
	if v := strings.TrimSpace(in.CityID); v != "" && v != "0" {
		id, err := strconv.ParseInt(v, 10, 64)
		c, ok := world.CityByID(id)
		if err != nil || !ok || (s.StateID != 0 && c.StateID != s.StateID) || (s.CountryID != 0 && c.CountryID != s.CountryID) {
			p.Add("city_id", "The selected city id is invalid.")
		}
		s.CityID = id
	}
	s.ZipCode = strings.TrimSpace(in.ZipCode)
	p.maxLen("zip_code", s.ZipCode, 32)
	s.CompanyAddress = strings.TrimSpace(in.CompanyAddress)
	if p.required("company_address", s.CompanyAddress) {
		p.maxLen("company_address", s.CompanyAddress, 255)
	}
	s.CompanyAddress2 = strings.TrimSpace(in.CompanyAddress2)
	p.maxLen("company_address2", s.CompanyAddress2, 255)
	s.Nickname = strings.TrimSpace(in.Nickname)
	if p.required("nickname", s.Nickname) {
		p.maxLen("nickname", s.Nickname, 255)
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

// Create saves a sender (not verified) and mails it a verification link.
// Errors: validation. A failure to mail is returned after the sender is saved.
func (s *Senders) Create(ctx context.Context, accountID int64, in SenderInput) (*models.Sender, error) {
	snd, err := in.validate()
	if err != nil {
		return nil, err
	}
	now := models.NewTimestamp(models.Now())
	snd.UserID, snd.Utr, snd.VerifyToken, snd.CreatedAt, snd.UpdatedAt = accountID, senderUtr(), randomID(24), now, now
	if err := s.db.W.WithContext(ctx).Create(&snd).Error; err != nil {
		return nil, err
	}
	return &snd, s.sendVerification(ctx, &snd)
}

func sender(ctx context.Context, q *gorm.DB, accountID, id int64) (*models.Sender, error) {
	var snd models.Sender
	if err := q.WithContext(ctx).Where("user_id = ? AND id = ? AND deleted_at IS NULL", accountID, id).First(&snd).Error; err != nil {
		return nil, notFound(err)
	}
	return &snd, nil
}

// Get returns one sender of the account. Errors: ErrNotFound.
func (s *Senders) Get(ctx context.Context, accountID, id int64) (*models.Sender, error) {
	return sender(ctx, s.db.R, accountID, id)
}

// Update changes a sender. A changed from_email needs verifying again: it
// is marked not verified and mailed a new link. Errors: validation, ErrNotFound.
func (s *Senders) Update(ctx context.Context, accountID int64, in SenderInput) (*models.Sender, error) {
	p := Problems{}
	p.required("sender_id", in.SenderID)
	snd, verr := in.validate()
	if verr != nil {
		for k, v := range verr.(*Error).Fields {
			p[k] = v
		}
	}
	if err := p.Err(); err != nil {
		return nil, err
	}
	id, err := ParseID(in.SenderID)
	if err != nil {
		return nil, err
	}
	old, err := sender(ctx, s.db.W, accountID, id)
	if err != nil {
		return nil, err
	}
	changed := old.FromEmail != snd.FromEmail
	snd.ID, snd.UserID, snd.Utr, snd.VerifyToken, snd.IsVerified, snd.SendAt, snd.CreatedAt =
		old.ID, old.UserID, old.Utr, old.VerifyToken, old.IsVerified, old.SendAt, old.CreatedAt
	if changed {
		snd.IsVerified, snd.VerifyToken = 0, randomID(24)
	}
	snd.UpdatedAt = models.NewTimestamp(models.Now())
	if err := s.db.W.WithContext(ctx).Model(&models.Sender{}).Where("id = ?", id).Select("*").Omit("id", "user_id", "created_at", "deleted_at").Updates(&snd).Error; err != nil {
		return nil, err
	}
	if changed {
		return &snd, s.sendVerification(ctx, &snd)
	}
	return &snd, nil
}

// Delete soft-deletes a sender. Errors: ErrNotFound.
func (s *Senders) Delete(ctx context.Context, accountID, id int64) error {
	res := s.db.W.WithContext(ctx).Model(&models.Sender{}).Where("user_id = ? AND id = ? AND deleted_at IS NULL", accountID, id).Update("deleted_at", models.Now())
	if res.Error != nil {
		return res.Error
	}
	if res.RowsAffected == 0 {
		return ErrNotFound
	}
	return nil
}

// Each calls fn for every sender of the account.
func (s *Senders) Each(ctx context.Context, accountID int64, f ListFilter, fn func(*models.Sender) error) error {
	return each(ctx, f, "", func() *gorm.DB {
		q := s.db.R.Model(&models.Sender{}).Where("user_id = ? AND deleted_at IS NULL", accountID)
		if f.Search != "" {
			pat := likePattern(strings.ToLower(strings.TrimSpace(f.Search)))
			q = q.Where(`(from_email LIKE ? ESCAPE '\' OR LOWER(from_name) LIKE ? ESCAPE '\' OR LOWER(nickname) LIKE ? ESCAPE '\')`, pat, pat, pat)
		}
		return q
	}, func(r *models.Sender) int64 { return r.ID }, fn)
}

// ResendVerification mails the verification link again.
// Errors: ErrNotFound; a failure of the mail transport.
func (s *Senders) ResendVerification(ctx context.Context, accountID, id int64) error {
	snd, err := sender(ctx, s.db.W, accountID, id)
	if err != nil {
		return err
	}
	return s.sendVerification(ctx, snd)
}

func (s *Senders) sendVerification(ctx context.Context, snd *models.Sender) error {
	now := models.Now()
	snd.SendAt = models.DateTime{Time: now}
	if err := s.db.W.WithContext(ctx).Model(&models.Sender{}).Where("id = ?", snd.ID).Update("send_at", now).Error; err != nil {
		return err
	}
	if s.notify == nil {
		return nil
	}
	return s.notify.SendVerification(ctx, snd)
}

// Verify marks verified the sender whose link carries token, whoever
// opens it (the link is the proof). Errors: ErrNotFound.
func (s *Senders) Verify(ctx context.Context, token string) (*models.Sender, error) {
	token = strings.TrimSpace(token)
	if len(token) < 16 {
		return nil, ErrNotFound
	}
	var snd models.Sender
	if err := s.db.W.WithContext(ctx).Where("verify_token = ? AND deleted_at IS NULL", token).First(&snd).Error; err != nil {
		return nil, notFound(err)
	}
	if snd.IsVerified == 0 {
		if err := s.db.W.WithContext(ctx).Model(&models.Sender{}).Where("id = ?", snd.ID).
			Updates(map[string]any{"is_verified": 1, "updated_at": models.Now()}).Error; err != nil {
			return nil, err
		}
		snd.IsVerified = 1
	}
	return &snd, nil
}
