package events

import (
	"context"
	"fmt"
	"log/slog"
	"time"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"

	"tori.dev/pkg/bus"
	appsv1 "tori.dev/proto/gen/tori/apps/v1"
	"tori.dev/services/logs/internal/store"
)

// Apps keeps the service's copy of apps: who owns which slug, and which are deleted.
type Apps struct {
	store *store.Store
	log   *slog.Logger
	now   func() time.Time
}

// NewApps builds the apps.app.* handler.
func NewApps(st *store.Store, log *slog.Logger, now func() time.Time) *Apps {
	return &Apps{store: st, log: log, now: now}
}

// Subscription is the durable consumer of the apps' lives.
func (a *Apps) Subscription() bus.Subscription {
	return bus.Subscription{Queue: QueueApps, Keys: []string{KeyAppCreated, KeyAppDeleted}, Handle: a.Handle}
}

// Handle applies one apps event.
func (a *Apps) Handle(ctx context.Context, tx pgx.Tx, d bus.Delivery) error {
	switch d.RoutingKey {
	case KeyAppCreated:
		var m appsv1.AppCreated
		if err := d.Decode(&m); err != nil {
			return bus.Permanent(fmt.Errorf("events: decode AppCreated: %w", err))
		}
		app, err := appFrom(m.GetAppId(), m.GetAccountId(), m.GetSlug())
		if err != nil {
			return err
		}
		return a.store.SaveApp(ctx, tx, app, timeOr(m.GetCreatedAt().AsTime(), m.GetCreatedAt() != nil, a.now()))
	case KeyAppDeleted:
		var m appsv1.AppDeleted
		if err := d.Decode(&m); err != nil {
			return bus.Permanent(fmt.Errorf("events: decode AppDeleted: %w", err))
		}
		app, err := appFrom(m.GetAppId(), m.GetAccountId(), m.GetSlug())
		if err != nil {
			return err
		}
		// Waits for every ingest in flight; see store.LockIngestExclusive.
		if err := store.LockIngestExclusive(ctx, tx); err != nil {
			return err
		}
		return a.store.MarkAppDeleted(ctx, tx, app, timeOr(m.GetDeletedAt().AsTime(), m.GetDeletedAt() != nil, a.now()))
	}
	return bus.Permanent(fmt.Errorf("events: unexpected routing key %q on %s", d.RoutingKey, QueueApps))
}

func appFrom(id, account, slug string) (store.App, error) {
	u, err := uuid.Parse(id)
	if err != nil {
		return store.App{}, bus.Permanent(fmt.Errorf("events: app id %q: %w", id, err))
	}
	return store.App{ID: u.String(), AccountID: account, Slug: slug}, nil
}

func timeOr(t time.Time, set bool, fallback time.Time) time.Time {
	if set {
		return t
	}
	return fallback
}
