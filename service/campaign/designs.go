package campaign

import (
	"context"
	"fmt"
	"strconv"
	"strings"

	"gorm.io/gorm"

	"herald/delivery"
	"herald/models"
	"herald/service/audience"
	"herald/service/core"
	"herald/service/deliverability"
)

// Designs keeps the account's own designs made in the editor.
type Designs struct {
	db        *core.DB
	templates Templates
	contacts  *audience.Contacts // a preview with a contact's values
}

// DesignInput is a design as the editor saves it.
type DesignInput struct {
	Name         string
	TemplateID   string // the library design it started from (default 1)
	TemplateJSON string
	TemplateHTML string
}

// maxDesignBytes bounds one design (JSON and HTML each).
const maxDesignBytes = 5 << 20

func (in DesignInput) validate() (models.Design, error) {
	p := core.Problems{}
	d := models.Design{Name: strings.TrimSpace(in.Name), TemplateID: 1, TemplateJSON: in.TemplateJSON, TemplateHTML: in.TemplateHTML}
	if p.Required("name", d.Name) {
		p.Text("name", d.Name, 255)
	}
	if v := strings.TrimSpace(in.TemplateID); v != "" {
		id, err := strconv.ParseInt(v, 10, 64)
		if _, derr := (Templates{}).Design(id); err != nil || derr != nil {
			p.InvalidChoice("template_id")
		}
		d.TemplateID = id
	}
	if strings.TrimSpace(d.TemplateHTML) == "" {
		p.AddReason("template_html", core.ReasonRequired, core.MsgRequired("template_html"))
	}
	p.NoNUL("template_html", d.TemplateHTML)
	p.NoNUL("template_json", d.TemplateJSON)
	if len(d.TemplateHTML) > maxDesignBytes || len(d.TemplateJSON) > maxDesignBytes {
		p.AddReason("template_html", core.ReasonMax, "The design may not be greater than 5 MB.")
	}
	return d, p.Err()
}

// Create saves a new design. Errors: validation.
func (s *Designs) Create(ctx context.Context, accountID int64, in DesignInput) (*models.Design, error) {
	d, err := in.validate()
	if err != nil {
		return nil, err
	}
	now := models.NewTimestamp(s.db.Now())
	d.UserID, d.CreatedAt, d.UpdatedAt = accountID, now, now
	if err := s.db.W.WithContext(ctx).Create(&d).Error; err != nil {
		return nil, fmt.Errorf("designs: save a new design: %w", err)
	}
	return &d, nil
}

// Update replaces a design. Errors: validation, ErrNotFound.
func (s *Designs) Update(ctx context.Context, accountID, id int64, in DesignInput) (*models.Design, error) {
	d, err := in.validate()
	if err != nil {
		return nil, err
	}
	res := s.db.W.WithContext(ctx).Model(&models.Design{}).Where("user_id = ? AND id = ?", accountID, id).Updates(map[string]any{
		"name": d.Name, "template_id": d.TemplateID, "template_json": d.TemplateJSON, "template_html": d.TemplateHTML, "updated_at": s.db.Now(),
	})
	if res.Error != nil {
		return nil, fmt.Errorf("designs: update design %d: %w", id, res.Error)
	}
	if res.RowsAffected == 0 {
		return nil, core.ErrNotFound
	}
	got, err := s.Get(ctx, accountID, id)
	if err != nil {
		return nil, fmt.Errorf("designs: update: %w", err)
	}
	return got, nil
}

// Get returns one design of the account. Errors: ErrNotFound.
func (s *Designs) Get(ctx context.Context, accountID, id int64) (*models.Design, error) {
	var d models.Design
	if err := s.db.R.WithContext(ctx).Where("user_id = ? AND id = ?", accountID, id).First(&d).Error; err != nil {
		return nil, core.NotFoundOr(err, "designs: get")
	}
	return &d, nil
}

// Each calls fn for every design of the account (without its JSON).
func (s *Designs) Each(ctx context.Context, accountID int64, f core.ListFilter, fn func(*models.Design) error) error {
	return each(ctx, "designs: list", f, func() *gorm.DB {
		q := s.db.R.Model(&models.Design{}).Select("id", "user_id", "name", "template_id", "template_html", "created_at", "updated_at").Where("user_id = ?", accountID)
		if f.Search != "" {
			q = q.Where(`LOWER(name) LIKE ? ESCAPE '\'`, core.LikePattern(strings.ToLower(strings.TrimSpace(f.Search))))
		}
		return q
	}, func(d *models.Design) int64 { return d.ID }, fn)
}

// Delete removes a design. Errors: ErrNotFound.
func (s *Designs) Delete(ctx context.Context, accountID, id int64) error {
	if err := core.DeleteAll(ctx, s.db, accountID, &models.Design{}, []int64{id}, core.NoScope); err != nil {
		return fmt.Errorf("designs: delete: %w", err)
	}
	return nil
}

