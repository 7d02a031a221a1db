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

// RotateCredentials asks the app's zone for a new password (POST
// /api/apps/{slug}/database/credentials/rotate). The old one works on until the app's next
// deploy is live or for 24 hours (database.Rotation). Rotating again before then replaces
// the pending rotation: the zone retires the password before the current one at once.
func (s *Databases) RotateCredentials(ctx context.Context, accountID, slug string) (database.Database, error) {
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
		if !database.CanRotate(d.Status) {
			return database.ErrNotReady
		}
		out = d
		if err := tx.PutRotation(ctx, database.Rotation{DatabaseID: d.ID, AppID: d.AppID, RequestedAt: s.now().UTC()}); err != nil {
			return err
		}
		return tx.Publish(ctx, zonebus.CommandKey(d.Zone, zonebus.CommandDatabaseRotate), &zonev1.DropDatabase{
			DatabaseId: d.ID, AppId: d.AppID, Name: d.Name,
		})
	})
	if err != nil {
		return database.Database{}, err
	}
	s.log.InfoContext(ctx, "database credential rotation requested", "database_id", out.ID, "app_id", out.AppID)
	return out, nil
}

// rotated: the zone has the new password in place. From now the 24 hours run and new
// deploys count; the apps service is told to rewrite DATABASE_URL.
func (s *Databases) rotated(ctx context.Context, tx Tx, d database.Database, now time.Time) error {
	if _, err := tx.LockRotation(ctx, d.ID); err != nil {
		if errors.Is(err, database.ErrNotFound) {
			// Retired already by a later trigger, or the database is going: nothing to count,
			// but the URL must still carry the password the zone now hands out.
			return s.publishRotated(ctx, tx, d, now)
		}
		return err
	}
	if err := tx.ConfirmRotation(ctx, d.ID, now); err != nil {
		return err
	}
	s.log.InfoContext(ctx, "database credentials rotated", "database_id", d.ID, "app_id", d.AppID)
	return s.publishRotated(ctx, tx, d, now)
}

func (s *Databases) publishRotated(ctx context.Context, tx Tx, d database.Database, now time.Time) error {
	if d.Status == database.StatusDeleting {
		return nil
	}
	return tx.Publish(ctx, databasesbus.KeyDatabaseRotated, &databasesv1.DatabaseChanged{
		DatabaseId: d.ID, AppId: d.AppID, AccountId: d.AccountID, Zone: d.Zone, At: timestamppb.New(now),
	})
}

// DeployCreated notes a deploy of an app with a rotation in force whose going live will
// retire the old password (database.Rotation.NextDeploy).
func (s *Databases) DeployCreated(ctx context.Context, tx Tx, appID, deployID string, createdAt time.Time, rollback bool) error {
	r, err := tx.LockRotationByApp(ctx, appID)
	if errors.Is(err, database.ErrNotFound) {
		return nil
	}
	if err != nil || !r.NextDeploy(createdAt, rollback) {
		return err
	}
	return tx.AddRotationDeploy(ctx, r.DatabaseID, deployID)
}

// DeployLive retires the old password when the deploy now live is one DeployCreated noted.
func (s *Databases) DeployLive(ctx context.Context, tx Tx, deployID string) error {
	r, err := tx.LockRotationOfDeploy(ctx, deployID)
	if errors.Is(err, database.ErrNotFound) {
		return nil
	}
	if err != nil {
		return err
	}
	return s.retire(ctx, tx, r, "the next deploy is live")
}

// ExpireRotations retires every old password whose 24 hours are up (a lifecycle.Job) and
// says how many.
func (s *Databases) ExpireRotations(ctx context.Context) (int64, error) {
	rs, err := s.store.ConfirmedRotations(ctx)
	if err != nil {
		return 0, err
	}
	now := s.now()
	var n int64
	for _, r := range rs {
		if !r.Expired(now) {
			continue
		}
		err := s.store.InTx(ctx, func(tx Tx) error {
			// Locked again: a deploy going live may have retired it meanwhile.
			r, err := tx.LockRotation(ctx, r.DatabaseID)
			if errors.Is(err, database.ErrNotFound) || (err == nil && !r.Expired(now)) {
				return nil
			}
			if err != nil {
				return err
			}
			n++
			return s.retire(ctx, tx, r, "24 hours are up")
		})
		if err != nil {
			return n, fmt.Errorf("expire the rotation of database %s: %w", r.DatabaseID, err)
		}
	}
	return n, nil
}

// retire tells the zone to make the old password stop working, and forgets the rotation.
func (s *Databases) retire(ctx context.Context, tx Tx, r database.Rotation, why string) error {
	d, err := tx.LockByID(ctx, r.DatabaseID)
	if err != nil {
		return err
	}
	if err := tx.RemoveRotation(ctx, r.DatabaseID); err != nil {
		return err
	}
	s.log.InfoContext(ctx, "database's old password retired", "database_id", d.ID, "app_id", d.AppID, "why", why)
	return tx.Publish(ctx, zonebus.CommandKey(d.Zone, zonebus.CommandDatabaseRetire), &zonev1.DropDatabase{
		DatabaseId: d.ID, AppId: d.AppID, Name: d.Name,
	})
}
