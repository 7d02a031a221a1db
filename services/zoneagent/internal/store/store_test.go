package store_test

import (
	"context"
	"errors"
	"testing"

	"github.com/google/uuid"

	"tori.dev/services/zoneagent/internal/revision"
	"tori.dev/services/zoneagent/internal/store"
	"tori.dev/services/zoneagent/internal/store/storetest"
	"tori.dev/services/zoneagent/internal/usecase"
)

// Work's SQL names its states (as the partial index does); it must list exactly the
// revisions the domain calls unsettled.
func TestWorkListsTheUnsettledStates(t *testing.T) {
	ctx := context.Background()
	st := store.New(storetest.NewPool(t))
	byState := map[string]revision.State{}
	for _, s := range revision.States {
		id := uuid.Must(uuid.NewV7()).String()
		byState[id] = s
		err := st.InTx(ctx, func(tx usecase.Tx) error {
			if _, err := tx.AddRevision(ctx, revision.Revision{DeployID: id, AppID: "a", Slug: "s", Kind: revision.KindStatic}); err != nil {
				return err
			}
			if s == revision.StatePending {
				return nil
			}
			return tx.SetState(ctx, id, revision.StatePending, s)
		})
		if err != nil {
			t.Fatal(err)
		}
	}
	work, err := st.Work(ctx)
	if err != nil {
		t.Fatal(err)
	}
	listed := map[string]bool{}
	for _, r := range work {
		listed[r.DeployID] = true
		if r.State != byState[r.DeployID] {
			t.Errorf("%s read back as %s, stored %s", r.DeployID, r.State, byState[r.DeployID])
		}
	}
	for id, s := range byState {
		if listed[id] != s.Unsettled() {
			t.Errorf("%s: listed %v, unsettled %v", s, listed[id], s.Unsettled())
		}
	}
}

// A state change from a state the record is no longer in is refused: a stale read never
// overwrites a newer state.
func TestSetStateRefusesAStaleFrom(t *testing.T) {
	ctx := context.Background()
	st := store.New(storetest.NewPool(t))
	id := uuid.Must(uuid.NewV7()).String()
	err := st.InTx(ctx, func(tx usecase.Tx) error {
		_, err := tx.AddRevision(ctx, revision.Revision{DeployID: id, AppID: "a", Slug: "s", Kind: revision.KindStatic})
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	err = st.InTx(ctx, func(tx usecase.Tx) error { return tx.SetState(ctx, id, revision.StatePreparing, revision.StateReady) })
	if !errors.Is(err, store.ErrStale) {
		t.Fatalf("SetState from a stale state: %v, want ErrStale", err)
	}
	if r, err := st.Revision(ctx, id); err != nil || r.State != revision.StatePending {
		t.Fatalf("after a refused change: %v %v", r.State, err)
	}
}

// A deploy's clearCache is kept with its revision: a prepare retried after a restart still
// builds from an empty cache.
func TestRevisionKeepsClearCache(t *testing.T) {
	ctx := context.Background()
	st := store.New(storetest.NewPool(t))
	for _, clear := range []bool{true, false} {
		id := uuid.Must(uuid.NewV7()).String()
		err := st.InTx(ctx, func(tx usecase.Tx) error {
			_, err := tx.AddRevision(ctx, revision.Revision{DeployID: id, AppID: "a", Slug: "s", Kind: revision.KindSource, ClearCache: clear})
			return err
		})
		if err != nil {
			t.Fatal(err)
		}
		if r, err := st.Revision(ctx, id); err != nil || r.ClearCache != clear {
			t.Fatalf("stored clearCache %v, read back %v (%v)", clear, r.ClearCache, err)
		}
	}
}
