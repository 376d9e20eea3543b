package audience

import (
	"context"
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"fmt"
	"log/slog"
	"net/mail"
	"slices"
	"strings"
	"time"

	"gorm.io/gorm"
	"gorm.io/gorm/clause"

	"herald/i18n"
	"herald/models"
	"herald/service/core"
	"herald/service/internal/record"
)

// Event kinds of sign-ups (the event webhooks: docs/EVENTS.md).
const (
	EventSubscribe = record.EventSubscribe
	EventConfirm   = record.EventConfirm
)

// The answers of a sign-up (decisions.md 10): the same whether the
// address was known or not.
const (
	MsgCheckInbox = "Check your inbox to confirm."
	MsgSubscribed = "Subscribed."
)

// ErrConfirmationUnsent answers a sign-up whose confirmation mail could
// not be sent (the address may try again at once).
var ErrConfirmationUnsent = &core.Error{Code: core.CodeUnavailable, Message: "The confirmation email could not be sent. Please try again later."}

// ConfirmValidFor is how long a confirmation link works.
const ConfirmValidFor = 7 * 24 * time.Hour

// ResendAfter is how long after a confirmation mail the next one to the
// same address may go (within the account).
const ResendAfter = 10 * time.Minute

// SignupInput is one post of a public form.
type SignupInput struct {
	Email     string
	FirstName string
	LastName  string
	Custom    map[string]string // values by custom field name; names the form does not show are ignored
	Groups    []string          // chosen group ids; ids the form does not offer are ignored
	// Website is the hidden field a person never fills ("" from a person).
	Website string
	// Stamp is the hosted page's signed time field ("" from the snippet).
	Stamp     string
	IP        string
	UserAgent string
	// AcceptLanguage is the post's Accept-Language header: the person's
	// language when neither the contact nor the form names one.
	AcceptLanguage string
}

// SignupResult is what the public page answers.
type SignupResult struct {
	Form    *models.Form
	Message string // MsgCheckInbox or MsgSubscribed
}

// ConsentText is the wording a form shows beside its button in language
// l (nil: English) and keeps in each sign-up's consent record: what the
// person agreed to.
func ConsentText(l *i18n.Locale, f *models.Form) string {
	if l == nil {
		l = i18n.English()
	}
	if f.DoubleOptIn == 1 {
		return l.T("form.consent.double", "Form", f.Name)
	}
	return l.T("form.consent.single", "Form", f.Name)
}

// PageLocale is the language form f's hosted page speaks to a browser
// sending acceptLanguage: the form's, else the browser's, else English
// (the person is not known yet).
func PageLocale(f *models.Form, acceptLanguage string) *i18n.Locale {
	return i18n.Pick("", f.Language, acceptLanguage)
}

// shownConsent is the consent text a post of form f was shown: the hosted
// page's (it carries the signed time field) spoke the browser's language;
// the embeddable snippet, copied from the console, the form's or English.
func shownConsent(f *models.Form, in SignupInput) string {
	accept := in.AcceptLanguage
	if in.Stamp == "" {
		accept = ""
	}
	return ConsentText(PageLocale(f, accept), f)
}

// Public returns the form published as publicID. Errors: ErrNotFound.
func (s *Forms) Public(ctx context.Context, publicID string) (*models.Form, error) {
	if publicID == "" || len(publicID) > 64 {
		return nil, core.ErrNotFound
	}
	var f models.Form
	if err := s.db.R.WithContext(ctx).Where("public_id = ?", publicID).First(&f).Error; err != nil {
		return nil, core.NotFoundOr(err, "forms: public form")
	}
	return &f, nil
}

// FormFields returns the custom fields form f shows, in its order (a
// field deleted since is left out).
func (s *Forms) FormFields(ctx context.Context, f *models.Form) ([]models.Field, error) {
	if len(f.Fields) == 0 {
		return nil, nil
	}
	customs, err := customFields(ctx, s.db.R, f.UserID)
	if err != nil {
		return nil, err
	}
	var out []models.Field
	for _, name := range f.Fields {
		if i := slices.IndexFunc(customs, func(c models.Field) bool { return c.FieldName == name }); i >= 0 {
			out = append(out, customs[i])
		}
	}
	return out, nil
}