// Preview renders a design's HTML with a contact's values (contactID > 0)
// or the sample values, the way a mail would show it: values HTML-escaped,
// unknown placeholders empty. Errors: ErrNotFound (contact).
func (s *Designs) Preview(ctx context.Context, accountID int64, htmlCode string, contactID int64) (string, error) {
	values := s.templates.SampleValues()
	if contactID > 0 {
		c, err := s.contacts.Get(ctx, accountID, contactID)
		if err != nil {
			return "", fmt.Errorf("designs: preview: %w", err)
		}
		values = ContactValues(c)
		for _, k := range core.SenderPlaceholders {
			if v, ok := s.templates.SampleValues()[k]; ok {
				values[k] = v
			}
		}
	}
	if err := s.orgValues(ctx, accountID, values); err != nil {
		return "", err
	}
	return delivery.Compile(htmlCode).Render(delivery.HTMLEscaped(func(name string) string { return values[name] })), nil
}

// PreviewMarked is Preview of htmlCode with mark(i) inserted at the start
// of each tracked link, i its index in a send's links (the click map).
// mark's answer is HTML written as it is. Errors: as Preview.
func (s *Designs) PreviewMarked(ctx context.Context, accountID int64, htmlCode string, mark func(i int) string) (string, error) {
	return s.Preview(ctx, accountID, delivery.MarkLinks(htmlCode, mark), 0)
}

// orgValues puts the account's organisation profile's placeholders into
// values, the logo's address relative to this server (previews are shown
// by it).
func (s *Designs) orgValues(ctx context.Context, accountID int64, values map[string]string) error {
	org, err := core.OrgPlaceholderValues(ctx, s.db.R, accountID, "")
	if err != nil {
		return fmt.Errorf("designs: preview: %w", err)
	}
	for k, v := range org {
		values[k] = v
	}
	return nil
}

// PreviewOf says whose values a preview shows: a contact's (0: the
// account's first contact, or the samples when it has none) and a
// sender's (0: the samples).
type PreviewOf struct {
	ContactID, SenderID int64
}

// PreviewFor renders a design as one of the account's contacts would get
// it from the chosen sender, so that the compose page shows the mail as
// it will be rather than a sample's. shownFor is the contact's address
// ("" when the samples stood in). Errors: ErrNotFound (contact, sender).
func (s *Designs) PreviewFor(ctx context.Context, accountID int64, htmlCode string, of PreviewOf) (html, shownFor string, err error) {
	values := s.templates.SampleValues()
	id := of.ContactID
	if id == 0 {
		var ids []int64
		if err := s.db.R.WithContext(ctx).Table("contacts").Where("user_id = ?", accountID).Order("id").Limit(1).Pluck("id", &ids).Error; err != nil {
			return "", "", fmt.Errorf("designs: preview: a contact of account %d: %w", accountID, err)
		}
		if len(ids) > 0 {
			id = ids[0]
		}
	}
	if id > 0 {
		c, err := s.contacts.Get(ctx, accountID, id)
		if err != nil {
			return "", "", fmt.Errorf("designs: preview: %w", err)
		}
		contact := ContactValues(c)
		for _, k := range core.SenderPlaceholders {
			contact[k] = values[k]
		}
		values, shownFor = contact, c.Email
	}
	if of.SenderID > 0 {
		snd, err := deliverability.Sender(ctx, s.db.R, accountID, of.SenderID)
		if err != nil {
			return "", "", fmt.Errorf("designs: preview: %w", err)
		}
		values["sender_name"], values["sender_address"] = snd.FromName, postalAddress(snd)
	}
	if err := s.orgValues(ctx, accountID, values); err != nil {
		return "", "", err
	}
	return delivery.Compile(htmlCode).Render(delivery.HTMLEscaped(func(name string) string { return values[name] })), shownFor, nil
}

// ContactValues are a contact's placeholder values: the reserved fields
// (country by name) and its custom fields.
func ContactValues(c *models.ContactView) map[string]string {
	v := map[string]string{
		"first_name": c.FirstName, "last_name": c.LastName, "email": c.Email, "country": c.Country,
		"state": c.State, "city": c.City, "address_line1": c.AddressLine1, "address_line2": c.AddressLine2,
		"state_province_region": c.StateProvinceRegion, "postal_code": c.PostalCode, "full_name": c.Fullname,
	}
	if c.AltEmail != nil {
		v["alt_email"] = *c.AltEmail
	}
	for name, cv := range c.CustomField {
		if cv.FieldValue != nil {
			v[name] = *cv.FieldValue
		}
	}
	return v
}
