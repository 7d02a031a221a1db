package testinfra

import (
	"context"
	"testing"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"

	"tori.dev/pkg/pgstore"
)

// ServiceDatabase gives the test a database of its own holding svc's schema and role with
// sets migrated, cloned from a template keyed by the migrations' fingerprint (a changed
// migration builds a new template). It returns the clone's admin URL.
func ServiceDatabase(t testing.TB, svc pgstore.Service, sets ...pgstore.MigrationSet) string {
	t.Helper()
	fp, err := pgstore.Fingerprint(sets...)
	if err != nil {
		t.Fatalf("testinfra: fingerprint %s: %v", svc.Schema, err)
	}
	return NewDatabase(t, svc.Schema+"_"+fp, func(ctx context.Context, adminURL string) error {
		pool, err := pgstore.Setup(ctx, adminURL, svc, pgstore.WithMigrations(sets...))
		if err != nil {
			return err
		}
		pool.Close()
		return nil
	})
}

// ServicePool is ServiceDatabase connected as svc's own role, as the service itself
// connects; the pool closes when the test ends.
func ServicePool(t testing.TB, svc pgstore.Service, sets ...pgstore.MigrationSet) *pgxpool.Pool {
	t.Helper()
	return OpenServicePool(t, ServiceDatabase(t, svc, sets...), svc)
}

// OpenServicePool connects as svc's role to a database ServiceDatabase made.
func OpenServicePool(t testing.TB, adminURL string, svc pgstore.Service) *pgxpool.Pool {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	url, err := pgstore.ServiceURL(adminURL, svc)
	if err != nil {
		t.Fatal(err)
	}
	pool, err := pgstore.Open(ctx, url)
	if err != nil {
		t.Fatalf("testinfra: connect as %s: %v", svc.Role, err)
	}
	t.Cleanup(pool.Close)
	return pool
}
