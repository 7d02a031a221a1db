package usecase

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"time"

	"google.golang.org/protobuf/types/known/timestamppb"

	zonev1 "tori.dev/proto/gen/tori/zone/v1"
	zonebus "tori.dev/proto/tori/zone/v1"
)

// ErrNoDatabase: the zone admits no such database (unknown, dropped, or managed databases
// are not hosted here).
var ErrNoDatabase = errors.New("no such database")

// DatabaseCluster makes and drops an app's database and role on the zone's cluster.
type DatabaseCluster interface {
	// Create puts the database under a hard ceiling of about 110 % of capBytes.
	Create(ctx context.Context, name, password string, connLimit int, capBytes int64) error
	Drop(ctx context.Context, name string) error
	// SetCeiling brings the hard ceiling of an existing database to capBytes (a plan change).
	SetCeiling(ctx context.Context, name string, capBytes int64) error
	// SetLogin and Retire are the two logins of a rotation (rotate.go).
	SetLogin(ctx context.Context, name, login, password string, connLimit int) error
	Retire(ctx context.Context, name, login string) error
}

// DatabasePooler is the pooler in front of the cluster, and the zone's record of each
// database's password.
type DatabasePooler interface {
	Password(name string) (string, bool)
	Admit(ctx context.Context, name, password string, poolSize int) error
	// Track records whose database it is and its cap, for the size check.
	Track(name, databaseID, appID string, maxBytes int64) error
	Remove(ctx context.Context, name string) error
	// Login is who the current password logs in as; Rotate moves to another login, keeping
	// the one it replaces (OldLogin) admitted until RetireOld.
	Login(name string) (login, password string, ok bool)
	Rotate(ctx context.Context, name, login, password, rotation string) error
	LastRotation(name string) string
	OldLogin(name string) (string, bool)
	RetireOld(ctx context.Context, name string) error
	PoolSize(name string) int
}

// Credentials are what an app's sandbox connects with: the pooler as the sandbox reaches it.
type Credentials struct {
	User, Password, Database, Host string
	Port                           int
}

// Databases are the zone's managed-database use cases. With no cluster the zone hosts none.
type Databases struct {
	Zone    string
	Cluster DatabaseCluster // nil: not hosted here
	Pooler  DatabasePooler
	// Host and Port are the pooler as a sandbox reaches it.
	Host        string
	Port        int
	NewPassword func() string
	Now         func() time.Time
	Log         *slog.Logger
	// Store publishes the size check's reports; Sizes is what it measures and flips.
	// CapOverride, when positive, lowers every cap (a test-only setting).
	Store       Store
	Sizes       SizeWatch
	CapOverride int64
	// Dumps writes a database's dumps into the zone's bucket, hands out their download URLs
	// and deletes them (dumps.go).
	Dumps DatabaseDumper
	// OtherLogin is the login a rotation moves to from current (managed.OtherLogin).
	OtherLogin func(name, current string) string
}

// DatabaseDumper dumps a database (pg_dump's custom format) to an object key in the zone's
// bucket, restores such a dump into a database, makes a dump's download URL and deletes
// dumps (managed.Dumper).
type DatabaseDumper interface {
	Dump(ctx context.Context, name, login, password, key string) (int64, error)
	Restore(ctx context.Context, name, password, key string) error
	Exists(ctx context.Context, key string) (bool, error)
	DownloadURL(ctx context.Context, key string) (string, time.Duration, error)
	Delete(ctx context.Context, keys []string) (int, error)
	DeleteDatabase(ctx context.Context, databaseID string) (int, error)
}

// Restore makes database name (a new one, as for a create) from the dump at key and reports
// how it went, in tx. A command taken again for a database already restored reports the
// same; a failed restore leaves nothing behind.
func (d *Databases) Restore(ctx context.Context, tx Tx, restoreID, appID, name, key string, connLimit int, maxBytes int64) error {
	report := &zonev1.DatabaseRestored{RestoreId: restoreID, Zone: d.Zone}
	if err := d.restore(ctx, restoreID, appID, name, key, connLimit, maxBytes); err != nil {
		d.Log.WarnContext(ctx, "database restore failed", "restore_id", restoreID, "err", err.Error())
		report.Message = "the dump could not be restored"
	} else {
		report.Ok = true
		d.Log.InfoContext(ctx, "database restored", "restore_id", restoreID, "app_id", appID)
	}
	report.At = timestamppb.New(d.Now())
	return tx.Publish(ctx, zonebus.KeyDatabaseRestored, report)
}

func (d *Databases) restore(ctx context.Context, restoreID, appID, name, key string, connLimit int, maxBytes int64) error {
	if d.Cluster == nil || d.Dumps == nil {
		return errors.New("managed databases are not hosted in this zone")
	}
	if _, done := d.Pooler.Password(name); done {
		return nil
	}
	password := d.NewPassword()
	if err := d.Cluster.Create(ctx, name, password, connLimit, d.Cap(maxBytes)); err != nil {
		return err
	}
	if err := d.Dumps.Restore(ctx, name, password, key); err != nil {
		return errors.Join(err, d.Cluster.Drop(ctx, name))
	}
	if err := d.Pooler.Admit(ctx, name, password, connLimit); err != nil {
		return err
	}
	return d.Pooler.Track(name, restoreID, appID, maxBytes)
}

