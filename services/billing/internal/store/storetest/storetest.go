// Package storetest gives tests a migrated billing schema in a database of their own, on the
// real Postgres server testinfra names.
package storetest

import (
	"testing"

	"github.com/jackc/pgx/v5/pgxpool"

	"tori.dev/pkg/bus"
	"tori.dev/pkg/testinfra"
	"tori.dev/services/billing/internal/store"
)

// NewDatabase returns the admin URL of a fresh database holding billing's migrated schema.
func NewDatabase(t testing.TB) string {
	t.Helper()
	return testinfra.ServiceDatabase(t, store.Service(""), bus.Migrations, store.Migrations)
}

// NewPool returns a pool connected as billing's role to a fresh database of the test's own.
func NewPool(t testing.TB) *pgxpool.Pool {
	t.Helper()
	return OpenPool(t, NewDatabase(t))
}

// OpenPool connects as billing's role to a database NewDatabase made.
func OpenPool(t testing.TB, adminURL string) *pgxpool.Pool {
	t.Helper()
	return testinfra.OpenServicePool(t, adminURL, store.Service(""))
}
