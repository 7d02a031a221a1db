// Package access is who may do what: the roles a team member holds, the scopes an API token
// carries, and the one table of routes with the minimum role and scope each needs. The
// gateway documents it, every service that names an object enforces it, and the command line
// and console read it; nobody re-types it.
package access

import "strings"

// Role is what a member may do in a team. Each role may do everything the roles below it may.
type Role int

const (
	// NoRole: not a member. A team's objects answer 404 to a caller without a role in it.
	NoRole Role = iota
	Viewer
	Developer
	Admin
	Owner
)

var roleNames = [...]string{"", "viewer", "developer", "admin", "owner"}

func (r Role) String() string {
	if r < NoRole || r > Owner {
		return ""
	}
	return roleNames[r]
}

// ParseRole reads a role's name; ok is false for anything else (the empty string included).
func ParseRole(s string) (Role, bool) {
	for i, n := range roleNames {
		if i > 0 && n == s {
			return Role(i), true
		}
	}
	return NoRole, false
}

// Roles lists the roles from least to most, for validation messages and tests.
func Roles() []Role { return []Role{Viewer, Developer, Admin, Owner} }

// Scope is what an API token may do, whatever its creator's role. Each scope includes the
// ones below it. A full token (the seed's `{name}` token, a session, a CLI sign-in) has
// FullScope: it acts with its creator's role alone.
type Scope int

const (
	NoScope Scope = iota
	Read
	Deploy
	Write
	AdminScope
	// FullScope is a session's or a full token's: above every scope a route can ask for.
	FullScope
)

var scopeNames = [...]string{"", "read", "deploy", "write", "admin", "full"}

func (s Scope) String() string {
	if s < NoScope || s > FullScope {
		return ""
	}
	return scopeNames[s]
}

// ParseScope reads a token scope a client may ask for (read, deploy, write, admin).
func ParseScope(s string) (Scope, bool) {
	for i := Read; i <= AdminScope; i++ {
		if scopeNames[i] == s {
			return i, true
		}
	}
	return NoScope, false
}

// Scopes lists the scopes a token may be created with, least first.
func Scopes() []Scope { return []Scope{Read, Deploy, Write, AdminScope} }

// ScopeOf is the scope a caller's header value names: "" (no scope given) is FullScope, an
// unknown value NoScope (which no route accepts).
func ScopeOf(header string) Scope {
	if header == "" {
		return FullScope
	}
	if s, ok := ParseScope(header); ok {
		return s
	}
	return NoScope
}

// Broadest returns the widest of scopes (a token asking for ["read","deploy"] is a deploy
// token); ok is false when scopes is empty or names an unknown scope.
func Broadest(scopes []string) (Scope, bool) {
	best := NoScope
	for _, s := range scopes {
		sc, ok := ParseScope(strings.TrimSpace(s))
		if !ok {
			return NoScope, false
		}
		best = max(best, sc)
	}
	return best, best != NoScope
}
