package api

import (
	"strings"

	"github.com/gofiber/fiber/v2"

	"herald/service"
)

// routeAccess is what a route does: the area of the API it belongs to and
// whether it changes anything (a read-only key may not). Some GET routes
// change state (pause, set live, duplicate, resend a verification mail)
// and the sender list answers POST too: the table says, not the method.
type routeAccess struct {
	area  string
	write bool
}

type routeKey struct{ method, path string }

func reads(area string) routeAccess   { return routeAccess{area: area} }
func changes(area string) routeAccess { return routeAccess{area: area, write: true} }

// routeScopes maps every route of Mount (routes.go) to its area; a route
// missing here is refused to every named key but a full one
// (TestEveryRouteHasAScope fails on it).
var routeScopes = map[routeKey]routeAccess{
	{"GET", "/global-unsubscribes"}:              reads("suppressions"),
	{"POST", "/global-unsubscribes/save"}:        changes("suppressions"),
	{"DELETE", "/global-unsubscribes/delete"}:    changes("suppressions"),
	{"POST", "/global-unsubscribes/bulk-delete"}: changes("suppressions"),

	{"GET", "/unsubscribes-groups"}:                         reads("suppressions"),
	{"POST", "/unsubscribes-groups/save"}:                   changes("suppressions"),
	{"GET", "/unsubscribes-groups/details"}:                 reads("suppressions"),
	{"POST", "/unsubscribes-groups/update"}:                 changes("suppressions"),
	{"POST", "/unsubscribes-groups/manually-add"}:           changes("suppressions"),
	{"GET", "/unsubscribes-groups/recipients-list"}:         reads("suppressions"),
	{"DELETE", "/unsubscribes-groups/recipients-delete"}:    changes("suppressions"),
	{"POST", "/unsubscribes-groups/recipients-bulk-delete"}: changes("suppressions"),

	{"GET", "/notification-recipients"}:             reads("notifications"),
	{"POST", "/notification-recipient/save"}:        changes("notifications"),
	{"DELETE", "/notification-recipient/delete"}:    changes("notifications"),
	{"POST", "/notification-recipient/bulk-delete"}: changes("notifications"),

	{"GET", "/event-webhooks"}:           reads("event_webhooks"),
	{"POST", "/event-webhooks/save"}:     changes("event_webhooks"),
	{"POST", "/event-webhooks/update"}:   changes("event_webhooks"),
	{"DELETE", "/event-webhooks/delete"}: changes("event_webhooks"),

	{"GET", "/contacts-type"}:           reads("contact_types"),
	{"POST", "/contacts-type/add"}:      changes("contact_types"),
	{"GET", "/contacts-type/view"}:      reads("contact_types"),
	{"POST", "/contacts-type/update"}:   changes("contact_types"),
	{"DELETE", "/contacts-type/delete"}: changes("contact_types"),

	{"GET", "/reserve-fields"}:          reads("fields"),
	{"GET", "/custom-fields"}:           reads("fields"),
	{"POST", "/custom-fields/save"}:     changes("fields"),
	{"DELETE", "/custom-fields/delete"}: changes("fields"),

	{"GET", "/contacts/list"}:                reads("contacts"),
	{"POST", "/contacts/add"}:                changes("contacts"),
	{"GET", "/contacts/details"}:             reads("contacts"),
	{"GET", "/contacts/csv-sample/download"}: reads("contacts"),
	{"POST", "/contacts/upload-csv"}:         changes("contacts"),
	{"POST", "/contacts/update"}:             changes("contacts"),
	{"DELETE", "/contacts/delete"}:           changes("contacts"),
	{"POST", "/contacts/bulk-delete"}:        changes("contacts"),
	{"GET", "/contacts/export"}:              reads("contacts"),
	{"POST", "/contacts/tags/add"}:           changes("contacts"),
	{"POST", "/contacts/tags/remove"}:        changes("contacts"),
	{"GET", "/contacts/privacy-export"}:      reads("contacts"),
	{"POST", "/contacts/erase"}:              changes("contacts"),
	// Sign-up forms add contacts: a key that may change contacts may keep them.
	{"GET", "/forms"}:           reads("contacts"),
	{"POST", "/forms/save"}:     changes("contacts"),
	{"POST", "/forms/update"}:   changes("contacts"),
	{"DELETE", "/forms/delete"}: changes("contacts"),

	// Served before the key check (no keys); listed so the table stays whole.
	{"GET", "/openapi.json"}: reads(service.AreaReference),

	{"GET", "/get/country-state-city"}: reads(service.AreaReference),

	{"GET", "/senders"}:            reads("senders"),
	{"POST", "/senders"}:           reads("senders"), // the list, by POST too
	{"POST", "/sender/save"}:       changes("senders"),
	{"GET", "/sender/details"}:     reads("senders"),
	{"POST", "/sender/update"}:     changes("senders"),
	{"DELETE", "/sender/delete"}:   changes("senders"),
	{"GET", "/sender/resend-mail"}: changes("senders"), // sends a mail
	{"GET", "/senders/warmup"}:     reads("senders"),
	{"POST", "/senders/warmup"}:    changes("senders"),
	{"DELETE", "/senders/warmup"}:  changes("senders"),

	{"GET", "/get-dynamic/content"}: reads(service.AreaReference),
	{"GET", "/get-design/template"}: reads(service.AreaReference),

	{"GET", "/segment/list"}:            reads("segments"),
	{"POST", "/segment/store"}:          changes("segments"),
	{"POST", "/segment/update"}:         changes("segments"),
	{"DELETE", "/segment/delete"}:       changes("segments"),
	{"GET", "/segment/email/list"}:      reads("segments"),
	{"POST", "/segment/email/store"}:    changes("segments"),
	{"DELETE", "/segment/email/delete"}: changes("segments"),

	{"GET", "/single-send/list"}:         reads("single_sends"),
	{"POST", "/single/send/create"}:      changes("single_sends"),
	{"POST", "/single/send/duplicate"}:   changes("single_sends"),
	{"GET", "/single/send/duplicate"}:    changes("single_sends"), // makes a copy
	{"GET", "/single-send/details"}:      reads("single_sends"),
	{"GET", "/single-send/report"}:       reads("single_sends"),
	{"POST", "/single/send/update"}:      changes("single_sends"),
	{"DELETE", "/single/send/delete"}:    changes("single_sends"),
	{"POST", "/single/send/bulk-delete"}: changes("single_sends"),
	{"POST", "/single/send/resend"}:      changes("single_sends"),

	{"POST", "/mail/send"}: changes("single_sends"), // a single message: sending, as a send is

	{"GET", "/archive"}: reads("single_sends"), // the address of the public archive (its id made on first use)

	{"GET", "/automations"}:                  reads("automations"),
	{"POST", "/automations/create"}:          changes("automations"),
	{"GET", "/automations/duplicate"}:        changes("automations"), // makes a copy
	{"GET", "/automations/details"}:          reads("automations"),
	{"GET", "/automations/pause"}:            changes("automations"),
	{"GET", "/automations/set-live"}:         changes("automations"),
	{"DELETE", "/automations/delete"}:        changes("automations"),
	{"POST", "/automations/bulk-delete"}:     changes("automations"),
	{"GET", "/automations/schedule"}:         reads("automations"),
	{"POST", "/automations/schedule/create"}: changes("automations"),
	{"POST", "/automations/trigger"}:         changes("automations"),

	// The organisation profile is an account setting: a read-only key
	// reads it, only a key given the profile area changes it.
	{"GET", "/org-profile"}:  reads("profile"),
	{"POST", "/org-profile"}: changes("profile"),

	{"GET", "/blocks"}:           reads("blocks"),
	{"POST", "/blocks"}:          changes("blocks"),
	{"DELETE", "/blocks/delete"}: changes("blocks"),
}

// textKeyScope is the refusal of a request outside a named key's scope.
const textKeyScope = "This API key may not do that."

// inScope reports whether scope allows the request: the route is looked up
// in routeScopes by method and path below the API's mount point (the
// prefix of the middleware's own route), as the router matches them
// (case-insensitive, a trailing slash ignored; HEAD as GET). A request to
// no known route is refused unless the scope is full.
func inScope(c *fiber.Ctx, scope service.Scope) bool {
	if scope.Kind == service.ScopeFull {
		return true
	}
	path := strings.ToLower(c.Path())
	prefix := strings.ToLower(strings.TrimRight(c.Route().Path, "/"))
	if !strings.HasPrefix(path, prefix) {
		return false
	}
	path = strings.TrimPrefix(path, prefix)
	if len(path) > 1 {
		path = strings.TrimRight(path, "/")
	}
	method := c.Method()
	if method == fiber.MethodHead {
		method = fiber.MethodGet
	}
	acc, ok := routeScopes[routeKey{method, path}]
	return ok && scope.Allows(acc.area, acc.write)
}