// FormGroups returns the unsubscribe groups form f offers, in its order.
func (s *Forms) FormGroups(ctx context.Context, f *models.Form) ([]models.UnsubscribeGroup, error) {
	if len(f.GroupIDs) == 0 {
		return nil, nil
	}
	var gs []models.UnsubscribeGroup
	if err := s.db.R.WithContext(ctx).Where("user_id = ? AND id IN ?", f.UserID, []int64(f.GroupIDs)).Find(&gs).Error; err != nil {
		return nil, fmt.Errorf("forms: groups of form %d: %w", f.ID, err)
	}
	slices.SortFunc(gs, func(a, b models.UnsubscribeGroup) int {
		return slices.Index(f.GroupIDs, a.ID) - slices.Index(f.GroupIDs, b.ID)
	})
	return gs, nil
}

// cleanSignup validates a sign-up against its form: the address, the
// names and the form's own custom fields, all single-line text.
func (s *Forms) cleanSignup(ctx context.Context, f *models.Form, in SignupInput) (models.Contact, map[string]string, []int64, error) {
	fields, err := s.FormFields(ctx, f)
	if err != nil {
		return models.Contact{}, nil, nil, err
	}
	p := core.Problems{}
	custom := map[string]string{}
	for _, fl := range fields {
		if v, ok := in.Custom[fl.FieldName]; ok {
			key := "custom_field." + fl.FieldName
			if !core.ValidText(v) {
				p.AddReason(key, core.ReasonUTF8, core.MsgNUL(fl.FieldName))
				continue
			}
			// Nothing a stranger types is stored with control characters.
			p.SingleLine(key, strings.TrimSpace(v))
			custom[fl.FieldName] = v
		}
	}
	c, values := cleanContact(ContactInput{Email: in.Email, FirstName: in.FirstName, LastName: in.LastName, Custom: custom}, fields, false, p)
	if err := p.Err(); err != nil {
		return c, nil, nil, err
	}
	var groups []int64
	for _, g := range in.Groups {
		id, err := core.ParseID(g)
		if err == nil && slices.Contains(f.GroupIDs, id) && !slices.Contains(groups, id) {
			groups = append(groups, id)
		}
	}
	return c, values, groups, nil
}

// hashToken is how a confirmation token is kept.
func hashToken(tok string) string {
	h := sha256.Sum256([]byte(tok))
	return hex.EncodeToString(h[:])
}

func newToken() string {
	b := make([]byte, 32)
	_, _ = rand.Read(b)
	return base64.RawURLEncoding.EncodeToString(b)
}

// pendingMail is a confirmation mail to send once the sign-up committed.
type pendingMail struct {
	rowID  int64
	to     mail.Address
	token  string
	locale *i18n.Locale
}

// Submit takes one post of form publicID. A new address becomes a contact
// of the form's type: unconfirmed with one confirmation mail (at most one
// per address per ResendAfter) on a double-opt-in form, confirmed (and in
// the chosen groups) on a single-opt-in one. A known address changes
// nothing but may get its confirmation mail again; the answer is the same
// either way. A post whose hidden field is filled is answered the same and
// stores nothing. Errors: ErrNotFound (no such form), validation (the
// address, names, fields; a post faster than MinFillTime), CodeRateLimited
// (the limits, with RetryAfter).
func (s *Forms) Submit(ctx context.Context, publicID string, in SignupInput) (*SignupResult, error) {
	if err := s.limitIP(ctx, in.IP); err != nil {
		return nil, err
	}
	f, err := s.Public(ctx, publicID)
	if err != nil {
		return nil, err
	}
	if err := s.limitForm(ctx, f.ID); err != nil {
		return nil, err
	}
	res := &SignupResult{Form: f, Message: MsgSubscribed}
	if f.DoubleOptIn == 1 {
		res.Message = MsgCheckInbox
	}
	if in.Website != "" {
		return res, nil // a bot filled the field no person sees: it learns nothing
	}
	if in.Stamp != "" {
		if err := s.checkStamp(ctx, f.PublicID, in.Stamp); err != nil {
			return nil, err
		}
	}
	c, values, groups, err := s.cleanSignup(ctx, f, in)
	if err != nil {
		return nil, err
	}
	erased := false
	if s.erased != nil && s.liftErasure != nil {
		if erased, err = s.erased(ctx, f.UserID, c.Email); err != nil {
			return nil, err
		}
	}
	var pending *pendingMail
	err = s.db.W.WithContext(ctx).Transaction(func(tx *gorm.DB) error {
		var err error
		pending, err = s.signup(ctx, tx, f, c, values, groups, in, erased)
		return err
	})
	if err != nil {
		return nil, core.Wrapf(err, "forms: sign-up")
	}
	if pending != nil {
		if err := s.mail.SendFormConfirmation(ctx, pending.to, pending.locale, f, pending.token); err != nil {
			// The address may try again at once: the mail was not sent.
			if uerr := s.db.W.WithContext(ctx).Exec("UPDATE form_confirmations SET sent_at = NULL WHERE id = ?", pending.rowID).Error; uerr != nil {
				slog.ErrorContext(ctx, "forms: unmark an unsent confirmation", "err", uerr)
			}
			return nil, ErrConfirmationUnsent
		}
	}
	return res, nil
}

