package supervisor

import (
	"archive/tar"
	"bytes"
	"compress/gzip"
	"context"
	"encoding/json"
	"errors"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/uuid"

	"tori.dev/contract/limits"
	"tori.dev/services/zoneagent/internal/artifact"
	"tori.dev/services/zoneagent/internal/buildplan"
	"tori.dev/services/zoneagent/internal/edge"
	"tori.dev/services/zoneagent/internal/imageruntime"
	"tori.dev/services/zoneagent/internal/revision"
	"tori.dev/services/zoneagent/internal/sandbox"
	agentapp "tori.dev/services/zoneagent/internal/usecase"
)

// server.js answers / with "ok <version>", /env with its whole environment, and /probe with
// what it could read of the control plane: the agent's environment and a file of its data.
const serverJS = `
const http = require('http'), fs = require('fs');
http.createServer((req, res) => {
  if (req.url === '/env') { res.end(JSON.stringify(process.env)); return; }
  if (req.url.startsWith('/probe')) {
    const out = {};
    for (const p of [process.env.PROBE_ENVIRON, process.env.PROBE_FILE]) {
      try { out[p] = fs.readFileSync(p, 'utf8'); } catch (e) { out[p] = 'ERR ' + e.code; }
    }
    res.end(JSON.stringify(out)); return;
  }
  res.end('ok ' + (fs.existsSync('released') ? 'released' : 'unreleased'));
}).listen(process.env.PORT, '127.0.0.1');
`

type file struct {
	name, body, link string
	typ              byte
}

func tarball(t *testing.T, files ...file) []byte {
	t.Helper()
	var buf bytes.Buffer
	zw := gzip.NewWriter(&buf)
	tw := tar.NewWriter(zw)
	for _, f := range files {
		h := &tar.Header{Name: f.name, Mode: 0o644, Size: int64(len(f.body)), Typeflag: tar.TypeReg}
		if f.typ != 0 {
			h.Typeflag, h.Size, h.Linkname = f.typ, 0, f.link
		}
		tw.WriteHeader(h)
		if h.Typeflag == tar.TypeReg {
			tw.Write([]byte(f.body))
		}
	}
	tw.Close()
	zw.Close()
	return buf.Bytes()
}

func manifest(m map[string]any) file {
	b, _ := json.Marshal(m)
	return file{name: "tori.json", body: string(b)}
}

type sink struct {
	mu    sync.Mutex
	lines []string
	procs []string // the process of each line
	reds  int
}

func (s *sink) Line(appID, deployID, stream, msg string, n int) {
	s.ProcessLine(appID, deployID, "", stream, msg, n)
}

func (s *sink) ProcessLine(_, _, process, stream, msg string, n int) {
	s.mu.Lock()
	s.lines = append(s.lines, stream+": "+msg)
	s.procs = append(s.procs, process)
	s.reds += n
	s.mu.Unlock()
}

// of is the lines process wrote.
func (s *sink) of(process string) []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	var out []string
	for i, l := range s.lines {
		if s.procs[i] == process {
			out = append(out, l)
		}
	}
	return out
}

func (s *sink) all() string { s.mu.Lock(); defer s.mu.Unlock(); return strings.Join(s.lines, "\n") }

type env map[string]string

func (e env) Open(context.Context, revision.Revision) (map[string]string, error) { return e, nil }

// jobs records release Jobs in memory.
type jobs struct {
	mu        sync.Mutex
	states    map[string]revision.JobState
	steps     []agentapp.Step
	plans     []buildplan.Plan
	discarded bool
	// cancelDuringRelease makes the control plane give the revision up as its release starts.
	cancelDuringRelease bool
}

func (j *jobs) JobState(_ context.Context, name string) (revision.JobState, error) {
	j.mu.Lock()
	defer j.mu.Unlock()
	return j.states[name], nil
}

func (j *jobs) SetJobState(_ context.Context, name, _ string, state revision.JobState) error {
	j.mu.Lock()
	defer j.mu.Unlock()
	j.states[name] = state
	return nil
}

func (j *jobs) BuildDetected(_ context.Context, p buildplan.Plan) error {
	j.mu.Lock()
	j.plans = append(j.plans, p)
	j.mu.Unlock()
	return nil
}

