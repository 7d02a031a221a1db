package drains

import (
	"context"
	"time"

	"tori.dev/services/logs/internal/logs"
)

// Store is what drains keep in Postgres (internal/store implements it).
type Store interface {
	// CreateDrain stores d unless the app already has limit drains (ErrLimitReached); the
	// count and the insert are one transaction under a lock of the app's.
	CreateDrain(ctx context.Context, d Drain, limit int, plan string) error
	// Drains are the app's drains, oldest first, with their 24-hour counts.
	Drains(ctx context.Context, appID string) ([]Drain, error)
	// DrainOf is the app's drain id, or ErrNotFound.
	DrainOf(ctx context.Context, appID, id string) (Drain, error)
	// DeleteDrain removes the app's drain and its backlog, or ErrNotFound.
	DeleteDrain(ctx context.Context, appID, id string) error

	// ClaimDrains leases to owner, for lease, up to n drains nobody holds (or owner does).
	ClaimDrains(ctx context.Context, owner string, lease time.Duration, n int) ([]string, error)
	// RenewLease extends owner's lease; false when the drain is gone or another holds it.
	RenewLease(ctx context.Context, id, owner string, lease time.Duration) (bool, error)
	// ReleaseLease lets another replica take the drain at once.
	ReleaseLease(ctx context.Context, id, owner string) error
	// SendTarget is the drain and its app's slug, for the sender.
	SendTarget(ctx context.Context, id string) (Drain, string, error)
	// Pending is the drain's backlog's oldest limit entries in (ts, id) order. Keys are every
	// backlog row read, entries those whose line still exists (an app's cleanup may have
	// removed some).
	Pending(ctx context.Context, drainID string, limit int) (entries []logs.Entry, keys []Key, err error)
	// Acknowledge removes exactly keys from the backlog and records the delivery (delivered
	// count, lastDeliveryAt, active).
	Acknowledge(ctx context.Context, drainID string, keys []Key, delivered int, lastID int64, at time.Time) error
	// RecordFailure counts a failed batch; the drain shows failing from failingAfter in a row.
	RecordFailure(ctx context.Context, drainID, reason string, failingAfter int, at time.Time) error
	// Trim, when the backlog holds more than max rows, drops the oldest down to keep, counts
	// them as dropped and stores the system line notice(dropped) in the app's log, all in one
	// transaction (the line stored as ingestion stores lines, so the log route, the streams and every
	// drain of the app see it).
	Trim(ctx context.Context, drainID string, max, keep int, at time.Time, notice func(dropped int64) string) (int64, error)
}

// Key names one backlog row.
type Key struct {
	TS      time.Time
	EntryID int64
}
