package apps

import (
	"context"
	"errors"
	"time"

	"tori.dev/services/apps/internal/accounts"
)

// AccountResolver finds an account with a known plan.
type AccountResolver interface {
	Resolve(ctx context.Context, accountID string) (accounts.Account, error)
}

// Service is the app lifecycle's use cases.
type Service struct {
	Store    Store
	Accounts AccountResolver
	// Zones maps a region to the zone new apps there get.
	Zones map[string]string
	// Cleanup names the services that must confirm a deleted app's cleanup.
	Cleanup []string
	NewID   func() string
	Now     func() time.Time
}

// CreateRequest is POST /api/apps. Nil means omitted.
type CreateRequest struct {
	Name   *string
	Region *string
	Kind   string
}

// Create applies the numbered rules of POST /api/apps.
func (s *Service) Create(ctx context.Context, accountID string, req CreateRequest) (App, error) {
	if req.Name != nil {
		if err := CheckRequestedSlug(*req.Name); err != nil {
			return App{}, err
		}
	}
	if req.Region != nil && !ValidRegion(*req.Region) {
		return App{}, ErrInvalidRegion
	}
	// Makes sure a plan is known before the transaction, which must not wait on the bus.
	if _, err := s.Accounts.Resolve(ctx, accountID); err != nil {
		return App{}, err
	}
	for attempt := 1; ; attempt++ {
		slug := GenerateSlug(attempt)
		if req.Name != nil {
			slug = *req.Name
		}
		app, err := s.Store.CreateApp(ctx, accountID, func(acct accounts.Account, live int64) (App, error) {
			return s.build(acct, live, slug, req)
		})
		if errors.Is(err, ErrSlugTaken) && req.Name == nil {
			if attempt >= MaxSlugAttempts {
				return App{}, ErrSlugSpaceExhausted
			}
			continue // a generated slug collided: draw another
		}
		return app, err
	}
}

func (s *Service) build(acct accounts.Account, live int64, slug string, req CreateRequest) (App, error) {
	if acct.Plan == nil {
		return App{}, accounts.ErrPlanUnavailable
	}
	if live >= acct.Plan.Apps {
		return App{}, &accounts.LimitError{Kind: ErrAppLimit, Limit: acct.Plan.Apps, Plan: acct.Plan.Name}
	}
	region := acct.Region()
	if req.Region != nil {
		region = *req.Region
	}
	now := s.Now().UTC().Truncate(time.Microsecond)
	return App{
		ID:        s.NewID(),
		AccountID: acct.ID,
		Slug:      slug,
		Name:      slug,
		Region:    region,
		Zone:      s.Zones[region],
		Status:    StatusDeploying,
		Framework: FrameworkStatic,
		Kind:      KindFor(req.Kind),
		CreatedAt: now,
		UpdatedAt: now,
	}, nil
}

// List returns the account's live apps.
func (s *Service) List(ctx context.Context, accountID string) ([]App, error) {
	return s.Store.Apps(ctx, accountID)
}

// Get returns one live app of the account.
func (s *Service) Get(ctx context.Context, accountID, slug string) (App, error) {
	if !ValidSlug(slug) {
		return App{}, ErrNotFound
	}
	return s.Store.AppBySlug(ctx, accountID, slug)
}

// Delete tombstones the app; see Store.DeleteApp.
func (s *Service) Delete(ctx context.Context, accountID, slug string) (Deletion, error) {
	if !ValidSlug(slug) {
		return Deletion{}, ErrNotFound
	}
	return s.Store.DeleteApp(ctx, accountID, slug, s.Cleanup, s.Now().UTC().Truncate(time.Microsecond))
}
