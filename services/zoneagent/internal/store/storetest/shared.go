package storetest

import (
	"testing"

	"github.com/jackc/pgx/v5/pgxpool"

	"tori.dev/pkg/bus"
	"tori.dev/pkg/testinfra"
	"tori.dev/services/zoneagent/internal/store"
)

// NewPools returns n pools as the zone's role on one fresh database: n agents of one zone.
func NewPools(t testing.TB, n int) []*pgxpool.Pool {
	t.Helper()
	svc := store.Service(Zone, "")
	admin := testinfra.ServiceDatabase(t, svc, bus.Migrations, store.Migrations)
	pools := make([]*pgxpool.Pool, n)
	for i := range pools {
		pools[i] = testinfra.OpenServicePool(t, admin, svc)
	}
	return pools
}
