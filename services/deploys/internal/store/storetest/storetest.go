// Package storetest gives tests a migrated deploys schema in a database of their own, on the
// real Postgres server testinfra names.
package storetest

import (
	"testing"

	"github.com/jackc/pgx/v5/pgxpool"

	"tori.dev/pkg/bus"
	"tori.dev/pkg/testinfra"
	"tori.dev/services/deploys/internal/store"
)

// NewPool returns a pool connected as tori_deploys to a fresh clone of a migrated template,
// closed when the test ends.
func NewPool(t testing.TB) *pgxpool.Pool {
	t.Helper()
	return testinfra.ServicePool(t, store.Service(""), bus.Migrations, store.Migrations)
}
