package e2e

import (
	"bufio"
	"encoding/json"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"tori.dev/tests/e2e/harness"
)

// fakeContainerRuntime builds FakeContainerRuntime (services/zoneagent/internal/runner/
// fakeruntime), the named test stand-in for docker/podman, which cannot run on this
// machine, and returns its path and its state folder.
func fakeContainerRuntime(t *testing.T) (string, string) {
	t.Helper()
	bin := filepath.Join(t.TempDir(), "docker")
	cmd := exec.Command("go", "build", "-o", bin, "./internal/runner/fakeruntime")
	cmd.Dir = filepath.Join(harness.RepoRoot(), "services", "zoneagent")
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("build the fake container runtime: %v\n%s", err, out)
	}
	return bin, t.TempDir()
}

// An image deploy through the gateway goes live in a container (through the real CLI
// adapter, driving the fake engine) with the app's environment, never on a command line; a
// failing release Job leaves it serving.
func TestImageDeployThroughTheFakeRuntime(t *testing.T) {
	bin, state := fakeContainerRuntime(t)
	s := harness.Start(t, harness.Options{Env: map[string]string{
		"AUTH_LIMIT_PER_15MIN": "100000", "ZONE_IMAGE_RUNTIME": bin, "FAKE_CONTAINER_STATE": state,
	}})
	a := s.NewAccount(t, "image")
	slug := createApp(t, s, a.Token, "service")
	const value = "image-env-secret-value"
	if r := s.Do(t, harness.Request{Method: http.MethodPut, Path: "/api/apps/" + slug + "/env", Token: a.Token, Body: map[string]string{"key": "API_TOKEN", "value": value}}); r.Status != http.StatusCreated {
		t.Fatalf("env: %d %s", r.Status, r.Body)
	}
	deployImage := func(image string, release []string) string {
		t.Helper()
		body := map[string]any{"image": image}
		if release != nil {
			body["release"] = release
		}
		r := s.Do(t, harness.Request{Method: http.MethodPost, Path: "/api/apps/" + slug + "/deploys", Token: a.Token, Body: body})
		if r.Status != http.StatusCreated {
			t.Fatalf("image deploy: %d %s", r.Status, r.Body)
		}
		return r.Map(t)["id"].(string)
	}

	good := "registry.test/acme/web@sha256:" + strings.Repeat("ab", 32)
	goodID := deployImage(good, []string{"/bin/sh", "-c", "echo migrating"})
	waitStatus(t, s, a.Token, slug, goodID, "live")
	harness.Eventually(t, 30*time.Second, "the edge to proxy to the container", func() bool {
		status, body := edgeGet(t, s, slug, "/")
		return status == http.StatusOK && strings.HasPrefix(body, "image="+good+" ") && strings.Contains(body, "API_TOKEN")
	})

	bad := "registry.test/acme/web@sha256:" + strings.Repeat("cd", 32)
	failed := waitStatus(t, s, a.Token, slug, deployImage(bad, []string{"/bin/sh", "-c", "exit 3"}), "failed")
	if failed["error"] != "release_failed" {
		t.Fatalf("failing release: %v", failed)
	}
	if _, body := edgeGet(t, s, slug, "/"); !strings.HasPrefix(body, "image="+good+" ") {
		t.Fatalf("the previous revision stopped serving: %q", body)
	}

	// A crashed agent leaves its container running; the restarted one keeps only what a live
	// route names and serves the live revision again.
	s.Kill("zoneagent")
	s.Restart("zoneagent")
	harness.Eventually(t, 30*time.Second, "the live container to be back", func() bool {
		_, body := edgeGet(t, s, slug, "/")
		return strings.HasPrefix(body, "image="+good+" ")
	})
	if got, _ := filepath.Glob(filepath.Join(state, "containers", "*.pid")); len(got) != 1 || filepath.Base(got[0]) != "tori-"+goodID+".pid" {
		t.Fatalf("containers after the restart: %v", got)
	}

	// No environment value ever reached the runtime's command line.
	f, err := os.Open(filepath.Join(state, "argv.log"))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	runs := 0
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		var argv []string
		json.Unmarshal(sc.Bytes(), &argv)
		if strings.Contains(strings.Join(argv, " "), value) {
			t.Fatalf("an environment value on a command line: %q", argv)
		}
		if len(argv) > 0 && argv[0] == "run" {
			runs++
		}
	}
	if runs != 4 { // the good deploy's Job and service, the bad deploy's Job, the service again after the restart
		t.Fatalf("%d run commands", runs)
	}
}
