package store_test

import (
	"context"
	"errors"
	"testing"

	"tori.dev/services/zoneagent/internal/store"
	"tori.dev/services/zoneagent/internal/store/storetest"
)

// Each app gets a uid of its own, the same on every call; a freed one is given again only
// once released from quarantine, and a full range is an error, never a shared uid.
func TestAppUIDsAreUniqueAndReused(t *testing.T) {
	ctx := context.Background()
	st := store.New(storetest.NewPool(t))
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
	if err := st.FreeUID(ctx, "b"); err != nil {
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
