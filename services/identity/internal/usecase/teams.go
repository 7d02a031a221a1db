package usecase

import (
	"context"
	"errors"
	"slices"

	"tori.dev/contract/access"
	"tori.dev/pkg/callerid"
	identitybus "tori.dev/proto/tori/identity/v1"
	"tori.dev/services/identity/internal/account"
	"tori.dev/services/identity/internal/team"
)

// ListTeams lists the teams the caller may see: every team of the person for a session or a
// full token, only its own team for a scoped token.
func (s *Service) ListTeams(ctx context.Context, c callerid.Caller) ([]team.View, error) {
	views, err := s.store.TeamsOf(ctx, c.UserID)
	if err != nil || c.Scope == "" {
		return views, err
	}
	allowed := c.Principal().Memberships
	return slices.DeleteFunc(views, func(v team.View) bool {
		return !slices.ContainsFunc(allowed, func(m access.Membership) bool { return m.TeamID == v.ID })
	}), nil
}

// GetTeam is the team teamID as the caller, one of its members, sees it.
func (s *Service) GetTeam(ctx context.Context, c callerid.Caller, teamID string) (team.View, error) {
	return s.store.TeamOf(ctx, teamID, c.UserID)
}

// CreateTeam makes a team owned by the caller, on nestling until billing says otherwise. A
// person may own only team.MaxOwnedNestlingTeams free teams besides their personal one.
func (s *Service) CreateTeam(ctx context.Context, c callerid.Caller, name, slug string) (team.View, error) {
	name, err := team.ParseName(name)
	if err != nil {
		return team.View{}, err
	}
	if slug != "" {
		if slug, err = team.ParseSlug(slug); err != nil {
			return team.View{}, err
		}
	}
	now := s.now()
	var out team.View
	err = s.store.InTx(ctx, func(tx Repo) error {
		// The person's account row: two creations by one person take turns past the count.
		if _, _, err := tx.LockAccount(ctx, c.AccountID); err != nil {
			return err
		}
		owned, err := tx.CountOwnedNestlingTeams(ctx, c.UserID)
		if err != nil {
			return err
		}
		if owned >= team.MaxOwnedNestlingTeams {
			return &team.LimitError{Code: team.CodeTeamLimit, Limit: team.MaxOwnedNestlingTeams, Plan: team.NestlingPlan}
		}
		t, err := createTeam(ctx, tx, func(candidate string) team.Team {
			return team.New(name, candidate, c.AccountID, now)
		}, name, slug)
		if err != nil {
			return err
		}
		if err := tx.AddMember(ctx, t.ID, c.UserID, access.Owner, now); err != nil {
			return err
		}
		if err := tx.Publish(ctx, identitybus.KeyTeamCreated, teamCreated(t)); err != nil {
			return err
		}
		// The creator's cached tokens must learn the new team at once.
		if err := tx.Publish(ctx, identitybus.KeyMembershipChanged, membershipChanged(t.ID, c.UserID, c.AccountID, access.Owner, now)); err != nil {
			return err
		}
		e := auditEntry(c, t.ID, "team.create", "teams/"+t.Slug, now)
		if err := tx.RecordAudit(ctx, e); err != nil {
			return err
		}
		out = team.View{Team: t, Role: access.Owner, Plan: team.NestlingPlan}
		return nil
	})
	if err != nil {
		return team.View{}, err
	}
	s.log.InfoContext(ctx, "team created", "team_id", out.ID)
	return out, nil
}

// createTeam stores the team build makes for a slug: the requested one (team.ErrSlugTaken when
// another team has it), or one derived from name, with a suffix while taken.
func createTeam(ctx context.Context, tx Repo, build func(slug string) team.Team, name, requested string) (team.Team, error) {
	if requested != "" {
		t := build(requested)
		created, err := tx.CreateTeam(ctx, t)
		if err == nil && !created {
			err = team.ErrSlugTaken
		}
		return t, err
	}
	for attempt := range team.MaxSlugAttempts {
		t := build(team.SlugCandidate(name, attempt))
		created, err := tx.CreateTeam(ctx, t)
		if err != nil || created {
			return t, err
		}
	}
	return team.Team{}, errors.New("usecase: no free team slug")
}

