// Package contacts holds the pages of the audience's contacts: the list
// and the contact form, contact types, custom fields and CSV imports.
// They share a row of tabs.
package contacts

import (
	"net/url"
	"strconv"

	"herald/models"
	"herald/views"
)

// The tabs of the contacts area.
const (
	TabContacts = "contacts"
	TabTypes    = "types"
	TabFields   = "fields"
	TabImport   = "import"
)

// The addresses of the contacts area.
const (
	ListURL    = "/contacts"
	NewURL     = "/contacts/new"
	TypesURL   = "/contacts/types"
	FieldsURL  = "/contacts/fields"
	ImportURL  = "/contacts/import"
	SampleURL  = "/contacts/import/sample.csv"
	StatesURL  = "/contacts/states"
	CitiesURL  = "/contacts/cities"
	BulkURL    = "/contacts/bulk-delete"
	importsURL = "/contacts/import/"
)

// --- Contact types

// TypeList is a page of contact types with their contact counts.
type TypeList struct {
	Rows  []models.ContactTypeCount
	Query views.ListQuery
	Pager views.Pager
	CSRF  string
}

// TypeForm is the name of a contact type, new (ID 0) or renamed.
type TypeForm struct {
	ID     int64
	Name   string
	Errors views.Errors
	CSRF   string
}

// Types is the contact types page.
type Types struct {
	List   TypeList
	Create TypeForm
}

// TypeURL is where a contact type is renamed (POST).
func TypeURL(id int64) string { return TypesURL + "/" + strconv.FormatInt(id, 10) }

// TypeRowID is the element id of a contact type's row.
func TypeRowID(id int64) string { return "type-" + strconv.FormatInt(id, 10) }

func typeFormID(id int64) string { return "type-edit-" + strconv.FormatInt(id, 10) }

// --- Contacts

// List is a page of contacts, narrowed by search and contact type.
type List struct {
	Rows   []models.ContactView
	Query  views.ListQuery
	TypeID int64 // 0: every type
	Pager  views.Pager
	CSRF   string
	// TagNames are the account's tags, offered by the bulk tag controls.
	TagNames []string
	// Levels are the rows' engagement levels, by contact id.
	Levels map[int64]string
}

// Filter is the address of the list with the same search and type.
func (l List) Filter() url.Values {
	v := url.Values{}
	if l.TypeID > 0 {
		v.Set("type", strconv.FormatInt(l.TypeID, 10))
	}
	return v
}

// Page is the contacts list page.
type Page struct {
	List  List
	Types []models.ContactType
}

// EditURL is the page of a contact's form.
func EditURL(id int64) string { return ContactURL(id) + "/edit" }

// ContactURL is where a contact is saved (POST).
func ContactURL(id int64) string { return ListURL + "/" + strconv.FormatInt(id, 10) }

func deleteURL(id int64) string { return ContactURL(id) + "/delete" }

// CustomInput is the input of one custom field in the contact form.
type CustomInput struct {
	Name  string // the field's name: the form field is custom_field[Name]
	Label string
	Type  string // text, number, datetime-local
	Value string
}

// FormName is the form field of the custom field.
func (ci CustomInput) FormName() string { return "custom_field[" + ci.Name + "]" }

// ErrorKey is the key of the custom field's validation messages.
func (ci CustomInput) ErrorKey() string { return "custom_field." + ci.Name }

// Form is a contact, new (ID 0) or edited, with the choices of its selects.
type Form struct {
	ID                  int64
	ContactTypeID       string
	FirstName           string
	LastName            string
	Email               string
	AltEmail            string
	Country             string // the country's id
	State               string // a state's id, or a stored name no state matches
	City                string // a city's id, or a stored name no city matches
	AddressLine1        string
	AddressLine2        string
	StateProvinceRegion string
	PostalCode          string
	Custom              []CustomInput

	Types     []models.ContactType
	Countries []views.Option
	States    views.Choices
	Cities    views.Choices

	Errors views.Errors
	Other  []string // messages of no field of the form
	CSRF   string

	// Segments are shown on an existing contact's page (nil: not read,
	// as after a failed save).
	Segments []SegmentLink
	// Tags is the tags card of an existing contact's page (nil: none).
	Tags *Tags
	// Privacy is the consent and privacy cards of an existing contact's
	// page (nil: none, as after a failed save).
	Privacy *Privacy
	// Engagement is an existing contact's engagement card (nil: none).
	Engagement *Engagement
}

