package supervisor

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"github.com/google/uuid"
)

// cacheProbe is a build that reports what it finds of the build cache under tag, then
// plants a file of its own app's in it: the caches' variables, the file an earlier build
// planted in the app's cache, any file named planted anywhere the build can see, and what
// it reads at the host path of another app's cache.
func cacheProbe(tag, plant, otherHostPath string) string {
	return `echo "` + tag + ` env $npm_config_cache $PIP_CACHE_DIR $GOMODCACHE $GOCACHE";` +
		`if [ -f "$npm_config_cache/planted" ]; then echo "` + tag + ` found $(cat "$npm_config_cache/planted")"; else echo "` + tag + ` found nothing"; fi;` +
		`echo "` + tag + ` anywhere [$(find / -path /proc -prune -o -name planted -print 2>/dev/null | tr '\n' ' ')]";` +
		`echo "` + tag + ` other [$(cat '` + otherHostPath + `' 2>&1 | head -c 200)]";` +
		`mkdir -p "$npm_config_cache" && echo ` + plant + ` > "$npm_config_cache/planted"`
}

// line is the build's output line that starts with tag and key.
func (s *sink) line(t *testing.T, tag, key string) string {
	t.Helper()
	for _, l := range strings.Split(s.all(), "\n") {
		if rest, ok := strings.CutPrefix(l, "build: "+tag+" "+key); ok {
			return strings.TrimSpace(rest)
		}
	}
	t.Fatalf("no build line %q %q in\n%s", tag, key, s.all())
	return ""
}

// Issue 30: each app's build cache is its own. A file one app's build plants in its cache is
// there for that app's next build, never visible to another app's build nor readable by
// the other app's uid on the host; clearCache empties it; deleting the app removes it.
func TestBuildCachePerApp(t *testing.T) {
	r := newRig(t)
	ctx := context.Background()
	appA, appB := uuid.NewString(), uuid.NewString()
	plantedA := filepath.Join(r.l.Source.buildCache(appA), "npm", "planted")
	build := func(appID, tag, plant, other string, clearCache bool) {
		t.Helper()
		rev := r.revision(appID, tarball(t,
			manifest(map[string]any{"build": cacheProbe(tag, plant, other), "start": "node server.js"}),
			file{name: "server.js", body: serverJS},
		), nil)
		rev.ClearCache = clearCache
		if err := r.l.Prepare(ctx, rev, r.jobs); err != nil {
			t.Fatalf("prepare %s: %v\n%s", tag, err, r.sink.all())
		}
	}

	build(appA, "a1", "from-a", "/dev/null", false)
	if got := r.sink.line(t, "a1", "env"); got != "/cache/npm /cache/pip /cache/go/mod /cache/go/build" {
		t.Fatalf("the build's cache variables: %q", got)
	}
	if got := r.sink.line(t, "a1", "found"); got != "nothing" {
		t.Fatalf("a new app's first build found %q in its cache", got)
	}
	if b, err := os.ReadFile(plantedA); err != nil || strings.TrimSpace(string(b)) != "from-a" {
		t.Fatalf("the planted file is not in app A's cache on the host: %q %v", b, err)
	}

	// App B's build: its own cache is empty, nothing named planted is anywhere in its view,
	// and A's cache at its host path is not there.
	build(appB, "b1", "from-b", plantedA, false)
	if got := r.sink.line(t, "b1", "found"); got != "nothing" {
		t.Fatalf("app B's build found %q in its cache", got)
	}
	if got := r.sink.line(t, "b1", "anywhere"); got != "[]" {
		t.Fatalf("app B's build sees planted files: %s", got)
	}
	if got := r.sink.line(t, "b1", "other"); strings.Contains(got, "from-a") || !strings.Contains(got, "No such file") {
		t.Fatalf("app B's build read app A's cache: %s", got)
	}
	// On the host, B's uid cannot read A's cache either (its folder is A's, 0700).
	credB := r.l.Source.Sandbox.Credential(appB)
	cat := exec.Command("cat", plantedA)
	cat.SysProcAttr = &syscall.SysProcAttr{Credential: credB}
	if out, err := cat.CombinedOutput(); err == nil || strings.Contains(string(out), "from-a") {
		t.Fatalf("app B's uid read app A's cache on the host: %q %v", out, err)
	}
	if fi, err := os.Stat(r.l.Source.buildCache(appA)); err != nil || fi.Mode().Perm() != 0o700 ||
		fi.Sys().(*syscall.Stat_t).Uid != r.l.Source.Sandbox.Credential(appA).Uid {
		t.Fatalf("app A's cache folder: %v %v", fi, err)
	}

	// The cache is kept between A's builds...
	build(appA, "a2", "from-a-again", "/dev/null", false)
	if got := r.sink.line(t, "a2", "found"); got != "from-a" {
		t.Fatalf("app A's second build found %q, want the first build's file", got)
	}
	if got := r.sink.line(t, "a2", "anywhere"); got != "[/cache/npm/planted ]" { // the probe B ran does see a file
		t.Fatalf("app A's second build sees planted files at %s", got)
	}
	// ...until a deploy asks for a clean build.
	build(appA, "a3", "after-clear", "/dev/null", true)
	if got := r.sink.line(t, "a3", "found"); got != "nothing" {
		t.Fatalf("a build with clearCache found %q", got)
	}

	// Deleting the app removes its cache with its disk; B's stays.
	if err := r.l.StopApp(ctx, appA); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(r.l.Source.buildCache(appA)); !os.IsNotExist(err) {
		t.Fatalf("app A's cache after the app was deleted: %v", err)
	}
	if _, err := os.Stat(r.l.Identities.Disks.Image(appA)); !os.IsNotExist(err) {
		t.Fatalf("app A's disk after the app was deleted: %v", err)
	}
	if b, err := os.ReadFile(filepath.Join(r.l.Source.buildCache(appB), "npm", "planted")); err != nil || strings.TrimSpace(string(b)) != "from-b" {
		t.Fatalf("app B's cache after A was deleted: %q %v", b, err)
	}
}

// The release Job and the service's process run without the build cache.
func TestOnlyBuildsSeeTheCache(t *testing.T) {
	r := newRig(t)
	app := uuid.NewString()
	rev := r.revision(app, tarball(t,
		manifest(map[string]any{"build": "mkdir -p /cache/npm && echo x > /cache/npm/f", "start": "node server.js"}),
		file{name: "server.js", body: serverJS},
	), []string{"/bin/sh", "-c", `echo "release sees [$(ls /cache 2>&1)] [$npm_config_cache]"`})
	if err := r.l.Prepare(context.Background(), rev, r.jobs); err != nil {
		t.Fatalf("prepare: %v\n%s", err, r.sink.all())
	}
	logs := r.sink.all()
	if !strings.Contains(logs, "release: release sees [ls: cannot access '/cache': No such file or directory] []") {
		t.Fatalf("the release Job saw the build cache:\n%s", logs)
	}
	if strings.Contains(r.get(app, rev.DeployID, "/env"), "/cache") {
		t.Fatal("the service's process got the build cache's variables")
	}
	if _, err := os.Stat(filepath.Join(r.l.Source.buildCache(app), "npm", "f")); err != nil {
		t.Fatalf("the build did not write to the cache: %v", err)
	}
}
