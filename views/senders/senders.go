// Package senders holds the pages of the account's from identities: the
// list with their verification state, the sender form (country, state
// and city chained selects storing ids) and a sender's DNS records.
package senders

import (
	"strconv"
	"strings"

	"herald/models"
	"herald/service"
	"herald/views"
)

// The addresses of the senders area.
const (
	ListURL   = "/senders"
	NewURL    = "/senders/new"
	StatesURL = "/senders/states"
	CitiesURL = "/senders/cities"
)

// SenderURL is a sender's page (GET) and where its form is saved (POST).
func SenderURL(id int64) string { return ListURL + "/" + strconv.FormatInt(id, 10) }

// EditURL is the page of a sender's form.
func EditURL(id int64) string { return SenderURL(id) + "/edit" }

// ResendURL mails the verification link again (POST).
func ResendURL(id int64) string { return SenderURL(id) + "/resend" }

// DeleteURL deletes a sender (POST).
func DeleteURL(id int64) string { return SenderURL(id) + "/delete" }

// StatusID is the element id of a sender's verification state, which the
// resend button replaces.
func StatusID(id int64) string { return "sender-status-" + strconv.FormatInt(id, 10) }

// List is a page of senders.
type List struct {
	Rows  []models.Sender
	Query views.ListQuery
	Pager views.Pager
	CSRF  string
}

// Form is a sender, new (ID 0) or edited, with the choices of its selects.
type Form struct {
	ID              int64
	FromName        string
	FromEmail       string
	ReplyToEmail    string
	Nickname        string
	CountryID       string
	StateID         string
	CityID          string
	ZipCode         string
	CompanyAddress  string
	CompanyAddress2 string

	Countries []views.Option
	States    views.Choices
	Cities    views.Choices

	Errors views.Errors
	Other  []string // messages of no field of the form
	CSRF   string
}

// Action is where the form is posted.
func (f Form) Action() string {
	if f.ID == 0 {
		return ListURL
	}
	return SenderURL(f.ID)
}

// Record is one DNS record to publish, with what it is for.
type Record = views.DNSRecord

// Detail is a sender's page: who it is, where, and the DNS records of
// its domain.
type Detail struct {
	Sender  models.Sender
	Place   string // city, state, country as names
	Domain  string
	Records []Record
	Checks  Checks
	CSRF    string
}

// Checks is the card of the DNS checks of a sender's domain: htmx
// replaces it whole (Check now, the signing switch, the addresses).
type Checks struct {
	SenderID   int64
	Domain     string
	Checked    bool
	CheckedAt  string // for people, UTC
	Results    []CheckResult
	Signing    string // the selector that signs; "" = unsigned
	SignAnyway bool
	// The key of herald's own mail: the address that mail comes from, the
	// name of the key's record, and whether a check has seen it (then that
	// mail is signed). SystemRecord "": its domain cannot have a key.
	SystemFrom   string
	SystemRecord string
	SystemSigned bool
	SendingIPs   string
	Error        string   // a check that could not run
	IPErrors     []string // of the sending addresses field
	CSRF         string
}

// CheckResult is one check: pass, warn or fail, what was found, the fix.
type CheckResult struct {
	Check  string
	Status string
	Detail string
	Fix    string
	Found  string
	Record *Record
	// Above is the id of the same record in the page's DNS records card,
	// "" when it is not there: the check links to it rather than show
	// the record a second time.
	Above string
}

// ChecksID is the id of the checks card.
const ChecksID = "sender-checks"

// CheckURL runs the checks now.
func CheckURL(id int64) string { return SenderURL(id) + "/check" }

// SignAnywayURL turns the domain's "sign anyway" switch.
func SignAnywayURL(id int64) string { return SenderURL(id) + "/sign-anyway" }

// SendingIPsURL saves the addresses the domain's mail leaves from.
func SendingIPsURL(id int64) string { return SenderURL(id) + "/sending-ips" }

// RotateURL makes a new DKIM key with its own selector.
func RotateURL(id int64) string { return SenderURL(id) + "/rotate-key" }

// isSystemRecord reports whether r is the record of herald's own key
// (service.PurposeSystemDKIM), shown apart from the domain's own.
func isSystemRecord(r Record) bool { return r.Purpose == service.PurposeSystemDKIM }

// lastDomainDKIM is the place of the last record of the domain's own DKIM
// keys (-1: none), after which the page offers a new key.
func lastDomainDKIM(rs []Record) int {
	last := -1
	for i, r := range rs {
		if strings.HasPrefix(r.Purpose, "DKIM") && !isSystemRecord(r) {
			last = i
		}
	}
	return last
}

// anchor is the link to the element id on the same page.
func anchor(id string) string { return "#" + id }

func statusBadge(status string) string {
	switch status {
	case "pass":
		return "badge badge-success"
	case "warn":
		return "badge badge-warning"
	}
	return "badge badge-danger"
}

func statusLabel(status string) string {
	switch status {
	case "pass":
		return "Passed"
	case "warn":
		return "Warning"
	}
	return "Failed"
}

// SentAt is when the last verification mail went out, for people.
func SentAt(s models.Sender) string {
	if s.SendAt.IsZero() {
		return ""
	}
	return s.SendAt.UTC().Format("Jan 2, 2006 15:04 UTC")
}

// RecordID is the id of a DNS record on the page: "dns-DKIM", "dns-SPF",
// "dns-DMARC", or by its place for the older key of a rotation.
func RecordID(i int, purpose string) string {
	if strings.ContainsRune(purpose, ' ') {
		return "dns-" + strconv.Itoa(i)
	}
	return "dns-" + purpose
}

// StatusFilters are the list's verification filters (service.SenderStatuses).
var StatusFilters = []views.Option{{Value: "verified", Label: "Verified"}, {Value: "unverified", Label: "Not verified"}}
