package main

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"

	"tori.dev/pkg/bus"
	"tori.dev/pkg/testinfra"
	zonev1 "tori.dev/proto/gen/tori/zone/v1"
	zonebus "tori.dev/proto/tori/zone/v1"
)

// keptFormation is the generation and worker quantity the zone keeps for a revision, or -1s.
func keptFormation(t *testing.T, z *testinfra.Running, deployID string) (gen, workers int64) {
	t.Helper()
	ctx := context.Background()
	conn, err := pgx.Connect(ctx, z.Env["ZONEAGENT_DATABASE_URL"])
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close(ctx)
	err = conn.QueryRow(ctx, `SELECT generation, coalesce((quantities->>'worker')::bigint, 0) FROM formations WHERE deploy_id = $1`, deployID).
		Scan(&gen, &workers)
	if errors.Is(err, pgx.ErrNoRows) {
		return -1, -1
	}
	if err != nil {
		t.Fatal(err)
	}
	return gen, workers
}

// The deploys service's scalings reach the zone on their own queue: the newest generation is
// kept for the revision (one not live yet keeps it for its activation); an older one that
// arrives later changes nothing.
func TestScaleFormationCommandIsKept(t *testing.T) {
	z := startZone(t)
	ns := z.Env["BUS_NAMESPACE"]
	app, deployID := uuid.NewString(), uuid.NewString()
	key := zonebus.CommandKey("local", zonebus.CommandFormation)
	scale := func(gen, workers int64) *zonev1.ScaleFormation {
		return &zonev1.ScaleFormation{AppId: app, DeployId: deployID, FormationGeneration: gen,
			Formation: []*zonev1.ProcessQuantity{{Type: "web", Quantity: 1}, {Type: "worker", Quantity: workers}}}
	}
	publishAs(t, ns, bus.PrincipalDeploys, key, scale(4, 2))
	testinfra.Eventually(t, 20*time.Second, "the formation kept", func() bool {
		gen, _ := keptFormation(t, z, deployID)
		return gen == 4
	})
	// An older one, then another revision's: once that one is kept, the older was handled.
	publishAs(t, ns, bus.PrincipalDeploys, key, scale(3, 9))
	marker := scale(6, 1)
	marker.DeployId = uuid.NewString()
	publishAs(t, ns, bus.PrincipalDeploys, key, marker)
	testinfra.Eventually(t, 20*time.Second, "the other revision's formation kept", func() bool {
		gen, _ := keptFormation(t, z, marker.DeployId)
		return gen == 6
	})
	if gen, workers := keptFormation(t, z, deployID); gen != 4 || workers != 2 {
		t.Fatalf("kept generation %d with %d workers, want the newer 4 with 2", gen, workers)
	}
}
