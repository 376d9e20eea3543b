package audience

import (
	"context"
	"fmt"

	"gorm.io/gorm"

	"herald/delivery"
	"herald/models"
	"herald/service/core"
	"herald/service/internal/record"
)

// ConfirmState is what a confirmation link did.
type ConfirmState int

// The states of a confirmation link.
const (
	// ConfirmAsk: the request looked like a machine's (a HEAD, a link
	// scanner, a mail gateway's prefetch): nothing changed, the page shows
	// a Confirm button (a POST) to a person.
	ConfirmAsk ConfirmState = iota
	// Confirmed: the address is confirmed (now, or before).
	Confirmed
	// ConfirmExpired: the link is older than ConfirmValidFor and was
	// never used.
	ConfirmExpired
)

// ConfirmResult is a confirmation link's answer.
type ConfirmResult struct {
	State ConfirmState
	Form  *models.Form
	Email string
	// Language is the person's language picked at the sign-up ("" for a
	// link older than its keeping): the link's page speaks it.
	Language string
}

// Confirm follows confirmation link token. post is true for a POST (the
// page's button, or any client that posts: always a confirmation); a GET
// confirms when the machine rules take hit for a person's (the link is a
// click, judged with the time since the mail went out), and answers
// ConfirmAsk otherwise. Confirming makes the contact confirmed, keeps the
// time in its consent, applies the groups the person chose, and writes
// the confirm event; following the link again changes nothing. Errors:
// ErrNotFound (no such link, or its form or contact is gone).
func (s *Forms) Confirm(ctx context.Context, token string, post bool, hit delivery.Hit) (*ConfirmResult, error) {
	if token == "" || len(token) > 128 {
		return nil, core.ErrNotFound
	}
	var row models.FormConfirmation
	if err := s.db.R.WithContext(ctx).Where("token_hash = ?", hashToken(token)).First(&row).Error; err != nil {
		return nil, core.NotFoundOr(err, "forms: confirmation link")
	}
	f, err := form(ctx, s.db.R, row.UserID, row.FormID)
	if err != nil {
		return nil, err
	}
	res := &ConfirmResult{Form: f, Email: row.Email, State: Confirmed, Language: row.Language}
	now := s.now()
	if row.ConfirmedAt != nil {
		return res, nil
	}
	if now.After(row.ExpiresAt.Time) {
		res.State = ConfirmExpired
		return res, nil
	}
	if !post {
		hit.Click = true
		if row.SentAt != nil {
			hit.Delivered, hit.SinceDelivery = true, now.Sub(row.SentAt.Time)
		}
		if s.rules.Classify(hit) != delivery.Human {
			res.State = ConfirmAsk
			return res, nil
		}
	}
	err = s.db.W.WithContext(ctx).Transaction(func(tx *gorm.DB) error {
		// The row again, under the writer: two clicks at once confirm once.
		var cur models.FormConfirmation
		if err := tx.Raw("SELECT * FROM form_confirmations WHERE id = ?"+s.db.SQL().ForUpdate(), row.ID).Scan(&cur).Error; err != nil {
			return fmt.Errorf("forms: read confirmation %d: %w", row.ID, err)
		}
		if cur.ID == 0 {
			return core.ErrNotFound
		}
		if cur.ConfirmedAt != nil {
			return nil
		}
		at := models.NewTimestamp(now)
		if err := tx.Model(&models.FormConfirmation{}).Where("id = ?", row.ID).Update("confirmed_at", at).Error; err != nil {
			return fmt.Errorf("forms: mark confirmation %d: %w", row.ID, err)
		}
		c, err := contact(ctx, tx, row.UserID, row.ContactID)
		if err != nil {
			return err
		}
		if c.Status == models.ContactConfirmed && c.Consent.ConfirmedAt != nil {
			return nil // confirmed through another of its links
		}
		if err := s.markConfirmed(ctx, tx, c, &now, now); err != nil {
			return err
		}
		if err := joinGroups(tx, f, c.Email, row.Groups, now); err != nil {
			return err
		}
		return s.events.Record(tx, &models.SendMessage{UserID: c.UserID, Email: c.Email}, EventConfirm,
			record.EventExtra{Status: models.ContactConfirmed, URL: s.PublicURL(f)}, now)
	})
	if err != nil {
		return nil, core.Wrapf(err, "forms: confirm")
	}
	return res, nil
}
