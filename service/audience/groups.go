package audience

import (
	"context"
	"strings"

	"gorm.io/gorm"

	"herald/models"
	"herald/service/core"
)

// Groups keeps unsubscribe groups and the addresses that left each one.
type Groups struct{ db *core.DB }

// GroupInput is the body of a group save or update.
type GroupInput struct {
	GroupName   string
	Description string
	IsDisplay   string
}

func (in GroupInput) validate() (name, desc string, display int, err error) {
	p := core.Problems{}
	name = strings.TrimSpace(in.GroupName)
	desc = strings.TrimSpace(in.Description)
	if p.Required("group_name", name) {
		p.Text("group_name", name, 255)
	}
	if p.Required("description", desc) {
		p.Text("description", desc, 65535)
	}
	if p.Required("is_display", in.IsDisplay) {
		display = p.Flag("is_display", in.IsDisplay)
	}
	return name, desc, display, p.Err()
}

// Each calls fn for every group of the account with its recipient count.
func (g *Groups) Each(ctx context.Context, accountID int64, f core.ListFilter, fn func(*models.UnsubscribeGroupCount) error) error {
	return core.Each(ctx, f, "unsubscribe_groups", func() *gorm.DB {
		q := g.db.R.Table("unsubscribe_groups").
			Select("unsubscribe_groups.*, (SELECT COUNT(*) FROM unsubscribers u WHERE u.unsubscribe_groups_id = unsubscribe_groups.id) AS unsubscribe_clients_count").
			Where("unsubscribe_groups.user_id = ?", accountID)
		if f.Search != "" {
			q = q.Where(`LOWER(group_name) LIKE ? ESCAPE '\'`, core.LikePattern(strings.ToLower(strings.TrimSpace(f.Search))))
		}
		return q
	}, func(r *models.UnsubscribeGroupCount) int64 { return r.ID }, fn)
}

// Create saves a new group. Errors: validation.
func (g *Groups) Create(ctx context.Context, accountID int64, in GroupInput) (*models.UnsubscribeGroup, error) {
	name, desc, display, err := in.validate()
	if err != nil {
		return nil, err
	}
	now := models.NewTimestamp(g.db.Now())
	grp := &models.UnsubscribeGroup{
		UserID: accountID, RandID: core.RandomID(8), GroupName: name, Description: desc, IsDisplay: display,
		CreatedAt: now, UpdatedAt: now,
	}
	err = g.db.W.WithContext(ctx).Transaction(func(tx *gorm.DB) error {
		if err := core.TouchLists(tx, accountID); err != nil {
			return err
		}
		return tx.Create(grp).Error
	})
	if err != nil {
		return nil, core.Wrapf(err, "groups: create")
	}
	return grp, nil
}

// Get returns one group of the account. Errors: ErrNotFound.
func (g *Groups) Get(ctx context.Context, accountID, id int64) (*models.UnsubscribeGroup, error) {
	var grp models.UnsubscribeGroup
	if err := g.db.R.WithContext(ctx).Where("user_id = ? AND id = ?", accountID, id).First(&grp).Error; err != nil {
		return nil, core.NotFoundOr(err, "groups: group %d", id)
	}
	return &grp, nil
}

// Update changes a group. The body is checked first: a group that does
// not exist (id 0 when the request named none: the spec does not require
// it) is not found once the body is valid. Errors: validation, ErrNotFound.
func (g *Groups) Update(ctx context.Context, accountID, id int64, in GroupInput) (*models.UnsubscribeGroup, error) {
	name, desc, display, err := in.validate()
	if err != nil {
		return nil, err
	}
	if _, err := g.Get(ctx, accountID, id); err != nil {
		return nil, err
	}
	err = g.db.W.WithContext(ctx).Transaction(func(tx *gorm.DB) error {
		if err := core.TouchLists(tx, accountID); err != nil {
			return err
		}
		res := tx.Model(&models.UnsubscribeGroup{}).Where("user_id = ? AND id = ?", accountID, id).
			Updates(map[string]any{"group_name": name, "description": desc, "is_display": display, "updated_at": g.db.Now()})
		if res.Error != nil {
			return res.Error
		}
		if res.RowsAffected == 0 {
			return core.ErrNotFound
		}
		return nil
	})
	if err != nil {
		return nil, core.Wrapf(err, "groups: update %d", id)
	}
	return g.Get(ctx, accountID, id)
}

