// Package senders holds the pages of the account's from identities: the
// list with their verification state, the sender form (country, state
// and city chained selects storing ids) and a sender's DNS records.
package senders

import (
	"strconv"

	"herald/models"
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
	CSRF    string
}

// SentAt is when the last verification mail went out, for people.
func SentAt(s models.Sender) string {
	if s.SendAt.IsZero() {
		return ""
	}
	return s.SendAt.UTC().Format("Jan 2, 2006 15:04 UTC")
}
