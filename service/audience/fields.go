package audience

import (
	"context"
	"fmt"
	"strings"

	"gorm.io/gorm"

	"herald/models"
	"herald/service/core"
)

// Fields keeps the reserved fields (shared by every account) and each
// account's custom fields.
type Fields struct {
	db       *core.DB
	segments *Segments
}

// ReservedFieldNames are the contact columns, in the spec's order.
var ReservedFieldNames = []string{
	"first_name", "last_name", "email", "alt_email", "country", "state", "city",
	"address_line1", "address_line2", "state_province_region", "postal_code",
}

// FieldTypes are the allowed custom field types.
var FieldTypes = []string{"text", "number", "datetime-local"}

// IsReservedField reports whether name is a reserved field (or created_at,
// which segments may also test).
func IsReservedField(name string) bool {
	for _, r := range ReservedFieldNames {
		if r == name {
			return true
		}
	}
	return false
}

// FieldInput is the body of a custom field save.
type FieldInput struct {
	FieldName string
	FieldType string
}

// Reserved returns the reserved fields.
func (f *Fields) Reserved(ctx context.Context) ([]models.Field, error) {
	var out []models.Field
	if err := f.db.R.WithContext(ctx).Where("user_id IS NULL").Order("id").Find(&out).Error; err != nil {
		return nil, fmt.Errorf("fields: reserved fields: %w", err)
	}
	return out, nil
}

// Custom returns the account's custom fields in the order they were made.
func (f *Fields) Custom(ctx context.Context, accountID int64) ([]models.Field, error) {
	out, err := customFields(ctx, f.db.R, accountID)
	if err != nil {
		return nil, fmt.Errorf("fields: custom fields of account %d: %w", accountID, err)
	}
	return out, nil
}

// customFields reads the account's custom fields in the order they were
// made. A failure of the database is returned as it is: each caller says
// what it read them for, and an import records the failure's own text in
// its report (Imports.Run).
func customFields(ctx context.Context, q *gorm.DB, accountID int64) ([]models.Field, error) {
	var out []models.Field
	err := q.WithContext(ctx).Where("user_id = ?", accountID).Order("id").Find(&out).Error
	for i := range out {
		out[i].Label = FieldLabel(out[i].FieldName)
	}
	return out, err
}

// Create adds a custom field. Errors: validation (name form, reserved or
// taken name, unknown type).
func (f *Fields) Create(ctx context.Context, accountID int64, in FieldInput) (*models.Field, error) {
	p := core.Problems{}
	name := strings.TrimSpace(in.FieldName)
	typ := strings.TrimSpace(in.FieldType)
	if p.Required("field_name", name) {
		switch {
		case !core.FieldNameRE.MatchString(name):
			p.Add("field_name", "The field name format is invalid.")
		case len(name) > 64:
			p.AddReason("field_name", core.ReasonMax, core.MsgMax("field_name", 64))
		case IsReservedField(strings.ToLower(name)) || strings.EqualFold(name, "created_at") || strings.EqualFold(name, "updated_at") || strings.EqualFold(name, "id") ||
			strings.EqualFold(name, "tags") || // the contact's tags (tags.go): a segment field and a CSV column
			strings.EqualFold(name, EngagementField): // the contact's engagement level (engagement.go): a segment field
			p.Add("field_name", "The field name is reserved.")
		}
	}
	if p.Required("field_type", typ) && !oneOf(typ, FieldTypes) {
		p.InvalidChoice("field_type")
	}
	if err := p.Err(); err != nil {
		return nil, err
	}
	now := models.NewTimestamp(f.db.Now())
	fld := &models.Field{UserID: &accountID, FieldName: name, FieldType: typ, CreatedAt: &now, UpdatedAt: &now}
	err := f.db.W.WithContext(ctx).Transaction(func(tx *gorm.DB) error {
		var n int64
		if err := tx.Model(&models.Field{}).Where("user_id = ? AND LOWER(field_name) = ?", accountID, strings.ToLower(name)).Count(&n).Error; err != nil {
			return fmt.Errorf("fields: is a field name taken in account %d: %w", accountID, err)
		}
		if n > 0 {
			return core.Invalid("field_name", "The field name has already been taken.")
		}
		return tx.Create(fld).Error
	})
	if err != nil {
		return nil, core.Wrapf(err, "fields: create")
	}
	return fld, nil
}

