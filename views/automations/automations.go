// Package automations holds the pages of timed email sequences: the list
// with the form that starts one, the builder (a timeline of the emails,
// the settings, set live and pause), the form of one email, and the
// editor of an email's design.
package automations

import (
	"net/url"
	"strconv"
	"time"

	"herald/models"
	"herald/views"
	"herald/views/designs"
)

// ListURL is the list (GET) and where a new automation is posted.
const ListURL = "/automations"

// AutomationURL is an automation's builder (GET) and where its settings
// are saved (POST).
func AutomationURL(utr string) string { return ListURL + "/" + url.PathEscape(utr) }

// LiveURL sets an automation live (POST).
func LiveURL(utr string) string { return AutomationURL(utr) + "/live" }

// PauseURL pauses a live automation (POST).
func PauseURL(utr string) string { return AutomationURL(utr) + "/pause" }

// DuplicateURL copies an automation as a draft (POST).
func DuplicateURL(utr string) string { return AutomationURL(utr) + "/duplicate" }

// DeleteURL deletes an automation (POST).
func DeleteURL(utr string) string { return AutomationURL(utr) + "/delete" }

// EmailsURL is where a new email is posted.
func EmailsURL(utr string) string { return AutomationURL(utr) + "/emails" }

// NewEmailURL is the form of a new email, added at the end.
func NewEmailURL(utr string) string { return EmailsURL(utr) + "/new" }

// EmailPreviewURL answers the preview of the design chosen in the form.
func EmailPreviewURL(utr, email string) string {
	if email == "" {
		return EmailsURL(utr) + "/preview"
	}
	return EmailsURL(utr) + "/preview?email=" + url.QueryEscape(email)
}

// EmailURL is where an email's form is saved (POST).
func EmailURL(utr, email string) string { return EmailsURL(utr) + "/" + url.PathEscape(email) }

// EditEmailURL is the form of an email.
func EditEmailURL(utr, email string) string { return EmailURL(utr, email) + "/edit" }

// MoveEmailURL moves an email up or down (POST, direction=up|down).
func MoveEmailURL(utr, email string) string { return EmailURL(utr, email) + "/move" }

// ResumeEmailURL lets an email's sending that paused itself go on (POST).
func ResumeEmailURL(utr, email string) string { return EmailURL(utr, email) + "/resume" }

// DeleteEmailURL removes an email (POST).
func DeleteEmailURL(utr, email string) string { return EmailURL(utr, email) + "/delete" }

// DesignURL is the editor of an email's design (GET) and where it is
// saved (POST); the API's design_url points here.
func DesignURL(utr, email string) string { return EmailURL(utr, email) + "/design" }

// EmailID is the element id of an email's card on the timeline.
func EmailID(email string) string { return "email-" + email }

// TypeLabel names an automation's type.
func TypeLabel(a models.Automation) string {
	if a.AutomationType == 0 {
		return "Welcome"
	}
	return "Custom"
}

// Paused reports whether a draft automation has been live before.
func Paused(a models.Automation) bool {
	return a.Status != models.AutomationLive && !a.LiveAt.IsZero()
}

// StatusFilters are the list's status filters (service.AutomationStatuses).
var StatusFilters = []views.Option{{Value: "live", Label: "Live"}, {Value: "paused", Label: "Paused"}, {Value: "draft", Label: "Drafts"}}

// StatusLabel names an automation's state for people.
func StatusLabel(a models.Automation) string {
	switch {
	case a.Status == models.AutomationLive:
		return "Live"
	case Paused(a):
		return "Paused"
	}
	return "Draft"
}

func statusClass(a models.Automation) string {
	switch StatusLabel(a) {
	case "Live":
		return "badge-success"
	case "Paused":
		return "badge-warning"
	}
	return "badge-muted"
}

// Exit is one choice of when a contact leaves an automation.
type Exit struct {
	Value   string
	Label   string
	Explain string
}

// Exits are the exit criteria in plain words (decisions.md section 6).
var Exits = []Exit{
	{"0", "After the last email", "Everyone who joins gets every email, unless they unsubscribe."},
	{"1", "Also when they leave the list or segment", "Contacts taken out of the contact type, or who stop matching the segment, get no more emails."},
	{"2", "Also when they open or click an email", "As above, and contacts who open or click any email of this automation get no more: good for reminders that should stop once someone reacts."},
}

// ExitLabel names an automation's exit criteria.
func ExitLabel(n int) string {
	for _, e := range Exits {
		if e.Value == strconv.Itoa(n) {
			return e.Label
		}
	}
	return ""
}

