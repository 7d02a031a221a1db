package usecase

import (
	"context"

	"github.com/google/uuid"

	"tori.dev/contract/access"
	"tori.dev/pkg/callerid"
	identitybus "tori.dev/proto/tori/identity/v1"
	"tori.dev/services/identity/internal/team"
)

// ListMembers lists the team's members, oldest first.
func (s *Service) ListMembers(ctx context.Context, teamID string) ([]team.Member, error) {
	return s.store.Members(ctx, teamID)
}

// ChangeRole gives member userID of teamID the role named roleName. Admins change roles
// below owner, only owners grant or take away owner, and the last owner stays one.
func (s *Service) ChangeRole(ctx context.Context, c callerid.Caller, teamID, userID, roleName string) (team.Member, error) {
	role, err := team.ParseRole(roleName)
	if err != nil {
		return team.Member{}, err
	}
	if uuid.Validate(userID) != nil {
		return team.Member{}, team.ErrNotFound
	}
	now := s.now()
	var out team.Member
	err = s.store.InTx(ctx, func(tx Repo) error {
		if _, err := tx.LockTeam(ctx, teamID); err != nil {
			return err
		}
		actor, err := actingMember(ctx, tx, teamID, c.UserID, access.Viewer)
		if err != nil {
			return err
		}
		target, err := tx.Member(ctx, teamID, userID)
		if err != nil {
			return err
		}
		if err := team.MayChangeRole(actor.Role, target, role); err != nil {
			return err
		}
		if target.Role == role {
			out = target
			return nil
		}
		owners, err := tx.CountOwners(ctx, teamID)
		if err != nil {
			return err
		}
		if err := team.KeepsAnOwner(target, role, owners); err != nil {
			return err
		}
		if err := tx.SetRole(ctx, teamID, userID, role); err != nil {
			return err
		}
		target.Role = role
		out = target
		return tx.Publish(ctx, identitybus.KeyMembershipChanged, membershipChanged(teamID, userID, target.AccountID, role, now))
	})
	return out, err
}

// RemoveMember takes userID out of teamID: the caller leaving (any role), or an admin
// removing a member below owner (an owner anyone). The last owner stays. The member's tokens
// for the team are revoked in the same transaction, so they answer 401 everywhere within a
// second.
func (s *Service) RemoveMember(ctx context.Context, c callerid.Caller, teamID, userID string) error {
	if uuid.Validate(userID) != nil {
		return team.ErrNotFound
	}
	now := s.now()
	return s.store.InTx(ctx, func(tx Repo) error {
		if _, err := tx.LockTeam(ctx, teamID); err != nil {
			return err
		}
		actor, err := actingMember(ctx, tx, teamID, c.UserID, access.Viewer)
		if err != nil {
			return err
		}
		target, err := tx.Member(ctx, teamID, userID)
		if err != nil {
			return err
		}
		if err := team.MayRemove(actor.Role, userID == c.UserID, target); err != nil {
			return err
		}
		owners, err := tx.CountOwners(ctx, teamID)
		if err != nil {
			return err
		}
		if err := team.KeepsAnOwner(target, access.NoRole, owners); err != nil {
			return err
		}
		if err := tx.RemoveMember(ctx, teamID, userID); err != nil {
			return err
		}
		revoked, err := tx.RevokeMemberTokens(ctx, teamID, userID, now)
		if err != nil {
			return err
		}
		for _, r := range revoked {
			if err := tx.Publish(ctx, identitybus.KeyTokenRevoked, tokenRevoked(r.AccountID, r.ID, now)); err != nil {
				return err
			}
		}
		return tx.Publish(ctx, identitybus.KeyMembershipChanged, membershipChanged(teamID, userID, target.AccountID, access.NoRole, now))
	})
}
