package usecase

import (
	"context"
	"errors"
	"strings"
	"time"

	"github.com/google/uuid"
	"google.golang.org/protobuf/types/known/timestamppb"

	"tori.dev/contract/access"
	"tori.dev/pkg/callerid"
	auditv1 "tori.dev/proto/gen/tori/audit/v1"
	auditbus "tori.dev/proto/tori/audit/v1"
	identitybus "tori.dev/proto/tori/identity/v1"
	"tori.dev/services/identity/internal/audit"
	"tori.dev/services/identity/internal/auth"
)

// ScopedRepo is what scoped tokens, a team's tokens and the audit log need of the store
// (part of Repo).
type ScopedRepo interface {
	// MemberTeam is userID's membership in the team slug names ("" their personal team), or
	// auth.ErrNotFound when they are not a member of it.
	MemberTeam(ctx context.Context, userID, slug string) (access.Membership, error)
	// MemberRole is userID's current membership in team teamID, or auth.ErrNotFound.
	MemberRole(ctx context.Context, teamID, userID string) (access.Membership, error)
	// TeamAppsAmong returns those of slugs that name apps of team teamID.
	TeamAppsAmong(ctx context.Context, teamID string, slugs []string) ([]string, error)
	// APIToken is the token id (revoked or not), or auth.ErrNotFound.
	APIToken(ctx context.Context, id string) (auth.APIToken, error)
	// TeamTokens lists the active scoped tokens of team teamID, oldest first.
	TeamTokens(ctx context.Context, teamID string) ([]TeamToken, error)
	// RevokeTeamToken revokes team teamID's active token id and returns it, or
	// auth.ErrNotFound.
	RevokeTeamToken(ctx context.Context, teamID, id string, at time.Time) (auth.APIToken, error)

	// AuditEntries reads q, newest first, at most q.Limit entries.
	AuditEntries(ctx context.Context, q audit.Query) ([]audit.Entry, error)
	// AuditRetentionDays is how long team teamID's plan keeps its log; 0 when identity holds
	// no copy of the plan yet.
	AuditRetentionDays(ctx context.Context, teamID string) (int, error)
}

// TeamToken is a scoped token as a team's admins see it: whose it is, never its secret.
type TeamToken struct {
	auth.APIToken
	Email string
}

// ScopedTokenRequest is POST /api/tokens with a team, scopes, apps or an end.
type ScopedTokenRequest struct {
	Name      string
	Team      string // a slug; "" is the caller's personal team, or a scoped caller's own
	Scopes    []string
	Apps      []string
	ExpiresIn *int64
	ExpiresAt *time.Time
}

// CreateScopedToken mints a token limited to one team, a scope, optionally some apps, and an
// end. A session or a full token may mint one for any team its person belongs to; a scoped
// token only one it covers (auth.APIToken.Covers), and a refusal is in the team's audit log.
func (s *Service) CreateScopedToken(ctx context.Context, c callerid.Caller, req ScopedTokenRequest) (auth.APIToken, string, error) {
	name, err := auth.ParseTokenName(req.Name)
	if err != nil {
		return auth.APIToken{}, "", err
	}
	now := s.now()
	spec, err := auth.ParseTokenSpec(req.Scopes, req.Apps, req.ExpiresIn, req.ExpiresAt, now)
	if err != nil {
		return auth.APIToken{}, "", err
	}
	var parent *auth.APIToken
	if c.TokenKind == callerid.KindAPI {
		p, err := s.store.APIToken(ctx, c.TokenID)
		if err != nil {
			return auth.APIToken{}, "", err
		}
		if p.Scoped() {
			parent = &p
		}
	}
	slug := req.Team
	if slug == "" && parent != nil {
		slug = parent.TeamSlug
	}
	team, err := s.store.MemberTeam(ctx, c.UserID, slug)
	if err != nil {
		return auth.APIToken{}, "", err
	}
	if parent != nil {
		if err := parent.Covers(team.TeamID, spec); err != nil {
			s.auditDenied(ctx, c, parent.TeamID, "token.create", "tokens", err)
			return auth.APIToken{}, "", err
		}
	}
	if spec.Apps != nil {
		found, err := s.store.TeamAppsAmong(ctx, team.TeamID, spec.Apps)
		if err != nil {
			return auth.APIToken{}, "", err
		}
		if len(found) != len(spec.Apps) {
			return auth.APIToken{}, "", &auth.ParameterError{Field: "apps", Reason: "must be slugs of the team's apps"}
		}
	}
	t, secret := auth.NewAPIToken(c.AccountID, c.UserID, name, now)
	t.TeamID, t.TeamSlug, t.Scope, t.Apps = team.TeamID, team.Slug, spec.Scope.String(), spec.Apps
	t.ExpiresAt = &spec.ExpiresAt
	err = s.mint(ctx, c, t, func(tx Repo) error {
		e := s.entry(c, team.TeamID, "token.create", "tokens/"+t.ID)
		e.Metadata["scope"] = t.Scope
		if t.Apps != nil {
			e.Metadata["apps"] = strings.Join(t.Apps, ",")
		}
		return tx.RecordAudit(ctx, e)
	})
	if err != nil {
		return auth.APIToken{}, "", err
	}
	return t, secret, nil
}

