package team

import (
	"time"

	"tori.dev/contract/access"
)

// Member is a person's membership in a team.
type Member struct {
	TeamID    string
	UserID    string
	AccountID string // the person's own account (their personal team's id)
	Email     string
	Name      string
	Role      access.Role
	CreatedAt time.Time
}

// The rules below take the acting member's current role (read in the change's transaction,
// not the role the gateway signed, which may be a second old). A refusal is an
// *access.Denied, which the HTTP layer answers 403 insufficient_role and records in the
// team's audit log.

func needs(r access.Role) error {
	return &access.Denied{Code: access.CodeInsufficientRole, Required: r.String()}
}

// MayChangeRole says whether actor may move target from its role to role: admins change
// roles below owner, and only owners grant or take away owner.
func MayChangeRole(actor access.Role, target Member, role access.Role) error {
	if actor < access.Admin {
		return needs(access.Admin)
	}
	if (target.Role == access.Owner || role == access.Owner) && actor < access.Owner {
		return needs(access.Owner)
	}
	return nil
}

// MayRemove says whether actor (self when removing themselves) may remove target: anyone may
// leave; admins remove members below owner, and owners anyone.
func MayRemove(actor access.Role, self bool, target Member) error {
	if self {
		return nil
	}
	if actor < access.Admin {
		return needs(access.Admin)
	}
	if target.Role == access.Owner && actor < access.Owner {
		return needs(access.Owner)
	}
	return nil
}

// MayInvite says whether actor may invite someone as role: admins invite below owner,
// owners anyone.
func MayInvite(actor, role access.Role) error {
	if actor < access.Admin {
		return needs(access.Admin)
	}
	if role == access.Owner && actor < access.Owner {
		return needs(access.Owner)
	}
	return nil
}

// KeepsAnOwner is ErrLastOwner when target is the team's only owner (owners counts them) and
// would stop being one (to is its new role, access.NoRole for leaving or removal).
func KeepsAnOwner(target Member, to access.Role, owners int) error {
	if target.Role == access.Owner && to != access.Owner && owners <= 1 {
		return ErrLastOwner
	}
	return nil
}
