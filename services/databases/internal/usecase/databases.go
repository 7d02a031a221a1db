package usecase

import (
	"context"
	"fmt"
	"log/slog"
	"time"

	"github.com/google/uuid"

	"tori.dev/services/databases/internal/database"
)

// Databases are the use cases behind /api/apps/{slug}/database.
type Databases struct {
	store   Store
	apps    AppSource
	plans   PlanSource
	objects DumpObjects
	now     func() time.Time
	log     *slog.Logger
	// DumpHour is the hour (UTC) the nightly dumps start (DATABASE_DUMP_HOUR).
	DumpHour int
}

// NewDatabases builds the use cases.
func NewDatabases(store Store, apps AppSource, plans PlanSource, objects DumpObjects, now func() time.Time, log *slog.Logger) *Databases {
	return &Databases{store: store, apps: apps, plans: plans, objects: objects, now: now, log: log}
}

// app is the live app named slug of the team accountID (the owning team's id: a personal
// team's is its account's), asked of the apps service each request: a deleted app is then
// 404 here the moment the apps service says so, and a new one is found at once.
func (s *Databases) app(ctx context.Context, accountID, slug string) (App, error) {
	a, found, err := s.lookup(ctx, accountID, slug)
	if err != nil {
		return App{}, err
	}
	if !found || a.AccountID != accountID {
		return App{}, database.ErrNotFound
	}
	return a, nil
}

// Create records the app's database as provisioning with its plan's limits. A static app
// has none (ErrServiceOnly); a second is ErrExists.
func (s *Databases) Create(ctx context.Context, accountID, slug string) (database.Database, error) {
	a, err := s.app(ctx, accountID, slug)
	if err != nil {
		return database.Database{}, err
	}
	if a.Kind != "service" {
		return database.Database{}, database.ErrServiceOnly
	}
	limits, err := s.plans.DatabaseLimits(ctx, accountID)
	if err != nil {
		return database.Database{}, err
	}
	id, err := uuid.NewV7()
	if err != nil {
		return database.Database{}, err
	}
	now := s.now().UTC()
	d := database.Database{
		ID: id.String(), AppID: a.ID, AccountID: accountID, Zone: a.Zone,
		Status: database.StatusProvisioning, Limits: limits, Name: database.NameFor(id.String()),
		CreatedAt: now, UpdatedAt: now,
	}
	err = s.store.InTx(ctx, func(tx Tx) error {
		if err := tx.Insert(ctx, d); err != nil {
			return err
		}
		return s.requested(ctx, tx, d)
	})
	if err != nil {
		return database.Database{}, err
	}
	s.log.InfoContext(ctx, "database requested", "database_id", d.ID, "app_id", d.AppID, "zone", d.Zone)
	return d, nil
}

// Get returns the app's database.
func (s *Databases) Get(ctx context.Context, accountID, slug string) (database.Database, error) {
	a, err := s.app(ctx, accountID, slug)
	if err != nil {
		return database.Database{}, err
	}
	return s.store.ByApp(ctx, a.ID)
}

// Delete marks the app's database deleting; the record goes once the zone confirms the
// database is gone. Asking again while it is deleting answers the same.
func (s *Databases) Delete(ctx context.Context, accountID, slug string) (database.Database, error) {
	a, err := s.app(ctx, accountID, slug)
	if err != nil {
		return database.Database{}, err
	}
	var out database.Database
	err = s.store.InTx(ctx, func(tx Tx) error {
		d, err := tx.LockByApp(ctx, a.ID)
		if err != nil {
			return err
		}
		if d.Status == database.StatusDeleting {
			out = d
			return nil
		}
		if err := d.Apply(database.DeleteAsked, s.now().UTC(), ""); err != nil {
			return fmt.Errorf("delete database %s: %w", d.ID, err)
		}
		if err := tx.Update(ctx, d); err != nil {
			return err
		}
		out = d
		return s.dropRequested(ctx, tx, d)
	})
	if err != nil {
		return database.Database{}, err
	}
	s.log.InfoContext(ctx, "database deletion requested", "database_id", out.ID, "app_id", out.AppID)
	return out, nil
}
