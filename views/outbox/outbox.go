// Package outbox holds the pages of the built-in outbox: the messages
// herald kept instead of sending them, and one message opened.
package outbox

import (
	"strconv"

	"herald/models"
	"herald/views"
)

// ListURL is the outbox.
const ListURL = "/outbox"

// MessageURL is the page of one message.
func MessageURL(id int64) string { return ListURL + "/" + strconv.FormatInt(id, 10) }

// RawURL is the message's source as a file (.eml).
func RawURL(id int64) string { return MessageURL(id) + "/raw" }

// List is a page of outbox messages.
type List struct {
	Rows  []models.OutboxMessage
	Query views.ListQuery
	Pager views.Pager
}

// Header is one header field as the message carries it (decoded).
type Header struct {
	Name, Value string
}

// Message is one message taken apart for reading.
type Message struct {
	ID        int64
	Subject   string
	CreatedAt models.Timestamp
	Headers   []Header
	Text      string // the text/plain part, "" when none
	HTML      string // the text/html part, "" when none
	Raw       string // the whole source
	Problem   string // why the message could not be read, "" when it was
}
