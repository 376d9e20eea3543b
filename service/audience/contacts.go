package audience

import (
	"context"
	"encoding/json"
	"fmt"
	"strconv"
	"strings"

	"gorm.io/gorm"

	"herald/models"
	"herald/service/core"
	"herald/service/internal/record"
	"herald/world"
)

// Contacts keeps the account's contacts and their custom field values;
// every change keeps the segments of the contact's type current.
type Contacts struct {
	db       *core.DB
	segments *Segments
	erasures *Erasures
}

// ContactInput is the body of contacts/add and contacts/update (ContactID
// only for update). Custom holds custom field values by field name.
type ContactInput struct {
	ContactID           string
	ContactTypeID       string
	FirstName           string
	LastName            string
	Email               string
	AltEmail            string
	Country             string
	State               string
	City                string
	AddressLine1        string
	AddressLine2        string
	StateProvinceRegion string
	PostalCode          string
	Custom              map[string]string
	// Consent is how a new contact came (Create only): its Source (api
	// when empty), and the IP and browser where the edge knows them. Its
	// time is the service's clock. The edges' values are recorded, never
	// trusted for anything.
	Consent models.Consent
}

// ContactFilter narrows a contact list.
type ContactFilter struct {
	core.ListFilter
	ContactTypeID int64
}

// cleanContact validates the values of a contact (no database access) and
// returns them in stored form. custom holds the account's custom fields;
// values of fields not given are left out of the returned map.
func cleanContact(in ContactInput, customs []models.Field, requireCountry bool, p core.Problems) (models.Contact, map[string]string) {
	var c models.Contact
	email, ok := core.NormalizeEmail(in.Email)
	if p.Required("email", in.Email) && !ok {
		p.AddReason("email", core.ReasonEmail, core.MsgEmail("email"))
	}
	c.Email = email
	if alt := strings.TrimSpace(in.AltEmail); alt != "" {
		a, ok := core.NormalizeEmail(alt)
		if !ok {
			p.AddReason("alt_email", core.ReasonEmail, core.MsgEmail("alt_email"))
		}
		c.AltEmail = &a
	}
	country := strings.TrimSpace(in.Country)
	switch {
	case country == "" && requireCountry:
		p.AddReason("country", core.ReasonRequired, core.MsgRequired("country"))
	case country != "":
		if ct, ok := world.LookupCountry(country); ok {
			c.Country = strconv.FormatInt(ct.ID, 10)
		} else {
			p.InvalidChoice("country")
		}
	}
	for _, f := range []struct {
		name string
		dst  *string
		v    string
	}{
		{"first_name", &c.FirstName, in.FirstName}, {"last_name", &c.LastName, in.LastName},
		{"state", &c.State, in.State}, {"city", &c.City, in.City},
		{"address_line1", &c.AddressLine1, in.AddressLine1}, {"address_line2", &c.AddressLine2, in.AddressLine2},
		{"state_province_region", &c.StateProvinceRegion, in.StateProvinceRegion}, {"postal_code", &c.PostalCode, in.PostalCode},
	} {
		*f.dst = strings.TrimSpace(f.v)
		if f.dst == &c.FirstName || f.dst == &c.LastName {
			// The names go into the To header of every mail to the contact.
			p.MaxLen(f.name, *f.dst, 255)
			p.SingleLine(f.name, *f.dst)
			continue
		}
		p.Text(f.name, *f.dst, 255)
	}
	values := make(map[string]string, len(in.Custom))
	for name, v := range in.Custom {
		key := "custom_field." + name
		var fld *models.Field
		for i := range customs {
			if customs[i].FieldName == name {
				fld = &customs[i]
				break
			}
		}
		if fld == nil {
			p.Add(key, "The custom field "+name+" does not exist.")
			continue
		}
		v = strings.TrimSpace(v)
		if v == "" {
			values[name] = ""
			continue
		}
		if strings.IndexByte(v, 0) >= 0 {
			p.AddReason(key, core.ReasonNUL, core.MsgNUL(name))
			continue
		}
		switch fld.FieldType {
		case "number":
			f, err := strconv.ParseFloat(v, 64)
			if err != nil {
				p.Add(key, "The "+core.Label(name)+" must be a number.")
				continue
			}
			v = strconv.FormatFloat(f, 'f', -1, 64)
		case "datetime-local":
			d, ok := NormaliseDateTime(v)
			if !ok {
				p.Add(key, "The "+core.Label(name)+" is not a valid date.")
				continue
			}
			v = d
		default:
			if len([]rune(v)) > 65535 {
				p.AddReason(key, core.ReasonMax, core.MsgMax(name, 65535))
			}
		}
		values[name] = v
	}
	return c, values
}

