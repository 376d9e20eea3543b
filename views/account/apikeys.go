package account

import (
	"slices"
	"strconv"

	"herald/service"
	"herald/views"
)

// APIKeysURL is where named keys are made (POST); APIKeyRevokeURL(id)
// revokes one (POST).
const APIKeysURL = "/account/api-keys"

// APIKeyRevokeURL is where the key id is revoked (POST).
func APIKeyRevokeURL(id int64) string {
	return APIKeysURL + "/" + strconv.FormatInt(id, 10) + "/revoke"
}

// APIKeys is the card of named, scoped API keys: the list, the form of a
// new key (with its errors) and a key just made, shown this once.
type APIKeys struct {
	Keys   []service.APIKey
	Form   APIKeyForm
	New    *NewAPIKey // just made: its pair, shown once
	TZ     string     // the account's time zone
	CSRF   string
	Notice string // a message after a revocation
}

// APIKeyForm is the form of a new named key.
type APIKeyForm struct {
	Name      string
	Scope     string   // service.ScopeFull, ScopeRead or ScopeAreas
	Areas     []string // read and changed
	ReadAreas []string // read only
	Errors    views.Errors
}

// NewAPIKey is a key just made, with its secret.
type NewAPIKey struct {
	Name      string
	PublicKey string
	SecretKey string
}

func (f APIKeyForm) scope() string {
	if f.Scope == "" {
		return service.ScopeRead
	}
	return f.Scope
}

// access is what the form gives the area: "write" (read and change),
// "read" or "" (nothing).
func (f APIKeyForm) access(a string) string {
	switch {
	case slices.Contains(f.Areas, a):
		return "write"
	case slices.Contains(f.ReadAreas, a):
		return "read"
	}
	return ""
}

// areaAccess are the choices of an area's access.
var areaAccess = []views.Option{{Value: "", Label: "No access"}, {Value: "read", Label: "Read only"}, {Value: "write", Label: "Read and change"}}

// lastUsed is the day a key was last used, or "Never".
func lastUsed(k service.APIKey) string {
	if k.LastUsedOn == "" {
		return "Never"
	}
	return k.LastUsedOn
}
