package e2e

import (
	"context"
	"fmt"
	"sort"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"

	"tori.dev/tests/e2e/harness"
)

const (
	// retentionReaders read the logs page at once while a day is dropped (and without).
	retentionReaders = 2
	// retentionDrops days are dropped each round, their reads pooled.
	retentionDrops = 3
	// retentionSamples is how many reads each drop holds (and retentionDrops times as many
	// the round's reads without a drop).
	retentionSamples = 100
	// retentionUpkeepWait bounds the wait for the logs service's upkeep to reach the day
	// (LOGS_MAINTENANCE_INTERVAL, 1s in scaleStackEnv).
	retentionUpkeepWait = 30 * time.Second
	// retentionPoll is how often the bench looks whether the day is gone: the drop's time is
	// known to within it.
	retentionPoll = 2 * time.Millisecond
)

// measureRetention measures the logs service's own upkeep dropping a day of log entries
// (services/logs/internal/usecase/dayparts.go), and GET .../logs meanwhile against without.
//
// A drop takes tens of milliseconds, so one drop's reads hold few that overlap it and their
// p99 is nearly their slowest: each round drops retentionDrops days one after the other and
// pools their reads, against as many reads without a drop.
func measureRetention(b *testing.B, s *harness.Stack, w *scaleWorld) []scaleFigure {
	b.Helper()
	ctx := context.Background()
	st := cp(w)
	if len(st.oldDays) < retentionDrops {
		b.Fatalf("retention: %d seeded days past retention left, want %d (seedOldDays makes %d per round)",
			len(st.oldDays), retentionDrops, retentionDrops)
	}
	app := w.apps[st.retentionApp]
	token := w.accounts[app.Account].Token
	path := logsPagePath(app.Slug)

	// Without: the same readers, no drop.
	quiet := startLogReaders(ctx, st.api, token, path, retentionReaders)
	from := time.Now()
	for quiet.since(from) < retentionDrops*retentionSamples+apiWarmup {
		time.Sleep(10 * time.Millisecond)
	}
	without, err := quiet.finish(from)
	if err != nil {
		b.Fatalf("retention: logs without a drop: %v", err)
	}
	without = without[apiWarmup:]

	var during []time.Duration
	drops := make([]float64, 0, retentionDrops)
	for range retentionDrops {
		day := st.oldDays[0]
		st.oldDays = st.oldDays[1:]
		dropped, reads := dropOneDay(ctx, b, st, day, token, path)
		drops = append(drops, dropped.Seconds())
		during = append(during, reads...)
	}
	sort.Float64s(drops)
	return []scaleFigure{
		{What: "retention drop a day", Value: drops[len(drops)/2], Unit: "s"},
		latencyFigure("logs during retention", during),
		latencyFigure("logs without retention", without),
	}
}

// dropOneDay lets the upkeep drop one seeded day while readers read the logs page, and
// returns the drop's time and the reads from its start on.
//
// The day is attached to log_entries while the bench holds the service's partition DDL
// lock, so the upkeep, on its next tick, finds the day and waits for the lock inside its
// drop's transaction. The bench then starts the readers, releases the lock, and times until
// the day's table is gone: the drop, from the moment the upkeep may take it to its commit,
// with the readers in its way.
func dropOneDay(ctx context.Context, b *testing.B, st *cpState, day time.Time, token, path string) (time.Duration, []time.Duration) {
	b.Helper()
	name := logPartitionName(day)
	lock, err := st.db.Acquire(ctx)
	if err != nil {
		b.Fatal(err)
	}
	defer lock.Release()
	if _, err := lock.Exec(ctx, `SELECT pg_advisory_lock(hashtext($1))`, logPartitionLock); err != nil {
		b.Fatalf("retention: the partition lock: %v", err)
	}
	attach := fmt.Sprintf(`ALTER TABLE logs.log_entries ATTACH PARTITION logs.%s FOR VALUES FROM ('%s') TO ('%s')`,
		pgx.Identifier{name}.Sanitize(), day.Format(time.RFC3339), day.Add(24*time.Hour).Format(time.RFC3339))
	if _, err := lock.Exec(ctx, attach); err != nil {
		b.Fatalf("retention: attach %s: %v", name, err)
	}
	var rows int64
	if err := st.db.QueryRow(ctx, `SELECT count(*) FROM logs.`+pgx.Identifier{name}.Sanitize()).Scan(&rows); err != nil {
		b.Fatal(err)
	}
	if err := awaitUpkeepWaiting(ctx, st.db); err != nil {
		b.Fatalf("retention: %v", err)
	}

	readers := startLogReaders(ctx, st.api, token, path, retentionReaders)
	time.Sleep(50 * time.Millisecond) // reads in flight when the drop starts
	released := time.Now()
	if _, err := lock.Exec(ctx, `SELECT pg_advisory_unlock(hashtext($1))`, logPartitionLock); err != nil {
		b.Fatalf("retention: release the partition lock: %v", err)
	}
	// Polled, not spun: asked back to back, the bench and its Postgres backend took a core
	// of the two from the readers for the whole drop.
	for deadline := time.Now().Add(retentionUpkeepWait); ; time.Sleep(retentionPoll) {
		var gone bool
		if err := st.db.QueryRow(ctx, `SELECT to_regclass($1) IS NULL`, "logs."+name).Scan(&gone); err != nil {
			b.Fatal(err)
		}
		if gone {
			break
		}
		if time.Now().After(deadline) {
			b.Fatalf("retention: the upkeep did not drop %s within %s", name, retentionUpkeepWait)
		}
	}
	dropped := time.Since(released)
	for readers.since(released) < retentionSamples {
		time.Sleep(10 * time.Millisecond)
	}
	during, err := readers.finish(released)
	if err != nil {
		b.Fatalf("retention: logs during the drop: %v", err)
	}
	b.Logf("retention: the upkeep dropped %s (%d entries) in %s", name, rows, dropped.Round(time.Microsecond))
	return dropped, during
}

// awaitUpkeepWaiting waits until a session waits for the logs service's partition DDL lock
// (the upkeep's drop, pg_advisory_xact_lock(hashtext(logPartitionLock))).
func awaitUpkeepWaiting(ctx context.Context, db *pgxpool.Pool) error {
	deadline := time.Now().Add(retentionUpkeepWait)
	for {
		var waiting bool
		err := db.QueryRow(ctx, `
			WITH k AS (SELECT hashtext($1)::bigint AS key)
			SELECT EXISTS (SELECT 1 FROM pg_locks l, k WHERE l.locktype = 'advisory' AND NOT l.granted
				AND l.database = (SELECT oid FROM pg_database WHERE datname = current_database())
				AND l.classid::bigint = ((k.key >> 32) & 4294967295) AND l.objid::bigint = (k.key & 4294967295))`,
			logPartitionLock).Scan(&waiting)
		if err != nil {
			return fmt.Errorf("the upkeep's lock wait: %w", err)
		}
		if waiting {
			return nil
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("no upkeep waited for the partition lock within %s (LOGS_MAINTENANCE_INTERVAL?)", retentionUpkeepWait)
		}
		time.Sleep(5 * time.Millisecond)
	}
}
