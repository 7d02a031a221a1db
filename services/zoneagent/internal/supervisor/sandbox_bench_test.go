package supervisor

import (
	"context"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"testing"
	"time"

	"github.com/google/uuid"

	"tori.dev/services/zoneagent/internal/edge"
	"tori.dev/services/zoneagent/internal/revision"
	"tori.dev/services/zoneagent/internal/sandbox"
)

// BenchmarkSandbox prints what the sandbox costs (not part of make test; README,
// "Performance"):
//
//		go test -run '^$' -bench BenchmarkSandbox -benchtime 20x ./internal/supervisor/
//
//	  - network: making an app's network namespace and attaching pasta (an app's first start
//	    and each wake from a nap pay it, a nap releasing the network; deploys do not);
//	  - start: a command run to its end in a sandbox (nsenter into the app's namespaces,
//	    bwrap, cgroup, seccomp, prlimit) against the same command as a plain process; target
//	    overhead under 50 ms;
//	  - wake: the first byte of a request that wakes a napping small Python app; target under
//	    500 ms.
func BenchmarkSandbox(b *testing.B) {
	t := &testing.T{}
	r := newRig(t)
	b.Cleanup(r.l.StopAll)
	app := uuid.NewString()
	ctx := context.Background()
	if err := r.l.Identities.Ensure(ctx, app); err != nil {
		b.Fatal(err)
	}
	dir := filepath.Join(r.l.Identities.AppsDir, app)
	os.Mkdir(dir, 0o700)
	cred := r.l.Source.Sandbox.Credential(app)
	os.Chown(dir, int(cred.Uid), int(cred.Gid))
	defer r.l.Source.Sandbox.Cgroups.Remove(app)
	defer r.l.Source.Sandbox.ReleaseNetwork(app)

	b.Run("network", func(b *testing.B) {
		var total time.Duration
		for i := 0; i < b.N; i++ {
			r.l.Source.Sandbox.ReleaseNetwork(app)
			t0 := time.Now()
			if _, err := r.l.Source.Sandbox.Network(ctx, app); err != nil {
				b.Fatal(err)
			}
			total += time.Since(t0)
		}
		b.ReportMetric(float64(total/time.Duration(b.N))/1e6, "ms-per-app")
		b.Logf("network namespace and pasta, once per app: %v", total/time.Duration(b.N))
	})

	b.Run("start", func(b *testing.B) {
		var plain, boxed time.Duration
		for i := 0; i < b.N; i++ {
			t0 := time.Now()
			if err := exec.Command("/bin/true").Run(); err != nil {
				b.Fatal(err)
			}
			plain += time.Since(t0)
			t0 = time.Now()
			sb, err := r.l.Source.Sandbox.Start(ctx, sandbox.Spec{AppID: app, Dir: dir, Argv: []string{"/bin/true"}, Env: sandbox.Environ(nil, 0)})
			if err != nil {
				b.Fatal(err)
			}
			if err := sb.Wait(); err != nil {
				b.Fatal(err)
			}
			boxed += time.Since(t0)
		}
		n := time.Duration(b.N)
		b.ReportMetric(float64((boxed-plain)/n)/1e6, "ms-overhead")
		b.Logf("plain %v, sandboxed %v, overhead %v per start (target < 50ms)", plain/n, boxed/n, (boxed-plain)/n)
	})

	b.Run("wake", func(b *testing.B) {
		py := "import os\nfrom http.server import BaseHTTPRequestHandler, HTTPServer\nclass H(BaseHTTPRequestHandler):\n    def do_GET(self):\n        self.send_response(200); self.end_headers(); self.wfile.write(b'up')\nHTTPServer(('127.0.0.1', int(os.environ['PORT'])), H).serve_forever()\n"
		wapp := uuid.NewString()
		rev := r.revision(wapp, tarball(t, manifest(map[string]any{"start": "python3 server.py"}), file{name: "server.py", body: py}), nil)
		rev.MinScale = 0
		r.l.Revision = func(context.Context, string) (revision.Revision, error) { return rev, nil }
		r.l.IdleAfter = time.Minute
		if err := r.l.Prepare(ctx, rev, r.jobs); err != nil {
			b.Fatal(err)
		}
		r.l.Activate(ctx, rev, "", revision.Formation{})
		// Each nap releases the app's network; every other wake finds it made again before
		// the request (as when naps kept it), so the medians show what the release adds.
		var total time.Duration
		var released, kept []time.Duration
		for i := 0; i < b.N; i++ {
			r.l.napIdle(ctx, time.Now().Add(2*time.Minute))
			if r.l.Source.Sandbox.HoldsNetwork(wapp) {
				b.Fatal("the nap kept the app's network")
			}
			if i%2 == 1 {
				if _, err := r.l.Source.Sandbox.Network(ctx, wapp); err != nil {
					b.Fatal(err)
				}
			}
			t0 := time.Now()
			w := httptest.NewRecorder()
			throughInstances{r.l}.ServeHTTP(w, httptest.NewRequest("GET", "/", nil), edge.Route{AppID: wapp, DeployID: rev.DeployID, Kind: revision.KindSource})
			d := time.Since(t0)
			total += d
			if i%2 == 1 {
				kept = append(kept, d)
			} else {
				released = append(released, d)
			}
			if w.Body.String() != "up" {
				b.Fatalf("wake answered %q\n%s", w.Body.String(), r.sink.all())
			}
		}
		b.ReportMetric(float64(total/time.Duration(b.N))/1e6, "ms-first-byte")
		b.Logf("first byte after a wake: %v (target < 500ms)", total/time.Duration(b.N))
		if len(kept) > 0 {
			median := func(d []time.Duration) time.Duration { slices.Sort(d); return d[len(d)/2] }
			b.Logf("median first byte: %v after a nap (network made anew), %v with the network made before the request",
				median(released), median(kept))
		}
		r.l.StopApp(ctx, wapp)
	})
}
