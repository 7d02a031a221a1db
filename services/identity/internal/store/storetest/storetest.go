// Package storetest gives tests a store on a database of their own: a clone of a template
// migrated once per change of the migrations (pkg/testinfra).
package storetest

import (
	"context"
	"testing"

	"github.com/jackc/pgx/v5/pgxpool"

	"tori.dev/pkg/bus"
	"tori.dev/pkg/pgstore"
	"tori.dev/pkg/testinfra"
	"tori.dev/services/identity/internal/store"
)

// NewDatabase returns the admin URL of a fresh, migrated identity database.
func NewDatabase(t testing.TB) string {
	t.Helper()
	fp, err := pgstore.Fingerprint(bus.Migrations, store.Migrations)
	if err != nil {
		t.Fatal(err)
	}
	return testinfra.NewDatabase(t, "identity_"+fp, func(ctx context.Context, adminURL string) error {
		pool, err := pgstore.Setup(ctx, adminURL, store.Service(""), bus.Migrations, store.Migrations)
		if err != nil {
			return err
		}
		pool.Close()
		return nil
	})
}

// New returns a store on a fresh database, connected as the identity role, and its pool.
// The clone already holds the schema and the role exists cluster-wide, so it only connects:
// running pgstore.Setup per test would ALTER the shared role from many databases at once, and
// Postgres refuses concurrent updates of one role ("tuple concurrently updated").
func New(t testing.TB) (*store.Store, *pgxpool.Pool) {
	t.Helper()
	url, err := pgstore.ServiceURL(NewDatabase(t), store.Service(""))
	if err != nil {
		t.Fatal(err)
	}
	pool, err := pgstore.Open(context.Background(), url)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(pool.Close)
	return store.New(pool), pool
}