func (j *jobs) Discarded(context.Context) bool {
	j.mu.Lock()
	defer j.mu.Unlock()
	return j.discarded
}

func (j *jobs) Step(_ context.Context, s agentapp.Step, _ string) error {
	j.mu.Lock()
	j.steps = append(j.steps, s)
	if s == agentapp.StepReleaseStarted && j.cancelDuringRelease {
		j.discarded = true
	}
	j.mu.Unlock()
	return nil
}

// fakeClock makes every limit pass at once and records which limits were asked for.
type fakeClock struct {
	mu     sync.Mutex
	asked  []time.Duration
	expire time.Duration // limits of this length fire at once; others never
}

func (c *fakeClock) After(d time.Duration) <-chan time.Time {
	c.mu.Lock()
	c.asked = append(c.asked, d)
	c.mu.Unlock()
	ch := make(chan time.Time, 1)
	if d == c.expire {
		ch <- time.Now().Add(d)
	}
	return ch
}

const secret = "s3cr3t-token-value"

type rig struct {
	t      *testing.T
	l      *Local
	objDir string
	sink   *sink
	jobs   *jobs
	secret string // a file of the "control plane" the customer must not read
}

func newRig(t *testing.T) *rig {
	t.Helper()
	apps, err := os.MkdirTemp("", "tori-runner-test-")
	if err != nil {
		t.Fatal(err)
	}
	os.Chmod(apps, 0o711)
	t.Cleanup(func() { os.RemoveAll(apps) })
	data := t.TempDir()
	secretFile := filepath.Join(data, "keyring")
	os.WriteFile(secretFile, []byte("control-plane-secret"), 0o600)
	r := &rig{t: t, objDir: filepath.Join(data, "objects"), sink: &sink{}, jobs: &jobs{states: map[string]revision.JobState{}}, secret: secretFile}
	sb := testSandbox(t)
	ids := &Identities{AppsDir: apps, Sandbox: &sb, UIDs: newMemUIDs(), UIDBase: testUIDBase, UIDCount: 1000,
		Disks: &sandbox.Disks{Dir: filepath.Join(data, "disks"), Bytes: 64 << 20, Mkfs: "mkfs.ext4"}}
	vars := env{"SECRET_TOKEN": secret, "PROBE_ENVIRON": "/proc/" + strconv.Itoa(os.Getpid()) + "/environ", "PROBE_FILE": secretFile}
	r.l = newLocal(ids, artifactsFrom(t, r.objDir), nil, vars, r.sink, 1000)
	t.Cleanup(r.l.StopAll)
	return r
}

// newLocal is a runner wired as cmd/zoneagent wires one: both runtimes share the apps'
// identities, the sandbox and the deploys' environments.
func newLocal(ids *Identities, artifacts artifact.Source, containers imageruntime.ContainerRuntime, vars EnvOpener, sink LogSink, linesPerSecond int) *Local {
	health := Health{Timeout: 20 * time.Second}
	return &Local{
		Source: &SourceRuntime{Identities: ids, Artifacts: artifacts, Sandbox: ids.Sandbox, Env: vars, Health: health,
			Output: &Output{Sink: sink, LinesPerSecond: linesPerSecond}},
		Image:      &ImageRuntime{Containers: containers, Identities: ids, Sandbox: ids.Sandbox, Env: vars, Logs: sink, Health: health},
		Identities: ids,
	}
}

func (r *rig) revision(appID string, archive []byte, release []string) revision.Revision {
	r.t.Helper()
	deployID := uuid.Must(uuid.NewV7()).String()
	key := artifactKey(appID, deployID)
	p := filepath.Join(r.objDir, key)
	os.MkdirAll(filepath.Dir(p), 0o700)
	if err := os.WriteFile(p, archive, 0o600); err != nil {
		r.t.Fatal(err)
	}
	return revision.Revision{DeployID: deployID, AppID: appID, Slug: "svc", Kind: revision.KindSource, ArtifactKey: key,
		Release: release, EnvSealed: []byte("sealed"), BuildMinutes: 10, MinScale: 1}
}

func (r *rig) get(appID, deployID, path string) string {
	r.t.Helper()
	w := httptest.NewRecorder()
	throughInstances{r.l}.ServeHTTP(w, httptest.NewRequest("GET", path, nil), edge.Route{AppID: appID, DeployID: deployID, Kind: revision.KindSource})
	return w.Body.String()
}

