package usecase

import (
	"time"

	"google.golang.org/protobuf/types/known/timestamppb"

	"github.com/google/uuid"
	"tori.dev/contract/access"
	"tori.dev/pkg/callerid"
	auditv1 "tori.dev/proto/gen/tori/audit/v1"
	identityv1 "tori.dev/proto/gen/tori/identity/v1"
	auditbus "tori.dev/proto/tori/audit/v1"
	"tori.dev/services/identity/internal/team"
)

// The messages of the team events identity publishes, and the audit entries its use cases
// write themselves (the routes that act in no team the gate could locate: creating a team,
// accepting an invitation).

func teamCreated(t team.Team) *identityv1.TeamCreated {
	return &identityv1.TeamCreated{TeamId: t.ID, Slug: t.Slug, Name: t.Name, Personal: t.Personal,
		OwnerAccountId: t.OwnerAccountID, CreatedAt: timestamppb.New(t.CreatedAt)}
}

func teamDeleted(teamID string, at time.Time) *identityv1.TeamDeleted {
	return &identityv1.TeamDeleted{TeamId: teamID, DeletedAt: timestamppb.New(at)}
}

// membershipChanged reports userID's new role in teamID; access.NoRole ("") when they left
// or were removed.
func membershipChanged(teamID, userID, accountID string, role access.Role, at time.Time) *identityv1.MembershipChanged {
	return &identityv1.MembershipChanged{TeamId: teamID, UserId: userID, AccountId: accountID,
		Role: role.String(), ChangedAt: timestamppb.New(at)}
}

// auditEntry is a successful change by caller c in teamID, for the team's audit log.
func auditEntry(c callerid.Caller, teamID, action, target string, at time.Time) *auditv1.EntryRecorded {
	e := &auditv1.EntryRecorded{
		EntryId: uuid.Must(uuid.NewV7()).String(), TeamId: teamID, At: timestamppb.New(at),
		ActorType: auditbus.ActorUser, UserId: c.UserID, Action: action, Target: target,
		Ip: c.ClientIP, Outcome: auditbus.OutcomeSuccess, Metadata: map[string]string{},
	}
	if c.TokenKind == callerid.KindAPI {
		e.ActorType = auditbus.ActorToken
		e.TokenId = c.TokenID
	}
	return e
}
