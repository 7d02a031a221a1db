package store_test

import (
	"context"
	"testing"
	"time"

	"github.com/google/uuid"

	"tori.dev/contract/names"
	"tori.dev/services/zoneagent/internal/revision"
	"tori.dev/services/zoneagent/internal/store"
	"tori.dev/services/zoneagent/internal/store/storetest"
	"tori.dev/services/zoneagent/internal/usecase"
)

// A preview is recorded with its serving revision, moves to a newer one, and once removed
// stays a tombstone that SetPreview cannot bring back; its revisions still waiting are
// marked discarded, the served one is left to the use case. A remove naming another app
// changes nothing; a remove of a preview the zone never served records a tombstone; an
// app's delete makes all its previews tombstones. Previews lists live ones and tombstones.
func TestPreviewsAndTombstones(t *testing.T) {
	ctx := context.Background()
	st := store.New(storetest.NewPool(t))
	app, other := uuid.NewString(), uuid.NewString()
	id, never, ofDeleted := names.NewPreviewID(), names.NewPreviewID(), names.NewPreviewID()
	served, waiting := uuid.Must(uuid.NewV7()).String(), uuid.Must(uuid.NewV7()).String()
	in := func(fn func(store.Tx) error) {
		t.Helper()
		if err := st.InTx(ctx, func(tx usecase.Tx) error { return fn(tx.(store.Tx)) }); err != nil {
			t.Fatal(err)
		}
	}
	in(func(tx store.Tx) error {
		for _, d := range []string{served, waiting} {
			if _, err := tx.AddRevision(ctx, revision.Revision{DeployID: d, AppID: app, Slug: "shop", Kind: revision.KindStatic, PreviewID: id}); err != nil {
				return err
			}
		}
		for _, move := range [][2]revision.State{{revision.StatePending, revision.StatePreparing}, {revision.StatePreparing, revision.StateReady}, {revision.StateReady, revision.StateActive}} {
			if err := tx.SetState(ctx, served, move[0], move[1]); err != nil {
				return err
			}
		}
		if err := tx.SetPreview(ctx, revision.Preview{ID: id, AppID: app, Slug: "shop", DeployID: served, Kind: revision.KindStatic}); err != nil {
			return err
		}
		return tx.SetPreview(ctx, revision.Preview{ID: ofDeleted, AppID: other, Slug: "old", DeployID: uuid.NewString(), Kind: revision.KindSource})
	})
	r, err := st.Revision(ctx, waiting)
	if err != nil || r.PreviewID != id {
		t.Fatalf("revision's preview id read back as %q (%v)", r.PreviewID, err)
	}
	in(func(tx store.Tx) error {
		p, ok, err := tx.Preview(ctx, id)
		if err != nil || !ok || p.DeployID != served || p.Removed || p.Slug != "shop" || p.Kind != revision.KindStatic {
			t.Errorf("preview read back as %+v %v %v", p, ok, err)
		}
		// Another app's remove of it is ignored.
		if _, found, err := tx.RemovePreview(ctx, other, id, "deleted"); err != nil || found {
			t.Errorf("a remove naming another app: found %v %v", found, err)
		}
		return nil
	})
	in(func(tx store.Tx) error {
		before, found, err := tx.RemovePreview(ctx, app, id, "expired")
		if err != nil || !found || before.DeployID != served {
			t.Errorf("remove: %+v %v %v", before, found, err)
		}
		_, found, err = tx.RemovePreview(ctx, app, never, "deleted")
		if err != nil || found {
			t.Errorf("remove of a preview never served: %v %v", found, err)
		}
		// A late activation cannot bring it back.
		return tx.SetPreview(ctx, revision.Preview{ID: id, AppID: app, Slug: "shop", DeployID: waiting, Kind: revision.KindStatic})
	})
	if r, _ := st.Revision(ctx, waiting); !r.DiscardWanted {
		t.Error("the removed preview's waiting revision is not marked discarded")
	}
	if r, _ := st.Revision(ctx, served); r.DiscardWanted {
		t.Error("the removed preview's served revision was marked discarded (the use case retires it)")
	}
	in(func(tx store.Tx) error { return tx.DeleteApp(ctx, other, time.Now()) })
	list, err := st.Previews(ctx)
	if err != nil {
		t.Fatal(err)
	}
	got := map[string]revision.Preview{}
	for _, p := range list {
		got[p.ID] = p
	}
	if p := got[id]; !p.Removed || p.DeployID != served {
		t.Errorf("removed preview listed as %+v", p)
	}
	if p, ok := got[never]; !ok || !p.Removed || p.AppID != app {
		t.Errorf("tombstone of a preview never served listed as %+v %v", p, ok)
	}
	if p := got[ofDeleted]; !p.Removed {
		t.Errorf("a deleted app's preview listed as %+v", p)
	}
	if len(got) != 3 {
		t.Errorf("listed %d previews, want 3", len(got))
	}
}
