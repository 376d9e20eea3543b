// Package singlesends holds the pages of one-off campaigns: the list,
// the form that writes one (design, sender, audience with its live count,
// subject, schedule, test mail), and a send's page with its progress
// while it runs and its statistics once it has completed.
package singlesends

import (
	"context"
	"fmt"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"time"

	"herald/models"
	"herald/service"
	"herald/views"
)

// The addresses of the single sends area.
const (
	ListURL       = "/single-sends"
	NewURL        = "/single-sends/new"
	BulkDeleteURL = "/single-sends/bulk-delete"
	CountURL      = "/single-sends/count"
	TestURL       = "/single-sends/test"
	DraftURL      = "/single-sends/draft"
	PreviewURL    = "/single-sends/preview"
	ChecklistURL  = "/single-sends/checklist"
)

// GroupURL creates an unsubscribe group from the send form.
const GroupURL = ListURL + "/group"

// SendURL is a send's page (GET) and where its form is saved (POST).
func SendURL(utr string) string { return ListURL + "/" + url.PathEscape(utr) }

// EditURL is the page of a send's form.
func EditURL(utr string) string { return SendURL(utr) + "/edit" }

// ProgressURL is the status panel the send's page polls.
func ProgressURL(utr string) string { return SendURL(utr) + "/progress" }

// DuplicateURL copies a send (POST).
func DuplicateURL(utr string) string { return SendURL(utr) + "/duplicate" }

// DeleteURL deletes a send (POST).
func DeleteURL(utr string) string { return SendURL(utr) + "/delete" }

// ResumeURL lets a paused send go on (POST).
func ResumeURL(utr string) string { return SendURL(utr) + "/resume" }

// Paused reports whether a send paused itself after repeated blocks.
func Paused(s models.SingleSend) bool { return s.Status == models.SendRunning && s.PausedAt != nil }

// List is a page of single sends.
type List struct {
	Rows  []models.SingleSend
	Query views.ListQuery
	Pager views.Pager
	CSRF  string
	Loc   *time.Location // the account's time zone
	// ArchiveURL is the address of the account's public archive.
	ArchiveURL string
}

// Editable reports whether a send may still be changed: it has not started.
func Editable(s models.SingleSend) bool { return s.Status < models.SendRunning && s.ResendOf == nil }

// Starting reports whether a send is armed to go now and waits for the
// engine to pick it up.
func Starting(s models.SingleSend) bool { return s.Status == models.SendInitiate && s.Armed == 1 }

// StatusFilters are the list's status filters (service.SendStatuses).
var StatusFilters = []views.Option{{Value: "draft", Label: "Drafts"}, {Value: "scheduled", Label: "Scheduled"}, {Value: "running", Label: "Sending"}, {Value: "completed", Label: "Completed"}}

// StatusLabel names a send's state for people.
func StatusLabel(s models.SingleSend) string {
	switch {
	case s.Status == models.SendCompleted:
		return "Completed"
	case Paused(s):
		return "Paused"
	case s.Status == models.SendRunning:
		return "Sending"
	case s.Status == models.SendReady:
		return "Scheduled"
	case Starting(s):
		return "Starting"
	}
	return "Draft"
}

func statusClass(s models.SingleSend) string {
	switch StatusLabel(s) {
	case "Completed":
		return "badge-success"
	case "Sending", "Starting":
		return "badge-info"
	case "Scheduled", "Paused":
		return "badge-warning"
	}
	return "badge-muted"
}

// Target is a contact type or a segment a send can go to or leave out.
type Target struct {
	Value string // contacts_<id> or segments_<id>
	Label string
	Count int64 // contacts or recipients it holds now
}

// Form is a send, new (Utr "") or edited, with the choices of its controls.
type Form struct {
	Utr          string
	Name         string
	Template     string // library-<id>, design-<id> or current
	SenderID     string
	GroupID      string
	Subject      string
	Preheader    string
	Recipients   []string
	Excludes     []string
	ScheduleType string // "0" now, "1" at a date and time
	ScheduleDate string // YYYY-MM-DD
	ScheduleTime string // HH:MM
	TestEmail    string
	// The local-time option: each recipient's message at a clock time in its zone.
	LocalOn        bool
	LocalTime      string // HH:MM
	LocalZoneField string
	ZoneFields     []views.Option // the account's custom fields
	AB             ABForm         // the A/B subject test
	Archive        bool           // shown, once sent, in the public archive

	Library      []views.Option
	Designs      []views.Option
	Current      bool // the design saved with the send is offered
	Senders      []views.Option
	Unsigned     []string // senders whose mail goes out without DKIM
	Groups       []views.Option
	Types        []Target
	Segments     []Target
	Placeholders []string
	TimeZone     string
	Count        int64
	Preview      Preview
	Test         *TestResult // the answer to a test sent without JavaScript
	Checklist    views.Checklist

	Errors views.Errors
	Other  []string // messages of no field of the form
	CSRF   string
}

// Action is where the form is saved.
func (f Form) Action() string {
	if f.Utr == "" {
		return ListURL
	}
	return SendURL(f.Utr)
}

