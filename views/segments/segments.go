// Package segments holds the pages of segments: the list, the builder of
// a segment's conditions with its live count, and a segment's recipients.
package segments

import (
	"fmt"
	"strconv"
	"strings"

	"herald/models"
	"herald/views"
)

// The addresses of the segments area.
const (
	ListURL       = "/segments"
	NewURL        = "/segments/new"
	CountURL      = "/segments/count"
	ConditionsURL = "/segments/conditions"
)

// SegmentURL is a segment's recipients page (GET) and where it is saved (POST).
func SegmentURL(id int64) string { return ListURL + "/" + strconv.FormatInt(id, 10) }

// EditURL is a segment's builder.
func EditURL(id int64) string { return SegmentURL(id) + "/edit" }

func deleteURL(id int64) string { return SegmentURL(id) + "/delete" }

// Row is a segment as the list shows it.
type Row struct {
	models.SegmentCount
	TypeName string
}

// List is a page of segments.
type List struct {
	Rows  []Row
	Query views.ListQuery
	Pager views.Pager
	CSRF  string
}

// FieldChoice is a field a condition may test.
type FieldChoice struct {
	Name   string
	Label  string
	Type   string // text, number, datetime-local, created_at, tags, engagement
	Custom bool
}

// Condition is one row of the builder: the field, the operator (chosen
// among those of the field's type) and the value, with their messages.
type Condition struct {
	Field     string
	Operator  string
	Value     string
	Operators []views.Option
	InputType string // of the value: text, number, datetime-local
	NoValue   bool   // the operator takes no value (is empty, is not empty)
	Several   bool   // the operator takes several values separated by |
	// Choices are the only values the field takes (engagement levels):
	// one is chosen from a list, several are named in the help.
	Choices []views.Option
	Errors  ConditionErrors
}

// ConditionErrors are the messages of one condition's controls.
type ConditionErrors struct {
	Field, Operator, Value []string
}

// Builder is a segment, new (ID 0) or edited, as its form shows it.
type Builder struct {
	ID            int64
	Name          string
	ContactTypeID string
	QueryType     string // and, or
	Conditions    []Condition
	Fields        []FieldChoice
	Types         []models.ContactType
	Count         Count
	Errors        views.Errors
	Other         []string
	CSRF          string
}

// Action is where the builder saves.
func (b Builder) Action() string {
	if b.ID == 0 {
		return ListURL
	}
	return SegmentURL(b.ID)
}

// Or reports whether any condition suffices.
func (b Builder) Or() bool { return b.QueryType == "or" }

// Count is the live count of the builder: how many contacts match, or
// why the conditions cannot be counted yet.
type Count struct {
	Known    bool // Matching is counted
	Matching int64
	OfType   int64    // contacts of the type in all
	Messages []string // why there is no count
	Hint     string   // shown before anything was counted
}

// Recipients is a segment's recipients page.
type Recipients struct {
	Segment  models.Segment
	TypeName string
	List     RecipientList
	Form     AddForm
}

// RecipientList is a page of a segment's recipients.
type RecipientList struct {
	SegmentID int64
	Total     int64 // every recipient of the segment, whatever the search
	Rows      []models.SegmentRecipient
	Query     views.ListQuery
	Pager     views.Pager
	CSRF      string
}

// AddForm adds a recipient by hand.
type AddForm struct {
	SegmentID int64
	FirstName string
	LastName  string
	Email     string
	Errors    views.Errors
	Other     []string
	CSRF      string
}

// RecipientsURL is where recipients are added (POST).
func RecipientsURL(segmentID int64) string { return SegmentURL(segmentID) + "/recipients" }

func recipientDeleteURL(segmentID, id int64) string {
	return RecipientsURL(segmentID) + "/" + strconv.FormatInt(id, 10) + "/delete"
}

// HasMatching reports whether the page shows a contact that is in the
// segment by its conditions (one "Remove" does not keep out for good).
func (l RecipientList) HasMatching() bool {
	for _, r := range l.Rows {
		if r.ContactID != nil {
			return true
		}
	}
	return false
}

// choicesHelp names the values a field of choices takes, for `in`.
func choicesHelp(choices []views.Option) string {
	vals := make([]string, len(choices))
	for i, o := range choices {
		vals[i] = o.Value
	}
	return fmt.Sprintf("Separate the values with |: %s.", strings.Join(vals, ", "))
}
