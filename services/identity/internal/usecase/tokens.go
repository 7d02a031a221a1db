package usecase

import (
	"context"
	"errors"

	"github.com/google/uuid"

	"tori.dev/contract/access"
	"tori.dev/pkg/callerid"
	identitybus "tori.dev/proto/tori/identity/v1"
	"tori.dev/services/identity/internal/auth"
)

// ListTokens lists the account's active API tokens, oldest first.
func (s *Service) ListTokens(ctx context.Context, c callerid.Caller) ([]auth.APIToken, error) {
	return s.store.ListAPITokens(ctx, c.AccountID)
}

// CreateToken mints a full API token; the secret is in the result once and stored only
// hashed. Only a session may create one (scoped tokens: CreateScopedToken).
func (s *Service) CreateToken(ctx context.Context, c callerid.Caller, name string) (auth.APIToken, string, error) {
	if c.TokenKind != callerid.KindSession {
		return auth.APIToken{}, "", auth.ErrSessionRequired
	}
	name, err := auth.ParseTokenName(name)
	if err != nil {
		return auth.APIToken{}, "", err
	}
	t, secret := auth.NewAPIToken(c.AccountID, c.UserID, name, s.now())
	err = s.mint(ctx, c, t, func(tx Repo) error {
		return tx.RecordAudit(ctx, s.entry(c, personalTeam(c), "token.create", "tokens/"+t.ID))
	})
	if err != nil {
		return auth.APIToken{}, "", err
	}
	return t, secret, nil
}

// mint stores t, within the account's token cap, with also (its audit entry) in the same
// transaction.
func (s *Service) mint(ctx context.Context, c callerid.Caller, t auth.APIToken, also func(tx Repo) error) error {
	err := s.store.InTx(ctx, func(tx Repo) error {
		// The account's row lock makes concurrent mints take turns past the count.
		if _, _, err := tx.LockAccount(ctx, c.AccountID); err != nil {
			return err
		}
		active, err := tx.CountActiveAPITokens(ctx, c.AccountID)
		if err != nil {
			return err
		}
		if !auth.MayMintToken(active) {
			return &auth.TokenLimitError{Limit: auth.MaxAPITokens}
		}
		if err := tx.CreateAPIToken(ctx, t); err != nil {
			return err
		}
		return also(tx)
	})
	var limit *auth.TokenLimitError
	if errors.As(err, &limit) {
		plan, perr := s.planFor(ctx, c.AccountID)
		if perr != nil {
			return perr
		}
		limit.Plan = plan.Name
		return limit
	}
	return err
}

// RevokeToken revokes one of the account's API tokens and tells every gateway to forget it.
// Another account's token, an unknown id or an already revoked token are all not found. A
// session or a full token may revoke any of the person's tokens; a scoped token only itself
// (403 insufficient_scope), since it may not reach past its own team.
func (s *Service) RevokeToken(ctx context.Context, c callerid.Caller, id string) error {
	if uuid.Validate(id) != nil {
		return auth.ErrNotFound
	}
	now := s.now()
	var refusedIn string
	err := s.store.InTx(ctx, func(tx Repo) error {
		t, err := tx.APIToken(ctx, id)
		if err != nil {
			return err
		}
		if t.AccountID != c.AccountID || t.RevokedAt != nil {
			return auth.ErrNotFound
		}
		if c.TokenKind == callerid.KindAPI && id != c.TokenID {
			caller, err := tx.APIToken(ctx, c.TokenID)
			if err != nil {
				return err
			}
			if caller.Scoped() {
				refusedIn = caller.TeamID
				return &auth.ScopeError{Required: access.FullScope.String()}
			}
		}
		if err := tx.RevokeAPIToken(ctx, c.AccountID, id, now); err != nil {
			return err
		}
		team := t.TeamID
		if team == "" {
			team = personalTeam(c)
		}
		if err := tx.RecordAudit(ctx, s.entry(c, team, "token.revoke", "tokens/"+id)); err != nil {
			return err
		}
		return tx.Publish(ctx, identitybus.KeyTokenRevoked, tokenRevoked(c.AccountID, id, now))
	})
	if refusedIn != "" {
		s.auditDenied(ctx, c, refusedIn, "token.revoke", "tokens/"+id, err)
	}
	return err
}
