package auth

import (
	"time"

	"tori.dev/contract/access"
)

// Principal is who a valid bearer token acts for, as introspection tells the gateway.
type Principal struct {
	AccountID string
	UserID    string
	Kind      string     // KindSession or KindAPI
	TokenID   string     // the session's or API token's id; revocation names it
	ExpiresAt *time.Time // a session's or scoped token's end; nil for a full API token

	// Teams the principal acts in with its current role there: for a scoped token only its
	// team. Scope is a scoped token's ("" full); Apps its pinned apps (nil: not pinned).
	Teams []access.Membership
	Scope string
	Apps  []string
}
