package usecase

import (
	"context"
	"errors"
	"slices"
	"time"

	"tori.dev/pkg/accessgate"
	appsv1 "tori.dev/proto/gen/tori/apps/v1"
	appsbus "tori.dev/proto/tori/apps/v1"
	"tori.dev/services/apps/internal/accounts"
	"tori.dev/services/apps/internal/apps"
	"tori.dev/services/apps/internal/domains"
)

// AccountResolver finds an account with a known plan (Accounts).
type AccountResolver interface {
	Resolve(ctx context.Context, accountID string) (accounts.Account, error)
}

// Apps is the app lifecycle's use cases.
type Apps struct {
	Store    Store
	Accounts AccountResolver
	Zones    map[string]string
	Cleanup  []string
	NewID    func() string
	Now      func() time.Time
}

// CreateRequest is POST /api/apps. Nil means omitted.
type CreateRequest struct {
	Name   *string
	Region *string
	Kind   string
}

// Create applies the numbered rules of POST /api/apps and publishes apps.app.created. The
// app belongs to the team teamID (its account_id; a personal team's id is its account's),
// whose plan limits it.
func (s *Apps) Create(ctx context.Context, teamID string, req CreateRequest) (apps.App, error) {
	if req.Name != nil {
		if err := apps.CheckRequestedSlug(*req.Name); err != nil {
			return apps.App{}, err
		}
	}
	if req.Region != nil && !apps.ValidRegion(*req.Region) {
		return apps.App{}, apps.ErrInvalidRegion
	}
	// Makes sure a plan is known before the transaction, which must not wait on the bus.
	if _, err := s.Accounts.Resolve(ctx, teamID); err != nil {
		return apps.App{}, err
	}
	for attempt := 1; ; attempt++ {
		slug := apps.GenerateSlug(attempt)
		if req.Name != nil {
			slug = *req.Name
		}
		app, err := s.create(ctx, teamID, slug, req)
		if errors.Is(err, apps.ErrSlugTaken) && req.Name == nil {
			if attempt >= apps.MaxSlugAttempts {
				return apps.App{}, apps.ErrSlugSpaceExhausted
			}
			continue // a generated slug collided: draw another
		}
		return app, err
	}
}

func (s *Apps) create(ctx context.Context, accountID, slug string, req CreateRequest) (apps.App, error) {
	var app apps.App
	err := s.Store.InTx(ctx, func(tx Tx) error {
		acct, err := tx.LockAccount(ctx, accountID)
		if err != nil {
			return err
		}
		live, err := tx.CountLiveApps(ctx, accountID)
		if err != nil {
			return err
		}
		if err := apps.Limit(acct, live); err != nil {
			return err
		}
		app = s.build(acct, slug, req)
		if err := tx.InsertApp(ctx, app); err != nil {
			return err
		}
		// The path names no app yet: the audit entry, committed with this transaction,
		// learns the slug here.
		accessgate.SetApp(ctx, slug)
		accessgate.SetTarget(ctx, slug)
		return tx.Publish(ctx, appsbus.KeyAppCreated, appCreated(app))
	})
	if err != nil {
		return apps.App{}, err
	}
	return app, nil
}

func (s *Apps) build(acct accounts.Account, slug string, req CreateRequest) apps.App {
	region := acct.Region()
	if req.Region != nil {
		region = *req.Region
	}
	now := stamp(s.Now())
	return apps.App{
		ID:        s.NewID(),
		AccountID: acct.ID,
		Slug:      slug,
		Name:      slug,
		Region:    region,
		Zone:      s.Zones[region],
		Status:    apps.StatusDeploying,
		Framework: apps.FrameworkStatic,
		Kind:      apps.KindFor(req.Kind),
		CreatedAt: now,
		UpdatedAt: now,
	}
}

// List returns the live apps of the teams, oldest first; with only non-nil (a token pinned
// to some apps), just those of them.
func (s *Apps) List(ctx context.Context, teamIDs, only []string) ([]apps.App, error) {
	if len(teamIDs) == 0 {
		return nil, nil
	}
	list, err := s.Store.Apps(ctx, teamIDs)
	if err != nil || only == nil {
		return list, err
	}
	return slices.DeleteFunc(list, func(a apps.App) bool { return !slices.Contains(only, a.Slug) }), nil
}

