package supervisor

import (
	"context"
	"slices"
	"strings"
	"testing"

	"github.com/google/uuid"

	"tori.dev/services/zoneagent/internal/edge"
	"tori.dev/services/zoneagent/internal/revision"
)

// An image revision's formation: each web instance a container on a host port of its own,
// a worker a container running its command with no port; scaling the worker to 0 removes
// its container.
func TestImageFormation(t *testing.T) {
	r, eng := imageRig(t)
	ctx := context.Background()
	rev := imageRevision(uuid.NewString(), "formation", nil)
	rev.Processes = []revision.Process{{Name: "web"}, {Name: "worker", Command: workerCommand}}
	r.l.Revision = func(context.Context, string) (revision.Revision, error) { return rev, nil }
	if err := r.l.Prepare(ctx, rev, r.jobs); err != nil {
		t.Fatalf("prepare: %v\n%s", err, r.sink.all())
	}
	if err := r.l.Activate(ctx, rev, "", quantities(1, "web", 2, "worker", 1)); err != nil {
		t.Fatal(err)
	}
	waitFor(t, "two web containers", func() bool { return len(r.l.procs.liveWeb(rev.AppID, rev.DeployID)) == 2 })
	ids, err := r.l.Wake(ctx, edge.Route{AppID: rev.AppID, DeployID: rev.DeployID, Kind: rev.Kind})
	if err != nil || len(ids) != 2 || ids[0] == ids[1] {
		t.Fatalf("wake: %v %v", ids, err)
	}
	for _, id := range ids {
		if body := getFrom(t, r.l, id, "/"); !strings.HasPrefix(body, served(rev)) || !strings.Contains(body, "TORI_PROCESS") {
			t.Fatalf("%s answered %q", id, body)
		}
	}
	worker := "tori-" + rev.DeployID + "-worker-1"
	waitFor(t, "the worker's line", func() bool { return slices.Contains(r.sink.of("worker.1"), "stdout: up as worker.1 port=none") })
	runs := eng.callsStarting("run", "-d", "--name", worker)
	if len(runs) != 1 || slices.Contains(runs[0], "-p") || !slices.Contains(runs[0], workerCommand) {
		t.Fatalf("the worker's run: %q", runs)
	}
	if err := r.l.Scale(ctx, rev.AppID, rev.DeployID, quantities(2, "web", 2, "worker", 0)); err != nil {
		t.Fatal(err)
	}
	// A worker scaled away ends in the background (its grace period).
	waitFor(t, "the worker's container removed after its scale-down", func() bool { return !slices.Contains(eng.containers(), worker) })
}
