package views

import (
	"context"

	"herald/service"
)

// The console shows a person only the buttons, links and forms of the
// actions its role may do. Which those are is not decided here: web puts
// the answer of the service's one role table (service.Can, the same
// function the routes' check calls) on each request's context, and the
// components ask it. A component rendered outside a login (a public
// page, or no permissions set) may nothing.

type permissionsKey struct{}

// Permissions answers, for the logged-in person, whether it may do an
// action and, when not, why (the sentence the server's refusal says).
type Permissions struct {
	Can func(service.Action) bool
	Why func(service.Action) string
}

// WithPermissions returns ctx carrying p for the components rendered with
// it.
func WithPermissions(ctx context.Context, p Permissions) context.Context {
	return context.WithValue(ctx, permissionsKey{}, p)
}

// Can reports whether the logged-in person may do action; false when no
// one is logged in.
func Can(ctx context.Context, action service.Action) bool {
	p, ok := ctx.Value(permissionsKey{}).(Permissions)
	return ok && p.Can != nil && p.Can(action)
}

// Why says why the logged-in person may not do action ("Your role
// (Viewer) may not …"), or "" when it may.
func Why(ctx context.Context, action service.Action) string {
	p, ok := ctx.Value(permissionsKey{}).(Permissions)
	if !ok || p.Why == nil || Can(ctx, action) {
		return ""
	}
	return p.Why(action)
}