// TeamOf finds the team owning the live app slug, for the access gate (accessgate.AppTeams):
// found is false for a malformed, unknown or deleted slug. Apps owns every app, so the
// caller's teams are not needed to find one.
func (s *Apps) TeamOf(ctx context.Context, _ []string, slug string) (teamID string, found bool, err error) {
	if !apps.ValidSlug(slug) {
		return "", false, nil
	}
	teamID, err = s.Store.AppTeam(ctx, slug)
	if errors.Is(err, apps.ErrNotFound) {
		return "", false, nil
	}
	return teamID, err == nil, err
}

// Get returns one live app of the account.
func (s *Apps) Get(ctx context.Context, accountID, slug string) (apps.App, error) {
	if !apps.ValidSlug(slug) {
		return apps.App{}, apps.ErrNotFound
	}
	return s.Store.AppBySlug(ctx, accountID, slug)
}

// Lookup answers another service that has no copy of an app yet: the account's live app in
// the words of the apps.app.created it was published with, so the asker records it exactly
// as that event's consumer would. apps.ErrNotFound for an unknown, deleted or foreign slug.
func (s *Apps) Lookup(ctx context.Context, accountID, slug string) (*appsv1.AppCreated, error) {
	if accountID == "" {
		return nil, apps.ErrNotFound
	}
	a, err := s.Get(ctx, accountID, slug)
	if err != nil {
		return nil, err
	}
	return appCreated(a), nil
}

// Delete turns the account's live app into a tombstone awaiting confirmations from the
// cleanup services (reclaimed at once when there are none), drops the app's environment
// and hostnames, and publishes apps.domain.removed for each hostname that was served, then
// apps.app.deleted.
func (s *Apps) Delete(ctx context.Context, accountID, slug string) (apps.Deletion, error) {
	if !apps.ValidSlug(slug) {
		return apps.Deletion{}, apps.ErrNotFound
	}
	at := stamp(s.Now())
	var d apps.Deletion
	err := s.Store.InTx(ctx, func(tx Tx) error {
		app, err := tx.LockLiveApp(ctx, accountID, slug)
		if err != nil {
			return err
		}
		reclaimed := len(s.Cleanup) == 0
		if err := tx.TombstoneApp(ctx, app.ID, at, s.Cleanup, reclaimed); err != nil {
			return err
		}
		// The app's own data goes with it: its environment at once (nothing may read it
		// again), and its hostnames, whose edge routes end now.
		if err := tx.DeleteVars(ctx, app.ID); err != nil {
			return err
		}
		removed, err := tx.DeleteDomains(ctx, app.ID)
		if err != nil {
			return err
		}
		for _, h := range removed {
			if h.Status != domains.StatusActive {
				continue // pending ones were never served
			}
			if err := tx.Publish(ctx, appsbus.KeyDomainRemoved, domainRemoved(app, h.Hostname, at)); err != nil {
				return err
			}
		}
		d = apps.Deletion{App: app, DeletedAt: at, Pending: s.Cleanup, Reclaimed: reclaimed}
		return tx.Publish(ctx, appsbus.KeyAppDeleted, appDeleted(app, at))
	})
	if err != nil {
		return apps.Deletion{}, err
	}
	return d, nil
}

// ConfirmCleanup records in tx that service has cleaned up after the deleted app, and
// reclaims the tombstone (freeing its slug) when no confirmation is outstanding. It reports
// whether this confirmation reclaimed it. Unknown apps and services not awaited change
// nothing: a confirmation is a fact, and a repeated or stray one is harmless.
func ConfirmCleanup(ctx context.Context, tx Tx, appID, service string, at time.Time) (bool, error) {
	// The tombstone is locked first: two services confirming at once must not each still see
	// the other's row, leaving the slug held for ever.
	ok, err := tx.LockTombstone(ctx, appID)
	if err != nil || !ok {
		return false, err
	}
	pending, err := tx.ConfirmCleanup(ctx, appID, service)
	if err != nil || pending > 0 {
		return false, err
	}
	return true, tx.Reclaim(ctx, appID, at)
}

// ApplyRevision applies a deploy or zone event to the app's status and current deploy in
// tx. Deleted and unknown apps are left alone: their deploys' late events concern no one.
func ApplyRevision(ctx context.Context, tx Tx, appID string, ev apps.RevisionEvent, now time.Time) error {
	s, ok, err := tx.LockRevisionState(ctx, appID)
	if err != nil || !ok {
		return err
	}
	next := s.Apply(ev)
	if next.Status == s.Status && next.StatusAt.Equal(s.StatusAt) && next.CurrentAt.Equal(s.CurrentAt) && next.Framework == s.Framework {
		return nil
	}
	return tx.SaveRevisionState(ctx, appID, next, now)
}