func TestSourceRevisionBuildsReleasesAndServes(t *testing.T) {
	t.Setenv("TORI_CANARY_DATABASE_URL", "postgres://control-plane-only")
	r := newRig(t)
	app := uuid.NewString()
	rev := r.revision(app, tarball(t,
		manifest(map[string]any{"build": "echo building with $SECRET_TOKEN; echo $SECRET_TOKEN | base64", "start": "node server.js", "release": "sh -c touch\\ released"}),
		file{name: "server.js", body: serverJS},
	), []string{"/bin/sh", "-c", "touch released; echo migrating $SECRET_TOKEN"})
	if err := r.l.Prepare(context.Background(), rev, r.jobs); err != nil {
		t.Fatalf("prepare: %v\n%s", err, r.sink.all())
	}
	if err := r.l.Activate(context.Background(), rev, "", revision.Formation{}); err != nil {
		t.Fatal(err)
	}
	if got := r.get(app, rev.DeployID, "/"); got != "ok released" {
		t.Fatalf("GET /: %q", got)
	}
	if r.jobs.states["release-"+rev.DeployID] != revision.JobSucceeded {
		t.Fatalf("release job %v", r.jobs.states)
	}
	// Output left the zone redacted, with a count, also in base64.
	logs := r.sink.all()
	if strings.Contains(logs, secret) || !strings.Contains(logs, "build: building with [redacted]") ||
		!strings.Contains(logs, "release: migrating [redacted]") || r.sink.reds < 3 {
		t.Fatalf("redaction: %d\n%s", r.sink.reds, logs)
	}

	// The process sees its deploy's variables and PORT, nothing of the agent's environment.
	var penv map[string]string
	json.Unmarshal([]byte(r.get(app, rev.DeployID, "/env")), &penv)
	if penv["SECRET_TOKEN"] != secret || penv["PORT"] == "" || penv["TORI_PROCESS"] != "web.1" {
		t.Fatalf("process env %v", penv)
	}
	for k := range penv {
		if (strings.HasPrefix(k, "TORI_") && k != "TORI_PROCESS") || k == "DATABASE_URL" || k == "GATEWAY_SIGNING_KEY" {
			t.Fatalf("process inherited %s", k)
		}
	}
	// It cannot read the agent's environment through /proc, nor the control plane's files.
	var probe map[string]string
	json.Unmarshal([]byte(r.get(app, rev.DeployID, "/probe")), &probe)
	if len(probe) != 2 {
		t.Fatalf("probe answered %v", probe)
	}
	for path, got := range probe {
		if strings.Contains(got, "control-plane") {
			t.Fatalf("customer read %s: %q", path, got)
		}
		if os.Geteuid() == 0 && !strings.HasPrefix(got, "ERR") {
			t.Fatalf("customer could open %s", path)
		}
	}

	// A retry of the same deploy reuses the release Job and does not run it again.
	r.jobs.steps = nil
	os.Remove(filepath.Join(r.l.Identities.Tree(app, rev.DeployID), "released"))
	rev2 := rev
	if err := r.l.Prepare(context.Background(), rev2, r.jobs); err != nil {
		t.Fatal(err)
	}
	if len(r.jobs.steps) != 0 {
		t.Fatalf("release ran again on a retry: %v", r.jobs.steps)
	}
}

func TestReleaseFailureAndTenMinuteLimit(t *testing.T) {
	r := newRig(t)
	app := uuid.NewString()
	src := tarball(t, manifest(map[string]any{"start": "node server.js"}), file{name: "server.js", body: serverJS})

	rev := r.revision(app, src, []string{"/bin/sh", "-c", "exit 3"})
	err := r.l.Prepare(context.Background(), rev, r.jobs)
	var fe *revision.FailError
	if !errors.As(err, &fe) || fe.Code != CodeReleaseFailed {
		t.Fatalf("failing release: %v", err)
	}
	if r.jobs.states["release-"+rev.DeployID] != revision.JobFailed {
		t.Fatal(r.jobs.states)
	}

	// The release limit is measured by the injected clock: it passes at once here, while the
	// release would sleep for a minute.
	clock := &fakeClock{expire: limits.ReleaseLimit}
	r.l.Source.Clock = clock
	rev = r.revision(app, src, []string{"/bin/sh", "-c", "sleep 60"})
	start := time.Now()
	err = r.l.Prepare(context.Background(), rev, r.jobs)
	if !errors.As(err, &fe) || fe.Code != CodeReleaseTimeout {
		t.Fatalf("slow release: %v", err)
	}
	if time.Since(start) > 20*time.Second {
		t.Fatal("the release was waited for instead of killed")
	}
	if len(clock.asked) == 0 || clock.asked[len(clock.asked)-1] != 10*time.Minute {
		t.Fatalf("limits asked: %v", clock.asked)
	}
}

