package supervisor

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"io"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/google/uuid"

	"tori.dev/contract/limits"
	"tori.dev/pkg/testinfra"

	"tori.dev/services/zoneagent/internal/edge"
	"tori.dev/services/zoneagent/internal/imageruntime"
	"tori.dev/services/zoneagent/internal/revision"
)

// fakeEngine is the state folder of FakeContainerRuntime (../imageruntime/fakeruntime), the named
// stand-in for docker/podman, which cannot run on this machine. runner.CLI, the real
// adapter, drives it exactly as it drives docker.
type fakeEngine struct {
	t     *testing.T
	state string
	cli   imageruntime.CLI
}

// newFakeEngine builds the fake CLI and gives it a fresh state folder.
func newFakeEngine(t *testing.T) *fakeEngine {
	t.Helper()
	bin := filepath.Join(t.TempDir(), "docker")
	if out, err := exec.Command("go", "build", "-o", bin, "../imageruntime/fakeruntime").CombinedOutput(); err != nil {
		t.Fatalf("build the fake container runtime: %v\n%s", err, out)
	}
	e := &fakeEngine{t: t, state: t.TempDir(), cli: imageruntime.CLI{Path: bin, EnvDir: t.TempDir(), Registry: relaxedTestPuller()}}
	// The CLI runs with a fixed environment: the fake finds its state through this file.
	if err := os.WriteFile(bin+".state", []byte(e.state), 0o600); err != nil {
		t.Fatal(err)
	}
	// Registered after the folders, so it runs before they go: no "container" outlives the
	// test, and no test's containers ever shared the host's network.
	t.Cleanup(func() {
		for _, c := range e.calls() {
			if hostNetwork(c) {
				t.Errorf("a container was asked onto the host's network: %q", c)
			}
		}
		entries, _ := os.ReadDir(filepath.Join(e.state, "containers"))
		for _, en := range entries {
			b, _ := os.ReadFile(filepath.Join(e.state, "containers", en.Name()))
			if pid, err := strconv.Atoi(string(b)); err == nil {
				syscall.Kill(-pid, syscall.SIGKILL)
				syscall.Kill(pid, syscall.SIGKILL)
			}
		}
	})
	return e
}

// kill ends a container's process as a crash would, leaving the engine's record of it.
func (e *fakeEngine) kill(name string) {
	b, err := os.ReadFile(filepath.Join(e.state, "containers", name+".pid"))
	if err != nil {
		e.t.Fatal(err)
	}
	pid, _ := strconv.Atoi(string(b))
	syscall.Kill(pid, syscall.SIGKILL)
}

// calls is every command line the runtime was given.
func (e *fakeEngine) calls() [][]string {
	f, err := os.Open(filepath.Join(e.state, "argv.log"))
	if err != nil {
		return nil
	}
	defer f.Close()
	var out [][]string
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		var argv []string
		json.Unmarshal(sc.Bytes(), &argv)
		out = append(out, argv)
	}
	return out
}

// callsStarting returns the command lines that begin with prefix.
func (e *fakeEngine) callsStarting(prefix ...string) [][]string {
	var out [][]string
	for _, c := range e.calls() {
		if len(c) >= len(prefix) && slices.Equal(c[:len(prefix)], prefix) {
			out = append(out, c)
		}
	}
	return out
}

// containers names the containers the engine holds.
func (e *fakeEngine) containers() []string {
	names, err := e.cli.List(context.Background())
	if err != nil {
		e.t.Fatal(err)
	}
	return names
}

// networks maps each network the engine holds to its bridge interface.
func (e *fakeEngine) networks() map[string]string {
	out := map[string]string{}
	entries, _ := os.ReadDir(filepath.Join(e.state, "networks"))
	for _, en := range entries {
		b, _ := os.ReadFile(filepath.Join(e.state, "networks", en.Name()))
		out[en.Name()] = string(b)
	}
	return out
}

// cliEnvNames is every variable name any invocation of the CLI had in its environment.
func (e *fakeEngine) cliEnvNames() map[string]bool {
	b, _ := os.ReadFile(filepath.Join(e.state, "cliEnv.log"))
	out := map[string]bool{}
	for _, line := range strings.Split(strings.TrimSpace(string(b)), "\n") {
		var names []string
		json.Unmarshal([]byte(line), &names)
		for _, n := range names {
			out[n] = true
		}
	}
	return out
}

