package identity

import (
	"fmt"
	"slices"
	"strings"

	"herald/models"
	"herald/service/core"
)

// roleRank orders the roles; an unknown role ranks below viewer.
var roleRank = map[core.Role]int{core.RoleViewer: 1, core.RoleEditor: 2, core.RoleAdmin: 3, core.RoleOwner: 4}

// Action is one kind of thing a console request does; each console route
// declares one (web/routes.go), and Can says who may do it.
type Action string

// The console's actions.
const (
	ActRead          Action = "read"           // every page and read-only form helper (counts, previews)
	ActOwnLogin      Action = "own_login"      // one's own password and sessions
	ActPrepare       Action = "prepare"        // contacts, contact types, fields, segments, designs, automations' drafts, test mails
	ActImport        Action = "import"         // start a CSV import
	ActSend          Action = "send"           // start, schedule, resume or delete a single send
	ActRunAutomation Action = "run_automation" // set an automation live, pause it, resume or delete its emails, delete it
	ActDeleteList    Action = "delete_list"    // delete a contact type or a segment (and their contacts' membership)
	ActSuppressions  Action = "suppressions"   // change global and group suppressions, lift bounces
	ActSenders       Action = "senders"        // add, change, verify or delete senders
	ActSettings      Action = "settings"       // time zone, checklist setting, notification recipients, event webhooks
	ActKeys          Action = "keys"           // see and rotate the API keys
	ActTeam          Action = "team"           // invite, remove and change members
	ActAudit         Action = "audit"          // read the audit log
)

// minimalRole is the one table of who may do what: the least role that
// may do each action. Editors prepare but never send, change who gets mail
// (suppressions, senders), delete lists, nor touch settings, keys or the
// team; viewers only read.
var minimalRole = map[Action]core.Role{
	ActRead:          core.RoleViewer,
	ActOwnLogin:      core.RoleViewer,
	ActPrepare:       core.RoleEditor,
	ActImport:        core.RoleEditor,
	ActSend:          core.RoleAdmin,
	ActRunAutomation: core.RoleAdmin,
	ActDeleteList:    core.RoleAdmin,
	ActSuppressions:  core.RoleAdmin,
	ActSenders:       core.RoleAdmin,
	ActSettings:      core.RoleAdmin,
	ActKeys:          core.RoleAdmin,
	ActTeam:          core.RoleAdmin,
	ActAudit:         core.RoleAdmin,
}

// DraftAction is what saving cur as a draft does: preparing, unless cur
// is armed (sent or scheduled by someone who may send), when turning it
// back into a draft takes it off its schedule, which only those who may
// send may do. cur nil: a new draft.
func DraftAction(cur *models.SingleSend) Action {
	if cur != nil && cur.Armed != 0 {
		return ActSend
	}
	return ActPrepare
}

// Actions lists every action of the table.
func Actions() []Action {
	out := make([]Action, 0, len(minimalRole))
	for a := range minimalRole {
		out = append(out, a)
	}
	slices.Sort(out)
	return out
}

// Known reports whether a is in the table.
func (a Action) Known() bool { _, ok := minimalRole[a]; return ok }

// Can reports whether role may do action. An unknown action or role may
// nothing.
func Can(role core.Role, action Action) bool {
	min, ok := minimalRole[action]
	if !ok {
		return false
	}
	return roleRank[role] >= roleRank[min] && roleRank[role] > 0
}

// actionRefusals say, for the console, why a role is refused an action.
var actionRefusals = map[Action]string{
	ActSend:          "start, schedule or delete sends: send yourself a test, and ask an owner or admin to send it",
	ActRunAutomation: "set automations live or pause them: ask an owner or admin to do it",
	ActDeleteList:    "delete contact types or segments",
	ActSuppressions:  "change suppression lists",
	ActSenders:       "change senders",
	ActSettings:      "change the account's settings",
	ActKeys:          "see, make, rotate or revoke API keys",
	ActTeam:          "manage the team",
	ActAudit:         "read the audit log",
	ActPrepare:       "change contacts, segments, designs or automations",
	ActImport:        "import contacts",
}

// RefusalOf says what a refused action is, for the audit log.
func RefusalOf(action string) string {
	what, ok := actionRefusals[Action(action)]
	if !ok {
		return action
	}
	if i := strings.Index(what, ":"); i >= 0 {
		what = what[:i]
	}
	return what
}

// Forbidden is the error of an action the role may not do: it names the
// role and what it may not do.
func Forbidden(role core.Role, action Action) *core.Error {
	what, ok := actionRefusals[action]
	if !ok {
		what = "do that"
	}
	return &core.Error{Code: core.CodeForbidden, Message: fmt.Sprintf("Your role (%s) may not %s.", role.Label(), what)}
}
