// Package storetest gives tests a migrated deploys schema in a database of their own, on the
// real Postgres server testinfra names.
package storetest

import (
	"context"
	"testing"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"

	"tori.dev/pkg/pgstore"
	"tori.dev/pkg/testinfra"
	"tori.dev/services/deploys/internal/store"
)

// NewPool returns a pool connected as tori_deploys to a fresh clone of a migrated template,
// closed when the test ends. It connects directly rather than running Setup again: the role
// bootstrap is cluster-wide and parallel clones would race on it.
func NewPool(t testing.TB) *pgxpool.Pool {
	t.Helper()
	fp, err := store.Fingerprint()
	if err != nil {
		t.Fatal(err)
	}
	admin := testinfra.NewDatabase(t, "deploys_"+fp, func(ctx context.Context, adminURL string) error {
		pool, err := store.Setup(ctx, adminURL, "")
		if err != nil {
			return err
		}
		pool.Close()
		return nil
	})
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	url, err := pgstore.ServiceURL(admin, store.Service(""))
	if err != nil {
		t.Fatal(err)
	}
	pool, err := pgstore.Open(ctx, url)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(pool.Close)
	return pool
}
