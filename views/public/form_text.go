package public

import (
	"strconv"

	"herald/models"
	"herald/service"
	"herald/views"
)

// SignupPage is a hosted sign-up form, or its answer.
// Its words come from T, in the visitor's language (a preview: the
// form's).
type SignupPage struct {
	T       views.Translator
	Action  string // where the form posts ("" in a preview)
	Form    *models.Form
	Fields  []models.Field
	Groups  []models.UnsubscribeGroup
	Stamp   string // the signed time field
	Consent string // the text the person agrees to
	Values  map[string]string
	Chosen  map[int64]bool
	Errors  map[string][]string
	Message string        // a refusal that is no field's (too fast, too many)
	Done    string        // the answer of a sign-up ("" while the form is shown)
	Preview bool          // the console's live preview: nothing posts
	Brand   service.Brand // the form's account's organisation profile
}

// title is the page's title: the form's name, or "Form not found".
func (p SignupPage) title() string {
	if p.Form == nil {
		return p.T.T("form.not_found_title")
	}
	return p.Form.Name
}

// inputs are the form's text inputs: email, names, then its custom fields.
func (p SignupPage) inputs() []views.Field {
	out := []views.Field{
		{ID: "f-email", Name: "email", Label: p.T.T("form.email"), Type: "email", Autocomplete: "email", Required: true, Value: p.Values["email"], Errors: p.Errors["email"]},
		{ID: "f-first", Name: "first_name", Label: p.T.T("form.first_name"), Autocomplete: "given-name", Value: p.Values["first_name"], Errors: p.Errors["first_name"]},
		{ID: "f-last", Name: "last_name", Label: p.T.T("form.last_name"), Autocomplete: "family-name", Value: p.Values["last_name"], Errors: p.Errors["last_name"]},
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

// ConfirmPage is the page of a confirmation link, in the person's
// language (T).
type ConfirmPage struct {
	T        views.Translator
	Action   string // the link itself: the button posts to it
	State    string // "ask", "done", "expired", "unknown"
	FormName string
	Brand    service.Brand // the form's account's organisation profile
}