// signup writes one sign-up inside tx and returns the confirmation mail
// to send after the commit (nil: none). erased: the account erased the
// address (asked before the transaction).
func (s *Forms) signup(ctx context.Context, tx *gorm.DB, f *models.Form, c models.Contact, values map[string]string, groups []int64, in SignupInput, erased bool) (*pendingMail, error) {
	now := s.now()
	var old models.Contact
	err := tx.Raw("SELECT * FROM contacts WHERE user_id = ? AND contact_type_id = ? AND email = ? AND deleted_at IS NULL"+s.db.SQL().ForUpdate(),
		f.UserID, f.ContactTypeID, c.Email).Scan(&old).Error
	if err != nil {
		return nil, fmt.Errorf("forms: read the contact: %w", err)
	}
	double := f.DoubleOptIn == 1
	switch {
	case old.ID == 0:
		// A fresh sign-up through a form is the one way back for an
		// address erased at the person's request (decisions.md 10).
		if erased {
			if err := s.liftErasure(ctx, tx, f.UserID, c.Email); err != nil {
				return nil, err
			}
		}
		at := models.NewTimestamp(now)
		c.UserID, c.ContactTypeID, c.CreatedAt, c.UpdatedAt = f.UserID, f.ContactTypeID, at, at
		c.CustomFields = mergeCustom("", values)
		c.Language = f.Language
		c.Status = models.ContactConfirmed
		if double {
			c.Status = models.ContactUnconfirmed
		}
		c.Consent = models.Consent{Source: models.ConsentForm, FormID: f.ID, At: &at,
			IP: core.Truncate(in.IP, 64), UserAgent: core.Truncate(cleanAgent(in.UserAgent), 512), Text: shownConsent(f, in)}
		res := tx.Clauses(clause.OnConflict{DoNothing: true}).Create(&c)
		if res.Error != nil {
			return nil, fmt.Errorf("forms: add the contact: %w", res.Error)
		}
		if res.RowsAffected == 0 {
			return nil, nil // another post of the same address won: answered the same
		}
		if err := s.segments.refreshContacts(ctx, tx, f.UserID, f.ContactTypeID, []int64{c.ID}); err != nil {
			return nil, err
		}
		if err := record.AddDaily(tx, f.UserID, now, record.Daily{record.DailyContactsAdded: 1}); err != nil {
			return nil, err
		}
		if err := s.events.Record(tx, &models.SendMessage{UserID: f.UserID, Email: c.Email}, EventSubscribe,
			record.EventExtra{Status: c.Status, URL: s.PublicURL(f)}, now); err != nil {
			return nil, err
		}
		if !double {
			return nil, joinGroups(tx, f, c.Email, groups, now)
		}
		return s.newConfirmation(ctx, tx, f, &c, groups, in.AcceptLanguage, now)
	case old.Status == models.ContactUnconfirmed && double:
		return s.newConfirmation(ctx, tx, f, &old, groups, in.AcceptLanguage, now)
	case old.Status == models.ContactUnconfirmed:
		// A single-opt-in form vouches for its sign-ups.
		if err := s.markConfirmed(ctx, tx, &old, nil, now); err != nil {
			return nil, err
		}
		return nil, joinGroups(tx, f, old.Email, groups, now)
	}
	return nil, nil // confirmed already: nothing a stranger's post may change
}