func (e *fakeEngine) envFiles() []map[string]string {
	b, _ := os.ReadFile(filepath.Join(e.state, "envfiles.log"))
	var out []map[string]string
	for _, line := range strings.Split(strings.TrimSpace(string(b)), "\n") {
		var m map[string]string
		if json.Unmarshal([]byte(line), &m) == nil {
			out = append(out, m)
		}
	}
	return out
}

func imageRig(t *testing.T) (*rig, *fakeEngine) {
	r := newRig(t)
	e := newFakeEngine(t)
	r.l.Image.Containers = e.cli
	t.Cleanup(r.l.StopAll) // before the engine's folders go
	return r, e
}

// imageRevision is a revision of an image pushed to the test registry, labelled with seed.
func imageRevision(appID, seed string, release []string) revision.Revision {
	return imageRevisionOf(appID, pushTestImage(seed, ""), release)
}

func imageRevisionOf(appID, image string, release []string) revision.Revision {
	return revision.Revision{DeployID: uuid.Must(uuid.NewV7()).String(), AppID: appID, Slug: "shop", Kind: revision.KindImage,
		Image: image, Release: release, EnvSealed: []byte("sealed"), MinScale: 1, CPU: 0.5}
}

// served is the start of what the fake engine's service answers for rev: its image as
// loaded and its app's own network.
func served(rev revision.Revision) string {
	return "image=" + imageruntime.LocalImage(rev.Image) + " network=tori-app-" + rev.AppID + " "
}

// through sends a request to the edge, as a customer's browser would.
func through(e *edge.Edge, path string) string {
	w := httptest.NewRecorder()
	req := httptest.NewRequest("GET", path, nil)
	req.Host = "shop.apps.test"
	e.ServeHTTP(w, req)
	return w.Body.String()
}

func waitFor(t *testing.T, what string, cond func() bool) {
	t.Helper()
	testinfra.Eventually(t, 10*time.Second, what, cond)
}

func failCode(err error) string {
	var fe *revision.FailError
	if errors.As(err, &fe) {
		return fe.Code
	}
	return ""
}

