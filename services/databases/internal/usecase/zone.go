package usecase

import (
	"context"
	"errors"
	"fmt"
	"time"

	"google.golang.org/protobuf/types/known/timestamppb"

	databasesv1 "tori.dev/proto/gen/tori/databases/v1"
	zonev1 "tori.dev/proto/gen/tori/zone/v1"
	databasesbus "tori.dev/proto/tori/databases/v1"
	zonebus "tori.dev/proto/tori/zone/v1"
	"tori.dev/services/databases/internal/database"
)

// requested tells the app's zone to provision d, in the transaction that records it.
func (s *Databases) requested(ctx context.Context, tx Tx, d database.Database) error {
	return tx.Publish(ctx, zonebus.CommandKey(d.Zone, zonebus.CommandDatabaseCreate), &zonev1.CreateDatabase{
		DatabaseId: d.ID, AppId: d.AppID, Name: d.Name,
		ConnectionLimit: int32(d.Limits.Connections), MaxBytes: d.Limits.MaxBytes,
	})
}

// dropRequested tells the zone to drop d and every restore of it, in the transaction that
// marks it deleting.
func (s *Databases) dropRequested(ctx context.Context, tx Tx, d database.Database) error {
	restores, err := tx.Restores(ctx, d.ID)
	if err != nil {
		return err
	}
	for _, r := range restores {
		if err := r.Apply(database.RestoreDeleteAsked, ""); err != nil {
			if errors.Is(err, database.ErrTransition) {
				continue // deleting already: its drop was asked
			}
			return err
		}
		if err := tx.UpdateRestore(ctx, r); err != nil {
			return err
		}
		if err := tx.Publish(ctx, zonebus.CommandKey(d.Zone, zonebus.CommandDatabaseDrop), &zonev1.DropDatabase{
			DatabaseId: r.ID, AppId: d.AppID, Name: r.Name,
		}); err != nil {
			return err
		}
	}
	return tx.Publish(ctx, zonebus.CommandKey(d.Zone, zonebus.CommandDatabaseDrop), &zonev1.DropDatabase{
		DatabaseId: d.ID, AppId: d.AppID, Name: d.Name,
	})
}

// ZoneReport is what a zone said of one of its databases.
type ZoneReport struct {
	Kind       string // zonebus.KeyDatabase{Ready,Failed,Dropped,ReadOnly,Writable,Rotated}
	DatabaseID string
	Zone       string
	Message    string
}

// ZoneReported applies a zone's report in tx. A report about a database this zone does not
// host, or one its status has moved past (a ready after a delete was asked), changes
// nothing; a redelivered one neither.
func (s *Databases) ZoneReported(ctx context.Context, tx Tx, r ZoneReport) error {
	if r.Kind == zonebus.KeyDatabaseDropped {
		if handled, err := s.restoreDropped(ctx, tx, r.Zone, r.DatabaseID); handled || err != nil {
			return err
		}
	}
	d, err := tx.LockByID(ctx, r.DatabaseID)
	if err != nil {
		if err == database.ErrNotFound {
			s.log.InfoContext(ctx, "zone report about no database on record", "database_id", r.DatabaseID, "report", r.Kind)
			return nil
		}
		return err
	}
	if d.Zone != r.Zone {
		s.log.WarnContext(ctx, "zone report from a zone that does not host the database", "database_id", d.ID, "zone", r.Zone)
		return nil
	}
	now := s.now().UTC()
	event := &databasesv1.DatabaseChanged{DatabaseId: d.ID, AppId: d.AppID, AccountId: d.AccountID, Zone: d.Zone, At: timestamppb.New(now)}
	switch r.Kind {
	case zonebus.KeyDatabaseReady:
		if moved, err := s.moveOnReport(ctx, tx, &d, database.Created, now, r.Message); !moved || err != nil {
			return err
		}
		s.log.InfoContext(ctx, "database ready", "database_id", d.ID, "app_id", d.AppID)
		return tx.Publish(ctx, databasesbus.KeyDatabaseReady, event)
	case zonebus.KeyDatabaseFailed:
		if moved, err := s.moveOnReport(ctx, tx, &d, database.CreateFailed, now, r.Message); !moved || err != nil {
			return err
		}
		s.log.WarnContext(ctx, "database failed", "database_id", d.ID, "app_id", d.AppID, "message", d.Message)
		return nil
	case zonebus.KeyDatabaseReadOnly, zonebus.KeyDatabaseWritable:
		cause := database.OverCap
		if r.Kind == zonebus.KeyDatabaseWritable {
			cause = database.UnderCap
		}
		if moved, err := s.moveOnReport(ctx, tx, &d, cause, now, r.Message); !moved || err != nil {
			return err
		}
		s.log.InfoContext(ctx, "database size crossed its cap", "database_id", d.ID, "status", string(d.Status))
		return nil
	case zonebus.KeyDatabaseRotated:
		return s.rotated(ctx, tx, d, now)
	case zonebus.KeyDatabaseDropped:
		if d.Status != database.StatusDeleting {
			return nil
		}
		// Its dumps go with it: the zone deleted their objects before it reported the drop,
		// and their records go by the foreign key. So do the records of its restores, whose
		// databases the zone was told to drop with it: their variables go now.
		restores, err := tx.Restores(ctx, d.ID)
		if err != nil {
			return err
		}
		for _, rs := range restores {
			if err := tx.Publish(ctx, databasesbus.KeyRestoreDeleted, &databasesv1.DatabaseChanged{
				DatabaseId: rs.ID, AppId: d.AppID, AccountId: d.AccountID, Zone: d.Zone, At: timestamppb.New(now),
			}); err != nil {
				return err
			}
		}
		if err := tx.Remove(ctx, d.ID); err != nil {
			return err
		}
		s.log.InfoContext(ctx, "database deleted", "database_id", d.ID, "app_id", d.AppID)
		if err := tx.Publish(ctx, databasesbus.KeyDatabaseDeleted, event); err != nil {
			return err
		}
		if d.AppDeleted {
			return s.cleaned(ctx, tx, d.AppID)
		}
		return nil
	}
	return fmt.Errorf("usecase: unknown zone report %q", r.Kind)
}

// moveOnReport moves d on a zone's report through the state machine and records it. A report
// the machine does not take from d's status (late, repeated, or about a database since asked
// to go) moves nothing and is no error: moved is false.
func (s *Databases) moveOnReport(ctx context.Context, tx Tx, d *database.Database, cause database.Cause, now time.Time, message string) (moved bool, err error) {
	if err := d.Apply(cause, now, message); err != nil {
		if errors.Is(err, database.ErrTransition) {
			return false, nil
		}
		return false, err
	}
	return true, tx.Update(ctx, *d)
}
