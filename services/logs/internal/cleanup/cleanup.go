// Package cleanup removes a deleted app's log entries in the background and then confirms
// the cleanup to the apps service through the outbox.
package cleanup

import (
	"context"
	"log/slog"
	"time"

	"github.com/jackc/pgx/v5"
	"google.golang.org/protobuf/types/known/timestamppb"

	"tori.dev/pkg/bus"
	"tori.dev/pkg/pgstore"
	appsv1 "tori.dev/proto/gen/tori/apps/v1"
	"tori.dev/services/logs/internal/store"
)

// KeyAppCleaned is the routing key of this service's confirmation.
const KeyAppCleaned = "logs.app.cleaned"

// ServiceName is the `service` the confirmation carries.
const ServiceName = "logs"

// Cleaner works through deleted apps whose entries are not yet removed.
type Cleaner struct {
	store *store.Store
	log   *slog.Logger
	now   func() time.Time
	batch int
}

// New builds a Cleaner deleting batch rows per statement.
func New(st *store.Store, log *slog.Logger, now func() time.Time, batch int) *Cleaner {
	return &Cleaner{store: st, log: log, now: now, batch: batch}
}

// Run cleans every interval until ctx ends. The pending list lives in the apps table, so
// work interrupted by a restart resumes at the next round.
func (c *Cleaner) Run(ctx context.Context, interval time.Duration) error {
	t := time.NewTicker(interval)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return nil
		case <-t.C:
			if err := c.RunOnce(ctx); err != nil && ctx.Err() == nil {
				c.log.ErrorContext(ctx, "log cleanup failed", "err", err.Error())
			}
		}
	}
}

// RunOnce cleans every pending app.
func (c *Cleaner) RunOnce(ctx context.Context) error {
	ids, err := c.store.PendingCleanups(ctx)
	if err != nil {
		return err
	}
	for _, id := range ids {
		if err := c.clean(ctx, id); err != nil {
			return err
		}
	}
	return nil
}

// clean deletes the app's entries, then marks it cleaned and writes the confirmation in one
// transaction, so the confirmation is published exactly when the mark commits.
func (c *Cleaner) clean(ctx context.Context, appID string) error {
	removed, err := c.store.DeleteAppEntries(ctx, appID, c.batch)
	if err != nil {
		return err
	}
	confirmed := false
	err = pgstore.InTx(ctx, c.store.Pool(), func(tx pgx.Tx) error {
		now := c.now()
		first, err := c.store.MarkCleaned(ctx, tx, appID, now)
		if err != nil || !first {
			return err
		}
		confirmed = true
		return bus.Publish(ctx, tx, KeyAppCleaned, &appsv1.AppCleanupConfirmed{
			AppId: appID, Service: ServiceName, ConfirmedAt: timestamppb.New(now),
		})
	})
	if err == nil && confirmed {
		c.log.InfoContext(ctx, "deleted app's logs removed", "app_id", appID, "entries", removed)
	}
	return err
}
