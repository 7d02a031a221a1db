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
	ExpiresAt *time.Time // nil for API tokens, which do not expire
	// Teams are the memberships the token acts in, each with the person's current role.
	Teams []access.Membership
}
