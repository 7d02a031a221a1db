// Package logstest gives the logs service's tests a migrated database of their own and a few
// helpers to fill it. Test code only.
package logstest

import (
	"context"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"

	"tori.dev/pkg/bus"
	"tori.dev/pkg/pgstore"
	"tori.dev/pkg/testinfra"
	"tori.dev/services/logs/internal/logs"
	"tori.dev/services/logs/internal/store"
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
	pool := testinfra.OpenServicePool(t, admin, store.Service(""))
	ctx := context.Background()
	st, err := store.New(ctx, pool)
	if err != nil {
		t.Fatal(err)
	}
	// Registered after the pool's own close, so it runs first.
	t.Cleanup(st.Close)
	return &DB{AdminURL: admin, Pool: pool, Store: st}
}

// Seed stores entries as ingestion would, creating their days' partitions.
func (db *DB) Seed(t testing.TB, entries []logs.Entry) {
	t.Helper()
	ctx := context.Background()
	seen := map[time.Time]bool{}
	var days []time.Time
	for _, e := range entries {
		if d := store.Day(e.Timestamp); !seen[d] {
			seen[d] = true
			days = append(days, d)
		}
	}
	if err := db.Store.EnsurePartitions(ctx, days); err != nil {
		t.Fatal(err)
	}
	err := pgstore.InTx(ctx, db.Pool, func(tx pgx.Tx) error {
		_, err := db.Store.CopyEntries(ctx, tx, entries)
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
}

// SaveApp records a live app.
func (db *DB) SaveApp(t testing.TB, a store.App) {
	t.Helper()
	if err := db.Store.SaveApp(context.Background(), db.Pool, a, time.Now()); err != nil {
		t.Fatal(err)
	}
}

// SavePlan records an account's plan retention.
func (db *DB) SavePlan(t testing.TB, accountID string, days int) {
	t.Helper()
	err := db.Store.SavePlan(context.Background(), db.Pool, store.Plan{AccountID: accountID, Name: "test", RetentionDays: days, Version: 1})
	if err != nil {
		t.Fatal(err)
	}
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
