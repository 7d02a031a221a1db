package auth

import (
	"errors"
	"slices"
	"time"

	"tori.dev/contract/access"
)

// Lifetimes of a scoped token (decisions.md, "API tokens"): a token a CI job holds should
// end on its own, and one that would outlive a year is a full token in disguise.
const (
	DefaultTokenLifetime = 90 * 24 * time.Hour
	MaxTokenLifetime     = 365 * 24 * time.Hour
	MinTokenLifetime     = 60 * time.Second
)

var (
	// ErrTokenExpired: a scoped token past its ExpiresAt. Introspection answers it apart
	// from an unknown token so the gateway can tell the client to mint a new one.
	ErrTokenExpired = errors.New("auth: token expired")
	// ErrInsufficientScope: the calling token does not cover what it asked for; see
	// ScopeError.
	ErrInsufficientScope = errors.New("auth: insufficient scope")
)

// ParameterError is a scoped-token request member that is wrong: 400 invalid_parameter
// naming Field.
type ParameterError struct {
	Field  string
	Reason string
}

func (e *ParameterError) Error() string { return "auth: " + e.Field + ": " + e.Reason }

// ScopeError is ErrInsufficientScope with the scope that would have been enough ("full" when
// only a session or a full token could do it: another team, other apps, a later end).
type ScopeError struct{ Required string }

func (e *ScopeError) Error() string { return "auth: insufficient scope, needs " + e.Required }

// Is makes errors.Is(err, ErrInsufficientScope) true.
func (e *ScopeError) Is(target error) bool { return target == ErrInsufficientScope }

// Scoped reports whether the token is limited to a team and a scope.
func (t APIToken) Scoped() bool { return t.TeamID != "" }

// Expired reports whether a scoped token has ended by time. A full token never does.
func (t APIToken) Expired(now time.Time) bool {
	return t.ExpiresAt != nil && !now.Before(*t.ExpiresAt)
}

// ScopeLevel is the token's scope as contract/access orders it; FullScope for a full token.
func (t APIToken) ScopeLevel() access.Scope {
	if !t.Scoped() {
		return access.FullScope
	}
	s, ok := access.ParseScope(t.Scope)
	if !ok {
		return access.NoScope
	}
	return s
}

// TokenSpec is what a scoped token is asked to be, before its team is resolved.
type TokenSpec struct {
	Scope     access.Scope
	Apps      []string // sorted, without repeats; nil when not pinned
	ExpiresAt time.Time
}

// ParseTokenSpec checks a scoped token's scopes, apps and end. scopes must name at least one
// of read/deploy/write/admin (the broadest counts); an empty apps list pins nothing; the end
// is expiresIn seconds from now or expiresAt (at most one of them), by default
// DefaultTokenLifetime, between MinTokenLifetime and MaxTokenLifetime away.
func ParseTokenSpec(scopes, apps []string, expiresIn *int64, expiresAt *time.Time, now time.Time) (TokenSpec, error) {
	scope, ok := access.Broadest(scopes)
	if !ok {
		return TokenSpec{}, &ParameterError{Field: "scopes", Reason: "must list at least one of read, deploy, write, admin"}
	}
	spec := TokenSpec{Scope: scope, ExpiresAt: now.Add(DefaultTokenLifetime)}
	switch {
	case expiresIn != nil && expiresAt != nil:
		return TokenSpec{}, &ParameterError{Field: "expiresAt", Reason: "give expiresIn or expiresAt, not both"}
	case expiresIn != nil:
		if *expiresIn < int64(MinTokenLifetime/time.Second) || *expiresIn > int64(MaxTokenLifetime/time.Second) {
			return TokenSpec{}, &ParameterError{Field: "expiresIn", Reason: "must be between 60 seconds and 365 days"}
		}
		spec.ExpiresAt = now.Add(time.Duration(*expiresIn) * time.Second)
	case expiresAt != nil:
		d := expiresAt.Sub(now)
		if d < MinTokenLifetime || d > MaxTokenLifetime {
			return TokenSpec{}, &ParameterError{Field: "expiresAt", Reason: "must be between 60 seconds and 365 days from now"}
		}
		spec.ExpiresAt = expiresAt.UTC().Truncate(time.Microsecond)
	}
	if len(apps) > 0 {
		spec.Apps = slices.Clone(apps)
		slices.Sort(spec.Apps)
		spec.Apps = slices.Compact(spec.Apps)
		for _, a := range spec.Apps {
			if a == "" {
				return TokenSpec{}, &ParameterError{Field: "apps", Reason: "must be slugs of the team's apps"}
			}
		}
	}
	return spec, nil
}

// Covers says whether parent, the scoped token a request came with, may mint a token of
// teamID and spec: the same team, a scope at least as broad, pinned apps that include the new
// token's (an unpinned parent covers every app) and an end no earlier. nil when it may; a
// *ScopeError naming what would have been enough otherwise.
func (parent APIToken) Covers(teamID string, spec TokenSpec) error {
	if parent.TeamID != teamID {
		return &ScopeError{Required: access.FullScope.String()}
	}
	if parent.ScopeLevel() < spec.Scope {
		return &ScopeError{Required: spec.Scope.String()}
	}
	if parent.Apps != nil {
		if spec.Apps == nil {
			return &ScopeError{Required: access.FullScope.String()}
		}
		for _, a := range spec.Apps {
			if !slices.Contains(parent.Apps, a) {
				return &ScopeError{Required: access.FullScope.String()}
			}
		}
	}
	if parent.ExpiresAt == nil || parent.ExpiresAt.Before(spec.ExpiresAt) {
		return &ScopeError{Required: access.FullScope.String()}
	}
	return nil
}