// Dump dumps the database to key and reports how it went, in tx. A failed dump is reported
// (never retried: the next one is another dump), with a sentence a customer may read.
func (d *Databases) Dump(ctx context.Context, tx Tx, databaseID, dumpID, name, key string) error {
	report := &zonev1.DatabaseDumped{DatabaseId: databaseID, DumpId: dumpID, Zone: d.Zone}
	login, pw, ok := "", "", false
	if d.Cluster != nil {
		login, pw, ok = d.Pooler.Login(name)
	}
	if !ok || d.Dumps == nil {
		report.Message = "the database is not in this zone"
	} else if size, err := d.Dumps.Dump(ctx, name, login, pw, key); err != nil {
		d.Log.WarnContext(ctx, "database dump failed", "database_id", databaseID, "dump_id", dumpID, "err", err.Error())
		report.Message = "the dump failed"
	} else {
		report.Ok, report.SizeBytes = true, size
		d.Log.InfoContext(ctx, "database dumped", "database_id", databaseID, "dump_id", dumpID, "bytes", size)
	}
	report.At = timestamppb.New(d.Now())
	return tx.Publish(ctx, zonebus.KeyDatabaseDumped, report)
}

func (d *Databases) event(databaseID, appID, message string) *zonev1.DatabaseChanged {
	return &zonev1.DatabaseChanged{DatabaseId: databaseID, AppId: appID, Zone: d.Zone, Message: message, At: timestamppb.New(d.Now())}
}

// Create makes the database (or finds it made by an earlier delivery of the same command,
// keeping its password), admits it at the pooler and reports it ready, in tx. A failure is
// returned for the bus to retry; a zone without managed databases reports failed.
func (d *Databases) Create(ctx context.Context, tx Tx, databaseID, appID, name string, connLimit int, maxBytes int64) error {
	if d.Cluster == nil {
		d.Log.WarnContext(ctx, "database requested, but this zone hosts none (ZONE_POSTGRES_ADMIN_URL is unset)", "database_id", databaseID)
		return tx.Publish(ctx, zonebus.KeyDatabaseFailed, d.event(databaseID, appID, "managed databases are not available in this app's zone"))
	}
	login, password, ok := d.Pooler.Login(name)
	if !ok {
		password = d.NewPassword()
	}
	if ok && login != name {
		// Rotated to the second login (a plan change): the database exists; the owner
		// stays NOLOGIN and the login in use gets the limit.
		if err := d.Cluster.SetLogin(ctx, name, login, password, connLimit); err != nil {
			return fmt.Errorf("update database %s: %w", databaseID, err)
		}
		if err := d.Cluster.SetCeiling(ctx, name, d.Cap(maxBytes)); err != nil {
			return fmt.Errorf("update database %s: %w", databaseID, err)
		}
	} else if err := d.Cluster.Create(ctx, name, password, connLimit, d.Cap(maxBytes)); err != nil {
		return fmt.Errorf("create database %s: %w", databaseID, err)
	}
	if err := d.Pooler.Admit(ctx, name, password, connLimit); err != nil {
		return fmt.Errorf("admit database %s at the pooler: %w", databaseID, err)
	}
	if err := d.Pooler.Track(name, databaseID, appID, maxBytes); err != nil {
		return err
	}
	d.Log.InfoContext(ctx, "database ready", "database_id", databaseID, "app_id", appID)
	return tx.Publish(ctx, zonebus.KeyDatabaseReady, d.event(databaseID, appID, ""))
}

// Drop stops admitting the database at the pooler, drops it and its role, and reports it
// dropped, in tx. Dropping what is gone reports the same.
func (d *Databases) Drop(ctx context.Context, tx Tx, databaseID, appID, name string) error {
	if d.Cluster != nil {
		if err := d.Pooler.Remove(ctx, name); err != nil {
			return fmt.Errorf("remove database %s from the pooler: %w", databaseID, err)
		}
		if err := d.Cluster.Drop(ctx, name); err != nil {
			return fmt.Errorf("drop database %s: %w", databaseID, err)
		}
	}
	// Its dumps go with it, before it is reported dropped: a failure here is retried with
	// the command, and the databases service forgets the dumps only after the report.
	if d.Dumps != nil {
		n, err := d.Dumps.DeleteDatabase(ctx, databaseID)
		if err != nil {
			return fmt.Errorf("delete the dumps of database %s: %w", databaseID, err)
		}
		if n > 0 {
			d.Log.InfoContext(ctx, "database dumps deleted", "database_id", databaseID, "count", n)
		}
	}
	d.Log.InfoContext(ctx, "database dropped", "database_id", databaseID, "app_id", appID)
	return tx.Publish(ctx, zonebus.KeyDatabaseDropped, d.event(databaseID, appID, ""))
}

// Credentials are the database's connection parts, for the apps service's request alone.
func (d *Databases) Credentials(name string) (Credentials, error) {
	if d.Cluster == nil {
		return Credentials{}, ErrNoDatabase
	}
	login, pw, ok := d.Pooler.Login(name)
	if !ok {
		return Credentials{}, ErrNoDatabase
	}
	return Credentials{User: login, Password: pw, Database: name, Host: d.Host, Port: d.Port}, nil
}
