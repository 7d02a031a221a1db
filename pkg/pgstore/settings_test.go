package pgstore_test

import (
	"context"
	"testing"

	"tori.dev/pkg/pgstore"
	"tori.dev/pkg/testinfra"
)

// Every connection of a pool opened with a session setting starts with it, the pool's
// later connections as much as its first.
func TestSessionSettingsReachEveryConnection(t *testing.T) {
	ctx := context.Background()
	url := testinfra.NewDatabase(t, "pgstore_settings", func(context.Context, string) error { return nil })
	pool, err := pgstore.Open(ctx, url, pgstore.WithSessionSetting("plan_cache_mode", "force_custom_plan"),
		pgstore.WithMaxConns(3))
	if err != nil {
		t.Fatal(err)
	}
	defer pool.Close()
	for i := range 3 {
		conn, err := pool.Acquire(ctx)
		if err != nil {
			t.Fatal(err)
		}
		defer conn.Release()
		var mode string
		if err := conn.QueryRow(ctx, `SHOW plan_cache_mode`).Scan(&mode); err != nil {
			t.Fatal(err)
		}
		if mode != "force_custom_plan" {
			t.Fatalf("connection %d: plan_cache_mode %q, want force_custom_plan", i+1, mode)
		}
	}
}
