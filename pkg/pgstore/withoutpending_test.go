package pgstore_test

import (
	"context"
	"testing"

	"github.com/jackc/pgx/v5"

	"tori.dev/pkg/pgstore"
	"tori.dev/pkg/testinfra"
)

// A transaction under WithoutPending leaves the request's pending write for the change's own
// transaction, which then carries it.
func TestWithoutPendingLeavesTheWriteForTheChange(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	admin := testinfra.NewDatabase(t, "pgstore_empty", func(context.Context, string) error { return nil })
	pool, err := pgstore.Setup(ctx, admin, alpha, pgstore.WithMigrations(migrations("alpha_things")))
	if err != nil {
		t.Fatal(err)
	}
	defer pool.Close()
	written := 0
	ctx, pending := pgstore.WithPending(ctx, func(ctx context.Context, tx pgx.Tx) error {
		written++
		_, err := tx.Exec(ctx, `INSERT INTO alpha_things VALUES (100, 'entry')`)
		return err
	})
	aside := func(tx pgx.Tx) error {
		_, err := tx.Exec(ctx, `INSERT INTO alpha_things VALUES (2, 'copy')`)
		return err
	}
	if err := pgstore.InTx(pgstore.WithoutPending(ctx), pool, aside); err != nil {
		t.Fatal(err)
	}
	if written != 0 || pending.Done() {
		t.Fatalf("a transaction aside took the pending write (written %d, done %v)", written, pending.Done())
	}
	change := func(tx pgx.Tx) error {
		_, err := tx.Exec(ctx, `INSERT INTO alpha_things VALUES (3, 'change')`)
		return err
	}
	if err := pgstore.InTx(ctx, pool, change); err != nil {
		t.Fatal(err)
	}
	var n int
	if err := pool.QueryRow(ctx, `SELECT count(*) FROM alpha_things WHERE id = 100`).Scan(&n); err != nil || n != 1 || written != 1 || !pending.Done() {
		t.Fatalf("the change's transaction did not carry the write: rows %d, written %d, done %v, %v", n, written, pending.Done(), err)
	}
}
