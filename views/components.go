package views

import (
	"strings"

	"github.com/a-h/templ"
)

// Field describes one form control with its label, help and errors.
type Field struct {
	ID           string
	Name         string
	Label        string
	Type         string // input type; "text" when empty
	Value        string
	Placeholder  string
	Help         string
	Autocomplete string
	Form         string // the id of the form the control belongs to, when outside it (table rows)
	Rows         int    // textarea rows
	HideLabel    bool   // keep the label for screen readers only
	Autofocus    bool
	Required     bool
	Errors       []string
	Attrs        templ.Attributes // more attributes of the control (htmx, min, step…)
}

// Option is one choice of a select.
type Option struct {
	Value string
	Label string
}

func (f Field) inputType() string {
	if f.Type == "" {
		return "text"
	}
	return f.Type
}

func (f Field) errorID() string { return f.ID + "-error" }
func (f Field) helpID() string  { return f.ID + "-help" }

// describedBy lists the ids of the help and error texts of the control.
func (f Field) describedBy() string {
	var ids []string
	if f.Help != "" {
		ids = append(ids, f.helpID())
	}
	if len(f.Errors) > 0 {
		ids = append(ids, f.errorID())
	}
	return strings.Join(ids, " ")
}

func (f Field) rows() int {
	if f.Rows <= 0 {
		return 4
	}
	return f.Rows
}

// DNSRecord is one DNS record a person publishes (a sender's domain, the
// bounce domain).
type DNSRecord struct {
	Purpose string // DKIM, SPF, MX …: the record's heading
	Type    string // TXT, MX
	Name    string
	Value   string
	Explain string
}
