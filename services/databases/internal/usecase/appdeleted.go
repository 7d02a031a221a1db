package usecase

import (
	"context"
	"errors"

	"google.golang.org/protobuf/types/known/timestamppb"

	appsv1 "tori.dev/proto/gen/tori/apps/v1"
	databasesbus "tori.dev/proto/tori/databases/v1"
	"tori.dev/services/databases/internal/database"
)

// AppDeleted takes a deleted app's database with it, in tx: it is marked deleting (unless it
// already is) and its zone told to drop it; the apps service hears that this service's part
// of the cleanup is done once the zone confirms (at once when the app had none).
func (s *Databases) AppDeleted(ctx context.Context, tx Tx, appID string) error {
	d, err := tx.LockByApp(ctx, appID)
	if errors.Is(err, database.ErrNotFound) {
		return s.cleaned(ctx, tx, appID)
	}
	if err != nil {
		return err
	}
	if d.AppDeleted {
		return nil
	}
	d.AppDeleted = true
	d.UpdatedAt = s.now().UTC()
	alreadyDeleting := d.Status == database.StatusDeleting
	if !alreadyDeleting {
		if err := d.Apply(database.DeleteAsked, d.UpdatedAt, ""); err != nil {
			return err
		}
	}
	if err := tx.Update(ctx, d); err != nil {
		return err
	}
	s.log.InfoContext(ctx, "app deleted: its database goes too", "database_id", d.ID, "app_id", appID)
	if alreadyDeleting {
		return nil // the drop is already asked for
	}
	return s.dropRequested(ctx, tx, d)
}

// cleaned tells the apps service nothing of the app is left here.
func (s *Databases) cleaned(ctx context.Context, tx Tx, appID string) error {
	return tx.Publish(ctx, databasesbus.KeyAppCleaned, &appsv1.AppCleanupConfirmed{
		AppId: appID, Service: "databases", ConfirmedAt: timestamppb.New(s.now()),
	})
}