func TestImageRevisionGoesLiveBehindTheEdge(t *testing.T) {
	t.Setenv("TORI_CANARY_DATABASE_URL", "postgres://control-plane-only")
	r, eng := imageRig(t)
	ctx := context.Background()
	app := uuid.NewString()
	rev := imageRevision(app, "a", []string{"/bin/sh", "-c", "echo migrating $SECRET_TOKEN"})
	if err := r.l.Prepare(ctx, rev, r.jobs); err != nil {
		t.Fatalf("prepare: %v\n%s", err, r.sink.all())
	}
	if err := r.l.Activate(ctx, rev, "", revision.Formation{}); err != nil {
		t.Fatal(err)
	}
	table := edge.NewTable()
	table.Replace([]edge.Route{{AppID: app, Slug: "shop", DeployID: rev.DeployID, Kind: revision.KindImage}}, nil)
	front := &edge.Edge{Domain: "apps.test", Table: table, Services: throughInstances{r.l}}
	body := through(front, "/")
	if !strings.HasPrefix(body, served(rev)) || !strings.Contains(body, "SECRET_TOKEN") || !strings.Contains(body, "PORT") {
		t.Fatalf("edge answered %q", body)
	}
	if strings.Contains(body, "TORI_CANARY") {
		t.Fatalf("the container got the agent's environment: %q", body)
	}

	if !strings.HasSuffix(body, " port=8080") {
		t.Fatalf("the container's $PORT is not ContainerPort: %q", body)
	}

	// The CLI saw the commands of the contract, each container sandboxed flag for flag, and
	// no environment value on any of them.
	name := "release-" + rev.DeployID
	pulls := eng.callsStarting("load", "-i")
	jobRuns := eng.callsStarting("run", "--rm", "--name", name)
	starts := eng.callsStarting("run", "-d", "--name", "tori-"+rev.DeployID)
	if len(pulls) != 1 || len(jobRuns) != 1 || len(starts) != 1 {
		t.Fatalf("commands: %q", eng.calls())
	}
	port := r.l.activeWeb(app).port
	checkSandboxedRun(t, r, jobRuns[0], rev, name, 0, rev.Release)
	checkSandboxedRun(t, r, starts[0], rev, "tori-"+rev.DeployID, port, nil)
	for _, c := range eng.calls() {
		if strings.Contains(strings.Join(c, " "), secret) {
			t.Fatalf("an environment value reached a command line: %q", c)
		}
	}
	// The CLI itself ran with the fixed environment: nothing of the agent's but what finds
	// the engine.
	allowed := map[string]bool{"PATH": true}
	for _, k := range imageruntime.RuntimeEnvKeys {
		allowed[k] = true
	}
	for n := range eng.cliEnvNames() {
		if !allowed[n] {
			t.Fatalf("the runtime's CLI got %s from the agent's environment", n)
		}
	}
	// The env-files existed, 0600, while `run` read them, and are gone since.
	files := eng.envFiles()
	if len(files) != 2 {
		t.Fatalf("env files read: %v", files)
	}
	for _, f := range files {
		if f["mode"] != "0600" {
			t.Fatalf("env file mode %s", f["mode"])
		}
		if _, err := os.Stat(f["path"]); !os.IsNotExist(err) {
			t.Fatalf("env file %s outlived its run", f["path"])
		}
	}
	if left, _ := os.ReadDir(eng.cli.EnvDir); len(left) != 0 {
		t.Fatalf("env folders left: %v", left)
	}

	// Release and service output left the zone redacted, through the same line batching.
	waitFor(t, "the service's output", func() bool { return strings.Contains(r.sink.all(), "stdout: started with SECRET_TOKEN=[redacted]") })
	logs := r.sink.all()
	if strings.Contains(logs, secret) || !strings.Contains(logs, "release: migrating [redacted]") || !strings.Contains(logs, "stderr: listening on") {
		t.Fatalf("logs:\n%s", logs)
	}
	if r.jobs.states[name] != revision.JobSucceeded {
		t.Fatalf("release Job record %v", r.jobs.states)
	}

	// A retry of the same deploy reuses the Job's record and does not run it again.
	r.jobs.steps = nil
	if err := r.l.Prepare(ctx, rev, r.jobs); err != nil {
		t.Fatal(err)
	}
	if len(r.jobs.steps) != 0 || len(eng.callsStarting("run", "--rm")) != 1 {
		t.Fatalf("the release ran again on a retry: %v", r.jobs.steps)
	}
	r.l.Activate(ctx, rev, "", revision.Formation{})
	// The retry's container took the name over; the earlier one's removal left it running.
	if body := through(front, "/"); !strings.HasPrefix(body, served(rev)) {
		t.Fatalf("after a retry: %q", body)
	}
	if got := eng.containers(); !slices.Equal(got, []string{"tori-" + rev.DeployID}) {
		t.Fatalf("containers after a retry: %v", got)
	}

	// A new revision takes over and the old container is removed.
	next := imageRevision(app, "b", nil)
	if err := r.l.Prepare(ctx, next, r.jobs); err != nil {
		t.Fatal(err)
	}
	r.l.Activate(ctx, next, rev.DeployID, revision.Formation{})
	table.Replace([]edge.Route{{AppID: app, Slug: "shop", DeployID: next.DeployID, Kind: revision.KindImage}}, nil)
	if body := through(front, "/"); !strings.HasPrefix(body, served(next)) {
		t.Fatalf("after the switch: %q", body)
	}
	if got := eng.containers(); !slices.Equal(got, []string{"tori-" + next.DeployID}) {
		t.Fatalf("containers after the switch: %v", got)
	}
}