// SegmentLink is one segment on a contact's page: the segments of its
// type and those that hold its address by hand, each with a link that
// explains why the contact is in or out.
type SegmentLink struct {
	Name   string
	URL    string // the segment's page
	WhyURL string
	In     bool
	ByHand bool
}

// Action is where the form is posted.
func (f Form) Action() string {
	if f.ID == 0 {
		return ListURL
	}
	return ContactURL(f.ID)
}

// --- Custom fields

// FieldRow is a reserved or custom field as the page lists it.
type FieldRow struct {
	ID        int64
	Name      string
	Label     string
	Type      string
	CreatedAt models.Timestamp
}

// Fields is the custom fields page.
type Fields struct {
	Reserved []FieldRow
	Custom   []FieldRow
	Form     FieldForm
	CSRF     string
}

// FieldForm adds a custom field.
type FieldForm struct {
	Name   string
	Type   string
	Types  []string
	Errors views.Errors
	CSRF   string
}

func fieldDeleteURL(id int64) string { return FieldsURL + "/" + strconv.FormatInt(id, 10) + "/delete" }

// FieldTypeLabel names a field type for people.
func FieldTypeLabel(t string) string {
	switch t {
	case "number":
		return "Number"
	case "datetime-local":
		return "Date and time"
	case "text", "":
		return "Text"
	}
	return t
}

// --- Imports

// ImportForm uploads a CSV file into a contact type.
type ImportForm struct {
	ContactTypeID string
	// Basis and BasisOther are the chosen basis of the contacts' consent
	// (a models.ConsentBasis… word, or "other" with the words).
	Basis      string
	BasisOther string
	Types      []models.ContactType
	Fields     []ImportField // what a column may fill, for the preview
	Errors     views.Errors
	Other      []string
	CSRF       string
}

// Action is where a browser without JavaScript posts the file: the CSRF
// token rides in the query string, so that it is checked without reading
// the multipart body. htmx sends it as the X-CSRF-Token header instead.
func (f ImportForm) Action() string { return ImportURL + "?_csrf=" + url.QueryEscape(f.CSRF) }

// Progress is an import as its panel shows it: progress while it runs,
// the report when it has ended.
type Progress struct {
	Import   models.Import
	TypeName string
	// OnImportPage: the panel is on the import page, whose recent imports
	// are redrawn (out of band) with the panel's last answer.
	OnImportPage bool
}

// Running reports whether the import is still going.
func (p Progress) Running() bool { return p.Import.Status == "running" }

// Percent is how much of the file was read, 0 to 100; -1 when the size is unknown.
func (p Progress) Percent() int64 {
	if p.Import.BytesTotal <= 0 {
		return -1
	}
	pc := p.Import.BytesRead * 100 / p.Import.BytesTotal
	return min(max(pc, 0), 100)
}

// ImportPage is the import page: the form, the import just started (if
// any) and the latest imports.
type ImportPage struct {
	Form    ImportForm
	Current *Progress
	Recent  []Progress
}

// ImportReportURL is the page of one import.
func ImportReportURL(id int64) string { return importsURL + strconv.FormatInt(id, 10) }

// ProgressURL is what the panel polls.
func (p Progress) ProgressURL() string {
	u := ImportReportURL(p.Import.ID) + "/progress"
	if p.OnImportPage {
		u += "?recent=1"
	}
	return u
}

// ListOfType is the contacts list narrowed to one contact type.
func ListOfType(id int64) string { return ListURL + "?type=" + strconv.FormatInt(id, 10) }

// ImportField is a field a file's column may fill: a reserved field or a
// custom field of the account.
type ImportField struct {
	Name     string
	Label    string
	Reserved bool
}
