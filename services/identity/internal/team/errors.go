package team

import (
	"errors"
	"fmt"
)

// Sentinel errors of the teams domain. internal/httpapi/errors.go gives each its status and
// code.
var (
	// ErrNotFound: no such team, member or invitation (or one the caller may not see).
	ErrNotFound = errors.New("team: not found")
	// ErrInvalidName: a team name that is empty, too long or holds control characters.
	ErrInvalidName = errors.New("team: invalid name")
	// ErrInvalidSlug: a requested slug outside the app-slug shape (contract/names).
	ErrInvalidSlug = errors.New("team: invalid slug")
	// ErrSlugTaken: another team has the slug (slugs are global and never change).
	ErrSlugTaken = errors.New("team: slug taken")
	// ErrInvalidRole: a role that is not viewer, developer, admin or owner.
	ErrInvalidRole = errors.New("team: invalid role")
	// ErrPersonalTeam: the personal team can be neither deleted nor shared.
	ErrPersonalTeam = errors.New("team: personal team")
	// ErrNotEmpty: the team still owns apps.
	ErrNotEmpty = errors.New("team: team owns apps")
	// ErrLastOwner: the change would leave the team without an owner.
	ErrLastOwner = errors.New("team: last owner")
	// ErrAlreadyMember: the invited address already belongs to a member.
	ErrAlreadyMember = errors.New("team: already a member")
	// ErrInvalidInvitation: an invitation code that is unknown, used or withdrawn.
	ErrInvalidInvitation = errors.New("team: invalid invitation code")
	// ErrInvitationExpired: the invitation's seven days are over.
	ErrInvitationExpired = errors.New("team: invitation expired")
	// ErrEmailMismatch: the invitation was sent to another address than the caller's.
	ErrEmailMismatch = errors.New("team: invitation is for another address")
)

// Codes of LimitError.
const (
	CodeTeamLimit   = "team_limit_reached"
	CodeMemberLimit = "member_limit_reached"
)

// LimitError is a plan limit that refused a change: Code says which (CodeTeamLimit,
// CodeMemberLimit), Limit and Plan are shown to the caller.
type LimitError struct {
	Code  string
	Limit int64
	Plan  string
}

func (e *LimitError) Error() string {
	return fmt.Sprintf("team: %s (%d on %s)", e.Code, e.Limit, e.Plan)
}
