package usecase_test

import (
	"context"
	"log/slog"
	"sync"
	"testing"

	"github.com/google/uuid"
	"google.golang.org/protobuf/proto"

	zonev1 "tori.dev/proto/gen/tori/zone/v1"
	zonebus "tori.dev/proto/tori/zone/v1"
	"tori.dev/services/zoneagent/internal/edge"
	"tori.dev/services/zoneagent/internal/revision"
	"tori.dev/services/zoneagent/internal/store"
	"tori.dev/services/zoneagent/internal/store/storetest"
	"tori.dev/services/zoneagent/internal/usecase"
)

// scaleRunner records the formations it is told to run.
type scaleRunner struct {
	usecase.Runner
	mu     sync.Mutex
	scaled []revision.Formation
}

func (r *scaleRunner) Scale(_ context.Context, _, _ string, f revision.Formation) error {
	r.mu.Lock()
	r.scaled = append(r.scaled, f)
	r.mu.Unlock()
	return nil
}

// A formation is kept per revision, newest generation first: an older one is not taken;
// the runner runs it only for the app's live revision; an activation's formation is kept
// for the activation.
func TestScaleFormationKeepsTheNewestAndRunsTheLiveOne(t *testing.T) {
	ctx := context.Background()
	pool := storetest.NewPool(t)
	st := store.New(pool)
	runner := &scaleRunner{}
	a, err := usecase.New(usecase.Deps{Zone: storetest.Zone, Store: st, Artifacts: artifactsFrom(t, st, t.TempDir()), Table: edge.NewTable(), Runner: runner})
	if err != nil {
		t.Fatal(err)
	}
	app, live, next := uuid.NewString(), uuid.Must(uuid.NewV7()).String(), uuid.Must(uuid.NewV7()).String()
	err = st.InTx(ctx, func(tx usecase.Tx) error {
		return tx.SetLive(ctx, revision.Route{AppID: app, Slug: "s", DeployID: live, Kind: revision.KindSource})
	})
	if err != nil {
		t.Fatal(err)
	}
	scale := func(deployID string, gen, workers int64) bool {
		t.Helper()
		var newer bool
		err := st.InTx(ctx, func(tx usecase.Tx) error {
			var err error
			newer, err = a.ScaleFormation(ctx, tx, app, deployID, revision.Formation{Generation: gen, Quantities: map[string]int64{"web": 1, "worker": workers}})
			return err
		})
		if err != nil {
			t.Fatal(err)
		}
		return newer
	}
	if !scale(live, 2, 3) || scale(live, 1, 1) || scale(live, 2, 5) {
		t.Fatal("only a newer generation is taken")
	}
	f, err := st.Formation(ctx, live)
	if err != nil || f.Generation != 2 || f.Quantity("worker") != 3 {
		t.Fatalf("kept %+v, %v", f, err)
	}
	if err := a.ApplyFormation(ctx, app, live, f); err != nil {
		t.Fatal(err)
	}
	// Another revision's (not live yet) is kept for its activation, not run.
	if !scale(next, 3, 2) {
		t.Fatal("the next revision's formation was not kept")
	}
	if err := a.ApplyFormation(ctx, app, next, revision.Formation{Generation: 3}); err != nil {
		t.Fatal(err)
	}
	if len(runner.scaled) != 1 || runner.scaled[0].Generation != 2 {
		t.Fatalf("runner ran %+v", runner.scaled)
	}
	// An activation with an older formation keeps the newer one on record.
	err = st.InTx(ctx, func(tx usecase.Tx) error {
		return a.ActivateRevision(ctx, tx, app, next, revision.Formation{Generation: 1, Quantities: map[string]int64{"web": 1}})
	})
	if err != nil {
		t.Fatal(err)
	}
	if f, _ := st.Formation(ctx, next); f.Generation != 3 || f.Quantity("worker") != 2 {
		t.Fatalf("after activation: %+v", f)
	}
	if f, _ := st.Formation(ctx, uuid.NewString()); f.Generation != 0 || f.Quantity("web") != 1 {
		t.Fatalf("no formation on record: %+v", f)
	}
}

// Running counts go out through the outbox as FormationStatus.
func TestFormationStatusIsPublished(t *testing.T) {
	ctx := context.Background()
	pool := storetest.NewPool(t)
	st := store.New(pool)
	usecase.Formations{Store: st, Zone: storetest.Zone, Log: slog.Default()}.Changed(ctx, "app", "dep",
		[]revision.ProcessRunning{{Type: "web", Running: 2}, {Type: "worker", Running: 0}})
	var body []byte
	if err := pool.QueryRow(ctx, `SELECT body FROM outbox WHERE routing_key = $1`, zonebus.KeyFormationChanged).Scan(&body); err != nil {
		t.Fatal(err)
	}
	var msg zonev1.FormationStatus
	if err := proto.Unmarshal(body, &msg); err != nil {
		t.Fatal(err)
	}
	got := msg.GetProcesses()
	if msg.GetAppId() != "app" || msg.GetDeployId() != "dep" || msg.GetZone() != storetest.Zone || len(got) != 2 ||
		got[0].GetType() != "web" || got[0].GetRunning() != 2 || got[1].GetType() != "worker" || got[1].GetRunning() != 0 || msg.GetAt() == nil {
		t.Fatalf("status %v", &msg)
	}
}
