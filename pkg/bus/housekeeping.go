package bus

import (
	"context"
	"fmt"
	"log/slog"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"

	"tori.dev/pkg/lifecycle"
)

// Retention Housekeep applies. A processed id must outlive any redelivery of its message, and
// a week is far beyond how long the broker keeps one; a sent row is kept a day for debugging.
const (
	DefaultKeepSent       = 24 * time.Hour
	DefaultKeepProcessed  = 7 * 24 * time.Hour
	DefaultHousekeepEvery = time.Hour
)

// pruneBatch bounds one DELETE, so pruning a large backlog never holds long locks or bloats
// one transaction.
const pruneBatch = 5000

// Prune deletes outbox rows sent longer ago than keepSent and processed-message records older
// than keepProcessed. Returns how many rows went.
func Prune(ctx context.Context, pool *pgxpool.Pool, keepSent, keepProcessed time.Duration) (int64, error) {
	var total int64
	for _, q := range []struct {
		what, sql string
		keep      time.Duration
	}{
		{"outbox", `DELETE FROM outbox WHERE seq IN (
			SELECT seq FROM outbox
			WHERE sent_at IS NOT NULL AND sent_at < now() - make_interval(secs => $1)
			LIMIT $2)`, keepSent},
		{"processed_messages", `DELETE FROM processed_messages WHERE ctid IN (
			SELECT ctid FROM processed_messages
			WHERE processed_at < now() - make_interval(secs => $1)
			LIMIT $2)`, keepProcessed},
	} {
		for {
			tag, err := pool.Exec(ctx, q.sql, q.keep.Seconds(), pruneBatch)
			if err != nil {
				return total, fmt.Errorf("bus: prune %s: %w", q.what, err)
			}
			total += tag.RowsAffected()
			if tag.RowsAffected() < pruneBatch {
				break
			}
		}
	}
	return total, nil
}

// Retention is how long housekeeping keeps sent outbox rows and processed-message ids.
type Retention struct {
	Sent, Processed time.Duration
}

// DefaultRetention is what Housekeep keeps.
var DefaultRetention = Retention{Sent: DefaultKeepSent, Processed: DefaultKeepProcessed}

// Housekeep prunes pool's outbox and processed ids with the default retention, at start and
// then every `every` (DefaultHousekeepEvery when zero), until ctx ends. Several copies of a
// service may run it at once; they only delete the same rows. Errors are logged, not fatal.
func Housekeep(ctx context.Context, pool *pgxpool.Pool, every time.Duration, log *slog.Logger) error {
	return HousekeepKeeping(ctx, pool, every, DefaultRetention, log)
}

// HousekeepKeeping is Housekeep with a retention of the caller's: a consumer of a very busy
// queue may keep processed ids for less than a week, as long as that still outlives any
// redelivery.
func HousekeepKeeping(ctx context.Context, pool *pgxpool.Pool, every time.Duration, keep Retention, log *slog.Logger) error {
	if every <= 0 {
		every = DefaultHousekeepEvery
	}
	return lifecycle.RunJob(ctx, log, lifecycle.Job{
		Name: "bus housekeeping", Every: every, Immediately: true,
		Run: func(ctx context.Context) (int64, error) { return Prune(ctx, pool, keep.Sent, keep.Processed) },
	})
}
