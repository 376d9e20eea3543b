package audience

import (
	"context"
	"crypto/rand"
	"encoding/base32"
	"fmt"
	"net/mail"
	"net/url"
	"slices"
	"strings"
	"time"
	"unicode/utf8"

	"golang.org/x/text/language"
	"gorm.io/gorm"

	"herald/delivery"
	"herald/i18n"
	"herald/models"
	"herald/service/core"
	"herald/service/internal/record"
)

// Forms keeps the account's sign-up forms (decisions.md 10) and takes the
// sign-ups of their public pages (forms_signup.go): a double-opt-in form's
// new address becomes an unconfirmed contact and gets one confirmation
// mail; its link confirms it (forms_confirm.go).
type Forms struct {
	db       *core.DB
	now      func() time.Time
	mail     ConfirmationMailer
	baseURL  string
	events   *record.Events
	settings *core.Settings
	segments *Segments
	rules    *delivery.MachineRules
	limits   FormLimits
	counter  *formCounter

	// liftErasure lifts an erasure of the address (a privacy request)
	// when the person signs up again through a form (Privacy.LiftErasure):
	// the one call site is in signup, inside the sign-up's transaction.
	liftErasure func(ctx context.Context, tx *gorm.DB, accountID int64, email string) error
	erased      func(ctx context.Context, accountID int64, email string) (bool, error)
}

// ConfirmationMailer sends the confirmation mail of a double-opt-in
// sign-up in the person's language l, or the form's own text
// (deliverability.Mail).
type ConfirmationMailer interface {
	SendFormConfirmation(ctx context.Context, to mail.Address, l *i18n.Locale, f *models.Form, token string) error
	FormConfirmationPreview(ctx context.Context, l *i18n.Locale, f *models.Form) (subject, body string, err error)
}

// FormsConfig is what Forms is built from.
type FormsConfig struct {
	DB  *core.DB
	Now func() time.Time
	// Mail sends the confirmation mails (deliverability.Mail).
	Mail ConfirmationMailer
	// BaseURL is herald's public address (the forms' hosted pages).
	BaseURL  string
	Events   *record.Events
	Settings *core.Settings
	Segments *Segments
	// MachineRanges are HERALD_MACHINE_RANGES: a confirmation link opened
	// from them is a machine's.
	MachineRules *delivery.MachineRules
	// Limits are the public posts' limits; the zero value takes
	// DefaultFormLimits.
	Limits FormLimits
	// LiftErasure forgets the account's erasure of an address that signs
	// up again (Privacy.LiftErasure); nil: none.
	LiftErasure func(ctx context.Context, tx *gorm.DB, accountID int64, email string) error
	// Erased reports whether the account erased the address
	// (Privacy.Erased). Asked before the sign-up's transaction: the keyed
	// hash's key is made on first use through the writer, which the
	// transaction would hold (SQLite's one writer).
	Erased func(ctx context.Context, accountID int64, email string) (bool, error)
}

// NewForms builds the forms service.
func NewForms(c FormsConfig) *Forms {
	if c.Limits == (FormLimits{}) {
		c.Limits = DefaultFormLimits
	}
	if c.MachineRules == nil {
		c.MachineRules = &delivery.MachineRules{}
	}
	return &Forms{db: c.DB, now: c.Now, mail: c.Mail, baseURL: c.BaseURL, events: c.Events, settings: c.Settings, segments: c.Segments, rules: c.MachineRules, limits: c.Limits, liftErasure: c.LiftErasure, erased: c.Erased,
		counter: &formCounter{db: c.DB, now: c.Now}}
}

// Limits of a form's settings.
const (
	MaxFormFields = 50 // custom fields shown on one form
	MaxFormGroups = 50 // groups one form offers
	maxFormURL    = 2048
	maxFormLang   = 35
	// MaxConfirmBody is the length of a form's own confirmation text:
	// a short mail, not a newsletter.
	MaxConfirmBody = 5000
)

// FormInput is the body of forms/save and forms/update (ID only for
// update). Fields are custom field names, GroupIDs unsubscribe group ids.
type FormInput struct {
	ID            string
	Name          string
	ContactTypeID string
	DoubleOptIn   string // "0" or "1"; "" is 1
	Fields        []string
	GroupIDs      []string
	RedirectURL   string
	Language      string
	// ConfirmSubject and ConfirmBody are the form's own confirmation mail
	// ("": herald's wording in the person's language): a one-line subject,
	// and plain text that must hold models.ConfirmURLPlaceholder.
	ConfirmSubject string
	ConfirmBody    string
}