func TestImageReleaseFailureKeepsThePreviousRevision(t *testing.T) {
	r, eng := imageRig(t)
	ctx := context.Background()
	app := uuid.NewString()
	live := imageRevision(app, "1", nil)
	if err := r.l.Prepare(ctx, live, r.jobs); err != nil {
		t.Fatal(err)
	}
	r.l.Activate(ctx, live, "", revision.Formation{})

	bad := imageRevision(app, "2", []string{"/bin/sh", "-c", "echo no; exit 3"})
	for attempt := 1; attempt <= 2; attempt++ {
		err := r.l.Prepare(ctx, bad, r.jobs)
		if failCode(err) != CodeReleaseFailed || !strings.Contains(err.Error(), "status 3") {
			t.Fatalf("attempt %d: %v", attempt, err)
		}
		// A retry of a failed Job runs it again under the same name.
		if n := len(eng.callsStarting("run", "--rm", "--name", "release-"+bad.DeployID)); n != attempt {
			t.Fatalf("attempt %d: %d Job runs", attempt, n)
		}
	}
	if r.jobs.states["release-"+bad.DeployID] != revision.JobFailed {
		t.Fatal(r.jobs.states)
	}
	if len(eng.callsStarting("run", "-d", "--name", "tori-"+bad.DeployID)) != 0 || r.l.procs.prepared[bad.DeployID] != nil {
		t.Fatal("the failed revision was started")
	}
	if got := r.get(app, live.DeployID, "/"); !strings.HasPrefix(got, served(live)) {
		t.Fatalf("the previous revision stopped serving: %q", got)
	}

	// An image that cannot be pulled fails its Job; one that crashes fails its health check.
	unpullable := imageRevisionOf(app, testRegistryHost()+"/shop@sha256:"+strings.Repeat("3", 64), []string{"true"})
	if err := r.l.Prepare(ctx, unpullable, r.jobs); failCode(err) != CodeImagePullFailed || r.jobs.states["release-"+unpullable.DeployID] != revision.JobFailed {
		t.Fatalf("unpullable image: %v %v", err, r.jobs.states)
	}
	crashing := imageRevisionOf(app, pushTestImage("4", "crash"), nil)
	if err := r.l.Prepare(ctx, crashing, r.jobs); failCode(err) != CodeHealthFailed {
		t.Fatalf("crashing image: %v", err)
	}
	if got := eng.containers(); !slices.Equal(got, []string{"tori-" + live.DeployID}) {
		t.Fatalf("containers: %v", got)
	}
}

// triggerClock is a clock whose every limit passes when the test says so.
type triggerClock struct {
	mu    sync.Mutex
	asked []time.Duration
	fire  chan time.Time
}

func (c *triggerClock) After(d time.Duration) <-chan time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.asked = append(c.asked, d)
	return c.fire
}

// The release Job's 10 minutes cover the pull too: one limit, measured by the injected
// clock, which passes here once the Job's container runs.
func TestImageReleaseTimeoutIncludesThePull(t *testing.T) {
	r, eng := imageRig(t)
	clock := &triggerClock{fire: make(chan time.Time)}
	r.l.Image.Clock = clock
	rev := imageRevision(uuid.NewString(), "c", []string{"/bin/sh", "-c", "sleep 60"})
	job := "release-" + rev.DeployID
	start := time.Now()
	prepared := make(chan error, 1)
	go func() { prepared <- r.l.Prepare(context.Background(), rev, r.jobs) }()
	testinfra.Eventually(t, 20*time.Second, "the release Job's container", func() bool {
		names, _ := eng.cli.List(context.Background())
		return slices.Contains(names, job)
	})
	clock.fire <- time.Now()
	err := <-prepared
	if failCode(err) != CodeReleaseTimeout {
		t.Fatalf("slow release: %v", err)
	}
	if time.Since(start) > 20*time.Second {
		t.Fatal("the release was waited for instead of killed")
	}
	clock.mu.Lock()
	defer clock.mu.Unlock()
	if !slices.Equal(clock.asked, []time.Duration{limits.ReleaseLimit}) || len(eng.callsStarting("load", "-i")) != 1 {
		t.Fatalf("limits asked: %v (want one for pull and release)", clock.asked)
	}
	// Killing the CLI leaves a container running; the Job's is removed by name.
	if len(eng.callsStarting("rm", "-f", job)) != 2 || slices.Contains(eng.containers(), job) {
		t.Fatalf("the timed-out Job was not removed: %q", eng.calls())
	}
	if r.jobs.states[job] != revision.JobFailed {
		t.Fatal(r.jobs.states)
	}
}