// Wait is how long an email waits, in a few words: "At once", "After 2 days".
func Wait(s models.AutomationSchedule) string {
	n := s.WaitingPeriod
	switch s.WaitingType {
	case "hours":
		return views.N("automations.wait_hours", n, "N", strconv.Itoa(n))
	case "days":
		return views.N("automations.wait_days", n, "N", strconv.Itoa(n))
	}
	return "At once"
}

// TriggerExample is the API call that starts the automation for one
// contact, as the automation's page shows it.
func TriggerExample(utr string) string {
	return "POST /api/automations/trigger\n" + `{"automation": "` + utr + `", "email": "ann@example.com", "data": {"plan": "Pro"}}`
}

// BranchWait says how long a branch waits for an open or click.
func BranchWait(s models.AutomationSchedule) string {
	if s.WaitingType == "hours" {
		return views.N("automations.branch_wait_hours", s.WaitingPeriod, "N", strconv.Itoa(s.WaitingPeriod))
	}
	return views.N("automations.branch_wait_days", s.WaitingPeriod, "N", strconv.Itoa(s.WaitingPeriod))
}

// WaitFrom says what the wait of the email numbered n counts from.
func WaitFrom(n int) string {
	if n <= 1 {
		return "after a contact joins"
	}
	return "after email " + strconv.Itoa(n-1)
}

// Settings is the form of an automation's settings: new (Utr "", with
// its type) or saved.
type Settings struct {
	Utr        string
	Type       string // welcome or custom; new automations only
	Series     bool   // start with the prefilled welcome series; new automations only, off by default
	Name       string
	Target     string // contacts_<id> or segments_<id>, "" for none yet
	GroupID    string // "0" for none yet
	Exit       string // 0, 1 or 2
	Live       bool   // the target is fixed while live
	TargetName string // the target's name, shown while live
	StartTag   string // new automations only: start when this tag is added (web/tags.go)
	Trigger    string // target (contacts entering it), api (POST api/automations/trigger) or date
	// A date trigger: the custom field, when ("on", "before", "after"),
	// how many days, and every year or once.
	DateField  string
	DateWhen   string
	DateDays   string
	DateYearly bool
	DateFields []views.Option // the account's custom fields of type date

	Types    []views.Option
	Segments []views.Option
	Groups   []views.Option

	Errors views.Errors
	Other  []string
	CSRF   string
}

// DateRule says in words when a date automation runs ("Every year, 7
// days before Birthday"); label names the field for people.
func DateRule(a models.Automation, label func(string) string) string {
	out := "Once, "
	if a.DateYearly == 1 {
		out = "Every year, "
	}
	name := label(a.DateField)
	n := a.DateOffsetDays
	days := func(n int) string {
		if n == 1 {
			return "1 day"
		}
		return strconv.Itoa(n) + " days"
	}
	switch {
	case n < 0:
		return out + days(-n) + " before " + name
	case n > 0:
		return out + days(n) + " after " + name
	}
	return out + "on " + name
}

// DateWhens are the choices of a date trigger's day.
var DateWhens = []views.Option{{Value: "on", Label: "On the day"}, {Value: "before", Label: "Days before"}, {Value: "after", Label: "Days after"}}

// Action is where the settings are posted.
func (f Settings) Action() string {
	if f.Utr == "" {
		return ListURL
	}
	return AutomationURL(f.Utr)
}

// FormID is the element id of the form.
func (f Settings) FormID() string {
	if f.Utr == "" {
		return "automation-create"
	}
	return "automation-settings"
}

// Row is an automation of the list, with its target's name.
type Row struct {
	models.AutomationCount
	Target string
}

// List is a page of automations and the form that starts a new one.
type List struct {
	Rows  []Row
	Query views.ListQuery
	Pager views.Pager
	New   Settings
	CSRF  string
}

// Step is one email of the timeline.
type Step struct {
	N        int // 1-based position
	Email    models.AutomationSchedule
	Sender   string // "Name <address>", "" when it has none
	Verified bool   // the sender can send
	Thumb    string // the library design's image, when the email is that design unchanged
	Preview  string // else the design rendered with sample values
	Send     *models.SingleSend
	Stats    bool // the automation has been live: the step's statistics mean something
	// PauseReply is the relay's answer, for people, when the email's
	// sending paused itself after repeated refusals ("" when it did not).
	PauseReply string
	// Waiting contacts are enrolled and wait for this email; FirstDue is
	// when the first of them gets it.
	Waiting  int64
	FirstDue time.Time
	First    bool
	Last     bool
	// From says what its wait counts from, when not the email before it
	// by number (the emails of a branch's paths).
	From string
}

// StepFrom says what the step's wait counts from.
func StepFrom(s Step) string {
	if s.From != "" {
		return s.From
	}
	return WaitFrom(s.N)
}

