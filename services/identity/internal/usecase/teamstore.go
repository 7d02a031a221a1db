package usecase

import (
	"context"
	"time"

	"tori.dev/contract/access"
	auditv1 "tori.dev/proto/gen/tori/audit/v1"
	"tori.dev/services/identity/internal/team"
)

// RevokedToken is an API token a member's removal revoked: its gateways' caches forget it
// by id.
type RevokedToken struct {
	ID        string
	AccountID string
}

// TeamRepo is the persistence of teams, memberships and invitations (a part of Repo). Lookups
// that find nothing return team.ErrNotFound.
type TeamRepo interface {
	// CreateTeam stores t; created is false when its slug is taken, and the caller picks
	// another.
	CreateTeam(ctx context.Context, t team.Team) (created bool, err error)
	Team(ctx context.Context, id string) (team.Team, error)
	// LockTeam takes the team's row lock: membership changes of one team take turns, so two
	// owners cannot each demote the other past the last-owner rule.
	LockTeam(ctx context.Context, id string) (team.Team, error)
	RenameTeam(ctx context.Context, id, name string) error
	// DeleteTeam deletes the team with its memberships, invitations and tokens.
	DeleteTeam(ctx context.Context, id string) error
	// TeamOf is the team as member userID sees it (team.ErrNotFound when not a member).
	TeamOf(ctx context.Context, teamID, userID string) (team.View, error)
	// TeamsOf lists every team userID is a member of, personal first, then by slug.
	TeamsOf(ctx context.Context, userID string) ([]team.View, error)
	// MembershipsOf is every membership of userID, as the gateway signs them.
	MembershipsOf(ctx context.Context, userID string) ([]access.Membership, error)
	// CountOwnedNestlingTeams counts the non-personal teams userID owns on nestling (a team
	// with no plan copy yet counts as nestling).
	CountOwnedNestlingTeams(ctx context.Context, userID string) (int, error)
	// TeamHasApps reports whether identity's copy of apps gives the team any.
	TeamHasApps(ctx context.Context, teamID string) (bool, error)

	AddMember(ctx context.Context, teamID, userID string, role access.Role, at time.Time) error
	Member(ctx context.Context, teamID, userID string) (team.Member, error)
	// Members lists the team's members, oldest first.
	Members(ctx context.Context, teamID string) ([]team.Member, error)
	CountOwners(ctx context.Context, teamID string) (int, error)
	// OwnerEmails are the addresses of a team's owners (notices about what the team owns go
	// to them).
	OwnerEmails(ctx context.Context, teamID string) ([]string, error)
	SetRole(ctx context.Context, teamID, userID string, role access.Role) error
	RemoveMember(ctx context.Context, teamID, userID string) error
	// RevokeMemberTokens revokes userID's active API tokens whose team is teamID.
	RevokeMemberTokens(ctx context.Context, teamID, userID string, at time.Time) ([]RevokedToken, error)
	// RevokeTeamTokens revokes every active API token whose team is teamID.
	RevokeTeamTokens(ctx context.Context, teamID string, at time.Time) ([]RevokedToken, error)

	CreateInvitation(ctx context.Context, inv team.Invitation) error
	// PendingInvitations lists the team's invitations still open at now, oldest first.
	PendingInvitations(ctx context.Context, teamID string, now time.Time) ([]team.Invitation, error)
	// RevokeInvitation withdraws the team's pending invitation id (team.ErrNotFound when
	// there is none).
	RevokeInvitation(ctx context.Context, teamID, id string, at time.Time) error
	// RevokeInvitationsTo withdraws the team's pending invitations to email.
	RevokeInvitationsTo(ctx context.Context, teamID, email string, at time.Time) error
	LockInvitation(ctx context.Context, hash []byte) (team.Invitation, error)
	SaveInvitation(ctx context.Context, inv team.Invitation) error

	// PutTeamApp and DeleteTeamApp keep identity's copy of which team owns which app.
	PutTeamApp(ctx context.Context, appID, teamID, slug string) error
	DeleteTeamApp(ctx context.Context, appID string) error

	// RecordAudit writes an entry into the audit log; only valid inside InTx, where it
	// commits with the change it records.
	RecordAudit(ctx context.Context, e *auditv1.EntryRecorded) error
}
