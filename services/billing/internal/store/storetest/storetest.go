// Package storetest gives tests a migrated billing schema in a database of their own, on the
// real Postgres server testinfra names.
package storetest

import (
	"context"
	"testing"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"

	"tori.dev/pkg/pgstore"
	"tori.dev/pkg/testinfra"
	"tori.dev/services/billing/internal/store"
)

// NewDatabase returns the admin URL of a fresh database, cloned from a template that holds
// billing's migrated schema. The template is keyed by the migrations' fingerprint, so a
// changed migration builds a new one.
func NewDatabase(t testing.TB) string {
	t.Helper()
	fp, err := store.Fingerprint()
	if err != nil {
		t.Fatal(err)
	}
	return testinfra.NewDatabase(t, "billing_"+fp, func(ctx context.Context, adminURL string) error {
		pool, err := store.Setup(ctx, adminURL, "")
		if err != nil {
			return err
		}
		pool.Close()
		return nil
	})
}

// NewPool returns a pool connected as billing's role to a fresh database of the test's own,
// closed when the test ends.
func NewPool(t testing.TB) *pgxpool.Pool {
	t.Helper()
	return OpenPool(t, NewDatabase(t))
}

// OpenPool connects as billing's role to a database NewDatabase made; the pool closes when
// the test ends.
//
// It connects directly instead of running store.Setup again: the template is migrated
// already, and Setup's role bootstrap (ALTER ROLE, cluster-wide) is serialized by an advisory
// lock that Postgres scopes to one database, so parallel tests on separate clones would race
// on the shared role ("tuple concurrently updated").
func OpenPool(t testing.TB, adminURL string) *pgxpool.Pool {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	url, err := pgstore.ServiceURL(adminURL, store.Service(""))
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
