package audience

import (
	"context"
	"fmt"
	"strconv"
	"strings"

	"gorm.io/gorm"

	"herald/models"
	"herald/service/core"
	"herald/service/identity"
	"herald/service/internal/record"
)

// ContactTypes keeps the account's contact types.
type ContactTypes struct {
	db    *core.DB
	audit *identity.Audit
}

func contactType(ctx context.Context, q *gorm.DB, accountID, id int64) (*models.ContactType, error) {
	var ct models.ContactType
	if err := q.WithContext(ctx).Where("user_id = ? AND id = ? AND deleted_at IS NULL", accountID, id).First(&ct).Error; err != nil {
		return nil, core.NotFoundOr(err, "contact types: contact type %d", id)
	}
	return &ct, nil
}

func itoa(id int64) string { return strconv.FormatInt(id, 10) }

// checkName records the problems of a contact type name (spec Limits: at
// least 2 characters; a single line, as every name that may reach a
// header, decisions.md 8) in p and returns it trimmed.
func checkName(p core.Problems, name string) string {
	name = strings.TrimSpace(name)
	if p.Required("name", name) {
		p.MinLen("name", name, 2)
		p.MaxLen("name", name, 255)
		p.SingleLine("name", name)
	}
	return name
}

// validName checks a contact type name and that no other type of the
// account has it.
func (s *ContactTypes) validName(ctx context.Context, tx *gorm.DB, accountID, selfID int64, name string) (string, error) {
	p := core.Problems{}
	name = checkName(p, name)
	if err := p.Err(); err != nil {
		return "", err
	}
	var n int64
	if err := tx.WithContext(ctx).Model(&models.ContactType{}).
		Where("user_id = ? AND deleted_at IS NULL AND LOWER(name) = ? AND id <> ?", accountID, strings.ToLower(name), selfID).
		Count(&n).Error; err != nil {
		return "", fmt.Errorf("contact types: is a name taken in account %d: %w", accountID, err)
	}
	if n > 0 {
		return "", core.Invalid("name", "The name has already been taken.")
	}
	return name, nil
}

// Create adds a contact type. Errors: validation.
func (s *ContactTypes) Create(ctx context.Context, accountID int64, name string) (*models.ContactType, error) {
	var ct *models.ContactType
	err := s.db.W.WithContext(ctx).Transaction(func(tx *gorm.DB) error {
		n, err := s.validName(ctx, tx, accountID, 0, name)
		if err != nil {
			return err
		}
		now := models.NewTimestamp(s.db.Now())
		ct = &models.ContactType{UserID: accountID, Name: n, CreatedAt: now, UpdatedAt: now}
		return tx.Create(ct).Error
	})
	if err != nil {
		return nil, core.Wrapf(err, "contact types: create")
	}
	return ct, nil
}

// Get returns one contact type. Errors: ErrNotFound.
func (s *ContactTypes) Get(ctx context.Context, accountID, id int64) (*models.ContactType, error) {
	return contactType(ctx, s.db.R, accountID, id)
}

// Update renames a contact type. id 0 means the request named none: it is
// answered as the missing `id` with the name's problems (VAL lists every
// missing parameter); a type that does not exist is not found once the
// body is valid. Errors: validation, ErrNotFound.
func (s *ContactTypes) Update(ctx context.Context, accountID, id int64, name string) (*models.ContactType, error) {
	p := core.Problems{}
	if id == 0 {
		p.AddReason("id", core.ReasonRequired, core.MsgRequired("id"))
	}
	checkName(p, name)
	if err := p.Err(); err != nil {
		return nil, err
	}
	var ct *models.ContactType
	err := s.db.W.WithContext(ctx).Transaction(func(tx *gorm.DB) error {
		var err error
		if ct, err = contactType(ctx, tx, accountID, id); err != nil {
			return err
		}
		n, err := s.validName(ctx, tx, accountID, id, name)
		if err != nil {
			return err
		}
		ct.Name, ct.UpdatedAt = n, models.NewTimestamp(s.db.Now())
		return tx.Model(&models.ContactType{}).Where("id = ?", id).Updates(map[string]any{"name": n, "updated_at": ct.UpdatedAt}).Error
	})
	if err != nil {
		return nil, core.Wrapf(err, "contact types: update %d", id)
	}
	return ct, nil
}

// Delete soft-deletes a contact type with its contacts and segments.
// Errors: ErrNotFound.
func (s *ContactTypes) Delete(ctx context.Context, accountID, id int64) error {
	var name string
	err := s.db.W.WithContext(ctx).Transaction(func(tx *gorm.DB) error {
		ct, err := contactType(ctx, tx, accountID, id)
		if err != nil {
			return err
		}
		name = ct.Name
		now := s.db.Now()
		for _, q := range []string{
			"UPDATE contact_types SET deleted_at = ? WHERE id = ?",
			"UPDATE contacts SET deleted_at = ? WHERE contact_type_id = ? AND deleted_at IS NULL",
			"UPDATE segments SET deleted_at = ? WHERE contact_type_id = ? AND deleted_at IS NULL",
		} {
			res := tx.Exec(q, now, id)
			if res.Error != nil {
				return res.Error
			}
			if strings.HasPrefix(q, "UPDATE contacts ") {
				if err := record.AddDaily(tx, accountID, now, record.Daily{record.DailyContactsRemoved: res.RowsAffected}); err != nil {
					return err
				}
			}
		}
		return tx.Exec("DELETE FROM segment_emails WHERE segment_id IN (SELECT id FROM segments WHERE contact_type_id = ?)", id).Error
	})
	if err != nil {
		return core.Wrapf(err, "contact types: delete %d", id)
	}
	return s.audit.Record(ctx, accountID, core.AuditContactTypeDelete, name, "")
}

// Each calls fn for every contact type of the account with its number of contacts.
func (s *ContactTypes) Each(ctx context.Context, accountID int64, f core.ListFilter, fn func(*models.ContactTypeCount) error) error {
	return core.Each(ctx, f, "contact_types", func() *gorm.DB {
		q := s.db.R.Table("contact_types").
			Select("contact_types.*, (SELECT COUNT(*) FROM contacts c WHERE c.contact_type_id = contact_types.id AND c.deleted_at IS NULL) AS contacts_count").
			Where("contact_types.user_id = ? AND contact_types.deleted_at IS NULL", accountID)
		if f.Search != "" {
			q = q.Where(`LOWER(name) LIKE ? ESCAPE '\'`, core.LikePattern(strings.ToLower(strings.TrimSpace(f.Search))))
		}
		return q
	}, func(r *models.ContactTypeCount) int64 { return r.ID }, fn)
}

// All returns every contact type of the account (for forms and lookups).
func (s *ContactTypes) All(ctx context.Context, accountID int64) ([]models.ContactType, error) {
	var out []models.ContactType
	if err := s.db.R.WithContext(ctx).Where("user_id = ? AND deleted_at IS NULL", accountID).Order("name").Find(&out).Error; err != nil {
		return nil, fmt.Errorf("contact types: list of account %d: %w", accountID, err)
	}
	return out, nil
}