// RecipientsInput is the body of a manual add to a group.
type RecipientsInput struct {
	GroupID      string
	EmailAddress string
}

// AddRecipients adds addresses (separated by commas) to a group; those
// already in it stay as they are. It returns how many were new.
// Errors: validation, ErrNotFound (group not the account's).
func (g *Groups) AddRecipients(ctx context.Context, accountID int64, in RecipientsInput) (int, error) {
	p := core.Problems{}
	p.Required("unsubscribe_groups_id", in.GroupID)
	emails, err := parseEmailList("email_address", in.EmailAddress)
	if err != nil {
		p.Merge(err.(*core.Error))
	}
	if err := p.Err(); err != nil {
		return 0, err
	}
	gid, err := core.ParseID(in.GroupID)
	if err != nil {
		return 0, err
	}
	if _, err := g.Get(ctx, accountID, gid); err != nil {
		return 0, err
	}
	return insertUnsubscribers(ctx, g.db.W, accountID, &gid, emails)
}

// EachRecipient calls fn for every recipient of the account's group.
// Errors: ErrNotFound (group).
func (g *Groups) EachRecipient(ctx context.Context, accountID, groupID int64, f core.ListFilter, fn func(*models.Unsubscriber) error) error {
	if _, err := g.Get(ctx, accountID, groupID); err != nil {
		return err
	}
	return core.Each(ctx, f, "", func() *gorm.DB {
		q := g.db.R.Model(&models.Unsubscriber{}).Where("user_id = ? AND unsubscribe_groups_id = ?", accountID, groupID)
		if f.Search != "" {
			q = q.Where(`email_address LIKE ? ESCAPE '\'`, core.LikePattern(strings.ToLower(strings.TrimSpace(f.Search))))
		}
		return q
	}, func(u *models.Unsubscriber) int64 { return u.ID }, fn)
}

func groupScope(q *gorm.DB) *gorm.DB { return q.Where("unsubscribe_groups_id IS NOT NULL") }

// DeleteRecipient removes one group recipient. Errors: ErrNotFound.
func (g *Groups) DeleteRecipient(ctx context.Context, accountID, id int64) error {
	if err := core.DeleteAll(ctx, g.db, accountID, &models.Unsubscriber{}, []int64{id}, groupScope); err != nil {
		return core.Wrapf(err, "groups: delete recipient %d", id)
	}
	return nil
}

// BulkDeleteRecipients removes all the listed group recipients, or none.
// Errors: ErrNotFound when any id is not one of the account's.
func (g *Groups) BulkDeleteRecipients(ctx context.Context, accountID int64, ids []int64) error {
	if err := core.DeleteAll(ctx, g.db, accountID, &models.Unsubscriber{}, ids, groupScope); err != nil {
		return core.Wrapf(err, "groups: delete %d recipients", len(ids))
	}
	return nil
}

// DeleteRecipientsOf removes the listed recipients of one group, all or
// none (the console acts on one group's page). Errors: ErrNotFound when any
// id is not a recipient of that group of the account.
func (g *Groups) DeleteRecipientsOf(ctx context.Context, accountID, groupID int64, ids []int64) error {
	err := core.DeleteAll(ctx, g.db, accountID, &models.Unsubscriber{}, ids, func(q *gorm.DB) *gorm.DB {
		return q.Where("unsubscribe_groups_id = ?", groupID)
	})
	if err != nil {
		return core.Wrapf(err, "groups: delete %d recipients of group %d", len(ids), groupID)
	}
	return nil
}
