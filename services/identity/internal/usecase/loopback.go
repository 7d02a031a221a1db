package usecase

import (
	"context"
	"errors"

	"tori.dev/pkg/callerid"
	"tori.dev/services/identity/internal/auth"
)

// Authorize issues a loopback authorization code for the caller's account and returns where
// the console should send the browser. Only a session may authorize.
func (s *Service) Authorize(ctx context.Context, c callerid.Caller, req auth.AuthorizeRequest) (redirectTo string, err error) {
	if c.TokenKind != callerid.KindSession {
		return "", auth.ErrSessionRequired
	}
	code, redirectTo, err := auth.Authorize(req, c.AccountID, c.UserID, s.now())
	if err != nil {
		return "", err
	}
	if err := s.store.CreateAuthCode(ctx, code); err != nil {
		return "", err
	}
	return redirectTo, nil
}

// ExchangeAuthCode trades a loopback code and its PKCE verifier for an API token. Every
// attempt spends the code; the spending commits even when the exchange is refused.
func (s *Service) ExchangeAuthCode(ctx context.Context, code, verifier, redirectURI string) (IssuedToken, error) {
	now := s.now()
	var out IssuedToken
	var refusal error
	err := s.store.InTx(ctx, func(tx Repo) error {
		c, err := tx.LockAuthCode(ctx, auth.Hash(code))
		if errors.Is(err, auth.ErrNotFound) {
			return auth.ErrUnknownCode
		}
		if err != nil {
			return err
		}
		if refusal = c.Redeem(verifier, redirectURI, now); refusal == nil {
			t, secret := auth.NewAPIToken(c.AccountID, c.UserID, DefaultClientName, now)
			if err := tx.CreateAPIToken(ctx, t); err != nil {
				return err
			}
			out = IssuedToken{Token: secret, TokenID: t.ID}
		}
		return tx.SaveAuthCode(ctx, c)
	})
	if err != nil {
		return IssuedToken{}, err
	}
	return out, refusal
}