// mergeCustom applies values (empty = remove) onto a stored JSON object.
func mergeCustom(stored models.JSONText, values map[string]string) models.JSONText {
	m := map[string]string{}
	if stored != "" {
		_ = json.Unmarshal([]byte(stored), &m)
	}
	for k, v := range values {
		if v == "" {
			delete(m, k)
		} else {
			m[k] = v
		}
	}
	b, _ := json.Marshal(m)
	return models.JSONText(b)
}

// Create adds a contact. Errors: validation (including an email already in
// the type), ErrNotFound (contact type).
func (s *Contacts) Create(ctx context.Context, accountID int64, in ContactInput) (*models.ContactView, error) {
	var out *models.ContactView
	if err := s.erasures.ready(ctx); err != nil {
		return nil, err
	}
	err := s.db.W.WithContext(ctx).Transaction(func(tx *gorm.DB) error {
		customs, err := customFields(ctx, tx, accountID)
		if err != nil {
			return err
		}
		p := core.Problems{}
		p.Required("contact_type_id", in.ContactTypeID)
		c, values := cleanContact(in, customs, true, p)
		if err := p.Err(); err != nil {
			return err
		}
		typeID, err := core.ParseID(in.ContactTypeID)
		if err != nil {
			return err
		}
		if _, err := contactType(ctx, tx, accountID, typeID); err != nil {
			return err
		}
		if err := emailFree(ctx, tx, typeID, c.Email, 0); err != nil {
			return err
		}
		if err := s.notErased(ctx, tx, accountID, c.Email); err != nil {
			return err
		}
		now := models.NewTimestamp(s.db.Now())
		c.UserID, c.ContactTypeID, c.CreatedAt, c.UpdatedAt = accountID, typeID, now, now
		c.Status, c.Consent = models.ContactConfirmed, consentOf(in.Consent, now)
		c.CustomFields = mergeCustom("", values)
		if err := tx.Create(&c).Error; err != nil {
			return core.TranslateUnique(err, "email")
		}
		if err := s.segments.refreshContacts(ctx, tx, accountID, typeID, []int64{c.ID}); err != nil {
			return err
		}
		if err := record.AddDaily(tx, accountID, c.CreatedAt.Time, record.Daily{record.DailyContactsAdded: 1}); err != nil {
			return err
		}
		out = view(&c, customs, nil)
		return nil
	})
	if err != nil {
		return nil, core.Wrapf(err, "contacts: create")
	}
	return out, nil
}

// Update changes a contact; custom field values not given stay as they
// were. Errors: validation, ErrNotFound (contact or contact type).
func (s *Contacts) Update(ctx context.Context, accountID int64, in ContactInput) (*models.ContactView, error) {
	var out *models.ContactView
	if err := s.erasures.ready(ctx); err != nil {
		return nil, err
	}
	err := s.db.W.WithContext(ctx).Transaction(func(tx *gorm.DB) error {
		customs, err := customFields(ctx, tx, accountID)
		if err != nil {
			return err
		}
		p := core.Problems{}
		p.Required("contact_id", in.ContactID)
		p.Required("contact_type_id", in.ContactTypeID)
		c, values := cleanContact(in, customs, true, p)
		if err := p.Err(); err != nil {
			return err
		}
		id, err := core.ParseID(in.ContactID)
		if err != nil {
			return err
		}
		old, err := contact(ctx, tx, accountID, id)
		if err != nil {
			return err
		}
		typeID, err := core.ParseID(in.ContactTypeID)
		if err != nil {
			return err
		}
		if _, err := contactType(ctx, tx, accountID, typeID); err != nil {
			return err
		}
		if err := emailFree(ctx, tx, typeID, c.Email, id); err != nil {
			return err
		}
		if c.Email != old.Email {
			if err := s.notErased(ctx, tx, accountID, c.Email); err != nil {
				return err
			}
		}
		// How the contact came and where it stands are not the body's.
		c.Status, c.Consent, c.Language = old.Status, old.Consent, old.Language
		c.ID, c.UserID, c.ContactTypeID, c.CreatedAt = id, accountID, typeID, old.CreatedAt
		c.UpdatedAt = models.NewTimestamp(s.db.Now())
		c.CustomFields = mergeCustom(old.CustomFields, values)
		if err := tx.Model(&models.Contact{}).Where("id = ?", id).Select("*").Omit("id", "user_id", "created_at", "deleted_at").Updates(&c).Error; err != nil {
			return core.TranslateUnique(err, "email")
		}
		if old.ContactTypeID != typeID {
			if err := s.segments.refreshContacts(ctx, tx, accountID, old.ContactTypeID, []int64{id}); err != nil {
				return err
			}
		}
		if err := s.segments.refreshContacts(ctx, tx, accountID, typeID, []int64{id}); err != nil {
			return err
		}
		out = view(&c, customs, nil)
		tags, err := tagsOf(ctx, tx, accountID, []int64{id})
		if t := tags[id]; t != nil {
			out.Tags = t
		}
		return err
	})
	if err != nil {
		return nil, core.Wrapf(err, "contacts: update")
	}
	return out, nil
}