// createPersonalTeam makes the personal team of an account created in tx, with its person as
// owner, and reports it.
func createPersonalTeam(ctx context.Context, tx Repo, a account.Account, u account.User) error {
	t, err := createTeam(ctx, tx, func(slug string) team.Team {
		return team.NewPersonal(a.ID, u.Name, slug, a.CreatedAt)
	}, u.Name, "")
	if err != nil {
		return err
	}
	if err := tx.AddMember(ctx, t.ID, u.ID, access.Owner, a.CreatedAt); err != nil {
		return err
	}
	return tx.Publish(ctx, identitybus.KeyTeamCreated, teamCreated(t))
}

// RenameTeam changes the team's name (its slug never changes).
func (s *Service) RenameTeam(ctx context.Context, c callerid.Caller, teamID, name string) (team.View, error) {
	name, err := team.ParseName(name)
	if err != nil {
		return team.View{}, err
	}
	var out team.View
	err = s.store.InTx(ctx, func(tx Repo) error {
		if _, err := actingMember(ctx, tx, teamID, c.UserID, access.Admin); err != nil {
			return err
		}
		if err := tx.RenameTeam(ctx, teamID, name); err != nil {
			return err
		}
		out, err = tx.TeamOf(ctx, teamID, c.UserID)
		return err
	})
	return out, err
}

// DeleteTeam deletes an empty team: its tokens are revoked (every gateway told), its
// members told they left, and billing told to end its plan.
func (s *Service) DeleteTeam(ctx context.Context, c callerid.Caller, teamID string) error {
	now := s.now()
	return s.store.InTx(ctx, func(tx Repo) error {
		t, err := tx.LockTeam(ctx, teamID)
		if err != nil {
			return err
		}
		if t.Personal {
			return team.ErrPersonalTeam
		}
		if _, err := actingMember(ctx, tx, teamID, c.UserID, access.Owner); err != nil {
			return err
		}
		has, err := tx.TeamHasApps(ctx, teamID)
		if err != nil {
			return err
		}
		if has {
			return team.ErrNotEmpty
		}
		members, err := tx.Members(ctx, teamID)
		if err != nil {
			return err
		}
		revoked, err := tx.RevokeTeamTokens(ctx, teamID, now)
		if err != nil {
			return err
		}
		if err := tx.DeleteTeam(ctx, teamID); err != nil {
			return err
		}
		for _, r := range revoked {
			if err := tx.Publish(ctx, identitybus.KeyTokenRevoked, tokenRevoked(r.AccountID, r.ID, now)); err != nil {
				return err
			}
		}
		for _, m := range members {
			if err := tx.Publish(ctx, identitybus.KeyMembershipChanged, membershipChanged(teamID, m.UserID, m.AccountID, access.NoRole, now)); err != nil {
				return err
			}
		}
		return tx.Publish(ctx, identitybus.KeyTeamDeleted, teamDeleted(teamID, now))
	})
}

// actingMember is the caller's membership in teamID, read in the change's transaction: the
// role the gateway signed may be a second old, and a change goes by the current one. Not a
// member (any more) is team.ErrNotFound; a role below min is refused as insufficient_role.
func actingMember(ctx context.Context, tx Repo, teamID, userID string, min access.Role) (team.Member, error) {
	m, err := tx.Member(ctx, teamID, userID)
	if err != nil {
		return team.Member{}, err
	}
	if m.Role < min {
		return team.Member{}, &access.Denied{Code: access.CodeInsufficientRole, Required: min.String()}
	}
	return m, nil
}

// ApplyAppCreated records that teamID owns app appID (apps.app.created), inside a consumer's
// transaction; a redelivery changes nothing.
func ApplyAppCreated(ctx context.Context, tx Repo, appID, teamID, slug string) error {
	return tx.PutTeamApp(ctx, appID, teamID, slug)
}

// ApplyAppDeleted forgets app appID (apps.app.deleted); a redelivery changes nothing.
func ApplyAppDeleted(ctx context.Context, tx Repo, appID string) error {
	return tx.DeleteTeamApp(ctx, appID)
}
