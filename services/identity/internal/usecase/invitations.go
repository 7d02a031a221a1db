package usecase

import (
	"context"
	"errors"
	"net/url"

	"github.com/google/uuid"

	"tori.dev/contract/access"
	"tori.dev/pkg/callerid"
	identitybus "tori.dev/proto/tori/identity/v1"
	"tori.dev/services/identity/internal/account"
	"tori.dev/services/identity/internal/auth"
	"tori.dev/services/identity/internal/team"
)

// ListInvitations lists the team's pending invitations, oldest first.
func (s *Service) ListInvitations(ctx context.Context, teamID string) ([]team.Invitation, error) {
	return s.store.PendingInvitations(ctx, teamID, s.now())
}

// Invite asks email to join teamID as roleName and mails them a single-use link that works
// for team.InvitationLifetime. Pending invitations count toward the plan's members limit; a
// new invitation to the same address replaces the pending one. The invitation is kept even
// when the mail cannot be sent (ErrMailUnavailable): inviting again sends a fresh link.
func (s *Service) Invite(ctx context.Context, c callerid.Caller, teamID, email, roleName string) (team.Invitation, error) {
	email, err := account.ParseEmail(email)
	if err != nil {
		return team.Invitation{}, err
	}
	role, err := team.ParseRole(roleName)
	if err != nil {
		return team.Invitation{}, err
	}
	now := s.now()
	var (
		inv     team.Invitation
		code    string
		t       team.Team
		inviter team.Member
	)
	err = s.store.InTx(ctx, func(tx Repo) error {
		if t, err = tx.LockTeam(ctx, teamID); err != nil {
			return err
		}
		if t.Personal {
			return team.ErrPersonalTeam
		}
		if inviter, err = actingMember(ctx, tx, teamID, c.UserID, access.Viewer); err != nil {
			return err
		}
		if err := team.MayInvite(inviter.Role, role); err != nil {
			return err
		}
		if u, err := tx.UserByEmail(ctx, email); err == nil {
			if _, err := tx.Member(ctx, teamID, u.ID); err == nil {
				return team.ErrAlreadyMember
			} else if !errors.Is(err, team.ErrNotFound) {
				return err
			}
		} else if !errors.Is(err, account.ErrNotFound) {
			return err
		}
		if err := tx.RevokeInvitationsTo(ctx, teamID, email, now); err != nil {
			return err
		}
		members, err := tx.Members(ctx, teamID)
		if err != nil {
			return err
		}
		pending, err := tx.PendingInvitations(ctx, teamID, now)
		if err != nil {
			return err
		}
		limit, plan, err := memberLimit(ctx, tx, teamID)
		if err != nil {
			return err
		}
		if err := team.MayAddMember(len(members), len(pending), limit, plan); err != nil {
			return err
		}
		inv, code = team.NewInvitation(teamID, email, role, c.UserID, now)
		return tx.CreateInvitation(ctx, inv)
	})
	if err != nil {
		return team.Invitation{}, err
	}
	msg := Mail{
		To:      email,
		Subject: "You are invited to a team on Tori",
		Text: inviter.Name + " (" + inviter.Email + ") invites you to the team " + t.Name + " on Tori, as " + role.String() + ".\n\n" +
			"Open this link to join it, signed in as " + email + ":\n\n" +
			s.console + "/invitations/accept?token=" + url.QueryEscape(code) + "\n\n" +
			"The link works once, within 7 days. If you do not know the sender, ignore this mail.\n",
	}
	if err := s.mailer.Send(ctx, msg); err != nil {
		s.log.ErrorContext(ctx, "invitation mail not delivered", "team_id", teamID, "err", err.Error())
		return team.Invitation{}, ErrMailUnavailable
	}
	return inv, nil
}

// memberLimit is the team's members limit and plan from identity's copy of its plan; a team
// whose copy has not arrived from billing yet is on nestling.
func memberLimit(ctx context.Context, tx Repo, teamID string) (int64, string, error) {
	p, err := tx.Plan(ctx, teamID)
	if errors.Is(err, account.ErrNotFound) {
		return team.NestlingMembers, team.NestlingPlan, nil
	}
	if err != nil {
		return 0, "", err
	}
	return team.MemberLimit(p.Limits.Members), p.Name, nil
}

// RevokeInvitation withdraws one of the team's pending invitations; its link stops working.
func (s *Service) RevokeInvitation(ctx context.Context, c callerid.Caller, teamID, id string) error {
	if uuid.Validate(id) != nil {
		return team.ErrNotFound
	}
	now := s.now()
	return s.store.InTx(ctx, func(tx Repo) error {
		if _, err := actingMember(ctx, tx, teamID, c.UserID, access.Admin); err != nil {
			return err
		}
		return tx.RevokeInvitation(ctx, teamID, id, now)
	})
}

// AcceptInvitation makes the signed-in caller a member of the invitation's team, with its
// role. The code works once, within its lifetime, and only for the address it was sent to.
func (s *Service) AcceptInvitation(ctx context.Context, c callerid.Caller, code string) (team.View, error) {
	if c.TokenKind != callerid.KindSession {
		return team.View{}, auth.ErrSessionRequired
	}
	if code == "" {
		return team.View{}, team.ErrInvalidInvitation
	}
	now := s.now()
	var out team.View
	err := s.store.InTx(ctx, func(tx Repo) error {
		inv, err := tx.LockInvitation(ctx, team.HashCode(code))
		if errors.Is(err, team.ErrNotFound) {
			return team.ErrInvalidInvitation
		}
		if err != nil {
			return err
		}
		_, u, err := tx.Account(ctx, c.AccountID)
		if err != nil {
			return err
		}
		if err := inv.Accept(u.Email, now); err != nil {
			return err
		}
		t, err := tx.LockTeam(ctx, inv.TeamID)
		if err != nil {
			return err
		}
		if err := tx.SaveInvitation(ctx, inv); err != nil {
			return err
		}
		// Someone who joined meanwhile (by another invitation) keeps the role they have.
		if _, err := tx.Member(ctx, t.ID, u.ID); errors.Is(err, team.ErrNotFound) {
			if err := tx.AddMember(ctx, t.ID, u.ID, inv.Role, now); err != nil {
				return err
			}
			if err := tx.Publish(ctx, identitybus.KeyMembershipChanged, membershipChanged(t.ID, u.ID, u.AccountID, inv.Role, now)); err != nil {
				return err
			}
			e := auditEntry(c, t.ID, "member.join", "teams/"+t.Slug+"/members/"+u.ID, now)
			e.Metadata["role"] = inv.Role.String()
			if err := tx.RecordAudit(ctx, e); err != nil {
				return err
			}
		} else if err != nil {
			return err
		}
		out, err = tx.TeamOf(ctx, t.ID, u.ID)
		return err
	})
	return out, err
}