func TestHostileTarballsAndImagesAreRefused(t *testing.T) {
	r := newRig(t)
	app := uuid.NewString()
	for name, tc := range map[string]struct {
		archive []byte
		code    string
	}{
		"dotdot":        {tarball(t, manifest(map[string]any{"start": "true"}), file{name: "../../evil", body: "x"}), revision.CodeInvalidArtifact},
		"escaping link": {tarball(t, manifest(map[string]any{"start": "true"}), file{name: "etc", link: "../../../../etc", typ: tar.TypeSymlink}), revision.CodeInvalidArtifact},
		"no manifest":   {tarball(t, file{name: "server.js", body: serverJS}), CodeInvalidSource},
	} {
		t.Run(name, func(t *testing.T) {
			rev := r.revision(app, tc.archive, nil)
			err := r.l.Prepare(context.Background(), rev, r.jobs)
			var fe *revision.FailError
			if !errors.As(err, &fe) || fe.Code != tc.code {
				t.Fatalf("got %v", err)
			}
			if _, err := os.Stat(filepath.Join(filepath.Dir(r.l.Identities.AppsDir), "evil")); err == nil {
				t.Fatal("wrote outside the tree")
			}
		})
	}
	err := r.l.Prepare(context.Background(), revision.Revision{DeployID: "d", AppID: app, Kind: revision.KindImage, Image: "ghcr.io/a/b@sha256:00"}, r.jobs)
	var fe *revision.FailError
	if !errors.As(err, &fe) || fe.Code != revision.CodeNoRuntime || !strings.Contains(fe.Message, "ZONE_IMAGE_RUNTIME") {
		t.Fatalf("image deploy: %v", err)
	}
}

func TestRedactorEncodings(t *testing.T) {
	r := NewRedactor(map[string]string{"A": "p@ss w/rd+long", "SHORT": "1234567"})
	for _, in := range []string{"p@ss w/rd+long", "cEBzcyB3L3JkK2xvbmc=", "p%40ss+w%2Frd%2Blong", "p@ss%20w%2Frd+long"} {
		if out, n := r.Redact("x " + in + " y"); out != "x [redacted] y" || n != 1 {
			t.Errorf("%q → %q (%d)", in, out, n)
		}
	}
	if out, n := r.Redact("code 1234567"); n != 0 || out != "code 1234567" {
		t.Errorf("short values must stay: %q", out)
	}
}

// A minScale-0 service naps when idle and the next request wakes it.
func TestNapAndWake(t *testing.T) {
	r := newRig(t)
	app := uuid.NewString()
	rev := r.revision(app, tarball(t, manifest(map[string]any{"start": "node server.js"}), file{name: "server.js", body: serverJS}), nil)
	rev.MinScale = 0
	var napped []bool
	r.l.Napped = func(_ context.Context, _ string, n bool) { napped = append(napped, n) }
	r.l.Revision = func(context.Context, string) (revision.Revision, error) { return rev, nil }
	r.l.IdleAfter = time.Minute
	if err := r.l.Prepare(context.Background(), rev, r.jobs); err != nil {
		t.Fatal(err)
	}
	r.l.Activate(context.Background(), rev, "", revision.Formation{})
	first := r.l.activeWeb(app)
	r.l.napIdle(context.Background(), time.Now().Add(30*time.Second))
	if !first.alive() {
		t.Fatal("napped before IdleAfter")
	}
	r.l.napIdle(context.Background(), time.Now().Add(2*time.Minute))
	if first.alive() || len(napped) != 1 || !napped[0] {
		t.Fatalf("not napped: alive=%v napped=%v", first.alive(), napped)
	}
	// Napping, the app keeps no process on the host: not its network's holder nor pasta.
	sb := r.l.Source.Sandbox
	if left := sb.Cgroups.Pids(app); len(left) > 0 || sb.HoldsNetwork(app) {
		t.Fatalf("the napping app keeps processes %v (network held: %v)", left, sb.HoldsNetwork(app))
	}
	if got := r.get(app, rev.DeployID, "/"); got != "ok unreleased" {
		t.Fatalf("wake: %q", got)
	}
	if !sb.HoldsNetwork(app) {
		t.Fatal("the wake made no network")
	}
	if len(napped) != 2 || napped[1] {
		t.Fatalf("wake not reported: %v", napped)
	}
}