// cleanAgent keeps a user agent printable.
func cleanAgent(ua string) string {
	return strings.Map(func(r rune) rune {
		if core.HasControl(string(r)) {
			return -1
		}
		return r
	}, strings.ToValidUTF8(ua, ""))
}

// newConfirmation records a confirmation mail of contact c, unless the
// address got one less than ResendAfter ago (in the account). The mail
// speaks the contact's language, else the form's, else the post's
// Accept-Language (acceptLanguage), else English; the row keeps it for the
// link's page.
func (s *Forms) newConfirmation(ctx context.Context, tx *gorm.DB, f *models.Form, c *models.Contact, groups []int64, acceptLanguage string, now time.Time) (*pendingMail, error) {
	var recent int64
	if err := tx.WithContext(ctx).Model(&models.FormConfirmation{}).
		Where("user_id = ? AND email = ? AND sent_at > ?", f.UserID, c.Email, models.NewTimestamp(now.Add(-ResendAfter))).Count(&recent).Error; err != nil {
		return nil, fmt.Errorf("forms: recent confirmations: %w", err)
	}
	if recent > 0 {
		return nil, nil
	}
	tok := newToken()
	at := models.NewTimestamp(now)
	l := i18n.Pick(c.Language, f.Language, acceptLanguage)
	row := models.FormConfirmation{UserID: f.UserID, FormID: f.ID, ContactID: c.ID, Email: c.Email, TokenHash: hashToken(tok),
		Groups: groups, SentAt: &at, ExpiresAt: models.NewTimestamp(now.Add(ConfirmValidFor)), Language: l.Lang(), CreatedAt: at}
	if err := tx.Create(&row).Error; err != nil {
		return nil, fmt.Errorf("forms: record a confirmation: %w", err)
	}
	return &pendingMail{rowID: row.ID, to: mail.Address{Name: fullname(c.FirstName, c.LastName), Address: c.Email}, token: tok, locale: l}, nil
}

// markConfirmed makes contact c confirmed; confirmedAt (nil for a
// single-opt-in form) is kept in its consent.
func (s *Forms) markConfirmed(ctx context.Context, tx *gorm.DB, c *models.Contact, confirmedAt *time.Time, now time.Time) error {
	consent := c.Consent
	if confirmedAt != nil {
		at := models.NewTimestamp(*confirmedAt)
		consent.ConfirmedAt = &at
	}
	if err := tx.WithContext(ctx).Model(&models.Contact{}).Where("id = ?", c.ID).
		Updates(map[string]any{"status": models.ContactConfirmed, "consent": consent, "updated_at": models.NewTimestamp(now)}).Error; err != nil {
		return fmt.Errorf("forms: confirm contact %d: %w", c.ID, err)
	}
	c.Status, c.Consent = models.ContactConfirmed, consent
	return s.segments.refreshContacts(ctx, tx, c.UserID, c.ContactTypeID, []int64{c.ID})
}

// joinGroups applies the person's choice among the groups form f offers:
// the address leaves the recipients (the people avoided) of each chosen
// group and joins those of each group offered but not chosen, as the
// preference page does.
func joinGroups(tx *gorm.DB, f *models.Form, email string, chosen []int64, now time.Time) error {
	if len(f.GroupIDs) == 0 {
		return nil
	}
	if len(chosen) > 0 {
		if err := tx.Exec("DELETE FROM unsubscribers WHERE user_id = ? AND unsubscribe_groups_id IN ? AND email_address = ?", f.UserID, chosen, email).Error; err != nil {
			return fmt.Errorf("forms: join chosen groups: %w", err)
		}
	}
	at := models.NewTimestamp(now)
	for _, g := range f.GroupIDs {
		if slices.Contains(chosen, g) {
			continue
		}
		if err := tx.Exec(`INSERT INTO unsubscribers (user_id, unsubscribe_groups_id, email_address, created_at, updated_at)
			SELECT ?, id, ?, ?, ? FROM unsubscribe_groups WHERE user_id = ? AND id = ? ON CONFLICT DO NOTHING`,
			f.UserID, email, at, at, f.UserID, g).Error; err != nil {
			return fmt.Errorf("forms: leave groups not chosen: %w", err)
		}
	}
	return nil
}

// PublicURL is the hosted page of form f.
func (s *Forms) PublicURL(f *models.Form) string { return s.baseURL + "/f/" + f.PublicID }
