// Package storetest gives tests a migrated zone schema in a database of their own.
package storetest

import (
	"testing"

	"github.com/jackc/pgx/v5/pgxpool"

	"tori.dev/pkg/bus"
	"tori.dev/pkg/testinfra"
	"tori.dev/services/zoneagent/internal/store"
)

// Zone is the zone id tests use.
const Zone = "test"

// NewPool returns a pool as the zone's role on a fresh clone of a migrated template.
func NewPool(t testing.TB) *pgxpool.Pool {
	t.Helper()
	return testinfra.ServicePool(t, store.Service(Zone, ""), bus.Migrations, store.Migrations)
}