// check validates in against the account's records and returns the form
// it describes (without ids and times). Errors: validation, ErrNotFound
// (a contact type or group that is not the account's).
func (s *Forms) check(ctx context.Context, tx *gorm.DB, accountID int64, in FormInput) (*models.Form, error) {
	p := core.Problems{}
	f := &models.Form{UserID: accountID, DoubleOptIn: 1}
	f.Name = strings.TrimSpace(in.Name)
	if p.Required("name", f.Name) {
		p.MaxLen("name", f.Name, 255)
		p.SingleLine("name", f.Name)
	}
	p.Required("contact_type_id", in.ContactTypeID)
	if v := strings.TrimSpace(in.DoubleOptIn); v != "" {
		f.DoubleOptIn = p.Flag("double_opt_in", v)
	}
	f.RedirectURL = strings.TrimSpace(in.RedirectURL)
	if f.RedirectURL != "" {
		if len(f.RedirectURL) > maxFormURL {
			p.AddReason("redirect_url", core.ReasonMax, core.MsgMax("redirect_url", maxFormURL))
		} else if !validRedirect(f.RedirectURL) {
			p.Add("redirect_url", "The redirect url must be a valid URL.")
		}
	}
	if lang, ok := cleanLanguage(in.Language); ok {
		f.Language = lang
	} else {
		p.InvalidChoice("language")
	}
	f.ConfirmSubject = strings.TrimSpace(in.ConfirmSubject)
	if f.ConfirmSubject != "" {
		p.MaxLen("confirm_subject", f.ConfirmSubject, 255)
		p.SingleLine("confirm_subject", f.ConfirmSubject)
	}
	f.ConfirmBody = strings.TrimSpace(strings.ReplaceAll(in.ConfirmBody, "\r\n", "\n"))
	switch {
	case f.ConfirmBody == "":
	case !core.ValidText(f.ConfirmBody):
		p.AddReason("confirm_body", core.ReasonUTF8, core.MsgNUL("confirm_body"))
	case utf8.RuneCountInString(f.ConfirmBody) > MaxConfirmBody:
		p.AddReason("confirm_body", core.ReasonMax, core.MsgMax("confirm_body", MaxConfirmBody))
	case !strings.Contains(f.ConfirmBody, models.ConfirmURLPlaceholder):
		p.Add("confirm_body", "The confirm body must contain "+models.ConfirmURLPlaceholder+", where the link that confirms the address goes.")
	}
	if len(in.Fields) > MaxFormFields {
		p.Merge(core.TooManyItems("fields", MaxFormFields))
	}
	if len(in.GroupIDs) > MaxFormGroups {
		p.Merge(core.TooManyItems("group_ids", MaxFormGroups))
	}
	if err := p.Err(); err != nil {
		return nil, err
	}
	typeID, err := core.ParseID(in.ContactTypeID)
	if err != nil {
		return nil, err
	}
	if _, err := contactType(ctx, tx, accountID, typeID); err != nil {
		return nil, err
	}
	f.ContactTypeID = typeID
	if len(in.Fields) > 0 {
		customs, err := customFields(ctx, tx, accountID)
		if err != nil {
			return nil, err
		}
		for _, name := range in.Fields {
			name = strings.TrimSpace(name)
			if !slices.ContainsFunc(customs, func(c models.Field) bool { return c.FieldName == name }) {
				return nil, core.InvalidBecause("fields", core.ReasonInvalidChoice, "The selected fields is invalid.")
			}
			if !slices.Contains(f.Fields, name) {
				f.Fields = append(f.Fields, name)
			}
		}
	}
	for _, v := range in.GroupIDs {
		id, err := core.ParseID(v)
		if err != nil {
			return nil, err
		}
		var n int64
		if err := tx.WithContext(ctx).Model(&models.UnsubscribeGroup{}).Where("user_id = ? AND id = ?", accountID, id).Count(&n).Error; err != nil {
			return nil, fmt.Errorf("forms: read group %d: %w", id, err)
		}
		if n == 0 {
			return nil, core.ErrNotFound
		}
		if !slices.Contains(f.GroupIDs, id) {
			f.GroupIDs = append(f.GroupIDs, id)
		}
	}
	return f, nil
}

// validRedirect reports whether u is an absolute http(s) address with a
// host and nothing that could break out of a header (control characters,
// spaces): a javascript: or data: address is no redirect.
func validRedirect(u string) bool {
	if core.HasControl(u) || strings.ContainsAny(u, " \t\\") {
		return false
	}
	p, err := url.Parse(u)
	if err != nil || p.Host == "" || p.User != nil {
		return false
	}
	return p.Scheme == "http" || p.Scheme == "https"
}

// cleanLanguage reads an IETF language tag ("" none) into its canonical
// form ("pt-br" → "pt-BR").
func cleanLanguage(v string) (string, bool) {
	v = strings.TrimSpace(v)
	if v == "" {
		return "", true
	}
	if len(v) > maxFormLang || core.HasControl(v) {
		return "", false
	}
	t, err := language.Parse(v)
	if err != nil || t == language.Und {
		return "", false
	}
	return t.String(), true
}

// newPublicID is a form's public name: 16 characters of base32 (80
// random bits), lower case, unguessable.
func newPublicID() string {
	b := make([]byte, 10)
	_, _ = rand.Read(b)
	return strings.ToLower(base32.StdEncoding.EncodeToString(b))
}

