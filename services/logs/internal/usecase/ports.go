// Package usecase holds the logs service's use cases: reading a page, storing the zones'
// batches, keeping the copies of apps and plans, the partition upkeep and a deleted app's
// cleanup. It declares the ports it needs; internal/store implements them over Postgres and
// internal/busapi feeds it from the bus.
package usecase

import (
	"context"
	"time"

	"google.golang.org/protobuf/proto"

	"tori.dev/services/logs/internal/logs"
)

// Target is what a read learns before it reads entries: the app, and the retention of the
// account's plan copy.
type Target struct {
	AppID string
	// RetentionDays is the account's plan copy's, 0 when the service has no copy yet.
	RetentionDays int
}

// AppReader resolves the caller's apps from the service's own copy of them. An app's
// accountID is its owning team's id (a personal team's is its account's).
type AppReader interface {
	// Target returns accountID's live app named slug, with the retention of the account's
	// plan copy read in the same statement (one round trip where two were), or
	// logs.ErrNotFound.
	Target(ctx context.Context, accountID, slug string) (Target, error)
}

// EntryReader reads stored entries.
type EntryReader interface {
	// Entries returns at most limit entries of appID with from <= timestamp < to, strictly
	// after the cursor when it is set, of the processes proc selects, ordered by
	// (timestamp, id).
	Entries(ctx context.Context, appID string, from, to time.Time, after *logs.Cursor, proc logs.ProcessFilter, limit int) ([]logs.Entry, error)
}

// CheckedEntryReader reads a page of appID, an app assumed to be accountID's slug, and in
// the same round trip what accountID's slug resolves to now (logs.ErrNotFound when
// nothing), so that a repeated read costs one round trip and is still checked.
type CheckedEntryReader interface {
	TargetAndEntries(ctx context.Context, accountID, slug, appID string, from, to time.Time, after *logs.Cursor, proc logs.ProcessFilter, limit int) (Target, []logs.Entry, error)
}

// Retention tells how many days of logs an account's plan keeps.
type Retention interface {
	RetentionDays(ctx context.Context, accountID string) (int, error)
}

// PlanSource asks billing, the plan's owner, for an account's plan. Its errors wrap
// logs.ErrPlanUnavailable.
type PlanSource interface {
	AccountPlan(ctx context.Context, accountID string) (logs.Plan, error)
}

// Tx is what a use case does inside one transaction: the bus's consumer transaction or
// one the use case opens with Store.InTx. Everything it writes, the outbox included, commits
// together.
type Tx interface {
	// LockIngestShared and LockIngestExclusive take the ingest lock until the transaction
	// ends: every ingest holds it shared, an app's deletion exclusively, so the deletion
	// waits for every ingest in flight and every later ingest sees the app deleted.
	LockIngestShared(ctx context.Context) error
	LockIngestExclusive(ctx context.Context) error
	// KnownAmong returns what is known of those of appIDs the service has heard of.
	KnownAmong(ctx context.Context, appIDs []string) (map[string]Known, error)
	// CopyEntries stores entries; their days' partitions must exist.
	CopyEntries(ctx context.Context, entries []logs.Entry) (int64, error)

	// SaveApp records a created app; a delete that arrived first keeps it deleted.
	SaveApp(ctx context.Context, a logs.App, createdAt time.Time) error
	// MarkAppDeleted records a deleted app, known or not, and queues its cleanup again.
	MarkAppDeleted(ctx context.Context, a logs.App, deletedAt time.Time) error
	// MarkCleaned records appID's cleanup as done; false when another copy of the service
	// recorded it first.
	MarkCleaned(ctx context.Context, appID string, at time.Time) (bool, error)

	// SavePlan keeps p unless a copy of the same or a higher version is stored.
	SavePlan(ctx context.Context, p logs.Plan) error

	// Publish writes an event to the outbox, to be published once the transaction commits.
	Publish(ctx context.Context, routingKey string, msg proto.Message) error
}

// Store is the service's storage outside any one transaction.
type Store interface {
	AppReader
	EntryReader
	// AppTeam is the team that owns the live app slug; found is false for none.
	AppTeam(ctx context.Context, slug string) (teamID string, found bool, err error)
	InTx(ctx context.Context, fn func(tx Tx) error) error

	// PlanRetention returns the retention of the account's plan copy; ok is false when
	// there is none.
	PlanRetention(ctx context.Context, accountID string) (days int, ok bool, err error)
	// MaxRetentionDays is the longest retention of any plan on record, 0 when none.
	MaxRetentionDays(ctx context.Context) (int, error)

	// EnsurePartitions creates the partitions of days that do not exist yet, outside any
	// ingest transaction.
	EnsurePartitions(ctx context.Context, days []time.Time) error
	// Partitions lists the days that have a partition, oldest first.
	Partitions(ctx context.Context) ([]time.Time, error)
	DropPartition(ctx context.Context, day time.Time) error

	// PendingCleanups lists deleted apps whose entries are not yet confirmed gone.
	PendingCleanups(ctx context.Context) ([]string, error)
	// DeleteAppEntries removes every entry of appID in short transactions of batch rows.
	DeleteAppEntries(ctx context.Context, appID string, batch int) (int64, error)
}
