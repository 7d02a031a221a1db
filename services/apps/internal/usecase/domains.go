package usecase

import (
	"context"
	"strings"
	"time"

	"tori.dev/pkg/accessgate"
	appsbus "tori.dev/proto/tori/apps/v1"
	"tori.dev/services/apps/internal/apps"
	"tori.dev/services/apps/internal/domains"
)

// Domains is the custom hostnames' use cases.
type Domains struct {
	Apps       AppFinder
	Accounts   AccountResolver
	Store      Store
	AppsDomain string
	NewID      func() string
	Now        func() time.Time
}

// Add claims a hostname for a static app; it starts pending.
func (s *Domains) Add(ctx context.Context, accountID, slug, hostname string) (domains.Domain, error) {
	app, err := s.Apps.Get(ctx, accountID, slug)
	if err != nil {
		return domains.Domain{}, err
	}
	if app.Kind != apps.KindStatic {
		return domains.Domain{}, domains.ErrStaticOnly
	}
	host, err := domains.Normalize(hostname, s.AppsDomain)
	if err != nil {
		return domains.Domain{}, err
	}
	if _, err := s.Accounts.Resolve(ctx, accountID); err != nil {
		return domains.Domain{}, err
	}
	var d domains.Domain
	accessgate.SetTarget(ctx, host)
	err = s.Store.InTx(ctx, func(tx Tx) error {
		acct, err := tx.LockAccount(ctx, app.AccountID)
		if err != nil {
			return err
		}
		live, err := tx.AppLive(ctx, app.ID)
		if err != nil {
			return err
		}
		if !live {
			return apps.ErrNotFound
		}
		c, err := tx.DomainClaim(ctx, app, host)
		if err != nil {
			return err
		}
		c.Account = acct
		if err := c.Check(); err != nil {
			return err
		}
		now := stamp(s.Now())
		d = domains.Domain{
			ID:           s.NewID(),
			AppID:        app.ID,
			Hostname:     host,
			Status:       domains.StatusPending,
			Token:        domains.NewToken(),
			CreatedAt:    now,
			PendingSince: &now,
		}
		return tx.InsertDomain(ctx, d)
	})
	if err != nil {
		return domains.Domain{}, err
	}
	return d, nil
}

// List returns the app's hostnames.
func (s *Domains) List(ctx context.Context, accountID, slug string) ([]domains.Domain, error) {
	app, err := s.Apps.Get(ctx, accountID, slug)
	if err != nil {
		return nil, err
	}
	return s.Store.Domains(ctx, app.ID)
}

// Remove deletes a hostname from the app; one that was active publishes
// apps.domain.removed, so the edge forgets its route.
func (s *Domains) Remove(ctx context.Context, accountID, slug, hostname string) error {
	app, err := s.Apps.Get(ctx, accountID, slug)
	if err != nil {
		return err
	}
	at := stamp(s.Now())
	// The same normalisation as on add, so "example.com." removes "example.com".
	host := strings.TrimSuffix(hostname, ".")
	accessgate.SetTarget(ctx, host)
	return s.Store.InTx(ctx, func(tx Tx) error {
		d, err := tx.DeleteDomain(ctx, app.ID, host)
		if err != nil {
			return err
		}
		if d.Status != domains.StatusActive {
			return nil // never served, so the edge has nothing to forget
		}
		return tx.Publish(ctx, appsbus.KeyDomainRemoved, domainRemoved(app, host, at))
	})
}
