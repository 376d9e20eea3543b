// Package suppressions holds the pages of the addresses no mail goes to:
// global unsubscribers, unsubscribe groups and each group's recipients.
package suppressions

import (
	"strconv"

	"herald/models"
	"herald/views"
)

// AddressList is a page of suppressed addresses: the global list or the
// recipients of one group. htmx swaps it whole (by ID) after every change.
type AddressList struct {
	ID         string // element id
	ListURL    string // GET: the list (and its page)
	ActionBase string // POST: add; +"/bulk-delete"; +"/{id}/delete"
	Rows       []models.Unsubscriber
	Query      views.ListQuery
	Pager      views.Pager
	CSRF       string
	EmptyTitle string
	EmptyText  string
}

// BulkURL is where the selected rows are deleted.
func (l AddressList) BulkURL() string { return l.ActionBase + "/bulk-delete" }

// DeleteURL is where one row is deleted.
func (l AddressList) DeleteURL(id int64) string {
	return l.ActionBase + "/" + strconv.FormatInt(id, 10) + "/delete"
}

func (l AddressList) target() string { return "#" + l.ID }

// AddForm adds several addresses at once.
type AddForm struct {
	ID     string // element id
	Action string
	Title  string
	Value  string
	Errors views.Errors
	Other  []string // messages of no field of the form
	CSRF   string
	// Include is the selector of the list's search input: sent along, so
	// the list answered after the add keeps the search on screen.
	Include string
}

// Global is the global unsubscribers page.
type Global struct {
	List AddressList
	Form AddForm
}

// Recipients is the page of one group's recipients.
type Recipients struct {
	Group models.UnsubscribeGroup
	List  AddressList
	Form  AddForm
}

// GroupForm is the input of a group, new or edited.
type GroupForm struct {
	ID          int64 // 0 for a new group
	GroupName   string
	Description string
	IsDisplay   bool
	Errors      views.Errors
	CSRF        string
}

// GroupFormOf fills a form from a stored group.
func GroupFormOf(g models.UnsubscribeGroup, csrf string) GroupForm {
	return GroupForm{ID: g.ID, GroupName: g.GroupName, Description: g.Description, IsDisplay: g.IsDisplay == 1, CSRF: csrf}
}

// Groups is the unsubscribe groups page.
type Groups struct {
	Rows   []models.UnsubscribeGroupCount
	Query  views.ListQuery
	Pager  views.Pager
	Create GroupForm
}

// GroupURL is the page of a group's recipients.
func GroupURL(id int64) string { return "/suppressions/groups/" + strconv.FormatInt(id, 10) }

func groupEditURL(id int64) string { return GroupURL(id) + "/edit" }
func groupRowURL(id int64) string  { return GroupURL(id) + "/row" }

// GroupRowID is the element id of a group's row in the table.
func GroupRowID(id int64) string { return "group-" + strconv.FormatInt(id, 10) }

func groupFormID(id int64) string { return "group-edit-" + strconv.FormatInt(id, 10) }

func fieldID(prefix string, id int64, name string) string {
	return prefix + "-" + strconv.FormatInt(id, 10) + "-" + name
}
