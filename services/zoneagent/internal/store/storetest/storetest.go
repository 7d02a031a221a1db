// Package storetest gives tests a migrated zone schema in a database of their own.
package storetest

import (
	"context"
	"testing"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"

	"tori.dev/pkg/pgstore"
	"tori.dev/pkg/testinfra"
	"tori.dev/services/zoneagent/internal/store"
)

// Zone is the zone id tests use.
const Zone = "test"

// NewPool returns a pool as the zone's role on a fresh clone of a migrated template.
func NewPool(t testing.TB) *pgxpool.Pool {
	t.Helper()
	fp, err := store.Fingerprint()
	if err != nil {
		t.Fatal(err)
	}
	admin := testinfra.NewDatabase(t, "zoneagent_"+fp, func(ctx context.Context, adminURL string) error {
		pool, err := store.Setup(ctx, adminURL, Zone, "")
		if err != nil {
			return err
		}
		pool.Close()
		return nil
	})
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	url, err := pgstore.ServiceURL(admin, store.Service(Zone, ""))
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