// A deploy cancelled while its release runs lets the Job finish, then starts nothing.
func TestCancelledDuringReleaseNeverStarts(t *testing.T) {
	r := newRig(t)
	app := uuid.NewString()
	rev := r.revision(app, tarball(t, manifest(map[string]any{"start": "node server.js"}), file{name: "server.js", body: serverJS}),
		[]string{"/bin/sh", "-c", "touch released"})
	r.jobs.cancelDuringRelease = true
	err := r.l.Prepare(context.Background(), rev, r.jobs)
	if !errors.Is(err, revision.ErrDiscarded) {
		t.Fatalf("got %v", err)
	}
	if r.jobs.states["release-"+rev.DeployID] != revision.JobSucceeded {
		t.Fatal("the running release Job must be allowed to finish")
	}
	if len(r.l.procs.prepared) != 0 {
		t.Fatal("a discarded revision was started")
	}
}

// The plan's CPU ceiling, the memory and the process limits are the app's cgroup's, and
// the service's sandbox is in it; deleting the app removes the group.
func TestAppCgroupLimits(t *testing.T) {
	r := newRig(t)
	app := uuid.NewString()
	rev := r.revision(app, tarball(t, manifest(map[string]any{"start": "node server.js"}), file{name: "server.js", body: serverJS}), nil)
	rev.CPU = 0.25
	if err := r.l.Prepare(context.Background(), rev, r.jobs); err != nil {
		t.Fatal(err)
	}
	p := r.l.procs.prepared[rev.DeployID].web
	cg, _ := os.ReadFile(filepath.Join("/proc", strconv.Itoa(p.sandbox.Pid()), "cgroup"))
	if !strings.Contains(string(cg), "tori-"+testZone+"/"+app) {
		t.Fatalf("process not in the app's group:\n%s", cg)
	}
	g := r.l.Source.Sandbox.Cgroups
	// The app's group keeps the totals; the process's leaf has the plan's CPU.
	leaf := p.sandbox.CgroupLeaf()
	for file, want := range map[string]string{leaf + "/cpu/cpu.cfs_quota_us": "25000", "/memory/memory.limit_in_bytes": strconv.FormatInt(r.l.Source.Sandbox.MemoryBytes, 10), "/pids/pids.max": "256"} {
		l, cf, _ := strings.Cut(file, "/")
		c, f, _ := strings.Cut(cf, "/")
		got, _ := os.ReadFile(filepath.Join(g.LeafDir(c, app, l), f))
		if strings.TrimSpace(string(got)) != want {
			t.Fatalf("%s = %q, want %s", file, got, want)
		}
	}
	r.l.StopApp(context.Background(), app)
	if _, err := os.Stat(g.Dir("memory", app)); !os.IsNotExist(err) {
		t.Fatal("the app's group outlived the app")
	}
}

// A deploy given up before its release starts runs no release Job at all.
func TestDiscardedBeforeReleaseRunsNoJob(t *testing.T) {
	r := newRig(t)
	app := uuid.NewString()
	rev := r.revision(app, tarball(t, manifest(map[string]any{"start": "node server.js"}), file{name: "server.js", body: serverJS}),
		[]string{"/bin/sh", "-c", "touch released"})
	r.jobs.discarded = true
	if err := r.l.Prepare(context.Background(), rev, r.jobs); !errors.Is(err, revision.ErrDiscarded) {
		t.Fatalf("got %v", err)
	}
	if len(r.jobs.states) != 0 {
		t.Fatalf("a release Job ran: %v", r.jobs.states)
	}
}
