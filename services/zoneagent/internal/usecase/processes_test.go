package usecase_test

import (
	"context"
	"testing"

	"github.com/google/uuid"

	zonev1 "tori.dev/proto/gen/tori/zone/v1"

	"tori.dev/services/zoneagent/internal/buildplan"
	"tori.dev/services/zoneagent/internal/edge"
	"tori.dev/services/zoneagent/internal/revision"
	"tori.dev/services/zoneagent/internal/store"
	"tori.dev/services/zoneagent/internal/store/storetest"
	"tori.dev/services/zoneagent/internal/usecase"
)

// plannedRunner prepares a source revision as the supervisor does as far as reports go: it
// reports its plan; an image it prepares as given.
type plannedRunner struct{ plan buildplan.Plan }

func (p plannedRunner) Prepare(ctx context.Context, rev revision.Revision, jobs usecase.JobRecorder) error {
	if rev.Kind == revision.KindSource {
		return jobs.BuildDetected(ctx, p.plan)
	}
	return nil
}
func (plannedRunner) Activate(context.Context, revision.Revision, string, revision.Formation) error {
	return nil
}
func (plannedRunner) Scale(context.Context, string, string, revision.Formation) error { return nil }
func (plannedRunner) Discard(context.Context, string, string) error                   { return nil }
func (plannedRunner) StopApp(context.Context, string) error                           { return nil }

func proc(name, command string) revision.Process {
	return revision.Process{Name: name, Command: command}
}

// The process types reach the control plane (the plan's in BUILD_DETECTED, the final list
// in READY, web first, with the implicit web when none is declared) and stay with the
// zone's record of the revision, for an agent that restarts; an image declaring a bad name
// fails invalid_artifact.
func TestProcessesAreReportedAndKept(t *testing.T) {
	for _, tc := range []struct {
		name      string
		kind      revision.Kind
		declared  []revision.Process // StartRevision's (images)
		plan      buildplan.Plan     // the tree's (sources)
		want      []revision.Process
		wantBuild int // BuildPlan.processes
		failCode  string
	}{
		{name: "a source declaring web and worker", kind: revision.KindSource,
			plan: buildplan.Plan{Detected: "procfile", Start: "./s", Processes: []revision.Process{proc("web", "./s"), proc("worker", "./w")}},
			want: []revision.Process{proc("web", "./s"), proc("worker", "./w")}, wantBuild: 2},
		{name: "a source declaring none: one web from start", kind: revision.KindSource,
			plan: buildplan.Plan{Detected: "node", Start: "npm start"},
			want: []revision.Process{proc("web", "npm start")}},
		{name: "an image declaring a worker and web", kind: revision.KindImage,
			declared: []revision.Process{proc("worker", "bin/w"), proc("web", "bin/s")},
			want:     []revision.Process{proc("web", "bin/s"), proc("worker", "bin/w")}},
		{name: "an image declaring none: web runs the image's own command", kind: revision.KindImage,
			want: []revision.Process{proc("web", "")}},
		{name: "an image declaring a bad name", kind: revision.KindImage,
			declared: []revision.Process{proc("Web_1", "x")}, failCode: revision.CodeInvalidArtifact},
		{name: "an image declaring a type twice", kind: revision.KindImage,
			declared: []revision.Process{proc("worker", "a"), proc("worker", "b")}, failCode: revision.CodeInvalidArtifact},
	} {
		t.Run(tc.name, func(t *testing.T) {
			pool := storetest.NewPool(t)
			st := store.New(pool)
			z := &zone{t: t, pool: pool, st: st}
			a, err := usecase.New(usecase.Deps{Zone: storetest.Zone, Store: st, Artifacts: artifactsFrom(t, st, t.TempDir()),
				Table: edge.NewTable(), Runner: plannedRunner{plan: tc.plan}})
			if err != nil {
				t.Fatal(err)
			}
			z.agent = a
			runAgent(t, a)
			id := uuid.Must(uuid.NewV7()).String()
			z.command(func(ctx context.Context, tx usecase.Tx) error {
				_, err := tx.AddRevision(ctx, revision.Revision{DeployID: id, AppID: uuid.NewString(), Slug: "s-" + id[:8],
					Kind: tc.kind, Image: "registry.test/app:1", Processes: tc.declared, InstanceMemoryBytes: 256 << 20})
				return err
			})
			if tc.failCode != "" {
				z.waitState(id, revision.StateFailed)
				if got := z.progress(id, zonev1.DeployStep_DEPLOY_STEP_FAILED).GetError(); got != tc.failCode {
					t.Fatalf("failed with %q, want %q", got, tc.failCode)
				}
				return
			}
			z.waitState(id, revision.StateReady)
			var got []revision.Process
			for _, p := range z.progress(id, zonev1.DeployStep_DEPLOY_STEP_READY).GetProcesses() {
				got = append(got, proc(p.GetName(), p.GetCommand()))
			}
			if !equalProcesses(got, tc.want) {
				t.Fatalf("READY processes %v, want %v", got, tc.want)
			}
			if tc.kind == revision.KindSource {
				if n := len(z.progress(id, zonev1.DeployStep_DEPLOY_STEP_BUILD_DETECTED).GetBuild().GetProcesses()); n != tc.wantBuild {
					t.Fatalf("BUILD_DETECTED has %d processes, want %d", n, tc.wantBuild)
				}
			}
			rec, err := st.Revision(context.Background(), id)
			if err != nil {
				t.Fatal(err)
			}
			if !equalProcesses(rec.Processes, tc.want) || rec.InstanceMemoryBytes != 256<<20 {
				t.Fatalf("recorded %v and %d bytes, want %v and 256 MiB", rec.Processes, rec.InstanceMemoryBytes, tc.want)
			}
		})
	}
}

func equalProcesses(a, b []revision.Process) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}