// notErased refuses an address the account erased at the person's request.
func (s *Contacts) notErased(ctx context.Context, tx *gorm.DB, accountID int64, email string) error {
	if s.erasures == nil {
		return nil
	}
	erased, err := s.erasures.erased(ctx, tx, accountID, email)
	if err != nil {
		return err
	}
	if erased {
		return core.Invalid("email", MsgErased)
	}
	return nil
}

// consentOf is the consent record of a contact added now: the edge's
// source (api when none), IP and browser, clipped, at the service's time.
func consentOf(in models.Consent, now models.Timestamp) models.Consent {
	if in.Source == "" {
		in.Source = models.ConsentAPI
	}
	in.IP, in.UserAgent, in.Basis = core.Clip(in.IP), core.Clip(in.UserAgent), core.Clip(in.Basis)
	if in.At == nil {
		in.At = &now
	}
	return in
}

func emailFree(ctx context.Context, tx *gorm.DB, typeID int64, email string, selfID int64) error {
	var n int64
	if err := tx.WithContext(ctx).Model(&models.Contact{}).
		Where("contact_type_id = ? AND email = ? AND deleted_at IS NULL AND id <> ?", typeID, email, selfID).Count(&n).Error; err != nil {
		return fmt.Errorf("contacts: is an address free in contact type %d: %w", typeID, err)
	}
	if n > 0 {
		return core.Invalid("email", "The email has already been taken.")
	}
	return nil
}

func contact(ctx context.Context, q *gorm.DB, accountID, id int64) (*models.Contact, error) {
	var c models.Contact
	if err := q.WithContext(ctx).Where("user_id = ? AND id = ? AND deleted_at IS NULL", accountID, id).First(&c).Error; err != nil {
		return nil, core.NotFoundOr(err, "contacts: contact %d", id)
	}
	return &c, nil
}

// Get returns one contact as the API shows it. Errors: ErrNotFound.
func (s *Contacts) Get(ctx context.Context, accountID, id int64) (*models.ContactView, error) {
	c, err := contact(ctx, s.db.R, accountID, id)
	if err != nil {
		return nil, err
	}
	customs, err := customFields(ctx, s.db.R, accountID)
	if err != nil {
		return nil, fmt.Errorf("contacts: custom fields of account %d: %w", accountID, err)
	}
	v := view(c, customs, nil)
	tags, err := tagsOf(ctx, s.db.R, accountID, []int64{c.ID})
	if err != nil {
		return nil, err
	}
	if t := tags[c.ID]; t != nil {
		v.Tags = t
	}
	return v, nil
}

// Each calls fn for every contact of the account (narrowed by the filter),
// with its contact type embedded, reading in batches.
func (s *Contacts) Each(ctx context.Context, accountID int64, f ContactFilter, fn func(*models.ContactView) error) error {
	customs, err := customFields(ctx, s.db.R, accountID)
	if err != nil {
		return fmt.Errorf("contacts: custom fields of account %d: %w", accountID, err)
	}
	var types []models.ContactType // labels are made once per list, not per row
	if err := s.db.R.WithContext(ctx).Where("user_id = ?", accountID).Find(&types).Error; err != nil {
		return fmt.Errorf("contacts: contact types of account %d: %w", accountID, err)
	}
	byID := make(map[int64]*models.ContactType, len(types))
	for i := range types {
		byID[types[i].ID] = &types[i]
	}
	// The tags of each batch of contacts are read with it, in one query.
	var tags map[int64][]string
	fetch := func(q *gorm.DB, rows *[]models.Contact) error {
		if err := record.ScanContacts(q, rows); err != nil {
			return err
		}
		ids := make([]int64, len(*rows))
		for i := range *rows {
			ids[i] = (*rows)[i].ID
		}
		var err error
		tags, err = tagsOf(ctx, s.db.R, accountID, ids)
		return err
	}
	return core.EachFetched(ctx, f.ListFilter.SortedBy(ContactSorts), "", func() *gorm.DB {
		q := s.db.R.Model(&models.Contact{}).Select(record.ContactColumns(s.db.SQL())).Where("user_id = ? AND deleted_at IS NULL", accountID)
		if f.ContactTypeID > 0 {
			q = q.Where("contact_type_id = ?", f.ContactTypeID)
		}
		if f.Search != "" {
			pat := core.LikePattern(strings.ToLower(strings.TrimSpace(f.Search)))
			q = q.Where(`(email LIKE ? ESCAPE '\' OR LOWER(first_name || ' ' || last_name) LIKE ? ESCAPE '\')`, pat, pat)
		}
		return q
	}, fetch, func(c *models.Contact) int64 { return c.ID }, func(c *models.Contact) error {
		v := view(c, customs, byID[c.ContactTypeID])
		if t := tags[c.ID]; t != nil {
			v.Tags = t
		}
		return fn(v)
	})
}

