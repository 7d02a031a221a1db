package pgstore_test

import (
	"context"
	"errors"
	"sync/atomic"
	"testing"
	"testing/fstest"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"

	"tori.dev/pkg/pgstore"
	"tori.dev/pkg/testinfra"
)

var pendingSvc = pgstore.Service{Schema: "pending", Role: "tori_test_pending"}

// pendingPool is a database with a table of changes and one of entries, whose `n` is unique
// only at commit, so a test can make a commit fail after everything in it succeeded.
func pendingPool(t *testing.T) *pgxpool.Pool {
	t.Helper()
	ctx := context.Background()
	set := pgstore.MigrationSet{Name: "pending", FS: fstest.MapFS{"001.sql": {Data: []byte(`
		CREATE TABLE changes (id int PRIMARY KEY);
		CREATE TABLE entries (n int, CONSTRAINT entries_n UNIQUE (n) DEFERRABLE INITIALLY DEFERRED);`)}}}
	admin := testinfra.NewDatabase(t, "pgstore_empty", func(context.Context, string) error { return nil })
	pool, err := pgstore.Setup(ctx, admin, pendingSvc, pgstore.WithMigrations(set), pgstore.WithMaxConns(2))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(pool.Close)
	return pool
}

// entry is a pending write that records entry n and counts its runs.
func entry(n int, runs *atomic.Int64) func(context.Context, pgx.Tx) error {
	return func(ctx context.Context, tx pgx.Tx) error {
		runs.Add(1)
		_, err := tx.Exec(ctx, `INSERT INTO entries VALUES ($1)`, n)
		return err
	}
}

func change(ctx context.Context, id int) func(pgx.Tx) error {
	return func(tx pgx.Tx) error {
		_, err := tx.Exec(ctx, `INSERT INTO changes VALUES ($1)`, id)
		return err
	}
}

func count(t *testing.T, pool *pgxpool.Pool, q string) int {
	t.Helper()
	var n int
	if err := pool.QueryRow(context.Background(), q).Scan(&n); err != nil {
		t.Fatal(err)
	}
	return n
}

// The write commits with the first transaction, once: a second transaction of the same
// request does not write it again.
func TestPendingCommitsWithTheFirstTransactionOnly(t *testing.T) {
	t.Parallel()
	pool := pendingPool(t)
	var runs atomic.Int64
	ctx, p := pgstore.WithPending(context.Background(), entry(1, &runs))
	if p.Done() {
		t.Fatal("done before any transaction")
	}
	if err := pgstore.InTx(ctx, pool, change(ctx, 1)); err != nil {
		t.Fatal(err)
	}
	if !p.Done() || runs.Load() != 1 || count(t, pool, `SELECT count(*) FROM entries`) != 1 {
		t.Fatalf("after the first: done %v, %d runs, want done and 1", p.Done(), runs.Load())
	}
	if err := pgstore.InTx(ctx, pool, change(ctx, 2)); err != nil {
		t.Fatal(err)
	}
	if runs.Load() != 1 || count(t, pool, `SELECT count(*) FROM entries`) != 1 || count(t, pool, `SELECT count(*) FROM changes`) != 2 {
		t.Fatalf("the second transaction wrote the entry again (%d runs)", runs.Load())
	}
	// A context without a pending write is InTx as it always was.
	if err := pgstore.InTx(context.Background(), pool, change(ctx, 3)); err != nil || runs.Load() != 1 {
		t.Fatalf("%v, %d runs", err, runs.Load())
	}
}

// A first transaction that rolls back takes the write with it, uncommitted; the next one
// writes it. A write that fails rolls its transaction's change back: no change commits
// without its entry.
func TestPendingGoesWithTheNextTransactionAfterARollback(t *testing.T) {
	t.Parallel()
	pool := pendingPool(t)
	var runs atomic.Int64
	ctx, p := pgstore.WithPending(context.Background(), entry(1, &runs))
	boom := errors.New("boom")
	err := pgstore.InTx(ctx, pool, func(tx pgx.Tx) error {
		if err := change(ctx, 1)(tx); err != nil {
			return err
		}
		return boom
	})
	if !errors.Is(err, boom) || p.Done() || runs.Load() != 0 {
		t.Fatalf("rolled back: %v, done %v, %d runs (the write runs only once the change succeeded)", err, p.Done(), runs.Load())
	}
	if err := pgstore.InTx(ctx, pool, change(ctx, 2)); err != nil {
		t.Fatal(err)
	}
	if !p.Done() || count(t, pool, `SELECT count(*) FROM entries`) != 1 || count(t, pool, `SELECT count(*) FROM changes`) != 1 {
		t.Fatal("the next transaction did not take the write")
	}

	// The write itself fails: the change goes too, and the write stays pending.
	var failing atomic.Int64
	fail := errors.New("no entry")
	ctx2, p2 := pgstore.WithPending(context.Background(), func(ctx context.Context, tx pgx.Tx) error {
		failing.Add(1)
		return fail
	})
	if err := pgstore.InTx(ctx2, pool, change(ctx2, 10)); !errors.Is(err, fail) {
		t.Fatalf("a failed write: %v", err)
	}
	if p2.Done() || count(t, pool, `SELECT count(*) FROM changes WHERE id = 10`) != 0 {
		t.Fatal("a change committed without its entry")
	}
}