// PreviewURL is where the design's preview is loaded from.
func (f Form) PreviewURL() string {
	if f.Utr == "" {
		return PreviewURL
	}
	return PreviewURL + "?utr=" + url.QueryEscape(f.Utr)
}

// Later reports whether the form schedules the send.
func (f Form) Later() bool { return f.ScheduleType == "1" }

func checked(list []string, v string) bool { return slices.Contains(list, v) }

// Preview is a design rendered with sample values, or nothing chosen yet.
type Preview struct {
	HTML       string
	ShownFor   string // the contact whose values fill the design; "" for the samples
	FromSender bool   // the chosen sender's name and address fill it
}

// TestResult says how a test mail went.
type TestResult struct {
	OK       bool
	Message  string
	Problems []string
}

// Count is the live count of the audience.
type Count struct {
	N     int64
	Empty bool // no contact type or segment chosen yet
}

// Progress is where a running send stands (a copy of the service's, for
// the templates).
type Progress struct {
	Triggered int64
	Resolved  bool
	Done      int64
	Delivered int64
	Bounces   int64
	Blocks    int64
	Failures  int64
	Retrying  int64
	Rate      float64
	Remaining time.Duration
	Percent   int
}

// Point is the opens and clicks of one period.
type Point struct {
	At                      time.Time
	Opens                   int64
	Clicks                  int64
	HumanOpens, HumanClicks int64 // of the opens and clicks, people's
}

// LinkRow is a tracked link and its clicks.
type LinkRow struct {
	URL    string
	Clicks int64
	Human  int64 // the clicks taken for a person's
}

// Status is the part of a send's page that follows it: the schedule,
// the progress while it runs, the statistics once it has completed.
type Status struct {
	Send     models.SingleSend
	Progress Progress
	Points   []Point
	Links    []LinkRow
	TimeZone string
	Loc      *time.Location
	CSRF     string
	Outcomes Outcomes
	// Reach: who opened and clicked, where and on what (a completed
	// send's; nil otherwise).
	Reach *Reach
	// Carrier: the send carries an automation's email. Its report has no
	// click map or comparison, which are pages of single sends.
	Carrier bool
}

// Outcomes says, for people, what went wrong with messages of a send:
// the relay's refusals (blocks) and the messages that could not be built.
type Outcomes struct {
	PauseReply   string // the relay's answer that paused the send ("the sender (MAIL FROM): 553 5.7.1 …")
	LastBlock    string // the relay's last refusal
	Failed       string // "could not be built" or "could not be sent"
	FirstFailure string // why, in plain words
	LastFailure  string // when not the same as the first
}

// Polls reports whether the panel asks again for its state: while the
// send starts or runs (not while it is paused: nothing changes until
// someone resumes it).
func (s Status) Polls() bool {
	return (s.Send.Status == models.SendRunning && !Paused(s.Send)) || Starting(s.Send)
}

// Detail is a send's page.
type Detail struct {
	Send     models.SingleSend
	Status   Status
	To       []string // the names of its contact types and segments
	Exclude  []string
	Group    string
	Preview  string // the design rendered with sample values
	TimeZone string
	Loc      *time.Location
	CSRF     string
	Waves    []Wave  // a local-time send's waves
	AB       *ABTest // its A/B subject test; nil: none
	// Relays are the relays that carried its messages and how many each,
	// when herald sends through several.
	Relays []RelayCount
	// Original is the send a resend follows (nil: none, or deleted).
	Original *models.SingleSend
}

// RelayCount is how many of a send's messages one relay carried.
type RelayCount struct {
	Name string
	N    int64
}