// TeamTokens lists a team's scoped tokens for its admins (the gate checked the role).
func (s *Service) TeamTokens(ctx context.Context, teamID string) ([]TeamToken, error) {
	return s.store.TeamTokens(ctx, teamID)
}

// RevokeTeamToken revokes any member's token of the team and tells every gateway to forget
// it. The gate's audit entry commits with the revocation.
func (s *Service) RevokeTeamToken(ctx context.Context, teamID, id string) error {
	if uuid.Validate(id) != nil {
		return auth.ErrNotFound
	}
	now := s.now()
	return s.store.InTx(ctx, func(tx Repo) error {
		t, err := tx.RevokeTeamToken(ctx, teamID, id, now)
		if err != nil {
			return err
		}
		return tx.Publish(ctx, identitybus.KeyTokenRevoked, tokenRevoked(t.AccountID, t.ID, now))
	})
}

// entry starts an audit entry of a change identity itself makes on one of c's routes that
// names no team (POST and DELETE /api/tokens), which the gate cannot place in a log.
func (s *Service) entry(c callerid.Caller, teamID, action, target string) *auditv1.EntryRecorded {
	e := &auditv1.EntryRecorded{
		EntryId: uuid.Must(uuid.NewV7()).String(), TeamId: teamID, At: timestamppb.New(s.now()),
		UserId: c.UserID, Action: action, Target: target, Ip: c.ClientIP,
		Outcome: auditbus.OutcomeSuccess, Metadata: map[string]string{},
	}
	e.ActorType = auditbus.ActorUser
	if c.TokenKind == callerid.KindAPI {
		e.ActorType, e.TokenId = auditbus.ActorToken, c.TokenID
	}
	return e
}

// auditDenied records a refusal of a team's own token in the team's log, in a transaction
// of its own (the refused change has none). Losing it is logged, never the caller's error.
func (s *Service) auditDenied(ctx context.Context, c callerid.Caller, teamID, action, target string, cause error) {
	e := s.entry(c, teamID, action, target)
	e.Outcome = auditbus.OutcomeDenied
	var se *auth.ScopeError
	if errors.As(cause, &se) {
		e.Metadata["code"], e.Metadata["required"] = access.CodeInsufficientScope, se.Required
	}
	err := s.store.InTx(context.WithoutCancel(ctx), func(tx Repo) error { return tx.RecordAudit(ctx, e) })
	if err != nil {
		s.log.ErrorContext(ctx, "audit entry of a refusal lost", "action", action, "err", err.Error())
	}
}

// personalTeam is the team an entry about a full token goes to: its person's own.
func personalTeam(c callerid.Caller) string { return c.AccountID }