// A commit that fails after the write ran (here a deferred constraint) leaves the write
// undone, for the next transaction.
func TestPendingSurvivesAFailedCommit(t *testing.T) {
	t.Parallel()
	pool := pendingPool(t)
	ctx := context.Background()
	if _, err := pool.Exec(ctx, `INSERT INTO entries VALUES (7)`); err != nil {
		t.Fatal(err)
	}
	var runs atomic.Int64
	n := 7 // collides at commit
	pctx, p := pgstore.WithPending(ctx, func(ctx context.Context, tx pgx.Tx) error {
		runs.Add(1)
		_, err := tx.Exec(ctx, `INSERT INTO entries VALUES ($1)`, n)
		return err
	})
	if err := pgstore.InTx(pctx, pool, change(pctx, 1)); err == nil {
		t.Fatal("the commit should have failed")
	}
	if p.Done() || runs.Load() != 1 {
		t.Fatalf("after a failed commit: done %v, %d runs", p.Done(), runs.Load())
	}
	n = 8
	if err := pgstore.InTx(pctx, pool, change(pctx, 2)); err != nil {
		t.Fatal(err)
	}
	if !p.Done() || runs.Load() != 2 || count(t, pool, `SELECT count(*) FROM entries WHERE n = 8`) != 1 {
		t.Fatal("the next transaction did not take the write")
	}
}

// A store that begins and commits its own transaction calls Apply before committing and
// reports the outcome; while its transaction holds the write, another does not take it.
func TestApplyInAHandMadeTransaction(t *testing.T) {
	t.Parallel()
	pool := pendingPool(t)
	var runs atomic.Int64
	ctx, p := pgstore.WithPending(context.Background(), entry(1, &runs))

	// Without a pending write Apply does nothing.
	if finish, err := pgstore.Apply(context.Background(), nil); err != nil || finish == nil {
		t.Fatalf("no pending: %v", err)
	}

	tx, err := pool.Begin(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if err := change(ctx, 1)(tx); err != nil {
		t.Fatal(err)
	}
	finish, err := pgstore.Apply(ctx, tx)
	if err != nil || runs.Load() != 1 {
		t.Fatalf("apply: %v, %d runs", err, runs.Load())
	}
	// Held by the open transaction: another one goes without it.
	if err := pgstore.InTx(ctx, pool, change(ctx, 2)); err != nil || runs.Load() != 1 {
		t.Fatalf("taken twice: %v, %d runs", err, runs.Load())
	}
	if err := tx.Rollback(ctx); err != nil {
		t.Fatal(err)
	}
	finish(false)
	if p.Done() || count(t, pool, `SELECT count(*) FROM entries`) != 0 {
		t.Fatal("a rolled-back hand-made transaction counted as done")
	}

	tx, err = pool.Begin(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if err := change(ctx, 3)(tx); err != nil {
		t.Fatal(err)
	}
	if finish, err = pgstore.Apply(ctx, tx); err != nil {
		t.Fatal(err)
	}
	if err := tx.Commit(ctx); err != nil {
		t.Fatal(err)
	}
	finish(true)
	if !p.Done() || runs.Load() != 2 || count(t, pool, `SELECT count(*) FROM entries`) != 1 {
		t.Fatalf("committed: done %v, %d runs", p.Done(), runs.Load())
	}
	// Done: neither Apply nor InTx writes it again.
	if err := pgstore.InTx(ctx, pool, change(ctx, 4)); err != nil || runs.Load() != 2 {
		t.Fatalf("after done: %v, %d runs", err, runs.Load())
	}
}
