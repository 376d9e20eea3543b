package campaign

import (
	"context"
	"fmt"
	"strings"

	"gorm.io/gorm"

	"herald/models"
	"herald/service/core"
)

// Blocks keeps the account's saved blocks: pieces of designs saved from
// the editor under a name and inserted into other designs.
type Blocks struct {
	db *core.DB
}

// BlockInput is a block as the editor saves it: its name, its markup and
// the editor's style rules for it.
type BlockInput struct {
	Name string
	HTML string
	CSS  string
}

// maxBlockBytes bounds one block's markup and its styles (each): a block
// is a part of a design, which is bounded by maxDesignBytes.
const maxBlockBytes = 1 << 20

// maxBlocks bounds how many blocks an account keeps: the editor lists
// them all on one page.
const maxBlocks = 200

func (in BlockInput) validate() (models.SavedBlock, error) {
	p := core.Problems{}
	name := strings.TrimSpace(in.Name)
	b := models.SavedBlock{Name: name, NameKey: strings.ToLower(name), HTML: strings.TrimSpace(in.HTML), CSS: strings.TrimSpace(in.CSS)}
	if p.Required("name", b.Name) {
		p.Text("name", b.Name, 100)
		p.SingleLine("name", b.Name)
	}
	p.Required("html", b.HTML)
	p.NoNUL("html", b.HTML)
	p.NoNUL("css", b.CSS)
	if len(b.HTML) > maxBlockBytes || len(b.CSS) > maxBlockBytes {
		p.AddReason("html", core.ReasonMax, "The block may not be greater than 1 MB.")
	}
	return b, p.Err()
}

// Create saves a new block of the account. Errors: validation (a name
// another block of the account has, whatever its case; more than
// maxBlocks blocks).
func (s *Blocks) Create(ctx context.Context, accountID int64, in BlockInput) (*models.SavedBlock, error) {
	b, err := in.validate()
	if err != nil {
		return nil, err
	}
	err = s.db.W.WithContext(ctx).Transaction(func(tx *gorm.DB) error {
		var taken, n int64
		if err := tx.Model(&models.SavedBlock{}).Where("user_id = ? AND name_key = ?", accountID, b.NameKey).Count(&taken).Error; err != nil {
			return fmt.Errorf("is the name taken: %w", err)
		}
		if taken > 0 {
			return core.Invalid("name", "The name has already been taken.")
		}
		if err := tx.Model(&models.SavedBlock{}).Where("user_id = ?", accountID).Count(&n).Error; err != nil {
			return fmt.Errorf("count the blocks: %w", err)
		}
		if n >= maxBlocks {
			return core.InvalidBecause("name", core.ReasonMax, fmt.Sprintf("An account keeps at most %d saved blocks: delete one first.", maxBlocks))
		}
		now := models.NewTimestamp(s.db.Now())
		b.UserID, b.CreatedAt, b.UpdatedAt = accountID, now, now
		return tx.Create(&b).Error
	})
	if err != nil {
		return nil, core.Wrapf(err, "blocks: save a block of account %d", accountID)
	}
	return &b, nil
}

// List returns the account's blocks by name.
func (s *Blocks) List(ctx context.Context, accountID int64) ([]models.SavedBlock, error) {
	var out []models.SavedBlock
	if err := s.db.R.WithContext(ctx).Where("user_id = ?", accountID).Order("name_key, id").Limit(maxBlocks).Find(&out).Error; err != nil {
		return nil, fmt.Errorf("blocks: list the blocks of account %d: %w", accountID, err)
	}
	return out, nil
}

// Get returns one block of the account. Errors: ErrNotFound.
func (s *Blocks) Get(ctx context.Context, accountID, id int64) (*models.SavedBlock, error) {
	var b models.SavedBlock
	if err := s.db.R.WithContext(ctx).Where("user_id = ? AND id = ?", accountID, id).First(&b).Error; err != nil {
		return nil, core.NotFoundOr(err, "blocks: get")
	}
	return &b, nil
}

// Delete removes a block of the account; the designs it was inserted into
// keep their copy. Errors: ErrNotFound.
func (s *Blocks) Delete(ctx context.Context, accountID, id int64) error {
	res := s.db.W.WithContext(ctx).Where("user_id = ? AND id = ?", accountID, id).Delete(&models.SavedBlock{})
	if res.Error != nil {
		return fmt.Errorf("blocks: delete block %d of account %d: %w", id, accountID, res.Error)
	}
	if res.RowsAffected == 0 {
		return core.ErrNotFound
	}
	return nil
}
