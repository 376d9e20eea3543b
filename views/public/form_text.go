package public

import (
	"strconv"

	"herald/models"
	"herald/views"
)

// SignupText holds every string a person sees on a hosted sign-up page
// and its answers, in one place: the translations of the public pages
// replace this one value per language.
type SignupText struct {
	Email, FirstName, LastName string
	Required                   string // the mark's meaning, for screen readers
	GroupsLegend               string
	Submit                     string
	Honeypot                   string // the hidden field's label (for screen readers that still reach it)
	ThanksTitle                string
	NotFoundTitle, NotFound    string
	TooMany                    string
	FixBelow                   string
	PreviewNote                string
}

// EnglishSignup is the English text of the sign-up pages.
var EnglishSignup = SignupText{
	Email:         "Email address",
	FirstName:     "First name",
	LastName:      "Last name",
	Required:      "required",
	GroupsLegend:  "What would you like to receive?",
	Submit:        "Subscribe",
	Honeypot:      "Leave this field empty",
	ThanksTitle:   "Thank you",
	NotFoundTitle: "Form not found",
	NotFound:      "This sign-up form does not exist or was removed.",
	TooMany:       "Too many sign-ups right now. Please try again in a minute.",
	FixBelow:      "Please check the fields below.",
	PreviewNote:   "Preview: this form is not sent from here.",
}

// ConfirmText holds every string of the confirmation link's pages.
type ConfirmText struct {
	AskTitle, Ask, Button string
	DoneTitle, Done       string
	ExpiredTitle, Expired string
	UnknownTitle, Unknown string
}

// EnglishConfirm is the English text of the confirmation pages.
var EnglishConfirm = ConfirmText{
	AskTitle:     "Confirm your subscription",
	Ask:          "Press the button to confirm that you want to receive these emails.",
	Button:       "Confirm my subscription",
	DoneTitle:    "You are subscribed",
	Done:         "Thank you: your address is confirmed.",
	ExpiredTitle: "This link has expired",
	Expired:      "Confirmation links work for 7 days. Sign up again to get a new one.",
	UnknownTitle: "Link not found",
	Unknown:      "This confirmation link is unknown or no longer valid.",
}

// SignupPage is a hosted sign-up form, or its answer.
type SignupPage struct {
	Lang    string // <html lang>
	Action  string // where the form posts ("" in a preview)
	Form    *models.Form
	Fields  []models.Field
	Groups  []models.UnsubscribeGroup
	Stamp   string // the signed time field
	Consent string // the text the person agrees to
	Values  map[string]string
	Chosen  map[int64]bool
	Errors  map[string][]string
	Message string // a refusal that is no field's (too fast, too many)
	Done    string // the answer of a sign-up ("" while the form is shown)
	Text    SignupText
	Preview bool // the console's live preview: nothing posts
}

func (p SignupPage) lang() string {
	if p.Lang == "" {
		return "en"
	}
	return p.Lang
}

// inputs are the form's text inputs: email, names, then its custom fields.
func (p SignupPage) inputs() []views.Field {
	out := []views.Field{
		{ID: "f-email", Name: "email", Label: p.Text.Email, Type: "email", Autocomplete: "email", Required: true, Value: p.Values["email"], Errors: p.Errors["email"]},
		{ID: "f-first", Name: "first_name", Label: p.Text.FirstName, Autocomplete: "given-name", Value: p.Values["first_name"], Errors: p.Errors["first_name"]},
		{ID: "f-last", Name: "last_name", Label: p.Text.LastName, Autocomplete: "family-name", Value: p.Values["last_name"], Errors: p.Errors["last_name"]},
	}
	for i, f := range p.Fields {
		typ := "text"
		switch f.FieldType {
		case "number":
			typ = "number"
		case "datetime-local":
			typ = "datetime-local"
		}
		out = append(out, views.Field{ID: "f-c" + strconv.Itoa(i), Name: f.FieldName, Label: FieldLabel(f.FieldName), Type: typ,
			Value: p.Values[f.FieldName], Errors: p.Errors["custom_field."+f.FieldName]})
	}
	for i := range out {
		if p.Preview {
			out[i].ID = "preview-" + out[i].ID
		}
	}
	return out
}

// FieldLabel is a custom field's name as a person reads it
// ("favourite_colour" → "Favourite colour").
func FieldLabel(name string) string {
	b := []byte(name)
	for i, c := range b {
		if c == '_' {
			b[i] = ' '
		}
	}
	if len(b) > 0 && b[0] >= 'a' && b[0] <= 'z' {
		b[0] -= 'a' - 'A'
	}
	return string(b)
}

// ConfirmPage is the page of a confirmation link.
type ConfirmPage struct {
	Lang     string
	Action   string // the link itself: the button posts to it
	State    string // "ask", "done", "expired", "unknown"
	FormName string
	Text     ConfirmText
}

func (p ConfirmPage) lang() string {
	if p.Lang == "" {
		return "en"
	}
	return p.Lang
}
