package usecase

import (
	"context"
	"errors"
	"time"

	"tori.dev/services/deploys/internal/deploy"
)

// AppSource asks the apps service, the apps' owner, for an account's live app by slug. It
// returns ok false when there is none; its errors wrap deploy.ErrAppUnavailable.
type AppSource interface {
	LookupApp(ctx context.Context, accountID, slug string) (a App, createdAt time.Time, ok bool, err error)
}

// appFor finds the caller's app by slug; another account's or a deleted app is not found. An
// app the copy has not heard of yet (its apps.app.created still on its way) is asked of the
// apps service and kept exactly as that event's consumer would keep it, so an app is found by
// every route the moment its create answered, without waiting for the event.
func (s *Service) appFor(ctx context.Context, accountID, slug string) (App, error) {
	if accountID == "" {
		return App{}, deploy.ErrAppNotFound
	}
	a, err := s.store.AppBySlug(ctx, accountID, slug)
	if !errors.Is(err, deploy.ErrAppNotFound) || s.apps == nil {
		return a, err
	}
	found, createdAt, ok, err := s.apps.LookupApp(ctx, accountID, slug)
	if err != nil {
		return App{}, err
	}
	if !ok {
		return App{}, deploy.ErrAppNotFound
	}
	// A repeat changes nothing and a delete recorded first keeps the app deleted, so the
	// created event arriving later, or a delete overtaking this answer, is harmless.
	if err := s.store.InTx(ctx, func(tx Tx) error { return s.OnAppCreated(ctx, tx, found, createdAt) }); err != nil {
		return App{}, err
	}
	s.log.InfoContext(ctx, "app copied from the apps service ahead of its event", "app_id", found.ID)
	// Read back rather than trust the answer: a delete that committed meanwhile wins.
	return s.store.AppBySlug(ctx, accountID, slug)
}
