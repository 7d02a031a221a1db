package usecase

import (
	"context"
	"log/slog"
	"time"

	"google.golang.org/protobuf/types/known/timestamppb"

	appsv1 "tori.dev/proto/gen/tori/apps/v1"
	logsbus "tori.dev/proto/tori/logs/v1"
)

// ServiceName is the `service` this service's cleanup confirmations carry.
const ServiceName = "logs"

// Cleanup removes deleted apps' entries and then confirms each cleanup to the apps service.
type Cleanup struct {
	store Store
	log   *slog.Logger
	now   func() time.Time
	batch int
}

// NewCleanup builds the cleanup, deleting batch rows per statement.
func NewCleanup(st Store, log *slog.Logger, now func() time.Time, batch int) *Cleanup {
	return &Cleanup{store: st, log: log, now: now, batch: batch}
}

// Run cleans every pending app and returns how many it confirmed. The pending list lives in
// the apps table, so work interrupted by a restart resumes at the next round.
func (c *Cleanup) Run(ctx context.Context) (int64, error) {
	ids, err := c.store.PendingCleanups(ctx)
	if err != nil {
		return 0, err
	}
	var confirmed int64
	for _, id := range ids {
		ok, err := c.clean(ctx, id)
		if err != nil {
			return confirmed, err
		}
		if ok {
			confirmed++
		}
	}
	return confirmed, nil
}

// clean deletes the app's entries, then marks it cleaned and writes the confirmation in one
// transaction, so the confirmation is published exactly when the mark commits.
func (c *Cleanup) clean(ctx context.Context, appID string) (bool, error) {
	removed, err := c.store.DeleteAppEntries(ctx, appID, c.batch)
	if err != nil {
		return false, err
	}
	confirmed := false
	err = c.store.InTx(ctx, func(tx Tx) error {
		now := c.now()
		first, err := tx.MarkCleaned(ctx, appID, now)
		if err != nil || !first {
			return err
		}
		confirmed = true
		return tx.Publish(ctx, logsbus.KeyAppCleaned, &appsv1.AppCleanupConfirmed{
			AppId: appID, Service: ServiceName, ConfirmedAt: timestamppb.New(now),
		})
	})
	if err != nil {
		return false, err
	}
	if confirmed {
		c.log.InfoContext(ctx, "deleted app's logs removed", "app_id", appID, "entries", removed)
	}
	return confirmed, nil
}
