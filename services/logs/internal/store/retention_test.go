package store_test

import (
	"context"
	"errors"
	"fmt"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"

	"tori.dev/services/logs/internal/logs"
	"tori.dev/services/logs/internal/logstest"
	"tori.dev/services/logs/internal/usecase"
)

// Dropping a day past retention never stops the service's reads and writes: while the drop
// waits for a reader that started before it (a long read, a slow client's transaction), a
// page read and an ingest of today's lines go through at once, and the drop finishes once
// that reader is done. A DROP TABLE of the partition would take the whole table's ACCESS
// EXCLUSIVE lock and queue every read and write behind the slow reader.
func TestRetentionDropDoesNotBlockReadsOrIngest(t *testing.T) {
	db, appID, today, old := oldAndToday(t)
	ctx := context.Background()

	// The slow reader: a transaction that read today's lines and is not done yet.
	slow, err := db.Pool.Begin(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer slow.Rollback(ctx)
	var n int
	if err := slow.QueryRow(ctx, `SELECT count(*) FROM log_entries WHERE app_id = $1 AND ts >= $2`, appID, logs.Day(today)).Scan(&n); err != nil {
		t.Fatal(err)
	}

	dropped := make(chan error, 1)
	go func() { dropped <- db.Store.DropPartition(ctx, old) }()
	time.Sleep(300 * time.Millisecond) // the drop is waiting for the slow reader by now

	const bound = time.Second
	start := time.Now()
	readCtx, cancel := context.WithTimeout(ctx, 5*time.Second)
	defer cancel()
	page, err := db.Store.Entries(readCtx, appID, today.Add(-time.Minute), today.Add(time.Minute), nil, logs.ProcessFilter{}, 500)
	if err != nil {
		t.Fatal(err)
	}
	if len(page) != 1 {
		t.Fatalf("read %d of today's lines, want 1", len(page))
	}
	if took := time.Since(start); took > bound {
		t.Errorf("a page read during the drop took %v, want under %v", took, bound)
	}
	start = time.Now()
	err = db.Store.InTx(readCtx, func(tx usecase.Tx) error {
		_, err := tx.CopyEntries(readCtx, []logs.Entry{{AppID: appID, Stream: logs.StreamStdout, Timestamp: today.Add(time.Second), Message: "more"}})
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	if took := time.Since(start); took > bound {
		t.Errorf("an ingest during the drop took %v, want under %v", took, bound)
	}

	if err := slow.Commit(ctx); err != nil {
		t.Fatal(err)
	}
	select {
	case err := <-dropped:
		if err != nil {
			t.Fatalf("drop: %v", err)
		}
	case <-time.After(15 * time.Second):
		t.Fatal("the drop did not finish after the slow reader was done")
	}
	days, err := db.Store.Partitions(ctx)
	if err != nil {
		t.Fatal(err)
	}
	for _, d := range days {
		if d.Equal(logs.Day(old)) {
			t.Fatalf("the dropped day's partition is still there: %v", days)
		}
	}
	if got := db.Count(t, appID); got != 2 {
		t.Fatalf("%d lines left, want today's 2", got)
	}
}

// A detach whose second step timed out leaves its partition pending, and Postgres then
// refuses to detach any other partition of the table: the next drop finishes it first.
func TestRetentionDropFinishesAnInterruptedDetach(t *testing.T) {
	db := logstest.NewDB(t)
	ctx := context.Background()
	appID := uuid.NewString()
	first := logs.Day(time.Now().UTC()).AddDate(0, 0, -41).Add(time.Hour)
	second := first.AddDate(0, 0, 1)
	db.Seed(t, []logs.Entry{
		{AppID: appID, Stream: logs.StreamStdout, Timestamp: first, Message: "first"},
		{AppID: appID, Stream: logs.StreamStdout, Timestamp: second, Message: "second"},
	})
	admin := pgConn(t, db.AdminURL)
	slow, err := db.Pool.Begin(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := slow.Exec(ctx, `SELECT count(*) FROM log_entries`); err != nil {
		t.Fatal(err)
	}
	if _, err := admin.Exec(ctx, `SET search_path = logs; SET lock_timeout = '200ms'`); err != nil {
		t.Fatal(err)
	}
	name := "log_entries_p" + logs.Day(first).Format("20060102")
	_, err = admin.Exec(ctx, `ALTER TABLE log_entries DETACH PARTITION `+name+` CONCURRENTLY`)
	if pe := (*pgconn.PgError)(nil); !errors.As(err, &pe) || pe.Code != "55P03" { // lock_not_available
		t.Fatalf("the detach did not time out behind the slow reader: %v", err)
	}
	if err := slow.Rollback(ctx); err != nil {
		t.Fatal(err)
	}
	var pending bool
	if err := admin.QueryRow(ctx, `SELECT inhdetachpending FROM pg_inherits WHERE inhrelid = $1::regclass`, name).Scan(&pending); err != nil || !pending {
		t.Fatalf("the interrupted detach is not pending (%v, %v)", pending, err)
	}

	if err := db.Store.DropPartition(ctx, second); err != nil {
		t.Fatal(err)
	}
	if err := db.Store.DropPartition(ctx, first); err != nil {
		t.Fatal(err)
	}
	if got := db.Count(t, appID); got != 0 {
		t.Fatalf("%d lines left of the two dropped days", got)
	}
	var left int
	if err := admin.QueryRow(ctx, `SELECT count(*) FROM pg_class WHERE relname = ANY($1)`,
		[]string{name, "log_entries_p" + logs.Day(second).Format("20060102")}).Scan(&left); err != nil || left != 0 {
		t.Fatalf("%d of the two days' tables left (%v)", left, err)
	}
}

func pgConn(t *testing.T, url string) *pgx.Conn {
	t.Helper()
	c, err := pgx.Connect(context.Background(), url)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close(context.Background()) })
	return c
}

// Making a day's partition ahead of time does not stop reads and writes either: while a slow
// reader holds the table, a page read and an ingest go through, and the new partition, made
// alike and attached, has the table's indexes and takes lines.
func TestPartitionCreationDoesNotBlockReadsOrIngest(t *testing.T) {
	db := logstest.NewDB(t)
	ctx := context.Background()
	appID := uuid.NewString()
	today := time.Now().UTC().Truncate(time.Minute).Add(-10 * time.Minute)
	db.Seed(t, []logs.Entry{{AppID: appID, Stream: logs.StreamStdout, Timestamp: today, Message: "today"}})

	slow, err := db.Pool.Begin(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer slow.Rollback(ctx)
	if _, err := slow.Exec(ctx, `SELECT count(*) FROM log_entries WHERE app_id = $1`, appID); err != nil {
		t.Fatal(err)
	}
	ahead := logs.Day(today).AddDate(0, 0, 3)
	created := make(chan error, 1)
	go func() { created <- db.Store.EnsurePartitions(ctx, []time.Time{ahead}) }()
	time.Sleep(300 * time.Millisecond)

	const bound = time.Second
	readCtx, cancel := context.WithTimeout(ctx, 5*time.Second)
	defer cancel()
	start := time.Now()
	if _, err := db.Store.Entries(readCtx, appID, today.Add(-time.Minute), today.Add(time.Minute), nil, logs.ProcessFilter{}, 500); err != nil {
		t.Fatal(err)
	}
	err = db.Store.InTx(readCtx, func(tx usecase.Tx) error {
		_, err := tx.CopyEntries(readCtx, []logs.Entry{{AppID: appID, Stream: logs.StreamStdout, Timestamp: today.Add(time.Second), Message: "more"}})
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	if took := time.Since(start); took > bound {
		t.Errorf("a read and an ingest while a partition was made took %v, want under %v", took, bound)
	}
	if err := slow.Commit(ctx); err != nil {
		t.Fatal(err)
	}
	if err := <-created; err != nil {
		t.Fatal(err)
	}
	db.Seed(t, []logs.Entry{{AppID: appID, Stream: logs.StreamStdout, Timestamp: ahead.Add(time.Hour), Process: "web.1", Message: "ahead"}})
	if got := db.Count(t, appID); got != 3 {
		t.Fatalf("%d lines, want 3", got)
	}
	var indexes int
	name := "log_entries_p" + ahead.Format("20060102")
	if err := db.Pool.QueryRow(ctx, `SELECT count(*) FROM pg_indexes WHERE tablename = $1`, name).Scan(&indexes); err != nil || indexes != 2 {
		t.Fatalf("the new partition has %d indexes, want the table's 2 (%v)", indexes, err)
	}
	// Made twice (another copy of the service, a retry): nothing happens.
	if err := db.Store.EnsurePartitions(ctx, []time.Time{ahead}); err != nil {
		t.Fatal(err)
	}
}

// A read of today never waits for a lock on an old day: dropping a day past retention takes
// its table's ACCESS EXCLUSIVE lock, and a read planned generically (a prepared statement's
// plan after five runs) locks every day's table whatever its window, so reads queued behind
// the drop. The pool's sessions plan each read for its window (store.PoolSettings).
func TestTodaysReadsDoNotWaitOnAnOldDaysLock(t *testing.T) {
	db, appID, today, old := oldAndToday(t)
	ctx := context.Background()
	read := func(ctx context.Context) error {
		page, err := db.Store.Entries(ctx, appID, today.Add(-time.Minute), today.Add(time.Minute), nil, logs.ProcessFilter{}, 500)
		if err == nil && len(page) != 1 {
			err = fmt.Errorf("read %d of today's lines, want 1", len(page))
		}
		return err
	}
	// Past the five runs after which Postgres would pick a generic plan, on every connection.
	for range 30 {
		if err := read(ctx); err != nil {
			t.Fatal(err)
		}
	}

	admin := pgConn(t, db.AdminURL)
	lock, err := admin.Begin(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer lock.Rollback(ctx)
	oldTable := pgx.Identifier{"logs", "log_entries_p" + logs.Day(old).Format("20060102")}.Sanitize()
	if _, err := lock.Exec(ctx, `LOCK TABLE `+oldTable+` IN ACCESS EXCLUSIVE MODE`); err != nil {
		t.Fatal(err)
	}

	const bound = time.Second
	readCtx, cancel := context.WithTimeout(ctx, 5*time.Second)
	defer cancel()
	for range 5 {
		start := time.Now()
		if err := read(readCtx); err != nil {
			t.Fatalf("today's read while an old day is locked: %v", err)
		}
		if took := time.Since(start); took > bound {
			t.Fatalf("today's read waited %s for the old day's lock", took)
		}
	}
}

// oldAndToday is a database of its own with a line of appID 40 days back, past any
// retention, and one of ten minutes ago.
func oldAndToday(t *testing.T) (db *logstest.DB, appID string, today, old time.Time) {
	t.Helper()
	db = logstest.NewDB(t)
	appID = uuid.NewString()
	today = time.Now().UTC().Truncate(time.Minute).Add(-10 * time.Minute)
	old = logs.Day(today).AddDate(0, 0, -40).Add(time.Hour)
	db.Seed(t, []logs.Entry{
		{AppID: appID, Stream: logs.StreamStdout, Timestamp: old, Message: "old"},
		{AppID: appID, Stream: logs.StreamStdout, Timestamp: today, Message: "today"},
	})
	return db, appID, today, old
}
