// Package team holds the Team page (members, roles, invitations), the
// page that accepts an invitation, and the audit log.
package team

import (
	"strconv"
	"time"

	"herald/models"
	"herald/views"
)

// Data is the Team page.
type Data struct {
	Owner       *models.User
	Members     []models.Member
	Invitations []models.Invitation
	Invite      InviteForm
	Roles       []views.Option // the roles a member can have
	Self        int64          // the member looking (0: the owner)
	CSRF        string
}

// InviteForm invites an address with a role.
type InviteForm struct {
	Email  string
	Role   string
	Errors views.Errors
	Alert  string
	CSRF   string
	Roles  []views.Option
}

// URLs of the Team page.
const (
	URL         = "/team"
	InviteURL   = "/team/invitations"
	AuditURL    = "/audit-log"
	memberBase  = "/team/members/"
	inviteBase  = "/team/invitations/"
	roleSuffix  = "/role"
	delSuffix   = "/delete"
	timeDisplay = "Jan 2, 2006 15:04 MST"
)

func roleURL(id int64) string     { return memberBase + strconv.FormatInt(id, 10) + roleSuffix }
func removeURL(id int64) string   { return memberBase + strconv.FormatInt(id, 10) + delSuffix }
func revokeURL(id int64) string   { return inviteBase + strconv.FormatInt(id, 10) + delSuffix }
func itoa(id int64) string        { return strconv.FormatInt(id, 10) }
func stamp(t time.Time) string    { return t.UTC().Format(timeDisplay) }
func isoStamp(t time.Time) string { return t.UTC().Format("2006-01-02T15:04:05Z") }

// RoleLabel is a stored role as shown.
func RoleLabel(r string) string {
	switch r {
	case "admin":
		return "Admin"
	case "editor":
		return "Editor"
	case "viewer":
		return "Viewer"
	}
	return r
}

// AcceptForm is the page of an invitation's link.
type AcceptForm struct {
	Account string // the company, else the owner's name (Company says which)
	Company bool
	Email   string
	Role    string
	Name    string
	Action  string
	Errors  views.Errors
	Alert   string
	CSRF    string
}

// AuditData is one page of the audit log.
type AuditData struct {
	Rows  []AuditRow
	Page  int
	More  bool // an older page exists
	Empty bool
}

// AuditRow is one line, its action already labelled.
type AuditRow struct {
	At     time.Time
	Actor  string
	Action string
	Target string
	Detail string
	Denied bool
}

func pageURL(p int) string { return AuditURL + "?page=" + strconv.Itoa(p) }
