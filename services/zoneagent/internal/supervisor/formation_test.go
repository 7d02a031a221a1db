package supervisor

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"net"
	"net/http"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/uuid"

	"tori.dev/services/zoneagent/internal/edge"
	"tori.dev/services/zoneagent/internal/edgelink"
	"tori.dev/services/zoneagent/internal/revision"
)

// workerJS prints its instance and whether it has a PORT, then stays up.
const workerCommand = `echo "up as $TORI_PROCESS port=${PORT:-none}"; exec sleep 1000`

// reports records what Local says runs, per report.
type reports struct {
	mu  sync.Mutex
	all []map[string]int64
}

func (r *reports) changed(_ context.Context, _, _ string, running []revision.ProcessRunning) {
	m := map[string]int64{}
	for _, p := range running {
		m[p.Type] = p.Running
	}
	r.mu.Lock()
	r.all = append(r.all, m)
	r.mu.Unlock()
}

// last is the newest report, or nil.
func (r *reports) last() map[string]int64 {
	r.mu.Lock()
	defer r.mu.Unlock()
	if len(r.all) == 0 {
		return nil
	}
	return r.all[len(r.all)-1]
}

// saw reports whether some report had ptype running n.
func (r *reports) saw(ptype string, n int64) bool {
	r.mu.Lock()
	defer r.mu.Unlock()
	for _, m := range r.all {
		if v, ok := m[ptype]; ok && v == n {
			return true
		}
	}
	return false
}

// formationRig is a rig whose revision declares processes and runs formation f once live.
func formationRig(t *testing.T, processes []revision.Process, f revision.Formation, minScale int64) (*rig, revision.Revision, *reports) {
	t.Helper()
	r := newRig(t)
	rep := &reports{}
	r.l.FormationChanged = rep.changed
	declared := map[string]string{}
	for _, p := range processes {
		declared[p.Name] = p.Command
	}
	rev := r.revision(uuid.NewString(), tarball(t, manifest(map[string]any{"processes": declared}), file{name: "server.js", body: serverJS}), nil)
	rev.Processes, rev.MinScale = processes, minScale // as the build records them
	r.l.Revision = func(context.Context, string) (revision.Revision, error) { return rev, nil }
	if err := r.l.Prepare(context.Background(), rev, r.jobs); err != nil {
		t.Fatalf("prepare: %v\n%s", err, r.sink.all())
	}
	if err := r.l.Activate(context.Background(), rev, "", f); err != nil {
		t.Fatal(err)
	}
	return r, rev, rep
}

func quantities(gen int64, kv ...any) revision.Formation {
	f := revision.Formation{Generation: gen, Quantities: map[string]int64{}}
	for i := 0; i < len(kv); i += 2 {
		f.Quantities[kv[i].(string)] = int64(kv[i+1].(int))
	}
	return f
}

