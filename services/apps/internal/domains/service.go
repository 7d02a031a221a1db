package domains

import (
	"context"
	"strings"
	"time"

	"tori.dev/services/apps/internal/accounts"
	"tori.dev/services/apps/internal/apps"
)

// AppFinder finds the caller's live app.
type AppFinder interface {
	Get(ctx context.Context, accountID, slug string) (apps.App, error)
}

// AccountResolver finds an account with a known plan.
type AccountResolver interface {
	Resolve(ctx context.Context, accountID string) (accounts.Account, error)
}

// Service is the custom hostnames' use cases.
type Service struct {
	Apps       AppFinder
	Accounts   AccountResolver
	Store      Store
	AppsDomain string
	NewID      func() string
	Now        func() time.Time
}

// Add claims a hostname for a static app; it starts pending.
func (s *Service) Add(ctx context.Context, accountID, slug, hostname string) (Domain, error) {
	app, err := s.Apps.Get(ctx, accountID, slug)
	if err != nil {
		return Domain{}, err
	}
	if app.Kind != apps.KindStatic {
		return Domain{}, ErrStaticOnly
	}
	host, err := Normalize(hostname, s.AppsDomain)
	if err != nil {
		return Domain{}, err
	}
	if _, err := s.Accounts.Resolve(ctx, accountID); err != nil {
		return Domain{}, err
	}
	return s.Store.AddDomain(ctx, app, host, func(c Claim) (Domain, error) {
		if c.OnThisApp {
			return Domain{}, ErrExists
		}
		if c.Account.Plan == nil {
			return Domain{}, accounts.ErrPlanUnavailable
		}
		if c.Used >= c.Account.Plan.CustomDomains {
			return Domain{}, &accounts.LimitError{Kind: ErrDomainLimit, Limit: c.Account.Plan.CustomDomains, Plan: c.Account.Plan.Name}
		}
		if c.ActiveElsewhere {
			return Domain{}, ErrHostnameTaken
		}
		return Domain{
			ID:        s.NewID(),
			AppID:     app.ID,
			Hostname:  host,
			Status:    StatusPending,
			Token:     NewToken(),
			CreatedAt: s.Now().UTC().Truncate(time.Microsecond),
		}, nil
	})
}

// List returns the app's hostnames.
func (s *Service) List(ctx context.Context, accountID, slug string) ([]Domain, error) {
	app, err := s.Apps.Get(ctx, accountID, slug)
	if err != nil {
		return nil, err
	}
	return s.Store.Domains(ctx, app.ID)
}

// Remove deletes a hostname from the app.
func (s *Service) Remove(ctx context.Context, accountID, slug, hostname string) error {
	app, err := s.Apps.Get(ctx, accountID, slug)
	if err != nil {
		return err
	}
	// The same normalisation as on add, so "example.com." removes "example.com".
	return s.Store.RemoveDomain(ctx, app, strings.TrimSuffix(hostname, "."), s.Now().UTC().Truncate(time.Microsecond))
}
