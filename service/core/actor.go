package core

// Who acts (an account's role, a member or a key) and which account a
// request is for, carried on the context: the vocabulary every area reads.

import (
	"context"
	"slices"
)

type accountKey struct{}

// WithAccount marks ctx as acting for an account (whose outbox a message
// sent with ctx lands in).
func WithAccount(ctx context.Context, accountID int64) context.Context {
	return context.WithValue(ctx, accountKey{}, accountID)
}

// AccountFrom returns the account WithAccount set, or 0.
func AccountFrom(ctx context.Context) int64 {
	id, _ := ctx.Value(accountKey{}).(int64)
	return id
}

// Role is what a person may do on an account. Roles are ordered: each
// may do everything the ones below it may.
type Role string

// The roles, from the most to the least powerful.
const (
	RoleOwner  Role = "owner"  // the account's own login: everything, and the team
	RoleAdmin  Role = "admin"  // everything but changing the owner
	RoleEditor Role = "editor" // prepares (audience, designs, automations' emails), never sends
	RoleViewer Role = "viewer" // reads
)

// MemberRoles are the roles a member can be given (there is one owner:
// the account's login).
var MemberRoles = []Role{RoleAdmin, RoleEditor, RoleViewer}

// Valid reports whether r is a role a member may have.
func (r Role) Valid() bool { return slices.Contains(MemberRoles, r) }

// Label is the role as the console shows it.
func (r Role) Label() string {
	switch r {
	case RoleOwner:
		return "Owner"
	case RoleAdmin:
		return "Admin"
	case RoleEditor:
		return "Editor"
	case RoleViewer:
		return "Viewer"
	}
	return string(r)
}

// Actor is the person a console request acts for: the account, the member
// (0 for the owner), its role and how the audit log names it.
type Actor struct {
	AccountID int64
	MemberID  int64
	Role      Role
	Name      string // name and address, for the audit log
}

type actorKey struct{}

// WithActor puts the actor on ctx: the audit log records who did what.
func WithActor(ctx context.Context, a Actor) context.Context {
	return context.WithValue(ctx, actorKey{}, a)
}

// ActorOf returns the actor WithActor put on ctx; ok is false for a
// request of an API key or the command line.
func ActorOf(ctx context.Context) (Actor, bool) {
	a, ok := ctx.Value(actorKey{}).(Actor)
	return a, ok
}