// Wave is one release time of a local-time send.
type Wave struct {
	At               time.Time
	Zones            []string
	Recipients, Sent int64
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

// ISO is an instant for a <time datetime> attribute.
func ISO(t time.Time) string { return t.UTC().Format("2006-01-02T15:04:05Z") }

// ScheduledAt is when a scheduled send goes, or the zero time.
func ScheduledAt(s models.SingleSend) time.Time {
	if s.SendAfter == nil {
		return time.Time{}
	}
	return s.SendAfter.Time
}

// Rate is n out of of as a percentage with one decimal, "–" when of is 0.
func Rate(n, of int64) string {
	if of <= 0 {
		return "–"
	}
	return strconv.FormatFloat(float64(n)*100/float64(of), 'f', 1, 64) + "%"
}

// RateFine is Rate with two decimals below 1 % (complaint rates live
// there).
func RateFine(n, of int64) string {
	if of <= 0 {
		return "–"
	}
	return strings.ReplaceAll(views.Pct(float64(n)*100/float64(of)), " ", "")
}

// PerSecond formats a sending rate.
func PerSecond(r float64) string {
	if r <= 0 {
		return "–"
	}
	if r < 10 {
		return strconv.FormatFloat(r, 'f', 1, 64) + " msg/s"
	}
	return strconv.FormatFloat(r, 'f', 0, 64) + " msg/s"
}

// Left formats the time a send still needs, roughly.
func Left(d time.Duration) string {
	switch {
	case d <= 0:
		return "–"
	case d < time.Minute:
		return fmt.Sprintf("%d s", int(d.Seconds()+0.5))
	case d < time.Hour:
		return fmt.Sprintf("about %d min", int(d.Minutes()+0.5))
	}
	h := int(d.Hours())
	return fmt.Sprintf("about %d h %d min", h, int(d.Minutes())-h*60)
}

// UnsignedList names the senders whose mail goes out unsigned.
func (f Form) UnsignedList() string { return strings.Join(f.Unsigned, ", ") }

// CalendarURL is the month view of scheduled and sent sends (?month=YYYY-MM).
const CalendarURL = ListURL + "/calendar"

// MonthURL is the calendar of the month of t.
func MonthURL(t time.Time) string { return CalendarURL + "?month=" + t.Format("2006-01") }

// CalEntry is a send on the calendar.
type CalEntry struct {
	Utr  string
	Name string
	At   time.Time // in the account's zone
	Sent bool      // sent (running or completed), else scheduled
}

// CalDay is one day of the calendar's grid.
type CalDay struct {
	Date    time.Time // midnight, in the account's zone
	InMonth bool
	Today   bool
	Entries []CalEntry
}

// Calendar is a month of sends, weeks from Monday, in the account's zone.
type Calendar struct {
	Month    time.Time // its first day
	TimeZone string
	Days     []CalDay // whole weeks
	Count    int      // sends in the month
}

// Weekdays name the grid's columns, Monday first.
var Weekdays = []string{"Mon", "Tue", "Wed", "Thu", "Fri", "Sat", "Sun"}

// NewCalendar lays out the month of first (midnight of its first day, in
// the account's zone) with its entries; today marks the current day.
func NewCalendar(first time.Time, tz string, today time.Time, entries []CalEntry) Calendar {
	cal := Calendar{Month: first, TimeZone: tz, Count: len(entries)}
	loc := first.Location()
	lead := (int(first.Weekday()) + 6) % 7 // days of the first week before the 1st
	start := first.AddDate(0, 0, -lead)
	next := first.AddDate(0, 1, 0)
	byDay := map[string][]CalEntry{}
	for _, e := range entries {
		k := e.At.In(loc).Format("2006-01-02")
		byDay[k] = append(byDay[k], e)
	}
	todayKey := today.In(loc).Format("2006-01-02")
	for d := start; d.Before(next) || (len(cal.Days)%7 != 0); d = d.AddDate(0, 0, 1) {
		k := d.Format("2006-01-02")
		cal.Days = append(cal.Days, CalDay{Date: d, InMonth: d.Month() == first.Month(), Today: k == todayKey, Entries: byDay[k]})
	}
	return cal
}

// Prev and Next are the neighbouring months' addresses.
func (c Calendar) Prev() string { return MonthURL(c.Month.AddDate(0, -1, 0)) }
func (c Calendar) Next() string { return MonthURL(c.Month.AddDate(0, 1, 0)) }

// CanEdit reports whether the logged-in person may change s: s has not
// started, and its role may save it as it is (service.DraftAction, the
// rule the save's check applies: an armed send is changed only by those
// who may send).
func CanEdit(ctx context.Context, s models.SingleSend) bool {
	return Editable(s) && views.Can(ctx, service.DraftAction(&s))
}

// ResendURL is a completed send's "Resend to those who did not open"
// card (GET) and the scheduling of its resend (POST).
func ResendURL(utr string) string { return SendURL(utr) + "/resend" }

// ResendCard is a completed send's "Resend to those who did not open"
// card: its resend when it has one, else the form with the count of
// those a resend would reach now.
type ResendCard struct {
	Send      models.SingleSend  // the original
	Resend    *models.SingleSend // its resend; nil: none
	NotOpened int64
	Form      ResendForm
	Errors    views.Errors
	Problems  []string // refusals that belong to no field
	Loc       *time.Location
	TimeZone  string
	CSRF      string
}

// ResendForm is the resend form as posted: the new subject, the wait
// ("1" to "14" days after the send, or "at" Date and Time).
type ResendForm struct {
	Subject, Wait, Date, Time string
}

// resendWaits are the choices of the resend's wait.
var resendWaits = func() []views.Option {
	var out []views.Option
	for _, d := range []int{1, 2, 3, 4, 5, 6, 7, 10, 14} {
		out = append(out, views.Option{Value: strconv.Itoa(d), Label: views.N("resend.wait_days", d)})
	}
	return append(out, views.Option{Value: "at", Label: views.T("resend.wait_at")})
}()

// ResendWhen says when a resend goes out or went out, in loc.
func ResendWhen(s models.SingleSend, loc *time.Location) string {
	switch {
	case !s.SentAt.IsZero():
		return views.T("resend.went", "Time", When(s.SentAt.Time, loc))
	case s.Status == models.SendRunning:
		return views.T("resend.going")
	default:
		return views.T("resend.goes", "Time", When(ScheduledAt(s), loc))
	}
}

// resendChoice is the wait chosen, 3 days when none is.
func resendChoice(v string) string {
	if v == "" {
		return "3"
	}
	return v
}
