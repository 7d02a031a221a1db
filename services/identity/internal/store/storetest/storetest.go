// Package storetest gives tests a store on a database of their own: a clone of a template
// migrated once per change of the migrations (pkg/testinfra).
package storetest

import (
	"testing"

	"github.com/jackc/pgx/v5/pgxpool"

	"tori.dev/pkg/bus"
	"tori.dev/pkg/testinfra"
	"tori.dev/services/identity/internal/store"
)

// NewDatabase returns the admin URL of a fresh, migrated identity database.
func NewDatabase(t testing.TB) string {
	t.Helper()
	return testinfra.ServiceDatabase(t, store.Service(""), bus.Migrations, store.Migrations)
}

// New returns a store on a fresh database, connected as the identity role, and its pool.
func New(t testing.TB) (*store.Store, *pgxpool.Pool) {
	t.Helper()
	pool := testinfra.OpenServicePool(t, NewDatabase(t), store.Service(""))
	return store.New(pool), pool
}
