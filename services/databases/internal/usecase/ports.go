// Package usecase holds the databases service's use cases: create, read and delete an app's
// managed database. It declares the ports it needs; internal/store implements them over
// Postgres and internal/busapi asks the apps service and billing.
package usecase

import (
	"context"
	"time"

	"google.golang.org/protobuf/proto"

	"tori.dev/services/databases/internal/database"
)

// App is what the apps service says of one of the caller's apps.
type App struct {
	ID string
	// AccountID is the id of the team owning the app.
	AccountID string
	Slug      string
	Kind      string // static or service
	Zone      string
}

// AppSource asks the apps service, which owns apps, for the caller's live app named slug.
// found is false for an unknown, deleted or another account's app; errors wrap
// database.ErrAppUnavailable.
type AppSource interface {
	LookupApp(ctx context.Context, accountID, slug string) (a App, found bool, err error)
}

// PlanSource gives an account's database limits from its plan; errors wrap
// database.ErrPlanUnavailable.
type PlanSource interface {
	DatabaseLimits(ctx context.Context, accountID string) (database.Limits, error)
}

// Tx is what a use case does inside one transaction; everything it writes, the outbox
// included, commits together.
type Tx interface {
	// Insert records a new database; database.ErrExists when the app has one.
	Insert(ctx context.Context, d database.Database) error
	// LockByApp returns the app's database, locked until the transaction ends, or
	// database.ErrNotFound.
	LockByApp(ctx context.Context, appID string) (database.Database, error)
	// LockByAccount returns every database of the account, locked until the transaction ends.
	LockByAccount(ctx context.Context, accountID string) ([]database.Database, error)
	// LockByID returns the database, locked until the transaction ends, or
	// database.ErrNotFound.
	LockByID(ctx context.Context, id string) (database.Database, error)
	// Update writes d's status, message, limits and updated time.
	Update(ctx context.Context, d database.Database) error
	// Remove deletes d's record (the zone confirmed the database gone).
	Remove(ctx context.Context, id string) error
	InsertDump(ctx context.Context, d database.Dump) error
	// LockDump returns the dump, locked until the transaction ends, or database.ErrNotFound.
	LockDump(ctx context.Context, id string) (database.Dump, error)
	FinishDump(ctx context.Context, d database.Dump, at time.Time) error
	// Dumps lists a database's dumps, newest first.
	Dumps(ctx context.Context, databaseID string) ([]database.Dump, error)
	DeleteDumps(ctx context.Context, ids []string) error
	// InsertRestore records a restore; database.ErrRestoreExists when the database has one.
	InsertRestore(ctx context.Context, r database.Restore) error
	// LockRestore returns the restore, locked, or database.ErrNotFound.
	LockRestore(ctx context.Context, id string) (database.Restore, error)
	UpdateRestore(ctx context.Context, r database.Restore) error
	RemoveRestore(ctx context.Context, id string) error
	// Restores lists a database's restores.
	Restores(ctx context.Context, databaseID string) ([]database.Restore, error)
	// PutRotation records a pending rotation (replacing one); the Lock* return one, locked,
	// or database.ErrNotFound; ConfirmRotation sets its RotatedAt; AddRotationDeploy notes a
	// deploy whose going live retires the old password.
	PutRotation(ctx context.Context, r database.Rotation) error
	LockRotation(ctx context.Context, databaseID string) (database.Rotation, error)
	LockRotationByApp(ctx context.Context, appID string) (database.Rotation, error)
	LockRotationOfDeploy(ctx context.Context, deployID string) (database.Rotation, error)
	ConfirmRotation(ctx context.Context, databaseID string, at time.Time) error
	AddRotationDeploy(ctx context.Context, databaseID, deployID string) error
	RemoveRotation(ctx context.Context, databaseID string) error
	// Publish writes an event to the outbox, published once the transaction commits.
	Publish(ctx context.Context, routingKey string, msg proto.Message) error
}

// Store is the service's storage outside any one transaction.
type Store interface {
	// ByApp returns the app's database or database.ErrNotFound.
	ByApp(ctx context.Context, appID string) (database.Database, error)
	// Dumps lists a database's dumps, newest first; Dump is one, or database.ErrNotFound.
	Dumps(ctx context.Context, databaseID string) ([]database.Dump, error)
	Dump(ctx context.Context, id string) (database.Dump, error)
	// NightlyCandidates are the ready and read-only databases with their newest dump's time.
	NightlyCandidates(ctx context.Context) ([]Candidate, error)
	// Restores lists a database's restores.
	Restores(ctx context.Context, databaseID string) ([]database.Restore, error)
	// ConfirmedRotations are the pending rotations the zone has put in place.
	ConfirmedRotations(ctx context.Context) ([]database.Rotation, error)
	InTx(ctx context.Context, fn func(tx Tx) error) error
}
