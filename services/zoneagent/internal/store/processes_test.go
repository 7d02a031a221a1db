package store_test

import (
	"context"
	"slices"
	"testing"

	"github.com/google/uuid"

	"tori.dev/services/zoneagent/internal/revision"
	"tori.dev/services/zoneagent/internal/store"
	"tori.dev/services/zoneagent/internal/store/storetest"
	"tori.dev/services/zoneagent/internal/usecase"
)

// A revision's process types and instance memory survive in the record, as an image's start
// command gives them and as a source's plan sets them later, for an agent that restarts.
func TestProcessesAreKeptWithTheRevision(t *testing.T) {
	ctx := context.Background()
	st := store.New(storetest.NewPool(t))
	image, source := uuid.NewString(), uuid.NewString()
	declared := []revision.Process{{Name: "web", Command: "bin/s --port $PORT"}, {Name: "worker", Command: `bin/w "q 1"`}}
	planned := []revision.Process{{Name: "web", Command: "npm start"}, {Name: "clock", Command: "node c.js"}}
	err := st.InTx(ctx, func(tx usecase.Tx) error {
		if _, err := tx.AddRevision(ctx, revision.Revision{DeployID: image, AppID: "a", Slug: "s", Kind: revision.KindImage,
			Processes: declared, InstanceMemoryBytes: 1 << 30}); err != nil {
			return err
		}
		if _, err := tx.AddRevision(ctx, revision.Revision{DeployID: source, AppID: "b", Slug: "t", Kind: revision.KindSource}); err != nil {
			return err
		}
		return tx.SetProcesses(ctx, source, planned)
	})
	if err != nil {
		t.Fatal(err)
	}
	for id, want := range map[string][]revision.Process{image: declared, source: planned} {
		got, err := st.Revision(ctx, id)
		if err != nil {
			t.Fatal(err)
		}
		if !slices.Equal(got.Processes, want) {
			t.Errorf("%s: processes %v, want %v", id, got.Processes, want)
		}
	}
	work, err := st.Work(ctx)
	if err != nil {
		t.Fatal(err)
	}
	for _, r := range work {
		if r.DeployID == image && (r.InstanceMemoryBytes != 1<<30 || len(r.Processes) != 2) {
			t.Errorf("Work read %+v", r)
		}
		if r.DeployID == source && r.InstanceMemoryBytes != 0 {
			t.Errorf("a revision without one has instance memory %d", r.InstanceMemoryBytes)
		}
	}
}
