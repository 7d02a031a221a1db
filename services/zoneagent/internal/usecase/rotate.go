package usecase

import (
	"context"
	"fmt"

	zonebus "tori.dev/proto/tori/zone/v1"
)

// Rotate gives the database a new password on its other login (managed/logins.go) while the
// current one goes on working, and reports zone.database.rotated, in tx: the apps service
// then asks for the credentials and rewrites DATABASE_URL. A login still admitted from an
// earlier rotation is retired first (its sessions ended), so only the two newest passwords
// ever work. rotationID is the command's message id: the same command taken again only
// reports again, so a redelivery never cuts the old password short.
func (d *Databases) Rotate(ctx context.Context, tx Tx, databaseID, appID, name, rotationID string) error {
	if d.Cluster == nil {
		d.Log.WarnContext(ctx, "rotation asked, but this zone hosts no databases", "database_id", databaseID)
		return nil
	}
	current, _, ok := d.Pooler.Login(name)
	if !ok {
		d.Log.WarnContext(ctx, "rotation of a database this zone does not admit", "database_id", databaseID)
		return nil
	}
	if rotationID != "" && d.Pooler.LastRotation(name) == rotationID {
		return tx.Publish(ctx, zonebus.KeyDatabaseRotated, d.event(databaseID, appID, ""))
	}
	next := d.OtherLogin(name, current)
	if old, pending := d.Pooler.OldLogin(name); pending && old == next {
		if err := d.Cluster.Retire(ctx, name, next); err != nil {
			return fmt.Errorf("retire the earlier login of database %s: %w", databaseID, err)
		}
	}
	password := d.NewPassword()
	if err := d.Cluster.SetLogin(ctx, name, next, password, max(1, d.Pooler.PoolSize(name))); err != nil {
		return fmt.Errorf("rotate database %s: %w", databaseID, err)
	}
	if err := d.Pooler.Rotate(ctx, name, next, password, rotationID); err != nil {
		return fmt.Errorf("rotate database %s at the pooler: %w", databaseID, err)
	}
	d.Log.InfoContext(ctx, "database credentials rotated", "database_id", databaseID, "app_id", appID)
	return tx.Publish(ctx, zonebus.KeyDatabaseRotated, d.event(databaseID, appID, ""))
}

// RetireOld makes the password a rotation replaced stop working: its login can no longer
// log in, its sessions end, and the pooler no longer admits it. Nothing pending, nothing
// done (a redelivered command, or a second trigger after the first).
func (d *Databases) RetireOld(ctx context.Context, databaseID, appID, name string) error {
	if d.Cluster == nil {
		return nil
	}
	old, pending := d.Pooler.OldLogin(name)
	if !pending {
		return nil
	}
	if current, _, _ := d.Pooler.Login(name); current != old {
		if err := d.Cluster.Retire(ctx, name, old); err != nil {
			return fmt.Errorf("retire the old login of database %s: %w", databaseID, err)
		}
	}
	if err := d.Pooler.RetireOld(ctx, name); err != nil {
		return fmt.Errorf("retire the old login of database %s at the pooler: %w", databaseID, err)
	}
	d.Log.InfoContext(ctx, "database's old password retired", "database_id", databaseID, "app_id", appID)
	return nil
}
