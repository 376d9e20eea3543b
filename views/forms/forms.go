// Package forms holds the console's pages of sign-up forms: the list with
// the add form, and one form with its settings, a live preview, its public
// address and the HTML snippet to embed on a site.
package forms

import (
	"html"
	"slices"
	"strconv"
	"strings"

	"herald/models"
	"herald/views"
	"herald/views/public"
)

// URL is the console's forms page.
const URL = "/forms"

// Form adds (ID 0) or edits a sign-up form.
type Form struct {
	ID            int64
	Name          string
	ContactTypeID string
	DoubleOptIn   bool
	Fields        []string
	GroupIDs      []string
	RedirectURL   string
	Language      string
	// ConfirmSubject and ConfirmBody are the form's own confirmation mail
	// ("": Herald's wording, translated).
	ConfirmSubject string
	ConfirmBody    string
	Errors         views.Errors
	CSRF           string
}

// Choices are what a form may pick from: the account's contact types,
// custom fields and unsubscribe groups.
type Choices struct {
	Types  []models.ContactType
	Fields []models.Field
	Groups []models.UnsubscribeGroup
}

// Data is the list page.
type Data struct {
	Rows    []models.Form
	Types   map[int64]string // contact type names by id
	Form    Form
	Choices Choices
	CanEdit bool
}

// Detail is one form's page.
type Detail struct {
	Form      models.Form
	Edit      Form
	Choices   Choices
	PublicURL string
	Snippet   string
	Preview   public.SignupPage
	Mail      MailPreview
	CanEdit   bool
}

// MailPreview is the confirmation mail as a person gets it: its subject
// and HTML (shown in a sandboxed frame).
type MailPreview struct {
	Subject, HTML string
}

func itoa(id int64) string { return strconv.FormatInt(id, 10) }

// DetailURL is one form's console page.
func DetailURL(id int64) string { return URL + "/" + itoa(id) }

func (f Form) hasField(name string) bool { return slices.Contains(f.Fields, name) }

func (f Form) hasGroup(id int64) bool { return slices.Contains(f.GroupIDs, itoa(id)) }

func typeOptions(ts []models.ContactType) []views.Option {
	out := make([]views.Option, len(ts))
	for i, t := range ts {
		out[i] = views.Option{Value: itoa(t.ID), Label: t.Name}
	}
	return out
}

func optIn(f models.Form) string {
	if f.DoubleOptIn == 1 {
		return "Double opt-in"
	}
	return "Single opt-in"
}

// Snippet is the plain HTML that embeds form f on another site, its words
// in language t (the form's): it posts to herald and works without
// JavaScript. It carries the hidden field bots fill, but no time field
// (the page it sits on is not herald's).
func Snippet(t views.Translator, publicURL string, f models.Form, fields []models.Field, groups []models.UnsubscribeGroup, consent string) string {
	e := html.EscapeString
	var b strings.Builder
	b.WriteString(`<form action="` + e(publicURL) + `" method="post" accept-charset="UTF-8">` + "\n")
	b.WriteString(`  <p><label>` + e(t.T("form.email")) + `<br><input type="email" name="email" required autocomplete="email"></label></p>` + "\n")
	b.WriteString(`  <p><label>` + e(t.T("form.first_name")) + `<br><input type="text" name="first_name" autocomplete="given-name"></label></p>` + "\n")
	b.WriteString(`  <p><label>` + e(t.T("form.last_name")) + `<br><input type="text" name="last_name" autocomplete="family-name"></label></p>` + "\n")
	for _, fl := range fields {
		typ := "text"
		if fl.FieldType == "number" || fl.FieldType == "datetime-local" {
			typ = fl.FieldType
		}
		b.WriteString(`  <p><label>` + e(public.FieldLabel(fl.FieldName)) + `<br><input type="` + typ + `" name="` + e(fl.FieldName) + `"></label></p>` + "\n")
	}
	if len(groups) > 0 {
		b.WriteString(`  <fieldset>` + "\n" + `    <legend>` + e(t.T("form.groups_legend")) + `</legend>` + "\n")
		for _, g := range groups {
			b.WriteString(`    <label><input type="checkbox" name="groups[]" value="` + itoa(g.ID) + `"> ` + e(g.GroupName) + `</label><br>` + "\n")
		}
		b.WriteString(`  </fieldset>` + "\n")
	}
	b.WriteString(`  <div style="position:absolute;left:-10000px" aria-hidden="true"><label>` + e(t.T("form.honeypot")) +
		` <input type="text" name="website" value="" tabindex="-1" autocomplete="off"></label></div>` + "\n")
	b.WriteString(`  <p><small>` + e(consent) + `</small></p>` + "\n")
	b.WriteString(`  <p><button type="submit">` + e(t.T("form.submit")) + `</button></p>` + "\n")
	b.WriteString(`</form>`)
	return b.String()
}
