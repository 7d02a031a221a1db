package supervisor

import (
	"context"
	"errors"
	"os/exec"
	"strings"
	"testing"
	"time"

	"github.com/google/uuid"

	"tori.dev/services/zoneagent/internal/buildplan"
	"tori.dev/services/zoneagent/internal/revision"
)

// builtServerJS answers / with what its build wrote.
const builtServerJS = `
const http = require('http'), fs = require('fs');
http.createServer((req, res) => res.end('node ' + fs.readFileSync('built', 'utf8'))).listen(process.env.PORT, '127.0.0.1');
`

// A Node source without tori.json: npm install (no lockfile), its build script, npm start.
func TestNodeSourceWithoutAManifestIsDetectedBuiltAndServed(t *testing.T) {
	r := newRig(t)
	app := uuid.NewString()
	rev := r.revision(app, tarball(t,
		file{name: "package.json", body: `{"name":"detected","version":"1.0.0","private":true,
			"scripts":{"build":"node -e \"require('fs').writeFileSync('built','built by npm run build')\"","start":"node server.js"}}`},
		file{name: "server.js", body: builtServerJS},
	), nil)
	if err := r.l.Prepare(context.Background(), rev, r.jobs); err != nil {
		t.Fatalf("prepare: %v\n%s", err, r.sink.all())
	}
	r.l.Activate(context.Background(), rev, "", revision.Formation{})
	if got := r.get(app, rev.DeployID, "/"); got != "node built by npm run build" {
		t.Fatalf("GET /: %q\n%s", got, r.sink.all())
	}
	if len(r.jobs.plans) != 1 {
		t.Fatalf("plans reported: %+v", r.jobs.plans)
	}
	p := r.jobs.plans[0]
	if p.Detected != buildplan.Node || p.Build != "npm install && npm run build" || p.Start != "npm start" || !strings.Contains(p.Reason, "without a lockfile") {
		t.Fatalf("plan %+v", p)
	}
	if logs := r.sink.all(); !strings.Contains(logs, "build: > detected@1.0.0 build") {
		t.Fatalf("npm's build output is not in the build stream:\n%s", logs)
	}
}

// A Python source without tori.json: app.py on the standard library, an empty
// requirements.txt (nothing installed), output unbuffered.
func TestPythonSourceWithoutAManifestIsDetectedAndServed(t *testing.T) {
	r := newRig(t)
	app := uuid.NewString()
	rev := r.revision(app, tarball(t,
		file{name: "requirements.txt", body: "# the standard library is enough\n"},
		file{name: "app.py", body: `import http.server, os
class H(http.server.BaseHTTPRequestHandler):
    def do_GET(self):
        body = ("python " + os.environ.get("PYTHONUNBUFFERED", "buffered")).encode()
        self.send_response(200); self.end_headers(); self.wfile.write(body)
print("listening")
http.server.HTTPServer(("127.0.0.1", int(os.environ["PORT"])), H).serve_forever()
`},
	), nil)
	if err := r.l.Prepare(context.Background(), rev, r.jobs); err != nil {
		t.Fatalf("prepare: %v\n%s", err, r.sink.all())
	}
	r.l.Activate(context.Background(), rev, "", revision.Formation{})
	if got := r.get(app, rev.DeployID, "/"); got != "python 1" {
		t.Fatalf("GET /: %q", got)
	}
	p := r.jobs.plans[0]
	if p.Detected != buildplan.Python || p.Build != "" || p.Start != "python3 app.py" || !strings.Contains(p.Reason, "requirements.txt lists nothing") {
		t.Fatalf("plan %+v", p)
	}
	if logs := r.sink.all(); !strings.Contains(logs, "stdout: listening") {
		t.Fatalf("the service's print did not reach the log at once:\n%s", logs)
	}
}

// A broken package.json fails the deploy before anything runs, naming the file and the place.
func TestABrokenPackageJSONFailsNamingTheFile(t *testing.T) {
	r := newRig(t)
	rev := r.revision(uuid.NewString(), tarball(t, file{name: "package.json", body: "{\n  \"scripts\": {\"start\": \"node server.js\",}\n}\n"}), nil)
	err := r.l.Prepare(context.Background(), rev, r.jobs)
	var fe *revision.FailError
	if !errors.As(err, &fe) || fe.Code != CodeInvalidSource || !strings.Contains(fe.Message, "package.json is not valid JSON") || !strings.Contains(fe.Message, "line 2") {
		t.Fatalf("got %v", err)
	}
	if len(r.jobs.plans) != 0 {
		t.Fatalf("a plan was reported: %+v", r.jobs.plans)
	}
}

