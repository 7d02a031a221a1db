package store_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"

	"tori.dev/services/zoneagent/internal/store"
	"tori.dev/services/zoneagent/internal/store/storetest"
	"tori.dev/services/zoneagent/internal/usecase"
)

// holdAllBut acquires every connection of the store's pool but n until the test ends.
func holdAllBut(t *testing.T, pool *pgxpool.Pool, n int) {
	t.Helper()
	for i := int32(0); i < pool.Config().MaxConns-int32(n); i++ {
		c, err := pool.Acquire(context.Background())
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(c.Release)
	}
}

// Each app gets a uid of its own, the same on every call; a freed one is given again only
// once released from quarantine, and a full range is an error, never a shared uid.
func TestAppUIDsAreUniqueAndReused(t *testing.T) {
	ctx := context.Background()
	pool := storetest.NewPool(t)
	st := store.New(pool)
	got := map[uint32]string{}
	for _, app := range []string{"a", "b", "c"} {
		uid, err := st.AllocateUID(ctx, app, 1000, 1002)
		if err != nil {
			t.Fatal(err)
		}
		if other, dup := got[uid]; dup {
			t.Fatalf("%s and %s share uid %d", app, other, uid)
		}
		got[uid] = app
		again, err := st.AllocateUID(ctx, app, 1000, 1002)
		if err != nil || again != uid {
			t.Fatalf("second lookup of %s: %d, %v; want %d", app, again, err, uid)
		}
	}
	if _, err := st.AllocateUID(ctx, "d", 1000, 1002); !errors.Is(err, store.ErrNoFreeUID) {
		t.Fatalf("a full range: %v, want ErrNoFreeUID", err)
	}
	// b is deleted: its uid is freed in the deletion's own transaction, which holds every
	// connection the pool has left (a handler asking the pool for a second one could wait
	// for ever once every connection is a handler's).
	holdAllBut(t, pool, 1)
	if err := st.InTx(ctx, func(tx usecase.Tx) error { return tx.DeleteApp(ctx, "b", time.Now()) }); err != nil {
		t.Fatal(err)
	}
	// Freed, the uid waits in quarantine: not given again until released.
	q, err := st.QuarantinedUIDs(ctx)
	if err != nil || len(q) != 1 {
		t.Fatalf("quarantine %v, %v", q, err)
	}
	var freed uint32
	for uid, last := range q {
		freed = uid
		if got[uid] != "b" || last != "b" {
			t.Fatalf("quarantined %d of %s; want b's", uid, last)
		}
	}
	if uid, err := st.AllocateUID(ctx, "d", 1000, 1002); !errors.Is(err, store.ErrNoFreeUID) {
		t.Fatalf("a quarantined uid was given again: %d, %v", uid, err)
	}
	if err := st.ReleaseUID(ctx, freed); err != nil {
		t.Fatal(err)
	}
	uid, err := st.AllocateUID(ctx, "d", 1000, 1002)
	if err != nil || got[uid] != "b" {
		t.Fatalf("after releasing b's uid, d got %d (%v); want b's", uid, err)
	}
}
