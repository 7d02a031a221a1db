package supervisor

import (
	"context"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5/pgxpool"
	"google.golang.org/protobuf/proto"

	"tori.dev/pkg/lifecycle"
	zonev1 "tori.dev/proto/gen/tori/zone/v1"

	"tori.dev/services/zoneagent/internal/edge"
	"tori.dev/services/zoneagent/internal/imageruntime"
	"tori.dev/services/zoneagent/internal/revision"
	"tori.dev/services/zoneagent/internal/store"
	"tori.dev/services/zoneagent/internal/store/storetest"
	agentapp "tori.dev/services/zoneagent/internal/usecase"
)

// imageZone is the agent on its Postgres record with a runner driving the fake engine, as
// cmd/zoneagent wires them.
type imageZone struct {
	t     *testing.T
	pool  *pgxpool.Pool
	st    *store.Store
	table *edge.Table
	front *edge.Edge
	stop  func() // stops the agent as a crash would: containers keep running
}

func startImageZone(t *testing.T, pool *pgxpool.Pool, l *Local) *imageZone {
	t.Helper()
	st := store.New(pool)
	l.Revision = st.Revision
	live, err := st.Routes(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if _, err := l.RecoverContainers(context.Background(), live); err != nil {
		t.Fatal(err)
	}
	table := edge.NewTable()
	a, err := agentapp.New(agentapp.Deps{Zone: storetest.Zone, Store: st, Table: table, Runner: l, Artifacts: l.Source.Artifacts})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() { runAgent(ctx, a); close(done) }()
	var once sync.Once
	z := &imageZone{t: t, pool: pool, st: st, table: table, front: &edge.Edge{Domain: "apps.test", Table: table, Services: throughInstances{l}}}
	z.stop = func() { once.Do(func() { cancel(); <-done }) }
	t.Cleanup(z.stop)
	return z
}

func (z *imageZone) do(fn func(ctx context.Context, tx agentapp.Tx) error) {
	z.t.Helper()
	ctx := context.Background()
	if err := z.st.InTx(ctx, func(tx agentapp.Tx) error { return fn(ctx, tx) }); err != nil {
		z.t.Fatal(err)
	}
}

func (z *imageZone) waitState(deployID string, want revision.State) {
	z.t.Helper()
	waitFor(z.t, "revision "+deployID+" "+string(want), func() bool {
		r, err := z.st.Revision(context.Background(), deployID)
		return err == nil && r.State == want
	})
}

// failure is the code and message the zone reported for a deploy's failure.
func (z *imageZone) failure(deployID string) (string, string) {
	rows, err := z.pool.Query(context.Background(), `SELECT body FROM outbox WHERE routing_key = 'zone.deploy.progressed' ORDER BY seq`)
	if err != nil {
		z.t.Fatal(err)
	}
	defer rows.Close()
	for rows.Next() {
		var b []byte
		rows.Scan(&b)
		var p zonev1.DeployProgress
		proto.Unmarshal(b, &p)
		if p.GetDeployId() == deployID && p.GetStep() == agentapp.StepFailed {
			return p.GetError(), p.GetMessage()
		}
	}
	return "", ""
}

func newImageLocal(r *rig, rt imageruntime.ContainerRuntime) *Local {
	ids := &Identities{AppsDir: r.l.Identities.AppsDir, Sandbox: r.l.Identities.Sandbox, UIDs: r.l.Identities.UIDs, UIDBase: r.l.Identities.UIDBase, UIDCount: r.l.Identities.UIDCount}
	return newLocal(ids, r.l.Source.Artifacts, rt, r.l.Source.Env, r.sink, 0)
}

// An image deploy goes through the agent and its record, goes live, and after a crash of
// the agent the next one removes what no record keeps and brings the live revision back.
func TestImageDeployThroughTheAgentSurvivesARestart(t *testing.T) {
	r, eng := imageRig(t)
	pool := storetest.NewPool(t)
	first := newImageLocal(r, eng.cli)
	t.Cleanup(first.StopAll)
	z := startImageZone(t, pool, first)
	app := uuid.NewString()
	rev := imageRevision(app, "7", []string{"true"})
	z.do(func(ctx context.Context, tx agentapp.Tx) error { _, err := tx.AddRevision(ctx, rev); return err })
	z.waitState(rev.DeployID, revision.StateReady)
	z.do(func(ctx context.Context, tx agentapp.Tx) error { return tx.Want(ctx, rev.DeployID, true) })
	z.waitState(rev.DeployID, revision.StateActive)
	waitFor(t, "the edge to route the app", func() bool { return strings.HasPrefix(through(z.front, "/"), served(rev)) })

	// The agent dies; its container and a release Job of a deploy in flight stay behind.
	z.stop()
	if _, err := eng.cli.RunDetached(context.Background(), leftover(t, eng.cli, "release-"+uuid.NewString(), rev.Image)); err != nil {
		t.Fatal(err)
	}
	second := newImageLocal(r, eng.cli)
	t.Cleanup(second.StopAll)
	again := startImageZone(t, pool, second)
	waitFor(t, "the live revision to be back", func() bool { return strings.HasPrefix(through(again.front, "/"), served(rev)) })
	if got := eng.containers(); !slices.Equal(got, []string{"tori-" + rev.DeployID}) {
		t.Fatalf("containers after the restart: %v", got)
	}
	// The release Job ran once: the restart brought the revision back without it.
	if n := len(eng.callsStarting("run", "--rm", "--name", "release-"+rev.DeployID)); n != 1 {
		t.Fatalf("release Job ran %d times", n)
	}
}

// With ZONE_IMAGE_RUNTIME unset an image deploy fails with a code and a message naming it.
func TestImageDeployWithoutRuntimeFails(t *testing.T) {
	r := newRig(t)
	l := newImageLocal(r, nil)
	z := startImageZone(t, storetest.NewPool(t), l)
	rev := imageRevisionOf(uuid.NewString(), "registry.test/shop@sha256:"+strings.Repeat("8", 64), nil)
	z.do(func(ctx context.Context, tx agentapp.Tx) error { _, err := tx.AddRevision(ctx, rev); return err })
	z.waitState(rev.DeployID, revision.StateFailed)
	code, msg := z.failure(rev.DeployID)
	if code != revision.CodeNoRuntime || !strings.Contains(msg, "ZONE_IMAGE_RUNTIME") {
		t.Fatalf("reported %q %q", code, msg)
	}
}

// runAgent runs the agent's parts as cmd/zoneagent does: its worker and its poll job.
func runAgent(ctx context.Context, a *agentapp.Agent) {
	g, _ := lifecycle.New(ctx)
	g.Go("agent", a.Run)
	g.Every(nil, a.PollJob())
	g.Wait()
}
