// Package identitybus names what the identity service publishes on the bus. Each name is
// declared here once, beside its message in events.proto; consumers import the constant.
package identitybus

// Events (routing keys on the events exchange).
const (
	KeyAccountCreated    = "identity.account.created"    // identityv1.AccountCreated
	KeyAccountUpdated    = "identity.account.updated"    // identityv1.AccountUpdated
	KeyTokenRevoked      = "identity.token.revoked"      // identityv1.TokenRevoked
	KeyTeamCreated       = "identity.team.created"       // identityv1.TeamCreated
	KeyTeamDeleted       = "identity.team.deleted"       // identityv1.TeamDeleted
	KeyMembershipChanged = "identity.membership.changed" // identityv1.MembershipChanged
)