// Delete removes a custom field and its value from every contact of the
// account; segments testing it are evaluated again. Errors: ErrNotFound.
func (f *Fields) Delete(ctx context.Context, accountID, id int64) error {
	err := f.db.W.WithContext(ctx).Transaction(func(tx *gorm.DB) error {
		var fld models.Field
		if err := tx.Where("user_id = ? AND id = ?", accountID, id).First(&fld).Error; err != nil {
			return core.NotFound(err)
		}
		if err := tx.Delete(&models.Field{}, fld.ID).Error; err != nil {
			return fmt.Errorf("fields: delete field %d: %w", fld.ID, err)
		}
		if err := f.db.SQL().DropCustomField(tx, accountID, fld.FieldName); err != nil {
			return err
		}
		return f.segments.rebuildUsing(ctx, tx, accountID, fld.FieldName)
	})
	if err != nil {
		return core.Wrapf(err, "fields: delete %d", id)
	}
	return nil
}

func oneOf(v string, set []string) bool {
	for _, s := range set {
		if s == v {
			return true
		}
	}
	return false
}

// Placeholders returns every placeholder name usable in the account's
// designs: the reserved fields, its custom fields, the sender values, then
// the organisation profile's (those not already a custom field's name).
func (f *Fields) Placeholders(ctx context.Context, accountID int64) ([]string, error) {
	customs, err := customFields(ctx, f.db.R, accountID)
	if err != nil {
		return nil, fmt.Errorf("fields: custom fields of account %d: %w", accountID, err)
	}
	out := append([]string{}, ReservedFieldNames...)
	custom := map[string]bool{}
	for _, c := range customs {
		out = append(out, c.FieldName)
		custom[c.FieldName] = true
	}
	out = append(out, core.SenderPlaceholders...)
	for _, n := range core.OrgPlaceholders {
		if !custom[n] {
			out = append(out, n)
		}
	}
	return out, nil
}

// The groups of MergeTags, in the order the editor's picker shows them.
const (
	TagsContact = "contact" // the reserved fields of a contact
	TagsCustom  = "custom"  // the account's custom fields
	TagsLinks   = "links"   // addresses made for each recipient: view in browser, unsubscribe
	TagsSender  = "sender"  // the send's sender
	TagsOrg     = "org"     // the organisation profile
)

// The kinds of MergeTag: how the editor inserts it.
const (
	TagText  = "text"  // as it is, into the text
	TagLink  = "link"  // an address: as a link's target
	TagImage = "image" // an image's address: as an image's source
)

// MergeTag is a placeholder the design editor offers: its name (written
// ((name)) in a design), its group, its kind, and for a custom field its
// label.
type MergeTag struct {
	Name  string `json:"name"`
	Group string `json:"group"`
	Kind  string `json:"kind"`
	Label string `json:"label,omitempty"`
}

// MergeTags returns the placeholders the design editor offers the account,
// by group: the names of Placeholders (the reserved fields, its custom
// fields, the sender's, the organisation profile's not shadowed by a
// custom field) and ((view_in_browser)), which every send fills.
func (f *Fields) MergeTags(ctx context.Context, accountID int64) ([]MergeTag, error) {
	customs, err := customFields(ctx, f.db.R, accountID)
	if err != nil {
		return nil, fmt.Errorf("fields: merge tags of account %d: %w", accountID, err)
	}
	var out []MergeTag
	for _, n := range ReservedFieldNames {
		out = append(out, MergeTag{Name: n, Group: TagsContact, Kind: TagText})
	}
	custom := map[string]bool{}
	for _, c := range customs {
		out = append(out, MergeTag{Name: c.FieldName, Group: TagsCustom, Kind: TagText, Label: c.Label})
		custom[c.FieldName] = true
	}
	out = append(out, MergeTag{Name: "view_in_browser", Group: TagsLinks, Kind: TagLink},
		MergeTag{Name: "unsubscribe_preferences", Group: TagsLinks, Kind: TagLink},
		MergeTag{Name: "sender_name", Group: TagsSender, Kind: TagText}, MergeTag{Name: "sender_address", Group: TagsSender, Kind: TagText})
	for _, n := range core.OrgPlaceholders {
		if custom[n] {
			continue
		}
		kind := TagText
		if n == core.PlaceholderOrgLogoURL {
			kind = TagImage
		}
		out = append(out, MergeTag{Name: n, Group: TagsOrg, Kind: kind})
	}
	return out, nil
}
