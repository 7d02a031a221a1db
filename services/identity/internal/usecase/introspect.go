package usecase

import (
	"context"
	"errors"

	"tori.dev/contract/access"
	"tori.dev/services/identity/internal/auth"
)

// Introspect tells the gateway who a bearer token acts for. Any token that is unknown,
// revoked or malformed is auth.ErrUnauthorized; a scoped token past its end is
// auth.ErrTokenExpired. The gateway answers 401 for both.
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
		teams, err := s.store.MembershipsOf(ctx, sess.UserID)
		if err != nil {
			return auth.Principal{}, err
		}
		exp := sess.ExpiresAt
		return auth.Principal{AccountID: sess.AccountID, UserID: sess.UserID, Kind: auth.KindSession, TokenID: sess.ID, ExpiresAt: &exp, Teams: teams}, nil
	case auth.KindAPI:
		t, err := s.store.APITokenByHash(ctx, auth.Hash(token))
		if err != nil {
			return auth.Principal{}, unauthorized(err)
		}
		if !t.Active() {
			return auth.Principal{}, auth.ErrUnauthorized
		}
		if t.Expired(now) {
			return auth.Principal{}, auth.ErrTokenExpired
		}
		p, err := s.tokenPrincipal(ctx, t)
		if err != nil {
			return auth.Principal{}, err
		}
		if t.NeedsTouch(now) {
			// A missed "last used" write must not turn a valid token away.
			if err := s.store.TouchAPIToken(ctx, t.ID, now); err != nil {
				s.log.WarnContext(ctx, "record token use", "token_id", t.ID, "err", err.Error())
			}
		}
		return p, nil
	}
	return auth.Principal{}, auth.ErrUnauthorized
}

// tokenPrincipal is what an API token may do now: a full token acts in every team of its
// person; a scoped one only in its team, with its creator's current role there, and not at
// all once the creator has left it.
func (s *Service) tokenPrincipal(ctx context.Context, t auth.APIToken) (auth.Principal, error) {
	p := auth.Principal{AccountID: t.AccountID, UserID: t.UserID, Kind: auth.KindAPI, TokenID: t.ID}
	if !t.Scoped() {
		teams, err := s.store.MembershipsOf(ctx, t.UserID)
		p.Teams = teams
		return p, err
	}
	m, err := s.store.MemberRole(ctx, t.TeamID, t.UserID)
	if err != nil {
		return auth.Principal{}, unauthorized(err)
	}
	p.Teams, p.Scope, p.Apps, p.ExpiresAt = []access.Membership{m}, t.Scope, t.Apps, t.ExpiresAt
	return p, nil
}

func unauthorized(err error) error {
	if errors.Is(err, auth.ErrNotFound) {
		return auth.ErrUnauthorized
	}
	return err
}