// A deploy cancelled while its release Job runs lets the Job finish, then starts nothing.
func TestImageCancelledDuringReleaseNeverStarts(t *testing.T) {
	r, eng := imageRig(t)
	rev := imageRevision(uuid.NewString(), "d", []string{"true"})
	r.jobs.cancelDuringRelease = true
	if err := r.l.Prepare(context.Background(), rev, r.jobs); !errors.Is(err, revision.ErrDiscarded) {
		t.Fatalf("got %v", err)
	}
	if r.jobs.states["release-"+rev.DeployID] != revision.JobSucceeded {
		t.Fatal("the running release Job must be allowed to finish")
	}
	if len(eng.callsStarting("run", "-d")) != 0 || len(eng.containers()) != 0 {
		t.Fatalf("a discarded revision was started: %q", eng.calls())
	}
}

// A minScale-0 container naps when idle, the next request wakes it, and deleting the app
// removes it.
func TestImageNapWakeAndDelete(t *testing.T) {
	r, eng := imageRig(t)
	ctx := context.Background()
	app := uuid.NewString()
	rev := imageRevision(app, "e", nil)
	rev.MinScale = 0
	var napped []bool
	r.l.Napped = func(_ context.Context, _ string, n bool) { napped = append(napped, n) }
	r.l.Revision = func(context.Context, string) (revision.Revision, error) { return rev, nil }
	r.l.IdleAfter = time.Minute
	if err := r.l.Prepare(ctx, rev, r.jobs); err != nil {
		t.Fatal(err)
	}
	r.l.Activate(ctx, rev, "", revision.Formation{})
	r.l.napIdle(context.Background(), time.Now().Add(2*time.Minute))
	if len(napped) != 1 || !napped[0] || len(eng.containers()) != 0 {
		t.Fatalf("not napped: %v %v", napped, eng.containers())
	}
	if got := r.get(app, rev.DeployID, "/"); !strings.HasPrefix(got, served(rev)) {
		t.Fatalf("wake: %q", got)
	}
	if len(napped) != 2 || napped[1] || len(eng.containers()) != 1 {
		t.Fatalf("not woken: %v %v", napped, eng.containers())
	}
	// A container that dies behind the agent's back is started again on the next request,
	// and removing the dead one leaves the new one (same name) running.
	dead := r.l.activeWeb(app)
	eng.kill("tori-" + rev.DeployID)
	waitFor(t, "the agent to see the container die", func() bool { return !dead.alive() })
	for range 2 {
		if got := r.get(app, rev.DeployID, "/"); !strings.HasPrefix(got, served(rev)) {
			t.Fatalf("after a crash: %q", got)
		}
	}
	if err := r.l.StopApp(ctx, app); err != nil {
		t.Fatal(err)
	}
	if got := eng.containers(); len(got) != 0 {
		t.Fatalf("containers of a deleted app: %v", got)
	}
	if got := eng.networks(); len(got) != 0 {
		t.Fatalf("networks of a deleted app: %v", got)
	}
}

