package usecase

import (
	"context"
	"errors"

	"github.com/google/uuid"
	"google.golang.org/protobuf/types/known/timestamppb"

	databasesv1 "tori.dev/proto/gen/tori/databases/v1"
	zonev1 "tori.dev/proto/gen/tori/zone/v1"
	databasesbus "tori.dev/proto/tori/databases/v1"
	zonebus "tori.dev/proto/tori/zone/v1"
	"tori.dev/services/databases/internal/database"
)

// CreateRestore restores a succeeded dump of the app's database into a database of its own
// (the live one and DATABASE_URL are never touched). One at a time: ErrRestoreExists.
func (s *Databases) CreateRestore(ctx context.Context, accountID, slug, dumpID string) (database.Restore, error) {
	d, err := s.dumpable(ctx, accountID, slug)
	if err != nil {
		return database.Restore{}, err
	}
	if _, err := uuid.Parse(dumpID); err != nil {
		return database.Restore{}, database.ErrBadDump
	}
	dump, err := s.store.Dump(ctx, dumpID)
	if errors.Is(err, database.ErrNotFound) || (err == nil && (dump.DatabaseID != d.ID || dump.Status != database.DumpSucceeded)) {
		return database.Restore{}, database.ErrBadDump
	}
	if err != nil {
		return database.Restore{}, err
	}
	id, err := uuid.NewV7()
	if err != nil {
		return database.Restore{}, err
	}
	r := database.Restore{ID: id.String(), DatabaseID: d.ID, DumpID: dump.ID, Name: database.NameFor(id.String()),
		Status: database.RestoreRestoring, CreatedAt: s.now().UTC()}
	err = s.store.InTx(ctx, func(tx Tx) error {
		if err := tx.InsertRestore(ctx, r); err != nil {
			return err
		}
		return tx.Publish(ctx, zonebus.CommandKey(d.Zone, zonebus.CommandDatabaseRestore), &zonev1.RestoreDatabase{
			RestoreId: r.ID, AppId: d.AppID, Name: r.Name, ObjectKey: dump.ObjectKey,
			ConnectionLimit: int32(d.Limits.Connections), MaxBytes: d.Limits.MaxBytes,
		})
	})
	if err != nil {
		return database.Restore{}, err
	}
	s.log.InfoContext(ctx, "restore requested", "restore_id", r.ID, "dump_id", dump.ID)
	return r, nil
}

// ListRestores lists the app's database's restores.
func (s *Databases) ListRestores(ctx context.Context, accountID, slug string) ([]database.Restore, error) {
	a, err := s.app(ctx, accountID, slug)
	if err != nil {
		return nil, err
	}
	d, err := s.store.ByApp(ctx, a.ID)
	if err != nil {
		return nil, err
	}
	return s.store.Restores(ctx, d.ID)
}

// DeleteRestore marks the restore deleting and tells the zone to drop its database; the
// record and DATABASE_RESTORE_URL go once the zone confirms.
func (s *Databases) DeleteRestore(ctx context.Context, accountID, slug, restoreID string) (database.Restore, error) {
	a, err := s.app(ctx, accountID, slug)
	if err != nil {
		return database.Restore{}, err
	}
	if _, err := uuid.Parse(restoreID); err != nil {
		return database.Restore{}, database.ErrNotFound
	}
	d, err := s.store.ByApp(ctx, a.ID)
	if err != nil {
		return database.Restore{}, err
	}
	var out database.Restore
	err = s.store.InTx(ctx, func(tx Tx) error {
		r, err := tx.LockRestore(ctx, restoreID)
		if err != nil {
			return err
		}
		if r.DatabaseID != d.ID {
			return database.ErrNotFound
		}
		out = r
		// A restore deleting already stays so: the delete was asked, the zone told.
		if err := out.Apply(database.RestoreDeleteAsked, ""); err != nil {
			if errors.Is(err, database.ErrTransition) {
				return nil
			}
			return err
		}
		if err := tx.UpdateRestore(ctx, out); err != nil {
			return err
		}
		return tx.Publish(ctx, zonebus.CommandKey(d.Zone, zonebus.CommandDatabaseDrop), &zonev1.DropDatabase{
			DatabaseId: r.ID, AppId: d.AppID, Name: r.Name,
		})
	})
	return out, err
}

// RestoreReported records the zone's report of a restore, in tx.
func (s *Databases) RestoreReported(ctx context.Context, tx Tx, zone, restoreID string, ok bool, message string) error {
	r, err := tx.LockRestore(ctx, restoreID)
	if errors.Is(err, database.ErrNotFound) {
		return nil
	}
	if err != nil {
		return err
	}
	d, err := tx.LockByID(ctx, r.DatabaseID)
	if err != nil {
		return err
	}
	if d.Zone != zone {
		return nil
	}
	cause := database.NotRestored
	if ok {
		cause = database.Restored
	}
	// A report the table does not take from the restore's status (redelivered, or about a
	// restore since asked to go) moves nothing and is no error, so the bus does not retry it.
	if err := r.Apply(cause, message); err != nil {
		if errors.Is(err, database.ErrTransition) {
			return nil
		}
		return err
	}
	if err := tx.UpdateRestore(ctx, r); err != nil {
		return err
	}
	if r.Status != database.RestoreReady {
		return nil
	}
	return tx.Publish(ctx, databasesbus.KeyRestoreReady, &databasesv1.DatabaseChanged{
		DatabaseId: r.ID, AppId: d.AppID, AccountId: d.AccountID, Zone: d.Zone, At: timestamppb.New(s.now()),
	})
}

// restoreDropped removes a deleting restore's record once its zone dropped it, in tx; false
// when id names no restore.
func (s *Databases) restoreDropped(ctx context.Context, tx Tx, zone, id string) (bool, error) {
	r, err := tx.LockRestore(ctx, id)
	if errors.Is(err, database.ErrNotFound) {
		return false, nil
	}
	if err != nil {
		return true, err
	}
	d, err := tx.LockByID(ctx, r.DatabaseID)
	if err != nil || d.Zone != zone || r.Status != database.RestoreDeleting {
		return true, err
	}
	if err := tx.RemoveRestore(ctx, r.ID); err != nil {
		return true, err
	}
	return true, tx.Publish(ctx, databasesbus.KeyRestoreDeleted, &databasesv1.DatabaseChanged{
		DatabaseId: r.ID, AppId: d.AppID, AccountId: d.AccountID, Zone: d.Zone, At: timestamppb.New(s.now()),
	})
}
