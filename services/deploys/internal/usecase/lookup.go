package usecase

import (
	"context"
	"errors"
	"time"

	"tori.dev/pkg/pgstore"
	"tori.dev/services/deploys/internal/deploy"
)

// AppSource asks the apps service, the apps' owner, for a team's live app by slug. It
// returns ok false when there is none; its errors wrap deploy.ErrAppUnavailable.
type AppSource interface {
	LookupApp(ctx context.Context, accountID, slug string) (a App, createdAt time.Time, ok bool, err error)
}

// appFor finds the team's app by slug (accountID is the owning team's id: a personal team's
// is its account's); another team's or a deleted app is not found. An app the copy has not
// heard of yet (its apps.app.created still on its way) is asked of the apps service and kept
// exactly as that event's consumer would keep it, so an app is found by every route the
// moment its create answered, without waiting for the event.
func (s *Service) appFor(ctx context.Context, accountID, slug string) (App, error) {
	if accountID == "" {
		return App{}, deploy.ErrAppNotFound
	}
	a, err := s.store.AppBySlug(ctx, accountID, slug)
	if !errors.Is(err, deploy.ErrAppNotFound) || s.apps == nil {
		return a, err
	}
	return s.copyFromOwner(ctx, accountID, slug)
}

// AppTeam is the team that owns the live app slug, for the access gate: from the copy, else
// asked of the apps service on behalf of each of teams (the caller's) in turn, keeping the
// answer as appFor does. found is false for an app none of them owns, or a deleted one.
func (s *Service) AppTeam(ctx context.Context, teams []string, slug string) (string, bool, error) {
	team, found, err := s.store.AppTeam(ctx, slug)
	if err != nil || found || s.apps == nil {
		return team, found, err
	}
	for _, t := range teams {
		a, err := s.copyFromOwner(ctx, t, slug)
		if errors.Is(err, deploy.ErrAppNotFound) {
			continue
		}
		if err != nil {
			return "", false, err
		}
		return a.AccountID, true, nil
	}
	return "", false, nil
}

// copyFromOwner asks the apps service for the team's live app slug and keeps the answer.
func (s *Service) copyFromOwner(ctx context.Context, accountID, slug string) (App, error) {
	found, createdAt, ok, err := s.apps.LookupApp(ctx, accountID, slug)
	if err != nil {
		return App{}, err
	}
	if !ok {
		return App{}, deploy.ErrAppNotFound
	}
	// A repeat changes nothing and a delete recorded first keeps the app deleted, so the
	// created event arriving later, or a delete overtaking this answer, is harmless. The copy
	// is not the request's change: its audit entry waits for that one (aside).
	if err := s.store.InTx(aside(ctx), func(tx Tx) error { return s.OnAppCreated(ctx, tx, found, createdAt) }); err != nil {
		return App{}, err
	}
	s.log.InfoContext(ctx, "app copied from the apps service ahead of its event", "app_id", found.ID)
	// Read back rather than trust the answer: a delete that committed meanwhile wins.
	return s.store.AppBySlug(ctx, accountID, slug)
}

// aside is ctx for a transaction that is not the request's change (a copy kept on the way, an
// upload's slot): the request's audit entry commits with the change, never with these.
func aside(ctx context.Context) context.Context { return pgstore.WithoutPending(ctx) }