// Count returns how many contacts match the filter (for the console's pages).
func (s *Contacts) Count(ctx context.Context, accountID int64, f ContactFilter) (int64, error) {
	q := s.db.R.WithContext(ctx).Model(&models.Contact{}).Where("user_id = ? AND deleted_at IS NULL", accountID)
	if f.ContactTypeID > 0 {
		q = q.Where("contact_type_id = ?", f.ContactTypeID)
	}
	if f.Search != "" {
		pat := core.LikePattern(strings.ToLower(strings.TrimSpace(f.Search)))
		q = q.Where(`(email LIKE ? ESCAPE '\' OR LOWER(first_name || ' ' || last_name) LIKE ? ESCAPE '\')`, pat, pat)
	}
	var n int64
	if err := q.Count(&n).Error; err != nil {
		return 0, fmt.Errorf("contacts: count of account %d: %w", accountID, err)
	}
	return n, nil
}

// Delete soft-deletes one contact. Errors: ErrNotFound.
func (s *Contacts) Delete(ctx context.Context, accountID, id int64) error {
	return s.BulkDelete(ctx, accountID, []int64{id})
}

// BulkDelete soft-deletes all the listed contacts, or none.
// Errors: ErrNotFound when any id is not one of the account's live contacts.
func (s *Contacts) BulkDelete(ctx context.Context, accountID int64, ids []int64) error {
	if err := core.TooMany(len(ids)); err != nil {
		return err
	}
	err := s.db.W.WithContext(ctx).Transaction(func(tx *gorm.DB) error {
		parts := core.Chunks(ids, core.BulkChunk)
		var rows []models.Contact
		for _, part := range parts {
			var got []models.Contact
			if err := tx.Select("id", "contact_type_id").Where("user_id = ? AND id IN ? AND deleted_at IS NULL", accountID, part).Find(&got).Error; err != nil {
				return fmt.Errorf("contacts: contacts to delete: %w", err)
			}
			rows = append(rows, got...)
		}
		if len(rows) != len(ids) {
			return core.ErrNotFound
		}
		now := s.db.Now()
		for _, part := range parts {
			if err := tx.Model(&models.Contact{}).Where("id IN ?", part).Update("deleted_at", now).Error; err != nil {
				return fmt.Errorf("contacts: mark contacts deleted: %w", err)
			}
			if err := dropTags(ctx, tx, accountID, part); err != nil {
				return err
			}
		}
		byType := map[int64][]int64{}
		for _, r := range rows {
			byType[r.ContactTypeID] = append(byType[r.ContactTypeID], r.ID)
		}
		for typeID, list := range byType {
			for _, part := range core.Chunks(list, core.BulkChunk) {
				if err := s.segments.refreshContacts(ctx, tx, accountID, typeID, part); err != nil {
					return err
				}
			}
		}
		return record.AddDaily(tx, accountID, now, record.Daily{record.DailyContactsRemoved: int64(len(rows))})
	})
	if err != nil {
		return core.Wrapf(err, "contacts: delete %d contacts", len(ids))
	}
	return nil
}

// view shapes a contact as the API answers it: custom_field with a label
// and value per custom field of the account (null when it has none),
// fullname, and the country's name when its id is known.
func view(c *models.Contact, customs []models.Field, ct *models.ContactType) *models.ContactView {
	v := &models.ContactView{Contact: *c, Fullname: fullname(c.FirstName, c.LastName), Tags: []string{}, ContactType: ct}
	v.Country = record.CountryName(c.Country)
	if len(customs) > 0 {
		stored := record.ParseCustom(string(c.CustomFields))
		v.CustomField = make(map[string]models.CustomValue, len(customs))
		for _, f := range customs {
			cv := models.CustomValue{FieldName: f.Label}
			if s, ok := stored[f.FieldName]; ok {
				cv.FieldValue = &s
			}
			v.CustomField[f.FieldName] = cv
		}
	}
	return v
}

// FieldLabel is a field's display label: "company_name" → "Company Name".
func FieldLabel(name string) string {
	words := strings.Fields(strings.ReplaceAll(name, "_", " "))
	for i, w := range words {
		words[i] = strings.ToUpper(w[:1]) + w[1:]
	}
	return strings.Join(words, " ")
}

func fullname(first, last string) string { return strings.TrimSpace(first + " " + last) }
