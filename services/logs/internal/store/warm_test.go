package store_test

import (
	"context"
	"testing"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"

	"tori.dev/services/logs/internal/logs"
	"tori.dev/services/logs/internal/store"
)

// After the upkeep drops a day, and after a new day's partition is made, every idle
// connection of the pool has already run the page read again, so the re-plan that the DDL
// forces is not paid by the next request on each connection; a partition found already made
// changes nothing and warms nothing. Counted by the server: the plans each session's prepared
// page statement has been executed with.
func TestPartitionChangesWarmIdleConnections(t *testing.T) {
	db, appID, today, old := oldAndToday(t)
	ctx := context.Background()

	const conns = 3
	held := make([]*pgxpool.Conn, 0, conns)
	for range conns {
		c, err := db.Pool.Acquire(ctx)
		if err != nil {
			t.Fatal(err)
		}
		held = append(held, c)
	}
	for _, c := range held {
		rows, err := c.Query(ctx, store.PageFirstSQL, appID, today.Add(-time.Hour), today.Add(time.Hour), 500)
		if err != nil {
			t.Fatal(err)
		}
		rows.Close()
		c.Release()
	}

	before := pageExecutions(t, db.Pool)
	if len(before) < conns {
		t.Fatalf("the page statement is prepared on %d connections, want %d", len(before), conns)
	}
	if err := db.Store.DropPartition(ctx, old); err != nil {
		t.Fatal(err)
	}
	afterDrop := pageExecutions(t, db.Pool)
	for pid, n := range before {
		if afterDrop[pid] != n+1 {
			t.Errorf("after the drop, connection %d ran the page read %d times, want %d", pid, afterDrop[pid], n+1)
		}
	}

	tomorrow := logs.Day(today).AddDate(0, 0, 1)
	if err := db.Store.EnsurePartitions(ctx, []time.Time{tomorrow}); err != nil {
		t.Fatal(err)
	}
	afterCreate := pageExecutions(t, db.Pool)
	for pid, n := range afterDrop {
		if afterCreate[pid] != n+1 {
			t.Errorf("after a new day's partition, connection %d ran the page read %d times, want %d", pid, afterCreate[pid], n+1)
		}
	}

	// A copy of the service that starts without knowing tomorrow's partition finds it made:
	// nothing changed, so nothing is warmed.
	other, err := store.New(ctx, db.Pool)
	if err != nil {
		t.Fatal(err)
	}
	defer other.Close()
	if err := other.EnsurePartitions(ctx, []time.Time{tomorrow}); err != nil {
		t.Fatal(err)
	}
	afterFound := pageExecutions(t, db.Pool)
	for pid, n := range afterCreate {
		if afterFound[pid] != n {
			t.Errorf("after finding a day's partition made, connection %d ran the page read %d times, want %d", pid, afterFound[pid], n)
		}
	}
}

// pageExecutions is, for each idle connection of pool (by backend pid), how many times its
// prepared first-page statement has run.
func pageExecutions(t *testing.T, pool *pgxpool.Pool) map[uint32]int64 {
	t.Helper()
	ctx := context.Background()
	idle := pool.AcquireAllIdle(ctx)
	defer func() {
		for _, c := range idle {
			c.Release()
		}
	}()
	runs := map[uint32]int64{}
	for _, c := range idle {
		var n int64
		err := c.QueryRow(ctx, `SELECT COALESCE(sum(generic_plans + custom_plans), 0)::bigint
			FROM pg_prepared_statements WHERE statement = $1`, store.PageFirstSQL).Scan(&n)
		if err != nil {
			t.Fatal(err)
		}
		if n > 0 {
			runs[c.Conn().PgConn().PID()] = n
		}
	}
	return runs
}
