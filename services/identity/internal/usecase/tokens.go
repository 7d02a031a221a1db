package usecase

import (
	"context"
	"errors"

	"github.com/google/uuid"

	"tori.dev/pkg/callerid"
	identitybus "tori.dev/proto/tori/identity/v1"
	"tori.dev/services/identity/internal/auth"
)

// ListTokens lists the account's active API tokens, oldest first.
func (s *Service) ListTokens(ctx context.Context, c callerid.Caller) ([]auth.APIToken, error) {
	return s.store.ListAPITokens(ctx, c.AccountID)
}

// CreateToken mints an API token; the secret is in the result once and stored only hashed.
// Only a session may create one.
func (s *Service) CreateToken(ctx context.Context, c callerid.Caller, name string) (auth.APIToken, string, error) {
	if c.TokenKind != callerid.KindSession {
		return auth.APIToken{}, "", auth.ErrSessionRequired
	}
	name, err := auth.ParseTokenName(name)
	if err != nil {
		return auth.APIToken{}, "", err
	}
	t, secret := auth.NewAPIToken(c.AccountID, c.UserID, name, s.now())
	err = s.store.InTx(ctx, func(tx Repo) error {
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
		return tx.CreateAPIToken(ctx, t)
	})
	var limit *auth.TokenLimitError
	if errors.As(err, &limit) {
		plan, perr := s.planFor(ctx, c.AccountID)
		if perr != nil {
			return auth.APIToken{}, "", perr
		}
		limit.Plan = plan.Name
		return auth.APIToken{}, "", limit
	}
	if err != nil {
		return auth.APIToken{}, "", err
	}
	return t, secret, nil
}

// RevokeToken revokes one of the account's API tokens and tells every gateway to forget it.
// Another account's token, an unknown id or an already revoked token are all not found. An
// API token may revoke itself or another: revoking takes no power away from anyone else.
func (s *Service) RevokeToken(ctx context.Context, c callerid.Caller, id string) error {
	if uuid.Validate(id) != nil {
		return auth.ErrNotFound
	}
	now := s.now()
	return s.store.InTx(ctx, func(tx Repo) error {
		if err := tx.RevokeAPIToken(ctx, c.AccountID, id, now); err != nil {
			return err
		}
		return tx.Publish(ctx, identitybus.KeyTokenRevoked, tokenRevoked(c.AccountID, id, now))
	})
}