// Save adds a form. Errors: validation, ErrNotFound (contact type, group).
func (s *Forms) Save(ctx context.Context, accountID int64, in FormInput) (*models.Form, error) {
	var out *models.Form
	err := s.db.W.WithContext(ctx).Transaction(func(tx *gorm.DB) error {
		f, err := s.check(ctx, tx, accountID, in)
		if err != nil {
			return err
		}
		now := models.NewTimestamp(s.now())
		f.PublicID, f.CreatedAt, f.UpdatedAt = newPublicID(), now, now
		if err := tx.Create(f).Error; err != nil {
			return fmt.Errorf("forms: insert: %w", err)
		}
		out = f
		return nil
	})
	if err != nil {
		return nil, core.Wrapf(err, "forms: save")
	}
	return out, nil
}

// Update replaces a form's settings (its public id stays). Errors:
// validation, ErrNotFound (the form, its contact type, a group).
func (s *Forms) Update(ctx context.Context, accountID int64, in FormInput) (*models.Form, error) {
	var out *models.Form
	err := s.db.W.WithContext(ctx).Transaction(func(tx *gorm.DB) error {
		if strings.TrimSpace(in.ID) == "" {
			// Every missing parameter at once, as the other updates answer.
			p := core.Problems{}
			p.Required("id", in.ID)
			p.Required("name", strings.TrimSpace(in.Name))
			p.Required("contact_type_id", in.ContactTypeID)
			return p.Err()
		}
		id, err := core.ParseID(in.ID)
		if err != nil {
			return err
		}
		old, err := form(ctx, tx, accountID, id)
		if err != nil {
			return err
		}
		f, err := s.check(ctx, tx, accountID, in)
		if err != nil {
			return err
		}
		f.ID, f.PublicID, f.CreatedAt, f.UpdatedAt = old.ID, old.PublicID, old.CreatedAt, models.NewTimestamp(s.now())
		if err := tx.Model(&models.Form{}).Where("user_id = ? AND id = ?", accountID, id).
			Select("name", "contact_type_id", "double_opt_in", "fields", "group_ids", "redirect_url", "language", "confirm_subject", "confirm_body", "updated_at").Updates(f).Error; err != nil {
			return fmt.Errorf("forms: update %d: %w", id, err)
		}
		out = f
		return nil
	})
	if err != nil {
		return nil, core.Wrapf(err, "forms: update")
	}
	return out, nil
}

// ConfirmationPreview is the subject and HTML of form f's confirmation
// mail (in the form's language, else English), with a sample address and
// link, branded with the form's account's profile: what the console shows
// beside the form's settings.
func (s *Forms) ConfirmationPreview(ctx context.Context, f *models.Form) (subject, body string, err error) {
	return s.mail.FormConfirmationPreview(ctx, i18n.Pick("", f.Language, ""), f)
}

// Get returns one form of the account. Errors: ErrNotFound.
func (s *Forms) Get(ctx context.Context, accountID, id int64) (*models.Form, error) {
	return form(ctx, s.db.R, accountID, id)
}

func form(ctx context.Context, q *gorm.DB, accountID, id int64) (*models.Form, error) {
	var f models.Form
	if err := q.WithContext(ctx).Where("user_id = ? AND id = ?", accountID, id).First(&f).Error; err != nil {
		return nil, core.NotFoundOr(err, "forms: form %d", id)
	}
	return &f, nil
}

// Delete removes a form with its pending confirmations (their links stop
// working; the unconfirmed contacts stay until they expire). Errors:
// ErrNotFound.
func (s *Forms) Delete(ctx context.Context, accountID, id int64) error {
	err := s.db.W.WithContext(ctx).Transaction(func(tx *gorm.DB) error {
		if _, err := form(ctx, tx, accountID, id); err != nil {
			return err
		}
		if err := tx.Exec("DELETE FROM form_confirmations WHERE form_id = ?", id).Error; err != nil {
			return fmt.Errorf("forms: delete confirmations of %d: %w", id, err)
		}
		if err := tx.Exec("DELETE FROM forms WHERE user_id = ? AND id = ?", accountID, id).Error; err != nil {
			return fmt.Errorf("forms: delete %d: %w", id, err)
		}
		return nil
	})
	return core.Wrapf(err, "forms: delete")
}

// Each calls fn for every form of the account, newest last, in batches.
func (s *Forms) Each(ctx context.Context, accountID int64, f core.ListFilter, fn func(*models.Form) error) error {
	return core.Each(ctx, f, "forms", func() *gorm.DB {
		q := s.db.R.Model(&models.Form{}).Where("user_id = ?", accountID)
		if f.Search != "" {
			q = q.Where(`LOWER(name) LIKE ? ESCAPE '\'`, core.LikePattern(strings.ToLower(strings.TrimSpace(f.Search))))
		}
		return q
	}, func(r *models.Form) int64 { return r.ID }, fn)
}
