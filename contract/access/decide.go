package access

import (
	"errors"
	"slices"
)

// Membership is the caller's role in one team, as the gateway signs it onto a request.
type Membership struct {
	TeamID   string
	Slug     string
	Role     Role
	Personal bool
}

// Principal is what a request may do: the teams its person belongs to (for a scoped token,
// only the token's team) with their current roles, the token's scope, and the apps a pinned
// token is limited to.
type Principal struct {
	Memberships []Membership
	Scope       Scope
	Apps        []string // nil: every app of the teams
	Session     bool     // a sign-in session, not an API token
}

// RoleIn is the caller's role in team; NoRole when not a member.
func (p Principal) RoleIn(teamID string) Role {
	for _, m := range p.Memberships {
		if m.TeamID == teamID {
			return m.Role
		}
	}
	return NoRole
}

// TeamBySlug finds a membership by the team's slug. An empty slug is the caller's default
// team: their personal team, or a scoped token's one team.
func (p Principal) TeamBySlug(slug string) (Membership, bool) {
	for _, m := range p.Memberships {
		if (slug == "" && m.Personal) || (slug != "" && m.Slug == slug) {
			return m, true
		}
	}
	if slug == "" && len(p.Memberships) == 1 && p.Scope != FullScope {
		return p.Memberships[0], true
	}
	return Membership{}, false
}

// TeamByID finds a membership by the team's id.
func (p Principal) TeamByID(id string) (Membership, bool) {
	for _, m := range p.Memberships {
		if m.TeamID == id {
			return m, true
		}
	}
	return Membership{}, false
}

// TeamIDs lists the ids of the caller's teams.
func (p Principal) TeamIDs() []string {
	ids := make([]string, 0, len(p.Memberships))
	for _, m := range p.Memberships {
		ids = append(ids, m.TeamID)
	}
	return ids
}

// Pinned reports whether the caller's token is limited to some apps.
func (p Principal) Pinned() bool { return p.Apps != nil }

// MaySeeApp reports whether a pinned token's list lets it name slug.
func (p Principal) MaySeeApp(slug string) bool { return p.Apps == nil || slices.Contains(p.Apps, slug) }

// ErrNotFound: the caller may not know the object exists (not a member, or a pinned token's
// other app); answered exactly as an object that does not exist.
var ErrNotFound = errors.New("access: not found")

// Denied is a refusal of one of the team's own members or tokens: 403 with Code and the
// Required role or scope.
type Denied struct {
	Code     string // insufficient_role, insufficient_scope or session_required
	Required string // the role or scope that would have been enough
}

func (d *Denied) Error() string { return "access: " + d.Code + " (needs " + d.Required + ")" }

// Refusal codes.
const (
	CodeInsufficientRole  = "insufficient_role"
	CodeInsufficientScope = "insufficient_scope"
	CodeSessionRequired   = "session_required"
)

// Decide says whether p may call r on the located team (teamID; "" for a Personal or
// MemberTeams route) and app (appSlug; "" unless AppPath). It returns nil, ErrNotFound or a
// *Denied. The order of the checks is the contract's: what the caller may not see first,
// then their role, then their token's scope.
func Decide(p Principal, r Route, teamID, appSlug string) error {
	if r.SessionOnly && !p.Session {
		return &Denied{Code: CodeSessionRequired, Required: "session"}
	}
	switch r.Locator {
	case AppPath, TeamPath, TeamParam:
		role := p.RoleIn(teamID)
		if role == NoRole {
			return ErrNotFound
		}
		if r.Locator == AppPath && !p.MaySeeApp(appSlug) {
			return ErrNotFound
		}
		if r.Locator == TeamParam && p.Pinned() && r.Changes() {
			// A token pinned to apps acts on those apps only, never on the team as a whole.
			return &Denied{Code: CodeInsufficientScope, Required: FullScope.String()}
		}
		if role < r.Role {
			return &Denied{Code: CodeInsufficientRole, Required: r.Role.String()}
		}
	}
	if p.Scope < r.Scope {
		return &Denied{Code: CodeInsufficientScope, Required: r.Scope.String()}
	}
	return nil
}
