// Package notifications holds the page of the addresses that receive the
// account's notifications.
package notifications

import (
	"strconv"

	"herald/models"
	"herald/views"
)

// List is a page of notification recipients.
type List struct {
	Rows  []models.NotificationRecipient
	Query views.ListQuery
	Pager views.Pager
	CSRF  string
}

// Form adds a recipient (or renames one already there).
type Form struct {
	EmailAddress string
	EmailOwner   string
	Errors       views.Errors
	CSRF         string
}

// Data is the whole page.
type Data struct {
	List List
	Form Form
}

func deleteURL(id int64) string {
	return "/notifications/" + strconv.FormatInt(id, 10) + "/delete"
}
