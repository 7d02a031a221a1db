package busapi_test

import (
	"context"
	"io"
	"log/slog"
	"testing"

	"github.com/jackc/pgx/v5/pgxpool"

	"tori.dev/pkg/bus"
	"tori.dev/pkg/testinfra"
	"tori.dev/services/billing/internal/store"
	"tori.dev/services/billing/internal/usecase"
)

var ctx = context.Background()

// quiet discards; these tests look at effects, not log lines.
var quiet = slog.New(slog.NewTextHandler(io.Discard, nil))

func newDatabase(t *testing.T) string {
	t.Helper()
	return testinfra.ServiceDatabase(t, store.Service(""), bus.Migrations, store.Migrations)
}

func openPool(t *testing.T, adminURL string) *pgxpool.Pool {
	t.Helper()
	return testinfra.OpenServicePool(t, adminURL, store.Service(""))
}

func newPool(t *testing.T) *pgxpool.Pool {
	t.Helper()
	return openPool(t, newDatabase(t))
}

// newService is the use cases over a store of their own, writing to its real outbox.
func newService(t *testing.T) (*usecase.Service, *store.Store, *pgxpool.Pool) {
	t.Helper()
	pool := newPool(t)
	st := store.New(pool)
	return usecase.New(st), st, pool
}