// getFrom asks one instance for path, through Dial as the edge does.
func getFrom(t *testing.T, l *Local, id, path string) string {
	t.Helper()
	c := &http.Client{Transport: &http.Transport{DisableKeepAlives: true, DialContext: func(ctx context.Context, _, _ string) (net.Conn, error) {
		return l.Dial(ctx, id)
	}}}
	resp, err := c.Get("http://instance" + path)
	if err != nil {
		t.Fatalf("GET %s from %s: %v", path, id, err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return string(b)
}

// workersUp is how many of ptype's instances run.
func workersUp(l *Local, appID, ptype string) []int {
	l.procs.mu.Lock()
	defer l.procs.mu.Unlock()
	var out []int
	if a := l.procs.apps[appID]; a != nil {
		for _, w := range a.workers {
			if w.ptype == ptype && w.up() {
				out = append(out, w.n)
			}
		}
	}
	slices.Sort(out)
	return out
}

// Two web instances listen on ports of their own and both serve; a worker is told its name,
// gets no PORT, and its lines carry its process; the running counts are reported.
func TestFormationWebInstancesAndAWorker(t *testing.T) {
	procs := []revision.Process{{Name: "web", Command: "node server.js"}, {Name: "worker", Command: workerCommand}}
	r, rev, rep := formationRig(t, procs, quantities(1, "web", 2, "worker", 1), 1)
	route := edge.Route{AppID: rev.AppID, DeployID: rev.DeployID, Kind: rev.Kind}
	waitFor(t, "two web instances", func() bool { return len(r.l.procs.liveWeb(rev.AppID, rev.DeployID)) == 2 })
	ids, err := r.l.Wake(context.Background(), route)
	if err != nil || len(ids) != 2 {
		t.Fatalf("wake: %v %v", ids, err)
	}
	ports, names := map[string]bool{}, map[string]bool{}
	for _, id := range ids {
		var penv map[string]string
		if err := json.Unmarshal([]byte(getFrom(t, r.l, id, "/env")), &penv); err != nil {
			t.Fatal(err)
		}
		ports[penv["PORT"]], names[penv["TORI_PROCESS"]] = true, true
	}
	if len(ports) != 2 || ports[""] || !names["web.1"] || !names["web.2"] {
		t.Fatalf("web instances: ports %v, names %v", ports, names)
	}
	waitFor(t, "the worker's line", func() bool { return slices.Contains(r.sink.of("worker.1"), "stdout: up as worker.1 port=none") })
	waitFor(t, "the report of two web and one worker", func() bool {
		last := rep.last()
		return last["web"] == 2 && last["worker"] == 1
	})
	for _, l := range r.sink.of("worker.1") {
		if strings.Contains(l, "PORT=") {
			t.Fatalf("worker line %q", l)
		}
	}
}

// A worker that exits is restarted, at once and then after a second; each exit is a system
// line naming it, and the reports follow it up and down. Workers never nap.
func TestFormationRestartsACrashingWorker(t *testing.T) {
	procs := []revision.Process{{Name: "web", Command: "node server.js"}, {Name: "crasher", Command: "echo boom; sleep 0.3; exit 3"},
		{Name: "worker", Command: workerCommand}}
	r, rev, rep := formationRig(t, procs, quantities(1, "web", 1, "crasher", 1, "worker", 1), 0)
	exits := func() []string {
		var out []string
		for _, l := range r.sink.of("crasher.1") {
			if strings.HasPrefix(l, "system: crasher.1 exited with status 3; restarting") {
				out = append(out, l)
			}
		}
		return out
	}
	waitFor(t, "three restarts", func() bool { return len(exits()) >= 3 })
	got := exits()
	if !strings.HasSuffix(got[0], "restarting at once") || !strings.HasSuffix(got[1], "restarting in 1s") || !strings.HasSuffix(got[2], "restarting in 2s") {
		t.Fatalf("restarts: %q", got)
	}
	if n := len(slices.DeleteFunc(r.sink.of("crasher.1"), func(l string) bool { return l != "stdout: boom" })); n < 3 {
		t.Fatalf("the crasher ran %d times", n)
	}
	if !rep.saw("crasher", 1) || !rep.saw("crasher", 0) {
		t.Fatalf("reports do not follow the crasher: %v", rep.all)
	}

	// Napping stops web only.
	r.l.IdleAfter = 1
	if n := r.l.napIdle(context.Background(), timeFarAhead()); n != 1 {
		t.Fatalf("napped %d apps", n)
	}
	if len(r.l.procs.liveWeb(rev.AppID, rev.DeployID)) != 0 || !slices.Equal(workersUp(r.l, rev.AppID, "worker"), []int{1}) {
		t.Fatalf("after the nap: web %d, workers %v", len(r.l.procs.liveWeb(rev.AppID, rev.DeployID)), workersUp(r.l, rev.AppID, "worker"))
	}
	if !r.l.Source.Sandbox.HoldsNetwork(rev.AppID) {
		t.Fatal("the nap released the network its worker runs in")
	}
	waitFor(t, "web reported napping", func() bool { return rep.last()["web"] == 0 })
	if got := r.get(rev.AppID, rev.DeployID, "/"); got != "ok unreleased" {
		t.Fatalf("wake: %q", got)
	}
}

// Scaling down stops the highest numbers; a formation of an older generation, or for another
// revision, changes nothing; web at 0 leaves nothing for the edge.
func TestFormationScalesAndIgnoresOlderGenerations(t *testing.T) {
	procs := []revision.Process{{Name: "web", Command: "node server.js"}, {Name: "worker", Command: workerCommand}}
	r, rev, rep := formationRig(t, procs, quantities(3, "web", 1, "worker", 3), 1)
	ctx := context.Background()
	waitFor(t, "three workers", func() bool { return len(workersUp(r.l, rev.AppID, "worker")) == 3 })
	if err := r.l.Scale(ctx, rev.AppID, rev.DeployID, quantities(4, "web", 1, "worker", 1)); err != nil {
		t.Fatal(err)
	}
	if got := workersUp(r.l, rev.AppID, "worker"); !slices.Equal(got, []int{1}) {
		t.Fatalf("after scaling down: %v", got)
	}
	if err := r.l.Scale(ctx, rev.AppID, rev.DeployID, quantities(2, "web", 1, "worker", 3)); err != nil {
		t.Fatal(err)
	}
	if err := r.l.Scale(ctx, rev.AppID, uuid.NewString(), quantities(9, "web", 1, "worker", 3)); err != nil {
		t.Fatal(err)
	}
	if got := workersUp(r.l, rev.AppID, "worker"); !slices.Equal(got, []int{1}) {
		t.Fatalf("an older or foreign formation was run: %v", got)
	}
	waitFor(t, "the report of one worker", func() bool { return rep.last()["worker"] == 1 })

	if err := r.l.Scale(ctx, rev.AppID, rev.DeployID, quantities(5, "web", 0, "worker", 2)); err != nil {
		t.Fatal(err)
	}
	if got := workersUp(r.l, rev.AppID, "worker"); !slices.Equal(got, []int{1, 2}) {
		t.Fatalf("after scaling up: %v", got)
	}
	if _, err := r.l.Wake(ctx, edge.Route{AppID: rev.AppID, DeployID: rev.DeployID, Kind: rev.Kind}); !errors.Is(err, edgelink.ErrNoWeb) {
		t.Fatalf("wake with web at 0: %v", err)
	}
	if last := rep.last(); last["web"] != 0 || last["worker"] != 2 {
		t.Fatalf("last report %v", last)
	}
}

// A revision that declares no web starts nothing when prepared; once live its workers run
// and the edge is told there is no web.
func TestFormationWithoutWeb(t *testing.T) {
	procs := []revision.Process{{Name: "worker", Command: workerCommand}}
	r, rev, _ := formationRig(t, procs, quantities(1, "worker", 1), 1)
	waitFor(t, "the worker", func() bool { return slices.Equal(workersUp(r.l, rev.AppID, "worker"), []int{1}) })
	if _, err := r.l.Wake(context.Background(), edge.Route{AppID: rev.AppID, DeployID: rev.DeployID, Kind: rev.Kind}); !errors.Is(err, edgelink.ErrNoWeb) {
		t.Fatalf("wake: %v", err)
	}
}

// timeFarAhead is a time every instance is idle at.
func timeFarAhead() time.Time { return time.Now().Add(time.Hour) }

// After an agent restart the live revision's workers start at once from the formation on
// record; web waits for the first request.
func TestFormationWorkersComeBackAfterARestart(t *testing.T) {
	procs := []revision.Process{{Name: "web", Command: "node server.js"}, {Name: "worker", Command: workerCommand}}
	r, rev, rep := formationRig(t, procs, quantities(2, "web", 1, "worker", 2), 1)
	waitFor(t, "two workers", func() bool { return len(workersUp(r.l, rev.AppID, "worker")) == 2 })
	// The restart: nothing in memory, the tree and the record stay.
	apps, _ := r.l.procs.takeAll()
	for _, a := range apps {
		stopInstances(a)
	}
	r.l.Formation = func(_ context.Context, deployID string) (revision.Formation, error) {
		if deployID != rev.DeployID {
			t.Errorf("formation of %s asked", deployID)
		}
		return quantities(2, "web", 1, "worker", 2), nil
	}
	r.l.RecoverFormations(context.Background(), []revision.Route{{AppID: rev.AppID, Slug: rev.Slug, DeployID: rev.DeployID, Kind: rev.Kind}})
	waitFor(t, "the workers back", func() bool { return slices.Equal(workersUp(r.l, rev.AppID, "worker"), []int{1, 2}) })
	if n := len(r.l.procs.liveWeb(rev.AppID, rev.DeployID)); n != 0 {
		t.Fatalf("web started before a request: %d", n)
	}
	if got := r.get(rev.AppID, rev.DeployID, "/"); got != "ok unreleased" {
		t.Fatalf("first request: %q", got)
	}
	waitFor(t, "the report of web and two workers", func() bool {
		last := rep.last()
		return last["web"] == 1 && last["worker"] == 2
	})
}

// A worker scaled away gets SIGTERM and time to finish: its trap runs and says so in the log
// before it exits, instead of being killed mid-job.
func TestFormationScaleDownGivesWorkersSIGTERM(t *testing.T) {
	trapping := `trap 'echo "got TERM as $TORI_PROCESS"; exit 0' TERM; echo "working as $TORI_PROCESS"; while true; do sleep 0.2; done`
	procs := []revision.Process{{Name: "web", Command: "node server.js"}, {Name: "worker", Command: trapping}}
	r, rev, _ := formationRig(t, procs, quantities(1, "web", 1, "worker", 1), 1)
	waitFor(t, "the worker at work", func() bool { return strings.Contains(r.sink.all(), "working as worker.1") })
	if err := r.l.Scale(context.Background(), rev.AppID, rev.DeployID, quantities(2, "web", 1, "worker", 0)); err != nil {
		t.Fatal(err)
	}
	waitFor(t, "the worker's TERM trap", func() bool { return strings.Contains(r.sink.all(), "got TERM as worker.1") })
	if got := workersUp(r.l, rev.AppID, "worker"); len(got) != 0 {
		t.Fatalf("workers after scaling to 0: %v", got)
	}
}