// After a restart, containers no live route names are removed and live ones come back:
// at once with minScale above 0, on the first request with minScale 0.
func TestRecoverContainersAfterRestart(t *testing.T) {
	r, eng := imageRig(t)
	ctx := context.Background()
	app, sleepy := uuid.NewString(), uuid.NewString()
	live, stale, napper := imageRevision(app, "f", nil), imageRevision(app, "0", nil), imageRevision(sleepy, "5", nil)
	napper.MinScale = 0
	revs := map[string]revision.Revision{live.DeployID: live, napper.DeployID: napper}
	r.l.Revision = func(_ context.Context, id string) (revision.Revision, error) { return revs[id], nil }
	if err := eng.cli.Pull(ctx, live.Image, io.Discard); err != nil {
		t.Fatal(err)
	}
	// What a crashed agent left: its live services, an old one, a release Job, and a
	// container that is none of the zone's business.
	for _, name := range []string{"tori-" + live.DeployID, "tori-" + napper.DeployID, "tori-" + stale.DeployID, "release-" + stale.DeployID, "someone-else"} {
		if _, err := eng.cli.RunDetached(ctx, leftover(t, eng.cli, name, live.Image)); err != nil {
			t.Fatal(err)
		}
	}
	removed, err := r.l.RecoverContainers(ctx, []revision.Route{
		{AppID: app, Slug: "shop", DeployID: live.DeployID, Kind: revision.KindImage},
		{AppID: sleepy, Slug: "sleepy", DeployID: napper.DeployID, Kind: revision.KindImage},
	})
	if err != nil || removed != 2 {
		t.Fatalf("removed %d: %v", removed, err)
	}
	waitFor(t, "the live revision to come back", func() bool {
		r.l.procs.mu.Lock()
		defer r.l.procs.mu.Unlock()
		return r.l.procs.apps[app] != nil && len(r.l.procs.apps[app].web) > 0
	})
	if got := eng.containers(); !slices.Equal(got, []string{"someone-else", "tori-" + live.DeployID}) {
		t.Fatalf("containers: %v", got)
	}
	if got := r.get(app, live.DeployID, "/"); !strings.HasPrefix(got, served(live)) {
		t.Fatalf("after recovery: %q", got)
	}
	eng.cli.Pull(ctx, napper.Image, io.Discard)
	if got := r.get(sleepy, napper.DeployID, "/"); !strings.HasPrefix(got, served(napper)) {
		t.Fatalf("a napping revision on its first request: %q", got)
	}
}

// Values a docker env-file cannot carry fail the deploy, naming the variable, not its value.
func TestEnvFileRefusesLineBreaks(t *testing.T) {
	r, _ := imageRig(t)
	r.l.Image.Env = env{"CERT": "-----BEGIN-----\nsecret-body\n-----END-----"}
	err := r.l.Prepare(context.Background(), imageRevision(uuid.NewString(), "9", nil), r.jobs)
	if failCode(err) != CodeEnvUnavailable || !strings.Contains(err.Error(), "CERT") || strings.Contains(err.Error(), "secret-body") {
		t.Fatalf("got %v", err)
	}
}

// Each app's containers are on a network of their own, with a bridge the zone's forward
// rules match, and never on another app's.
func TestImageAppsGetNetworksOfTheirOwn(t *testing.T) {
	r, eng := imageRig(t)
	ctx := context.Background()
	first, second := imageRevision(uuid.NewString(), "n1", []string{"true"}), imageRevision(uuid.NewString(), "n2", nil)
	for _, rev := range []revision.Revision{first, second} {
		if err := r.l.Prepare(ctx, rev, r.jobs); err != nil {
			t.Fatal(err)
		}
		if err := r.l.Activate(ctx, rev, "", revision.Formation{}); err != nil {
			t.Fatal(err)
		}
	}
	nets := eng.networks()
	a, b := nets["tori-app-"+first.AppID], nets["tori-app-"+second.AppID]
	if len(nets) != 2 || !strings.HasPrefix(a, imageruntime.BridgePrefix) || !strings.HasPrefix(b, imageruntime.BridgePrefix) || a == b || len(a) > 15 {
		t.Fatalf("networks: %v", nets)
	}
	// Asked before every container (the release Job's and the service's): one that exists
	// is kept.
	creates := eng.callsStarting("network", "create")
	if len(creates) != 3 {
		t.Fatalf("network create: %q", creates)
	}
	for _, c := range creates {
		name := c[len(c)-1]
		if !slices.Equal(c, []string{"network", "create", "--driver", "bridge", "--opt", "com.docker.network.bridge.name=" + nets[name], name}) {
			t.Fatalf("network create: %q", c)
		}
	}
	for _, rev := range []revision.Revision{first, second} {
		for _, c := range eng.callsStarting("run") {
			if slices.Contains(c, imageruntime.LocalImage(rev.Image)) && !slices.Contains(c, "tori-app-"+rev.AppID) {
				t.Fatalf("%s ran off its app's network: %q", rev.Image, c)
			}
		}
		if got := r.get(rev.AppID, rev.DeployID, "/"); !strings.HasPrefix(got, served(rev)) {
			t.Fatalf("%q", got)
		}
	}
}
