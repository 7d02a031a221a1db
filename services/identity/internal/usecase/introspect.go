package usecase

import (
	"context"
	"errors"

	"tori.dev/services/identity/internal/auth"
)

// Introspect tells the gateway who a bearer token acts for. Any token that is unknown,
// revoked, expired or malformed is auth.ErrUnauthorized; the gateway answers 401 for all.
func (s *Service) Introspect(ctx context.Context, token string) (auth.Principal, error) {
	now := s.now()
	switch auth.Kind(token) {
	case auth.KindSession:
		sess, err := s.store.SessionByHash(ctx, auth.Hash(token))
		if err != nil {
			return auth.Principal{}, unauthorized(err)
		}
		if !sess.Active(now) {
			return auth.Principal{}, auth.ErrUnauthorized
		}
		exp := sess.ExpiresAt
		teams, err := s.store.MembershipsOf(ctx, sess.UserID)
		if err != nil {
			return auth.Principal{}, err
		}
		return auth.Principal{AccountID: sess.AccountID, UserID: sess.UserID, Kind: auth.KindSession, TokenID: sess.ID, ExpiresAt: &exp, Teams: teams}, nil
	case auth.KindAPI:
		t, err := s.store.APITokenByHash(ctx, auth.Hash(token))
		if err != nil {
			return auth.Principal{}, unauthorized(err)
		}
		if !t.Active() {
			return auth.Principal{}, auth.ErrUnauthorized
		}
		if t.NeedsTouch(now) {
			// A missed "last used" write must not turn a valid token away.
			if err := s.store.TouchAPIToken(ctx, t.ID, now); err != nil {
				s.log.WarnContext(ctx, "record token use", "token_id", t.ID, "err", err.Error())
			}
		}
		// A full token acts with its creator's current role in each of their teams.
		teams, err := s.store.MembershipsOf(ctx, t.UserID)
		if err != nil {
			return auth.Principal{}, err
		}
		return auth.Principal{AccountID: t.AccountID, UserID: t.UserID, Kind: auth.KindAPI, TokenID: t.ID, Teams: teams}, nil
	}
	return auth.Principal{}, auth.ErrUnauthorized
}

func unauthorized(err error) error {
	if errors.Is(err, auth.ErrNotFound) {
		return auth.ErrUnauthorized
	}
	return err
}