// A detected build that runs past the plan's build time is killed and fails with
// build_timeout; the limit is the revision's plan's, measured by the runner's clock.
func TestADetectedBuildPastThePlansTimeFailsWithBuildTimeout(t *testing.T) {
	r := newRig(t)
	clock := &fakeClock{expire: 3 * time.Minute}
	r.l.Source.Clock = clock
	rev := r.revision(uuid.NewString(), tarball(t,
		file{name: "package.json", body: `{"scripts":{"build":"sleep 60","start":"node server.js"}}`},
		file{name: "server.js", body: serverJS},
	), nil)
	rev.BuildMinutes = 3
	start := time.Now()
	err := r.l.Prepare(context.Background(), rev, r.jobs)
	var fe *revision.FailError
	if !errors.As(err, &fe) || fe.Code != CodeBuildTimeout || fe.Message != "build exceeded its time limit" {
		t.Fatalf("got %v", err)
	}
	if time.Since(start) > 30*time.Second {
		t.Fatal("the build was waited for instead of killed")
	}
	if len(clock.asked) == 0 || clock.asked[0] != 3*time.Minute {
		t.Fatalf("limits asked: %v", clock.asked)
	}
}

// The zone's Go is in every sandbox, read-only, first on PATH, with GOTOOLCHAIN=local: a
// go.mod asking for a newer Go fails its build saying so instead of downloading one.
func TestGoIsTheZonesOwnAndNeverDownloaded(t *testing.T) {
	r := newRig(t)
	if r.l.Source.Sandbox.GoRoot == "" {
		t.Fatal("this host's Go (which builds the project) was not found")
	}
	want, err := exec.Command(r.l.Source.Sandbox.GoRoot+"/bin/go", "env", "GOVERSION").Output()
	if err != nil {
		t.Fatal(err)
	}
	app := uuid.NewString()
	rev := r.revision(app, tarball(t,
		file{name: "go.mod", body: "module example.com/future\n\ngo 1.999\n"},
		file{name: "main.go", body: "package main\n\nfunc main() {}\n"},
		manifest(map[string]any{"build": "command -v go; go env GOVERSION GOTOOLCHAIN GOROOT; touch /opt/go/x 2>&1 || echo read-only; go build -o bin/future ."}),
	), nil)
	err = r.l.Prepare(context.Background(), rev, r.jobs)
	var fe *revision.FailError
	if !errors.As(err, &fe) || fe.Code != CodeBuildFailed {
		t.Fatalf("got %v\n%s", err, r.sink.all())
	}
	logs := r.sink.all()
	for _, line := range []string{"build: /opt/go/bin/go", "build: " + strings.TrimSpace(string(want)), "build: local", "build: /opt/go", "build: read-only",
		"go.mod requires go >= 1.999 (running go " + strings.TrimPrefix(strings.TrimSpace(string(want)), "go") + "; GOTOOLCHAIN=local)"} {
		if !strings.Contains(logs, line) {
			t.Errorf("the build log lacks %q:\n%s", line, logs)
		}
	}
	if p := r.jobs.plans[0]; p.Detected != buildplan.Go || p.Start != "bin/future" {
		t.Fatalf("plan %+v", p)
	}
}

// A Procfile without tori.json: its web: line serves, its worker: line is a declared type
// reported with the plan, and its release: line runs as the release Job before the start;
// a release sent with the deploy wins over it.
func TestAProcfileDeclaresProcessesAndItsReleaseLineRuns(t *testing.T) {
	procfile := "# web and a worker\nweb: node server.js\nworker: node -e \"setInterval(() => {}, 1000)\"\n" +
		"release: node -e \"require('fs').writeFileSync('released', 'by the Procfile')\"\n"
	r := newRig(t)
	app := uuid.NewString()
	rev := r.revision(app, tarball(t, file{name: "Procfile", body: procfile}, file{name: "server.js", body: serverJS}), nil)
	if err := r.l.Prepare(context.Background(), rev, r.jobs); err != nil {
		t.Fatalf("prepare: %v\n%s", err, r.sink.all())
	}
	r.l.Activate(context.Background(), rev, "", revision.Formation{})
	if got := r.get(app, rev.DeployID, "/"); got != "ok released" {
		t.Fatalf("GET /: %q, want the release line to have run\n%s", got, r.sink.all())
	}
	p := r.jobs.plans[0]
	var got []string
	for _, x := range p.Processes {
		got = append(got, x.Name+"="+x.Command)
	}
	if p.Detected != buildplan.Procfile || p.Start != "node server.js" ||
		strings.Join(got, "; ") != `web=node server.js; worker=node -e "setInterval(() => {}, 1000)"` {
		t.Fatalf("plan %+v", p)
	}

	// The deploy's own release wins over the Procfile's (which would have written the file).
	given := r.revision(app, tarball(t, file{name: "Procfile", body: procfile}, file{name: "server.js", body: serverJS}),
		[]string{"true"})
	given.ReleaseGiven = true
	if err := r.l.Prepare(context.Background(), given, r.jobs); err != nil {
		t.Fatalf("prepare: %v\n%s", err, r.sink.all())
	}
	r.l.Activate(context.Background(), given, rev.DeployID, revision.Formation{})
	if got := r.get(app, given.DeployID, "/"); got != "ok unreleased" {
		t.Fatalf("GET /: %q, want the deploy's release to have run", got)
	}
}