// Branch is the automation's branch step and the emails of its two
// paths: A for the contacts who opened or clicked, B for the others.
type Branch struct {
	Step     models.AutomationSchedule
	Waiting  int64 // contacts waiting at the branch now
	FirstDue time.Time
	A, B     []Step
}

// BranchForm is the form that adds a branch.
type BranchForm struct {
	Period   string
	WaitType string
}

// BranchURL is where a branch is added (POST).
func BranchURL(utr string) string { return AutomationURL(utr) + "/branch" }

// BranchWaitURL is where the branch's wait is changed (POST).
func BranchWaitURL(utr string) string { return BranchURL(utr) + "/wait" }

// NewPathEmailURL is the form of an email added to a path of the branch.
func NewPathEmailURL(utr, path string) string {
	return NewEmailURL(utr) + "?path=" + url.QueryEscape(path)
}

// Builder is an automation's page.
type Builder struct {
	Automation models.Automation
	Target     string  // the target's name, "" for none yet
	Group      string  // the group's name, "" for none yet
	Steps      []Step  // the main line's emails
	Branch     *Branch // the branch ending the main line, nil for none
	Clicks     int64   // the unique clicks of its emails
	Blocks     int64   // its emails' messages refused by the relay's policy
	Settings   Settings
	When       string           // a date automation's rule in words ("" other triggers)
	Problem    string           // why setting it live was refused
	Checklist  *views.Checklist // the pre-send checks of its emails; nil while live
	// Where its enrolled contacts stand.
	Enrolled, Active, Finished, Exited int64
	Loc                                *time.Location
	CSRF                               string
}

// Ready lists what the automation lacks to go live, in the order the
// service checks it; empty when nothing is missing.
func (b Builder) Ready() []string {
	var out []string
	a := b.Automation
	if a.UnsubscribeGroupID == "" || a.UnsubscribeGroupID == "0" {
		out = append(out, "Choose an unsubscribe group in the settings.")
	}
	if a.AutomationFor == 0 {
		out = append(out, "Choose the contact type or segment whose new contacts it greets.")
	}
	if len(b.Steps) == 0 {
		out = append(out, "Add at least one email.")
	}
	for _, s := range b.AllSteps() {
		if !s.Verified {
			out = append(out, "Give every email a verified sender.")
			break
		}
	}
	return out
}

// AllSteps is every email of the automation: the main line's, then
// the branch's paths'.
func (b Builder) AllSteps() []Step {
	out := append([]Step(nil), b.Steps...)
	if b.Branch != nil {
		out = append(append(out, b.Branch.A...), b.Branch.B...)
	}
	return out
}

// EmailForm is the form of one email, new (Utr "") or saved.
type EmailForm struct {
	Path      string // the line a new email goes on: "" main, "a" or "b" after the branch
	AutoUtr   string
	AutoName  string
	Utr       string
	N         int // its number in the sequence
	WaitType  string
	Period    string
	SenderID  string
	Subject   string
	Preheader string
	Design    string // library-<id>, design-<id>, html or current
	HTML      string // the HTML written in the form (Design "html")

	Senders      []views.Option
	Library      []views.Option
	Designs      []views.Option
	Current      bool // the email has a design to keep
	Placeholders []string
	Preview      string

	Errors views.Errors
	Other  []string
	CSRF   string
}

// Action is where the form is posted.
func (f EmailForm) Action() string {
	if f.Utr == "" {
		return EmailsURL(f.AutoUtr)
	}
	return EmailURL(f.AutoUtr, f.Utr)
}

// Title is the form's heading.
func (f EmailForm) Title() string {
	if f.Utr == "" {
		return "Add an email"
	}
	return "Edit email " + strconv.Itoa(f.N)
}

// DesignEditor is the editor page of an email's design.
type DesignEditor struct {
	AutoUtr  string
	AutoName string
	Email    models.AutomationSchedule
	N        int
	HTML     string
	JSON     string
	Errors   views.Errors
	Other    []string
	CSRF     string
	Tools    designs.Tools
}

// SaveURL is where the editor posts the design.
func (e DesignEditor) SaveURL() string { return DesignURL(e.AutoUtr, e.Email.Utr) }

// Data is what static/js/editor.js reads: the email's id makes the
// script stay on the page after saving.
func (e DesignEditor) Data() designs.EditorData {
	return designs.EditorData{ID: e.Email.ID, TemplateJSON: e.JSON, TemplateHTML: e.HTML, SaveURL: e.SaveURL(),
		MergeTags: e.Tools.MergeTags, Words: designs.Words()}
}

// When formats an instant in loc for people: Jan 2, 2006 at 15:04.
func When(t time.Time, loc *time.Location) string {
	if t.IsZero() {
		return ""
	}
	if loc == nil {
		loc = time.UTC
	}
	return t.In(loc).Format("Jan 2, 2006 at 15:04")
}
