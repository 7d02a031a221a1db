// Package logstest gives the logs service's tests a migrated database of their own and a few
// helpers to fill it. Test code only; the generic parts come from pkg/testinfra.
package logstest

import (
	"context"
	"testing"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"

	"tori.dev/pkg/bus"
	"tori.dev/pkg/pgstore"
	"tori.dev/pkg/testinfra"
	"tori.dev/services/logs/internal/logs"
	"tori.dev/services/logs/internal/store"
	"tori.dev/services/logs/internal/usecase"
)

// DB is one test's database.
type DB struct {
	AdminURL string // superuser URL of the test's own database
	Pool     *pgxpool.Pool
	Store    *store.Store
}

// NewDB clones a migrated template (built once per migration fingerprint) into a database
// of the test's own and connects as the logs role.
func NewDB(t testing.TB) *DB {
	t.Helper()
	admin := testinfra.ServiceDatabase(t, store.Service(""), bus.Migrations, store.Migrations)
	own, err := pgstore.ServiceURL(admin, store.Service(""))
	if err != nil {
		t.Fatal(err)
	}
	return OpenDB(t, admin, own)
}

// OpenDB connects to a running logs service's database as the service's own role (ownURL, its
// LOGS_DATABASE_URL); adminURL is the same database as an admin, for what a test sets up.
func OpenDB(t testing.TB, adminURL, ownURL string) *DB {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	pool, err := pgstore.Open(ctx, ownURL, store.PoolSettings...)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(pool.Close)
	st, err := store.New(context.Background(), pool)
	if err != nil {
		t.Fatal(err)
	}
	// Registered after the pool's own close, so it runs first.
	t.Cleanup(st.Close)
	return &DB{AdminURL: adminURL, Pool: pool, Store: st}
}

// Seed stores entries as ingestion would, creating their days' partitions.
func (db *DB) Seed(t testing.TB, entries []logs.Entry) {
	t.Helper()
	ctx := context.Background()
	seen := map[time.Time]bool{}
	var days []time.Time
	for _, e := range entries {
		if d := logs.Day(e.Timestamp); !seen[d] {
			seen[d] = true
			days = append(days, d)
		}
	}
	if err := db.Store.EnsurePartitions(ctx, days); err != nil {
		t.Fatal(err)
	}
	db.InTx(t, func(tx usecase.Tx) error {
		_, err := tx.CopyEntries(ctx, entries)
		return err
	})
}

// InTx runs fn in one committed transaction of the store.
func (db *DB) InTx(t testing.TB, fn func(tx usecase.Tx) error) {
	t.Helper()
	if err := db.Store.InTx(context.Background(), fn); err != nil {
		t.Fatal(err)
	}
}

// SaveApp records a live app.
func (db *DB) SaveApp(t testing.TB, a logs.App) {
	t.Helper()
	db.InTx(t, func(tx usecase.Tx) error { return tx.SaveApp(context.Background(), a, time.Now()) })
}

// MarkAppDeleted records the app deleted at at, as apps.app.deleted does.
func (db *DB) MarkAppDeleted(t testing.TB, a logs.App, at time.Time) {
	t.Helper()
	db.InTx(t, func(tx usecase.Tx) error { return tx.MarkAppDeleted(context.Background(), a, at) })
}

// SavePlan records an account's plan retention at version 1.
func (db *DB) SavePlan(t testing.TB, accountID string, days int) {
	t.Helper()
	db.SavePlanVersion(t, logs.Plan{AccountID: accountID, Name: "test", RetentionDays: days, Version: 1})
}

// SavePlanVersion records p as a plan_changed event would.
func (db *DB) SavePlanVersion(t testing.TB, p logs.Plan) {
	t.Helper()
	db.InTx(t, func(tx usecase.Tx) error { return tx.SavePlan(context.Background(), p) })
}

// Count is how many entries appID has.
func (db *DB) Count(t testing.TB, appID string) int {
	t.Helper()
	var n int
	if err := db.Pool.QueryRow(context.Background(), `SELECT count(*) FROM log_entries WHERE app_id = $1`, appID).Scan(&n); err != nil {
		t.Fatal(err)
	}
	return n
}
